#!/usr/bin/env bash
# scripts/bench/run.sh — start the SQS emulator and run the benchmarks.
# Extra flags go to the bench program, e.g. scripts/bench/run.sh -orders 5000.
set -euo pipefail
cd "$(dirname "$0")/../.."
export GOTOOLCHAIN=local
# shellcheck source=../lib/sqsemulator.sh
source scripts/lib/sqsemulator.sh
sqsemulator_start
go run ./scripts/bench -sqs "$ORDERSAGA_SQS_ENDPOINT" "$@"
