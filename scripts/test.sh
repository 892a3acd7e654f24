#!/usr/bin/env bash
# scripts/test.sh — every test of ordersaga, on a fresh machine with only Go.
#
# It formats-checks and vets the code, starts the pinned SQS emulator (kumo,
# built from scripts/sqsemulator) so the YMQ adapter is tested against a real
# SQS server, runs all tests (and the race detector on the concurrent
# packages), drives the operator console in headless chromium
# (scripts/consoletest), runs each fuzz target briefly, runs small seeded
# chaos runs (classic and every mode), and builds every function's
# deployment zip as a Go plugin exactly as the Cloud Functions builder does.
#
# Environment:
#   FUZZTIME   per fuzz target, as an execution count (default 40000x). A count,
#              not a duration: duration-based -fuzztime hits a Go 1.26 coordinator
#              race (golang/go#75804) that fails with "context deadline exceeded".
#   CHAOS_ORDERS  orders in each chaos run (default 150)
#   SOAK       1 (default) runs the 3-minute soak on real clocks; 0 skips it
#   YDB_CONNECTION_STRING  if set, the YDB adapter runs the store conformance suite too
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=local
FUZZTIME=${FUZZTIME:-40000x}
CHAOS_ORDERS=${CHAOS_ORDERS:-150}
SOAK=${SOAK:-1}

step() { printf '\n== %s\n' "$*"; }
work=$(mktemp -d)
cleanup_dirs() { rm -rf "$work"; }
trap cleanup_dirs EXIT

