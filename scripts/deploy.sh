#!/usr/bin/env bash
# scripts/deploy.sh — deploy ordersaga to a Yandex Cloud folder.
#
#   scripts/deploy.sh [--var-file FILE] [--auto-approve] [--skip-smoke]
#                                                          package → database → migrate → everything → proof
#   scripts/deploy.sh --dry-run [--var-file FILE]          package, terraform plan, migrate -dry-run
#   scripts/deploy.sh --smoke-only [--var-file FILE]       only steps 6-7 against what is deployed
#   scripts/deploy.sh --destroy [--var-file FILE]          terraform destroy (asks unless --auto-approve)
#
# Steps of a deploy:
#   1. go run ./scripts/package -out dist      one reproducible zip per function
#   2. terraform init
#   3. terraform apply -target=<database>      the YDB database alone, so that
#   4. go run ./scripts/migrate -dsn ...       the schema exists before new code runs
#   5. terraform apply                         queues, keys, functions, triggers, API, dashboard
#   6. every function has a $latest version built from its zip (terraform
#      output function_versions / function_code_tags, and yc when installed);
#      a failed version build is only a warning in the provider
#   7. go run ./scripts/smoke                  stock route, POST /orders, replay,
#      CONFIRMED, dlqredrive stats via yc. Needs SMOKE_JWT (role user) and
#      SMOKE_ADMIN_TOKEN (role admin): JWTs from the configured issuer
#      (docs/deploy.md, "Tokens for the smoke test"); --skip-smoke skips it
#      and says so.
#
# Prerequisites: go, terraform (or OpenTofu: TF=tofu), yc (logged in: `yc init`)
# unless YC_TOKEN or YC_SERVICE_ACCOUNT_KEY_FILE is already set. Variables come
# from terraform/terraform.tfvars (copy terraform/terraform.tfvars.example) or
# --var-file. See terraform/README.md for the whole guide.
set -euo pipefail

usage() { sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "deploy: $*" >&2; exit 1; }
step() { printf '\n== %s\n' "$*"; }

mode=apply
var_file=""
auto_approve=()
smoke=yes
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) mode=plan ;;
    --smoke-only) mode=smoke ;;
    --skip-smoke) smoke=no ;;
    --destroy) mode=destroy ;;
    --var-file) [ $# -ge 2 ] || die "--var-file needs a file"; var_file=$2; shift ;;
    --var-file=*) var_file=${1#--var-file=} ;;
    --auto-approve) auto_approve=(-auto-approve) ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
  shift
done

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export GOTOOLCHAIN=local
TF=${TF:-terraform}

step "prerequisites"
command -v go >/dev/null || die "go is not installed (https://go.dev/doc/install; Go ≥ 1.23)"
command -v "$TF" >/dev/null || die "$TF is not installed (Terraform ≥ 1.5, or OpenTofu with TF=tofu)"
if [ -z "${YC_TOKEN:-}" ] && [ -z "${YC_SERVICE_ACCOUNT_KEY_FILE:-}" ]; then
  command -v yc >/dev/null || die "yc is not installed and neither YC_TOKEN nor YC_SERVICE_ACCOUNT_KEY_FILE is set"
  YC_TOKEN=$(yc iam create-token) || die "yc iam create-token failed: run yc init"
  export YC_TOKEN
fi
tf_vars=()
if [ -n "$var_file" ]; then
  [ -f "$var_file" ] || die "var file $var_file does not exist"
  tf_vars=(-var-file="$(cd "$(dirname "$var_file")" && pwd)/$(basename "$var_file")")
elif [ ! -f terraform/terraform.tfvars ]; then
  die "no terraform/terraform.tfvars: copy terraform/terraform.tfvars.example and fill it in, or pass --var-file"
fi
echo "go: $(go version | cut -d' ' -f3)  $TF: $("$TF" version | head -1)  mode: $mode"

tf() { "$TF" -chdir=terraform "$@"; }

# migrate runs the YDB migration tool against the deployed database with the
# deployer's IAM token; extra flags (e.g. -dry-run) are passed through.
migrate() {
  local dsn
  dsn=$(tf output -raw ydb_endpoint 2>/dev/null) || dsn=""
  if [ -z "$dsn" ]; then
    echo "no database deployed yet: nothing to migrate"
    return 0
  fi
  [ -n "${YC_TOKEN:-}" ] || YC_TOKEN=$(yc iam create-token)
  YDB_TOKEN=$YC_TOKEN go run ./scripts/migrate -dsn "$dsn" -auth token "$@"
}

