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
# is lost when the server stops.  The port is 39000 (THALWEG_S3_PORT).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
STATE="${THALWEG_SERVICES_DIR:-$ROOT/.cache/services}/s3"
VENV="$STATE/venv"
LOG="$STATE/s3.log"
PIDFILE="$STATE/s3.pid"
STAMP="$VENV/.thalweg-requirements"
REQS="$HERE/s3/requirements.txt"
SERVE="$HERE/s3/serve.py"

HOST=127.0.0.1
PORT="${THALWEG_S3_PORT:-39000}"
ENDPOINT="http://$HOST:$PORT"
START_TIMEOUT="${THALWEG_S3_START_TIMEOUT:-60}"
PYTHON="${THALWEG_PYTHON:-python3}"

# Keep the caller's Python/pip settings from leaking into the venv.
unset PYTHONPATH PYTHONHOME PIP_USER PIP_TARGET PIP_PREFIX || true

log() { printf 's3: %s\n' "$*" >&2; }
die() { printf 's3: error: %s\n' "$*" >&2; exit 1; }

now() {
  if [[ -n "${EPOCHREALTIME:-}" ]]; then
    printf '%s' "${EPOCHREALTIME/,/.}"
  else
    date +%s.%N
  fi
}
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

T0="$(now)"

print_exports() {
  printf 'export THALWEG_S3_ENDPOINT=%s\n' "$ENDPOINT"
  printf 'export THALWEG_S3_REGION=us-east-1\n'
  printf 'export THALWEG_S3_ACCESS_KEY=thalweg\n'
  printf 'export THALWEG_S3_SECRET_KEY=thalweg-secret\n'
}

OUR_CMDLINE="$VENV/bin/python $SERVE --host $HOST --port $PORT "

cmdline_of() { tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline" || true; }

# pid of the server this script started, if it is still alive; else empty.
# The pid file is the usual source; if it is gone (state folder wiped while
# the server ran), a process with exactly our command line is adopted.
our_pid() {
  local pid="" p
  if [[ -f "$PIDFILE" ]]; then
    pid="$(tr -dc '0-9' <"$PIDFILE")"
    if [[ -n "$pid" && "$(cmdline_of "$pid")" == "$OUR_CMDLINE" ]]; then
      printf '%s' "$pid"
      return 0
    fi
  fi
  for p in /proc/[0-9]*; do
    p="${p#/proc/}"
    if [[ "$(cmdline_of "$p")" == "$OUR_CMDLINE" ]]; then
      mkdir -p "$STATE"
      printf '%s\n' "$p" >"$PIDFILE"
      printf '%s' "$p"
      return 0
    fi
  done
}

port_open() { (exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null; }

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

lock() {
  mkdir -p "$STATE"
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$STATE/.lock"
    flock -w 600 9 || die "timed out waiting for $STATE/.lock"
  fi
}

ensure_venv() {
  command -v "$PYTHON" >/dev/null 2>&1 || die "$PYTHON not found (Python >= 3.10 is needed)"
  "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
    || die "$("$PYTHON" -V 2>&1) is too old: moto needs Python >= 3.10"
  local want
  want="$("$PYTHON" -c 'import sys; print(sys.version)' | head -n1) $(sha256sum "$REQS" | cut -d' ' -f1)"
  if [[ -x "$VENV/bin/python" && -f "$STAMP" && "$(cat "$STAMP")" == "$want" ]]; then
    return 0
  fi
  local t
  t="$(now)"
  log "creating venv in $VENV and installing $(grep -m1 '^moto' "$REQS")"
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV" >&2 \
    || die "'$PYTHON -m venv' failed (on Debian/Ubuntu: apt-get install python3-venv)"
  "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input \
      --progress-bar off -q -r "$REQS" >&2 \
    || die "pip install -r $REQS failed"
  "$VENV/bin/python" -c 'import moto.s3, flask, werkzeug' \
    || die "the venv in $VENV cannot import moto"
  printf '%s' "$want" >"$STAMP"
  log "venv ready in $(since "$t")s"
}

start_server() {
  local t pid
  : >"$LOG"
  t="$(now)"
  # stdin/stdout/stderr detached from the caller (so $(s3.sh up) returns),
  # and fd 9 (the lock) closed in the child.
  PYTHONUNBUFFERED=1 nohup "$VENV/bin/python" "$SERVE" --host "$HOST" --port "$PORT" \
    </dev/null >>"$LOG" 2>&1 9>&- &
  pid=$!
  printf '%s\n' "$pid" >"$PIDFILE"
  log "started moto (pid $pid) on $ENDPOINT, log $LOG"
  while :; do
    if healthy; then
      log "server answered after $(since "$t")s"
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$PIDFILE"
      log "the server exited during start-up; last lines of $LOG:"
      tail -n 40 "$LOG" >&2 || true
      exit 1
    fi
    if awk -v a="$t" -v b="$(now)" -v m="$START_TIMEOUT" 'BEGIN { exit !(b - a > m) }'; then
      log "no answer from $ENDPOINT within ${START_TIMEOUT}s; last lines of $LOG:"
      tail -n 40 "$LOG" >&2 || true
      kill "$pid" 2>/dev/null || true
      rm -f "$PIDFILE"
      exit 1
    fi
    sleep 0.1
  done
}

cmd_up() {
  lock
  local pid
  pid="$(our_pid)"
  if [[ -n "$pid" ]]; then
    if healthy; then
      log "already running (pid $pid)"
      log "ready in $(since "$T0")s"
      print_exports
      return 0
    fi
    log "pid $pid is not answering; restarting it"
    stop_pid "$pid"
  fi
  rm -f "$PIDFILE"
  if port_open; then
    die "port $PORT on $HOST is in use by a process this script did not start (set THALWEG_S3_PORT)"
  fi
  ensure_venv
  start_server
  log "ready in $(since "$T0")s"
  print_exports
}

stop_pid() {
  local pid="$1" i
  kill "$pid" 2>/dev/null || return 0
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  log "pid $pid did not stop after SIGTERM; sending SIGKILL"
  kill -9 "$pid" 2>/dev/null || true
}

cmd_down() {
  lock
  local pid
  pid="$(our_pid)"
  if [[ -z "$pid" ]]; then
    rm -f "$PIDFILE"
    log "not running"
    return 0
  fi
  stop_pid "$pid"
  rm -f "$PIDFILE"
  log "stopped (pid $pid)"
}

cmd_status() {
  local pid
  pid="$(our_pid)"
  if [[ -n "$pid" ]] && healthy; then
    log "running (pid $pid) on $ENDPOINT"
    return 0
  fi
  log "not running"
  return 1
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  *)
    echo "usage: bash $0 up|down|status" >&2
    exit 2
    ;;
esac