step "gofmt"
unformatted=$(gofmt -l $(find . -name '*.go' -not -path './dist/*' -not -path './.localcloud/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

step "go vet (root module, Go 1.23 std-version check included)"
go vet ./...

step "module graph stays on Go <= 1.23"
too_new=$(go list -m -f '{{if .GoVersion}}{{.Path}} {{.Version}} go{{.GoVersion}}{{end}}' all \
  | awk '{split(substr($3,3),v,"."); if (v[1]>1 || (v[1]==1 && v[2]>23)) print}')
if [ -n "$too_new" ]; then echo "modules needing Go > 1.23:"; echo "$too_new"; exit 1; fi

step "SQS emulator (kumo)"
# shellcheck source=scripts/lib/sqsemulator.sh
source scripts/lib/sqsemulator.sh
sqsemulator_start
trap 'sqsemulator_stop || true; cleanup_dirs' EXIT
echo "ORDERSAGA_SQS_ENDPOINT=$ORDERSAGA_SQS_ENDPOINT"

step "zsh for the README tour test"
# The tour test (scripts/localcloud/tour_test.go) runs every README command in
# bash and in zsh. Where zsh is missing and Debian's apt is ours to use (root),
# install it; otherwise the test skips its zsh half and says so.
if command -v zsh >/dev/null 2>&1; then
  echo "zsh: $(command -v zsh)"
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  if (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq zsh) >"$work/zsh.log" 2>&1; then
    echo "zsh: installed $(command -v zsh)"
  else
    echo "zsh: could not be installed (the tour test will skip its zsh half):"; tail -5 "$work/zsh.log"
  fi
else
  echo "zsh: not installed and not root; the tour test will skip its zsh half"
fi

step "tests"
go test -count=1 ./...

step "first contact, rehearsed offline: preflight -local, every self-check and the smoke against the local runner"
# The same preflight, self-check and smoke that scripts/deploy.sh runs against
# a real folder, here against the local runner and the SQS emulator, so none of
# them can rot (docs/deploy.md, "Preflight").
go build -o "$work/localcloud" ./scripts/localcloud
go build -o "$work/preflight" ./scripts/preflight
go build -o "$work/smoke" ./scripts/smoke
"$work/localcloud" -addr 127.0.0.1:0 -data "$work/rehearsal" -triggers triggers/triggers.yaml -quiet \
  >"$work/runner.out" 2>"$work/runner.err" &
runner_pid=$!
stop_runner() { kill -INT "$runner_pid" 2>/dev/null && wait "$runner_pid" 2>/dev/null || true; }
trap 'stop_runner; sqsemulator_stop || true; cleanup_dirs' EXIT
runner_url=""
for _ in $(seq 1 150); do
  runner_url=$(sed -n 's/^ *API: *\(http:[^ ]*\).*/\1/p' "$work/runner.out" | head -1)
  [ -n "$runner_url" ] && break
  sleep 0.2
done
[ -n "$runner_url" ] || { echo "the local runner did not start:"; cat "$work/runner.err"; exit 1; }
"$work/preflight" -local -invoke-url "$runner_url/_invoke"
"$work/smoke" -base-url "$runner_url" -jwt dev-user -admin-token dev-admin -timeout 30s \
  -invoke-url "$runner_url/_invoke" -dlq-url "$runner_url/_queues/saga-commands-dlq"
stop_runner

step "console browser tests (scripts/consoletest, headless chromium)"
# The operator console is driven in Debian's chromium through chromedp, in a
# nested module so chromedp stays out of the root module. Where chromium is
# missing and apt is ours to use (root), install it; otherwise skip and say why.
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  if (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >"$work/chromium.log" 2>&1; then
    echo "chromium: installed $(command -v chromium)"
  else
    echo "chromium: could not be installed:"; tail -5 "$work/chromium.log"
  fi
fi
if command -v chromium >/dev/null 2>&1; then
  (cd scripts/consoletest && go vet . && go test -count=1 -timeout 3m .)
else
  echo "console browser tests skipped: chromium is not installed and apt-get cannot install it here (not root, or no apt)"
fi

step "race detector on the concurrent packages"
go test -count=1 -race ./shared/wiring/app/ ./shared/wiring/handlers/ ./shared/app/relay/ ./shared/adapters/sqlitestore/ \
  ./shared/adapters/sqlitequeue/ ./shared/kit/resilience/ ./shared/app/orchestrator/ ./shared/adapters/ymq/ ./shared/app/redrive/ \
  ./shared/app/payments/ ./shared/app/stock/ ./shared/checks/chaos/

step "fuzz targets (${FUZZTIME} each)"
for target in $(go test -list '^Fuzz' ./shared/... 2>/dev/null | grep -E '^(Fuzz|ok)' | awk '/^Fuzz/{f=f" "$1} /^ok/{if(f!=""){print $2":"f}; f=""}' | tr ' ' ','); do
  pkg=${target%%:*}; names=${target#*:}
  for name in ${names//,/ }; do
    [ -n "$name" ] || continue
    echo "-- $pkg $name"
    go test -run='^$' -fuzz="^${name}\$" -fuzztime="$FUZZTIME" "$pkg"
  done
done

step "chaos runs (${CHAOS_ORDERS} orders each: the classic seeded run, then every mode on two seeds)"
go build -o "$work/chaos" ./scripts/chaos
"$work/chaos" -orders "$CHAOS_ORDERS" -seed 1
# -all: concurrent components on one SQLite file, clock skew, random Unicode,
# settings varied by seed (shards lowered mid-run), and the checks of issue 13.
# The long run (10 000 orders on seeds 1-5) is `go run ./scripts/chaos -long`.
"$work/chaos" -orders "$CHAOS_ORDERS" -seeds 1-2 -all

step "soak on real clocks (3 minutes; SOAK=0 skips it)"
# The local runner as a child process, in real time, through scripted
# incidents (outages at a person's pace, dead events, a backlog, kill -9);
# then the README's guarantees and linearizability (docs/soak.md).
if [ "$SOAK" = 1 ]; then
  go run ./scripts/soak -duration 3m -out "$work/soak.json"
else
  echo "skipped (SOAK=$SOAK)"
fi

step "deployment zips build as plugins (golang123 builder emulation)"
go run ./scripts/package -out "$work/dist" -verify

printf '\nall checks passed\n'
