#!/usr/bin/env bash
# Local S3-compatible server for thalweg's tests: moto's S3 emulation, on
# loopback, honouring conditional writes (PutObject If-None-Match: * and
# If-Match: <etag> answer 412 like AWS S3).
#
#   bash scripts/services/s3.sh up      start (idempotent); prints export lines
#   bash scripts/services/s3.sh down    stop what `up` started
#   bash scripts/services/s3.sh status  exit 0 if running and healthy
#
# `up` prints ONLY the export lines on stdout (use: eval "$(bash .../s3.sh up)");
# progress and errors go to stderr.  State (venv, log, pid file) lives in
# ${THALWEG_SERVICES_DIR:-<repo>/.cache/services}/s3.  The venv is built once
# from s3/requirements.txt (pinned) and reused without network access while
# the pins and the Python version stay the same.  Data is in memory only: it
# is lost when the server stops.  The port is 29000 (THALWEG_S3_PORT).
# The venv, pid-file and up/down/status logic is python-service-lib.sh's.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
SERVICE=s3
STATE="${THALWEG_SERVICES_DIR:-$REPO/.cache/services}/s3"
REQS="$HERE/s3/requirements.txt"
SERVE="$HERE/s3/serve.py"
PACKAGE=moto
IMPORTS="moto.s3, flask, werkzeug"
SERVER=moto

HOST=127.0.0.1
PORT="${THALWEG_S3_PORT:-29000}"
ENDPOINT="http://$HOST:$PORT"
ADDRESS="$ENDPOINT"
PORT_HINT="set THALWEG_S3_PORT"
START_TIMEOUT="${THALWEG_S3_START_TIMEOUT:-60}"
PYTHON="${THALWEG_PYTHON:-python3}"

# shellcheck source=python-service-lib.sh
. "$HERE/python-service-lib.sh"

OUR_CMDLINE="$VENV/bin/python $SERVE --host $HOST --port $PORT "

launch_server() {
  PYTHONUNBUFFERED=1 nohup "$VENV/bin/python" "$SERVE" --host "$HOST" --port "$PORT" &
}

print_exports() {
  printf 'export THALWEG_S3_ENDPOINT=%s\n' "$ENDPOINT"
  printf 'export THALWEG_S3_REGION=us-east-1\n'
  printf 'export THALWEG_S3_ACCESS_KEY=thalweg\n'
  printf 'export THALWEG_S3_SECRET_KEY=thalweg-secret\n'
}

healthy() {
  local body
  if command -v curl >/dev/null 2>&1; then
    body="$(curl -sS --max-time 2 "$ENDPOINT/" 2>/dev/null)" || return 1
  else
    body="$("$VENV/bin/python" -c 'import sys, urllib.request
print(urllib.request.urlopen(sys.argv[1], timeout=2).read().decode())' "$ENDPOINT/" 2>/dev/null)" || return 1
  fi
  [[ "$body" == *ListAllMyBucketsResult* ]]
}

python_service_main "$@"
