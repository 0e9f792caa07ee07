#!/usr/bin/env bash
# Arrow Flight test server for thalweg's integration tests: pyarrow's own
# Flight server (flight/serve.py) on loopback, with the datasets, live streams
# and fault injection of issue 20's conventions, and the venv whose Python
# runs the test-side peers (flight/ipc_producer.py, flight/read_back.py).
#
#   bash scripts/services/flight.sh up      start (idempotent); prints export lines
#   bash scripts/services/flight.sh down    stop what `up` started
#   bash scripts/services/flight.sh status  exit 0 if running and healthy
#
# `up` prints ONLY the export lines on stdout (use: eval "$(bash .../flight.sh up)");
# progress and errors go to stderr.  State (venv, data, log, pid file) lives in
# ${THALWEG_SERVICES_DIR:-<repo>/.cache/services}/flight.  The venv is built
# once from flight/requirements.txt (pinned) and reused without network access
# while the pins and the Python version stay the same.  Datasets are stored
# (fsynced) under <state>/data and survive a restart; `down` keeps them.
# The port is 28815 (THALWEG_FLIGHT_PORT).
# The venv, pid-file and up/down/status logic is python-service-lib.sh's.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
SERVICE=flight
STATE="${THALWEG_SERVICES_DIR:-$REPO/.cache/services}/flight"
DATA="$STATE/data"
REQS="$HERE/flight/requirements.txt"
SERVE="$HERE/flight/serve.py"
PACKAGE=pyarrow
IMPORTS=pyarrow.flight
SERVER="the pyarrow Flight server"

HOST=127.0.0.1
PORT="${THALWEG_FLIGHT_PORT:-28815}"
URL="grpc://$HOST:$PORT"
ADDRESS="$URL"
PORT_HINT="set THALWEG_FLIGHT_PORT"
START_TIMEOUT="${THALWEG_FLIGHT_START_TIMEOUT:-60}"
PYTHON="${THALWEG_PYTHON:-python3}"

# shellcheck source=python-service-lib.sh
. "$HERE/python-service-lib.sh"

OUR_CMDLINE="$VENV/bin/python $SERVE --host $HOST --port $PORT --data-dir $DATA "

launch_server() {
  mkdir -p "$DATA"
  PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 nohup "$VENV/bin/python" "$SERVE" \
    --host "$HOST" --port "$PORT" --data-dir "$DATA" &
}

print_exports() {
  printf 'export THALWEG_FLIGHT_URL=%s\n' "$URL"
  printf 'export THALWEG_FLIGHT_PYTHON=%s\n' "$VENV/bin/python"
}

# A Flight call, not just an open port: the server lists its actions.
healthy() {
  [[ -x "$VENV/bin/python" ]] || return 1
  port_open || return 1
  timeout 10 "$VENV/bin/python" -c 'import sys, pyarrow.flight as fl
c = fl.connect(sys.argv[1])
names = [a.type for a in c.list_actions(fl.FlightCallOptions(timeout=2))]
sys.exit(0 if "generate" in names else 1)' "$URL" >/dev/null 2>&1
}

python_service_main "$@"
