#!/usr/bin/env bash
# scripts/deploy.sh — deploy ordersaga to a Yandex Cloud folder, stopping at the
# first failure with what to do.
#
#   scripts/deploy.sh [--var-file FILE] [--auto-approve] [--skip-smoke]
#                                                          the whole deploy (steps 1-8)
#   scripts/deploy.sh --preflight [--var-file FILE]        steps 2-3 only: prove the platform, change nothing
#   scripts/deploy.sh --dry-run [--var-file FILE]          package, preflight, terraform plan, migrate -dry-run
#   scripts/deploy.sh --smoke-only [--var-file FILE]       steps 7-8 against what is deployed
#   scripts/deploy.sh --destroy [--var-file FILE]          terraform destroy (asks unless --auto-approve)
#
# Steps of a deploy:
#   1. go run ./scripts/package -out dist -verify   one reproducible zip per function, each
#                                                   built as a plugin the way the builder does
#   2. terraform init                               the provider pinned in terraform/providers.tf
#   3. go run ./scripts/preflight                   Message Queue calls on temporary queues, YDB,
#                                                   and (once deployed) every function's self-check
#   4. terraform apply -target=<database>           the YDB database alone, so that
#   5. go run ./scripts/migrate -dsn ...            the schema exists before new code runs
#   6. terraform apply                              queues, keys, functions, triggers, API, dashboard;
#                                                   every plan is saved and refused when it would
#                                                   create a queue the state already held
#   7. every function's $latest version is built from its zip (code-<hash> tag) with
#      its settings (cfg-<hash> tag): the apply's postcondition, then yc
#   8. go run ./scripts/smoke                       self-checks, stock route, POST /orders, replay,
#                                                   CONFIRMED, one dead letter ingested and redriven,
#                                                   dlqredrive stats. Needs SMOKE_JWT (role user) and
#                                                   SMOKE_ADMIN_TOKEN (role admin), JWTs from the
#                                                   configured issuer (docs/deploy.md, "Tokens for the
#                                                   smoke test"); --skip-smoke skips it and says so.
#
# Prerequisites: Go >= 1.23.9 and gcc (the plugin build of step 1), terraform (or
# OpenTofu: TF=tofu), yc (logged in: `yc init`) unless YC_TOKEN or
# YC_SERVICE_ACCOUNT_KEY_FILE is already set, and a Message Queue static key for the
# preflight and the smoke's dead letter: YMQ_ACCESS_KEY_ID and YMQ_SECRET_ACCESS_KEY
# of a service account with ymq.admin in the folder (terraform/README.md,
# "Prerequisites"). Variables come from terraform/terraform.tfvars (copy
# terraform/terraform.tfvars.example) or --var-file. The whole guide: terraform/README.md.
set -euo pipefail

usage() { sed -n '2,38p' "$0" | sed 's/^# \{0,1\}//'; }
# die names what failed and what to do; every failure of the deploy goes through it.
die() { printf '\ndeploy: FAILED: %s\n' "$*" >&2; exit 1; }
step() { printf '\n== %s\n' "$*"; }

mode=apply
var_file=""
auto_approve=no
smoke=yes
while [ $# -gt 0 ]; do
  case "$1" in
    --preflight) mode=preflight ;;
    --dry-run) mode=plan ;;
    --smoke-only) mode=smoke ;;
    --skip-smoke) smoke=no ;;
    --destroy) mode=destroy ;;
    --var-file) [ $# -ge 2 ] || die "--var-file needs a file"; var_file=$2; shift ;;
    --var-file=*) var_file=${1#--var-file=} ;;
    --auto-approve) auto_approve=yes ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
  shift
done

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export GOTOOLCHAIN=local
TF=${TF:-terraform}
plan_file="$root/terraform/.deploy.tfplan"
trap 'rm -f "$plan_file"' EXIT

step "prerequisites"
command -v go >/dev/null || die "go is not installed: install Go 1.23.9 or newer (https://go.dev/doc/install)"
go_version=$(go env GOVERSION | sed 's/^go//')
[ "$(printf '%s\n%s\n' 1.23.9 "$go_version" | sort -V | head -1)" = 1.23.9 ] \
  || die "go $go_version is too old: the functions need Go 1.23.9 or newer (go.mod says go 1.23.9)"
cc=$(go env CC 2>/dev/null || true)
command -v "${cc:-gcc}" >/dev/null 2>&1 \
  || die "no C compiler: scripts/package -verify builds every zip as a Go plugin (cgo); install gcc"
command -v "$TF" >/dev/null || die "$TF is not installed (Terraform >= 1.5, or OpenTofu with TF=tofu)"
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
echo "go: $go_version  $TF: $("$TF" version | head -1)  mode: $mode"

tf() { "$TF" -chdir=terraform "$@"; }

# output prints a Terraform output, or nothing before the first apply.
output() { tf output "$@" 2>/dev/null || true; }

# migrate runs the YDB migration tool against the deployed database with the
# deployer's IAM token; extra flags (e.g. -dry-run) are passed through.
migrate() {
  local dsn
  dsn=$(output -raw ydb_endpoint)
  if [ -z "$dsn" ]; then
    echo "no database deployed yet: nothing to migrate"
    return 0
  fi
  [ -n "${YC_TOKEN:-}" ] || YC_TOKEN=$(yc iam create-token)
  YDB_TOKEN=$YC_TOKEN go run ./scripts/migrate -dsn "$dsn" -auth token "$@" \
    || die "the migration failed (its output above names the statement): fix it and run scripts/deploy.sh again; migrations are idempotent"
}

