# What the test services with a pinned venv share: sourced by s3.sh (moto),
# flight.sh (pyarrow Flight) and iceberg.sh (a Java server, with a pyiceberg
# venv for its test-side peers), on top of service-lib.sh (log, die, now,
# since, alive, stop_pid).  Each runs one server beside a venv that is built
# once and reused without network access, and offers up/down/status.
#
# Before sourcing, a script sets:
#   HERE           this folder (service-lib.sh is sourced from it)
#   SERVICE        its name, for messages (also service-lib's)
#   STATE          its state folder (venv, log, pid file, lock)
#   REQS           the pinned requirements.txt of its venv
#   PACKAGE        the pinned package named in messages (moto, pyarrow)
#   IMPORTS        the modules the venv must import once built
#   SERVER         what the server is called in messages
#   HOST, PORT     where the server listens
#   ADDRESS        the address shown in messages (an http:// or grpc:// URL)
#   PORT_HINT      said after "port in use" (how to pick another port), or empty
#   START_TIMEOUT  seconds `up` waits for the server to answer
#   PYTHON         the Python that builds the venv
# and defines (before or after sourcing):
#   healthy        exit 0 if the server answers a real request
#   print_exports  the export lines `up` prints on stdout
#   launch_server  starts the server in the background (`cmd &`, so $! is
#                  its pid; stdio goes to the log, the lock's fd is closed)
# and may define:
#   prepare_up     run by `up` under the lock before anything else (iceberg.sh
#                  resolves its jars and creates its S3 bucket there); it may
#                  stop the server, which `up` then starts afresh
# then sets OUR_CMDLINE (the server's exact command line, each argument
# followed by a space; it may use $VENV, $LOG, $PIDFILE set here) and calls
# `python_service_main "$@"`.

# shellcheck source=service-lib.sh
. "$HERE/service-lib.sh"

VENV="$STATE/venv"
LOG="$STATE/$SERVICE.log"
PIDFILE="$STATE/$SERVICE.pid"
STAMP="$VENV/.thalweg-requirements"

# Keep the caller's Python/pip settings from leaking into the venv.
unset PYTHONPATH PYTHONHOME PIP_USER PIP_TARGET PIP_PREFIX || true

T0="$(now)"

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

# One up/down at a time on the state folder's lock (parallel test jobs may all
# run `up`); without flock, no lock.
lock() {
  mkdir -p "$STATE"
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$STATE/.lock"
    flock -w 600 9 || die "timed out waiting for $STATE/.lock"
  fi
}

# The venv, rebuilt only when the Python version or the pins changed (the
# stamp holds both).
ensure_venv() {
  command -v "$PYTHON" >/dev/null 2>&1 || die "$PYTHON not found (Python >= 3.10 is needed)"
  "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
    || die "$("$PYTHON" -V 2>&1) is too old: $PACKAGE needs Python >= 3.10"
  local want
  want="$("$PYTHON" -c 'import sys; print(sys.version)' | head -n1) $(sha256sum "$REQS" | cut -d' ' -f1)"
  if [[ -x "$VENV/bin/python" && -f "$STAMP" && "$(cat "$STAMP")" == "$want" ]]; then
    return 0
  fi
  local t
  t="$(now)"
  log "creating venv in $VENV and installing $(grep -m1 "^$PACKAGE" "$REQS")"
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV" >&2 \
    || die "'$PYTHON -m venv' failed (on Debian/Ubuntu: apt-get install python3-venv)"
  "$VENV/bin/python" -m pip install --disable-pip-version-check --no-input \
      --progress-bar off -q -r "$REQS" >&2 \
    || die "pip install -r $REQS failed"
  "$VENV/bin/python" -c "import $IMPORTS" \
    || die "the venv in $VENV cannot import $IMPORTS"
  printf '%s' "$want" >"$STAMP"
  log "venv ready in $(since "$t")s"
}

# Starts the server and waits until it answers; exits 1 if it dies first or
# stays silent for START_TIMEOUT seconds.
start_server() {
  local t pid
  : >"$LOG"
  t="$(now)"
  # stdin/stdout/stderr detached from the caller (so $($SERVICE.sh up)
  # returns), and fd 9 (the lock) closed in the child.
  launch_server </dev/null >>"$LOG" 2>&1 9>&-
  pid=$!
  printf '%s\n' "$pid" >"$PIDFILE"
  log "started $SERVER (pid $pid) on $ADDRESS, log $LOG"
  while :; do
    if healthy; then
      log "server answered after $(since "$t")s"
      return 0
    fi
    if ! alive "$pid"; then
      rm -f "$PIDFILE"
      log "the server exited during start-up; last lines of $LOG:"
      tail -n 40 "$LOG" >&2 || true
      exit 1
    fi
    if awk -v a="$t" -v b="$(now)" -v m="$START_TIMEOUT" 'BEGIN { exit !(b - a > m) }'; then
      log "no answer from $ADDRESS within ${START_TIMEOUT}s; last lines of $LOG:"
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
  if declare -F prepare_up >/dev/null; then prepare_up; fi
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
    stop_pid "$pid" "$SERVER"
  fi
  rm -f "$PIDFILE"
  if port_open; then
    die "port $PORT on $HOST is in use by a process this script did not start${PORT_HINT:+ ($PORT_HINT)}"
  fi
  ensure_venv
  start_server
  log "ready in $(since "$T0")s"
  print_exports
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
  stop_pid "$pid" "$SERVER"
  rm -f "$PIDFILE"
}

cmd_status() {
  local pid
  pid="$(our_pid)"
  if [[ -n "$pid" ]] && healthy; then
    log "running (pid $pid) on $ADDRESS"
    return 0
  fi
  log "not running"
  return 1
}

python_service_main() {
  case "${1:-}" in
    up) cmd_up ;;
    down) cmd_down ;;
    status) cmd_status ;;
    *)
      echo "usage: bash $0 up|down|status" >&2
      exit 2
      ;;
  esac
}
