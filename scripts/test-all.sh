#!/usr/bin/env bash
# Every check, in the order a failure is cheapest to read: typecheck, lint,
# format, the API reference, then all unit and integration tests against the
# real services, which this script starts (or finds already running, or takes
# from THALWEG_* variables of the user's own). Ends with the line `N passed, N failed`.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== tools" >&2
# The LZ4 interop tests run Debian's lz4 CLI against our frames.
if ! command -v lz4 >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    # shellcheck source=services/debian-install.sh
    . scripts/services/debian-install.sh
    debian_install lz4
  else
    echo "the lz4 command is missing: install Debian's lz4 package" >&2
    exit 1
  fi
fi

echo "== services" >&2
services=$(bash scripts/services/up.sh)
eval "$services"
export THALWEG_PG_URL THALWEG_KAFKA_BROKERS THALWEG_S3_ENDPOINT THALWEG_S3_REGION THALWEG_S3_ACCESS_KEY THALWEG_S3_SECRET_KEY \
  THALWEG_PROMETHEUS_URL THALWEG_PROMETHEUS_TARGETS THALWEG_PROMTOOL \
  THALWEG_PULSAR_URL THALWEG_PULSAR_WS_URL THALWEG_PULSAR_ADMIN_URL \
  THALWEG_FLIGHT_URL THALWEG_FLIGHT_PYTHON THALWEG_ETCD_ENDPOINTS \
  THALWEG_ICEBERG_URL THALWEG_ICEBERG_WAREHOUSE THALWEG_ICEBERG_PYTHON

echo "== typecheck (tsc -b)" >&2
pnpm typecheck
echo "== lint" >&2
pnpm lint
echo "== format" >&2
pnpm format:check
echo "== docs (the API reference by typedoc, into docs/api/)" >&2
# Any typedoc warning (a broken {@link}, say) fails it; prints its time,
# about 15 s here.
pnpm run docs >&2
echo "== packages (packed, installed with npm, a strict consumer compiled and run)" >&2
# Before the tests: it is cheaper to read, and the tests' summary must stay
# the closing line. Bounded: about 90 s with .cache/npm warm, two minutes cold.
timeout 480 node scripts/pack-check.mjs >&2
echo "== tests" >&2
# On this machine's Node, then on Node 24 LTS (fetched into .cache/ by
# node-lts.sh); THALWEG_SKIP_NODE_LTS=1 runs the first only, for a quick
# local pass.
extra=""
if [ "${THALWEG_SKIP_NODE_LTS:-0}" != 1 ]; then extra=$(bash scripts/node-lts.sh); fi
THALWEG_EXTRA_NODES="$extra" node scripts/run-tests.mjs "$@"