# preflight proves the platform with the operator's credentials; the YDB and
# self-check lines join in once the database and the functions exist.
preflight() {
  local ids
  ids=$(output -json function_ids | tr -d ' \n')
  [ "$ids" != "{}" ] || ids=""
  YDB_CONNECTION_STRING=$(output -raw ydb_endpoint) YDB_TOKEN=${YDB_TOKEN:-${YC_TOKEN:-}} \
    PREFLIGHT_FUNCTION_IDS=$ids go run ./scripts/preflight \
    || die "the preflight failed: each FAIL line above says what to do; nothing was changed (docs/deploy.md, \"Preflight\")"
}

# apply_plan plans (with the extra arguments), refuses a plan that would
# create or replace a queue the state already holds, shows the plan, asks
# unless --auto-approve, and applies exactly the saved plan.
apply_plan() {
  local held recreated answer
  tf plan -input=false -out="$plan_file" "${tf_vars[@]}" "$@" \
    || die "terraform plan failed: read the error above; nothing was changed"
  held=$(tf state list 2>/dev/null | grep '^yandex_message_queue\.' || true)
  if [ -n "$held" ]; then
    recreated=$(tf show -no-color "$plan_file" | grep -E '# yandex_message_queue\.[^ ]+ (will be created|must be replaced)' || true)
    [ -z "$recreated" ] || die "the plan would create queues the state already held:
$recreated
The provider reads a queue it is denied access to as deleted. The queues and their messages
are most likely still there: check the queue-admin key and its ymq.admin grant
(terraform/README.md, \"When a plan recreates the queues\"), then run scripts/deploy.sh again.
Nothing was changed."
  fi
  if [ "$auto_approve" = no ]; then
    read -r -p "apply this plan? type yes: " answer || answer=""
    [ "$answer" = yes ] || die "not applied (answer: ${answer:-none}); nothing was changed"
  fi
  tf apply -input=false "$plan_file" \
    || die "terraform apply failed: read the error above (a postcondition names the function whose version did not build; an access error on a queue or trigger means IAM was slower than iam_propagation_seconds: raise it); fix it and run scripts/deploy.sh again"
}

# check_versions fails unless every function has a $latest version and that
# version carries the tag naming its zip and a settings tag (modules/function/main.tf).
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
      printf '%s' "$got" | grep -q '"cfg-[0-9a-f]\{16\}"' || die "$name: \$latest carries no cfg-<hash> settings tag: it was not built by this configuration; run scripts/deploy.sh again"
      echo "  yc: $name \$latest carries $tag and its settings tag"
    done
  else
    echo "  (yc not installed: checked the Terraform outputs; the apply's postcondition checked both tags)"
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
  command -v yc >/dev/null || die "the smoke test invokes the functions with yc: install yc, or pass --skip-smoke"
  local dlq
  dlq=$(tf output -json queue_urls | tr -d ' \n' | tr '{},' '\n\n\n' | grep '^"saga-commands-dlq":' | cut -d: -f2- | tr -d '"')
  go run ./scripts/smoke -base-url "$(tf output -raw api_url)" -function-ids "$(tf output -json function_ids | tr -d ' \n')" -dlq-url "$dlq" \
    || die "the smoke test failed at the step named above: the stand is deployed but not proven. Fix the cause (docs/deploy.md, runbook), then scripts/deploy.sh --smoke-only"
}

if [ "$mode" = smoke ]; then
  tf init -input=false >/dev/null || die "terraform init failed"
  step "function versions"
  check_versions
  step "smoke test"
  run_smoke
  exit 0
fi

step "1. package and verify the functions (dist/)"
# Terraform reads the zips even to plan or destroy (user_hash = filesha256);
# the preflight alone needs none.
if [ "$mode" = preflight ]; then
  echo "skipped: the preflight needs no zips (scripts/deploy.sh packages and verifies them before any plan)"
elif [ "$mode" = destroy ]; then
  go run ./scripts/package -out dist || die "packaging failed"
else
  go run ./scripts/package -out dist -verify \
    || die "a zip does not build the way the Cloud Functions builder builds it (output above); fix the code, nothing was deployed"
fi

step "2. terraform init"
tf init -input=false \
  || die "terraform init failed: without registry access configure Yandex's provider mirror in ~/.terraformrc (terraform/README.md, \"Provider and mirror\")"

if [ "$mode" != destroy ]; then
  step "3. preflight"
  preflight
fi

case "$mode" in
  preflight)
    step "preflight passed; nothing was changed"
    ;;
  plan)
    step "terraform plan (nothing is changed)"
    tf plan -input=false "${tf_vars[@]}" || die "terraform plan failed"
    step "migrate -dry-run"
    migrate -dry-run
    ;;
  destroy)
    step "terraform destroy"
    echo "This deletes the database (with every order), the queues, the keys and the functions."
    destroy_args=()
    [ "$auto_approve" = no ] || destroy_args=(-auto-approve)
    tf destroy -input=false "${tf_vars[@]}" "${destroy_args[@]}"
    ;;
  apply)
    step "4. terraform apply: database"
    apply_plan -target=yandex_ydb_database_serverless.main
    step "5. migrate"
    migrate
    step "6. terraform apply: everything"
    # Each function's postcondition fails this apply when its version did not build.
    apply_plan
    step "7. function versions"
    check_versions
    step "8. smoke test"
    run_smoke
    step "deployed"
    tf output
    ;;
esac