# check_versions fails unless every function has a $latest version and that
# version carries the tag naming its zip (modules/function/main.tf).
check_versions() {
  local versions tags ids missing name id tag got
  versions=$(tf output -json function_versions) || die "no terraform output function_versions: was anything applied?"
  tags=$(tf output -json function_code_tags)
  ids=$(tf output -json function_ids)
  # {"a":"x","b":""} → lines a:"x"
  flat() { printf '%s' "$1" | tr -d ' \n' | tr '{},' '\n\n\n' | grep -v '^$'; }
  missing=$(flat "$versions" | grep -E ':(""|null)$' | cut -d: -f1 | tr -d '"' || true)
  [ -z "$missing" ] || die "no function version for: $missing (the version build failed; see the apply's warnings and docs/deploy.md)"
  echo "every function has a version:"; flat "$versions" | sed 's/^/  /'
  if command -v yc >/dev/null; then
    for name in $(flat "$ids" | cut -d: -f1 | tr -d '"'); do
      id=$(flat "$ids" | grep "^\"$name\":" | cut -d: -f2 | tr -d '"')
      tag=$(flat "$tags" | grep "^\"$name\":" | cut -d: -f2 | tr -d '"')
      got=$(yc serverless function version get-by-tag --function-id "$id" --tag "$tag" --format json 2>&1) \
        || die "$name: yc finds no version tagged $tag (built from the current zip): $got"
      printf '%s' "$got" | grep -q '"\$latest"' || die "$name: the version tagged $tag is not \$latest: $got"
      echo "  yc: $name \$latest carries $tag"
    done
  else
    echo "  (yc not installed: checked the Terraform outputs only)"
  fi
}

# run_smoke proves the stand with scripts/smoke (see its doc comment).
run_smoke() {
  if [ "$smoke" = no ]; then
    echo "SMOKE TEST SKIPPED (--skip-smoke): nothing has proven this stand works."
    return 0
  fi
  [ -n "${SMOKE_JWT:-}" ] && [ -n "${SMOKE_ADMIN_TOKEN:-}" ] \
    || die "set SMOKE_JWT (role user) and SMOKE_ADMIN_TOKEN (role admin), JWTs from the configured issuer (docs/deploy.md), or pass --skip-smoke"
  command -v yc >/dev/null || die "the smoke test invokes dlqredrive with yc: install yc, or pass --skip-smoke"
  local dlq
  dlq=$(tf output -json function_ids | tr -d ' \n' | tr '{},' '\n\n\n' | grep '^"dlqredrive":' | cut -d: -f2 | tr -d '"')
  go run ./scripts/smoke -base-url "$(tf output -raw api_url)" -dlqredrive-id "$dlq"
}

if [ "$mode" = smoke ]; then
  tf init -input=false >/dev/null
  step "function versions"
  check_versions
  step "smoke test"
  run_smoke
  exit 0
fi

step "package functions (dist/)"
# Terraform reads the zips even to plan or destroy (user_hash = filesha256).
go run ./scripts/package -out dist

step "terraform init"
tf init -input=false

case "$mode" in
  plan)
    step "terraform plan (nothing is changed)"
    tf plan -input=false "${tf_vars[@]}"
    step "migrate -dry-run"
    migrate -dry-run
    ;;
  destroy)
    step "terraform destroy"
    echo "This deletes the database (with every order), the queues, the keys and the functions."
    tf destroy -input=false "${tf_vars[@]}" "${auto_approve[@]}"
    ;;
  apply)
    step "terraform apply: database"
    tf apply -input=false "${tf_vars[@]}" "${auto_approve[@]}" -target=yandex_ydb_database_serverless.main
    step "migrate"
    migrate
    step "terraform apply: everything"
    # Each function's postcondition fails this apply when its version did not build.
    tf apply -input=false "${tf_vars[@]}" "${auto_approve[@]}"
    step "function versions"
    check_versions
    step "smoke test"
    run_smoke
    step "deployed"
    tf output
    ;;
esac
