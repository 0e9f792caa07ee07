#!/usr/bin/env bash
# Every check, in the order a failure is cheapest to read: typecheck, lint,
# format, then all unit and integration tests against the real services,
# which this script starts (or finds already running, or takes from THALWEG_*
# variables of the user's own). Ends with the line `N passed, N failed`.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== services" >&2
services=$(bash scripts/services/up.sh)
eval "$services"
export THALWEG_PG_URL THALWEG_KAFKA_BROKERS THALWEG_S3_ENDPOINT THALWEG_S3_REGION THALWEG_S3_ACCESS_KEY THALWEG_S3_SECRET_KEY

echo "== typecheck (tsc -b)" >&2
pnpm typecheck
echo "== lint" >&2
pnpm lint
echo "== format" >&2
pnpm format:check
echo "== tests" >&2
node scripts/run-tests.mjs "$@"
