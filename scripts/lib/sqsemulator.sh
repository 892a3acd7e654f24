# shellcheck shell=bash
# scripts/lib/sqsemulator.sh — start and stop the local SQS emulator (kumo,
# built from the nested module scripts/sqsemulator) for the tests.
#
# Source it, then:
#   sqsemulator_start   build (cached) and start the emulator on a free
#                       loopback port; exports ORDERSAGA_SQS_ENDPOINT=<url>
#                       and SQSEMULATOR_PID, and stops it on shell EXIT
#                       (chained before any EXIT trap already set).
#   sqsemulator_stop    stop it (idempotent).
#
# The binary is cached in ${XDG_CACHE_HOME:-$HOME/.cache}/ordersaga/sqsemulator
# under a name derived from the emulator's sources and the Go version, so it is
# rebuilt only when they change. Needs only Go and the module proxy.

_sqsemulator_src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../sqsemulator" && pwd)"
SQSEMULATOR_START_TIMEOUT=${SQSEMULATOR_START_TIMEOUT:-30}

# sqsemulator_build prints the path of an up-to-date emulator binary,
# building it if needed. Build output goes to stderr.
sqsemulator_build() {
  local cache="${XDG_CACHE_HOME:-$HOME/.cache}/ordersaga/sqsemulator"
  local goversion key bin tmp
  goversion=$(GOTOOLCHAIN=local go env GOVERSION) || return 1
  key=$( (cd "$_sqsemulator_src" && cat go.mod go.sum ./*.go && echo "$goversion") | sha256sum | cut -c1-16) || return 1
  bin="$cache/sqsemulator-$key"
  if [ ! -x "$bin" ]; then
    echo "sqsemulator: building $bin" >&2
    mkdir -p "$cache" || return 1
    tmp=$(mktemp "$cache/.build.XXXXXX") || return 1
    if ! (cd "$_sqsemulator_src" && GOTOOLCHAIN=local GOWORK=off GOFLAGS=-mod=readonly go build -o "$tmp" .) >&2; then
      rm -f "$tmp"
      echo "sqsemulator: build failed" >&2
      return 1
    fi
    mv -f "$tmp" "$bin" # atomic: concurrent builders never see a partial binary
  fi
  printf '%s\n' "$bin"
}

sqsemulator_start() {
  if [ -n "${SQSEMULATOR_PID:-}" ] && kill -0 "$SQSEMULATOR_PID" 2>/dev/null; then
    echo "sqsemulator: already running (pid $SQSEMULATOR_PID) at $ORDERSAGA_SQS_ENDPOINT" >&2
    return 0
  fi
  local bin url="" waited=0
  bin=$(sqsemulator_build) || return 1
  _sqsemulator_out=$(mktemp -t sqsemulator.XXXXXX) || return 1
  # A fresh, in-memory emulator: no persisted state, no init scripts.
  env -u KUMO_DATA_DIR -u KUMO_INIT_DIR "$bin" -addr 127.0.0.1:0 >"$_sqsemulator_out" 2>&1 &
  SQSEMULATOR_PID=$!
  export SQSEMULATOR_PID
  _sqsemulator_chain_trap
  while [ "$waited" -lt $((SQSEMULATOR_START_TIMEOUT * 10)) ]; do
    url=$(head -n 1 "$_sqsemulator_out" 2>/dev/null)
    case "$url" in http://*) break ;; esac
    url=""
    if ! kill -0 "$SQSEMULATOR_PID" 2>/dev/null; then
      echo "sqsemulator: exited before it was ready:" >&2
      cat "$_sqsemulator_out" >&2
      sqsemulator_stop
      return 1
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  if [ -z "$url" ]; then
    echo "sqsemulator: no URL within ${SQSEMULATOR_START_TIMEOUT}s:" >&2
    cat "$_sqsemulator_out" >&2
    sqsemulator_stop
    return 1
  fi
  export ORDERSAGA_SQS_ENDPOINT="$url"
  echo "sqsemulator: pid $SQSEMULATOR_PID at $url" >&2
}

sqsemulator_stop() {
  if [ -n "${SQSEMULATOR_PID:-}" ]; then
    if kill -0 "$SQSEMULATOR_PID" 2>/dev/null; then
      kill -TERM "$SQSEMULATOR_PID" 2>/dev/null || true
      wait "$SQSEMULATOR_PID" 2>/dev/null || true
    fi
    unset SQSEMULATOR_PID
  fi
  if [ -n "${_sqsemulator_out:-}" ]; then
    rm -f "$_sqsemulator_out"
    unset _sqsemulator_out
  fi
  unset ORDERSAGA_SQS_ENDPOINT
  return 0
}

# _sqsemulator_chain_trap makes the shell's EXIT trap stop the emulator
# first, then run whatever EXIT trap was set before.
_sqsemulator_chain_trap() {
  local prev=""
  eval "set -- $(trap -p EXIT)"
  [ $# -ge 3 ] && prev=$3
  case "$prev" in *sqsemulator_stop*) return 0 ;; esac
  # shellcheck disable=SC2064 # expand prev now, on purpose
  trap "sqsemulator_stop; ${prev}" EXIT
}
