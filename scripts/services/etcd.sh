#!/usr/bin/env bash
# A real three-member etcd cluster (Debian's `etcd-server` and `etcd-client`,
# etcd 3.4) on loopback, for the coordination integration and fault tests.
#
#   bash scripts/services/etcd.sh up               start (idempotent), prints the export line
#   bash scripts/services/etcd.sh down             stop every member this script started
#   bash scripts/services/etcd.sh status           each member's health; non-zero unless all are healthy
#   bash scripts/services/etcd.sh kill-member N    SIGKILL member N (1..3): a crash, for fault tests
#   bash scripts/services/etcd.sh start-member N   start member N again on its data dir
#
# stdout of `up` is exactly one line:
#   export THALWEG_ETCD_ENDPOINTS=http://127.0.0.1:22379,http://127.0.0.1:22389,http://127.0.0.1:22399
# Everything else goes to stderr. Member N (1..3) listens for clients on
# BASE + 10*(N-1) and for its peers on the port after that, where BASE is
# ${THALWEG_ETCD_PORT_BASE:-22379}; THALWEG_ETCD_FLAGS adds etcd flags to every
# member (say --max-txn-ops=5000, to measure a tuned cluster). State lives in
# ${THALWEG_SERVICES_DIR:-<repo>/.cache/services}/etcd: member-N/ (data),
# member-N.log, member-N.pid.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
ROOT="${THALWEG_SERVICES_DIR:-$REPO/.cache/services}"
mkdir -p "$ROOT" && ROOT="$(cd "$ROOT" && pwd)/etcd"
HOST=127.0.0.1
BASE="${THALWEG_ETCD_PORT_BASE:-22379}"
TIMEOUT="${THALWEG_ETCD_TIMEOUT:-60}"
MEMBERS=(1 2 3)
# Fixed: only read when a member's data dir is fresh, and it keeps two
# clusters on other ports from ever joining each other.
TOKEN="thalweg-etcd-$BASE"

SERVICE=etcd
# shellcheck source=service-lib.sh
. "$HERE/service-lib.sh"
# shellcheck source=debian-install.sh
. "$HERE/debian-install.sh"
port_open() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

client_port() { echo $((BASE + 10 * ($1 - 1))); }
peer_port() { echo $((BASE + 10 * ($1 - 1) + 1)); }
client_url() { echo "http://$HOST:$(client_port "$1")"; }
peer_url() { echo "http://$HOST:$(peer_port "$1")"; }
data_dir() { echo "$ROOT/member-$1"; }
pid_file() { echo "$ROOT/member-$1.pid"; }
log_file() { echo "$ROOT/member-$1.log"; }

endpoints() {
  local n list=()
  for n in "${MEMBERS[@]}"; do list+=("$(client_url "$n")"); done
  (IFS=,; echo "${list[*]}")
}

initial_cluster() {
  local n list=()
  for n in "${MEMBERS[@]}"; do list+=("m$n=$(peer_url "$n")"); done
  (IFS=,; echo "${list[*]}")
}

member_pid() { pid_of "$(pid_file "$1")" "--data-dir=$(data_dir "$1") "; }

etcdctl_() { ETCDCTL_API=3 timeout 10 etcdctl --command-timeout=2s "$@"; }

# Healthy = every member commits a proposal (what `endpoint health` checks).
healthy() { etcdctl_ --endpoints="$(endpoints)" endpoint health >/dev/null 2>&1; }

ensure_installed() {
  if command -v etcd >/dev/null && command -v etcdctl >/dev/null; then return 0; fi
  [[ "$(id -u)" == 0 ]] || die "etcd is not installed: install Debian's etcd-server and etcd-client packages"
  log "installing etcd from Debian packages"
  debian_install --no-install-recommends etcd-server etcd-client
  command -v etcd >/dev/null || die "apt-get installed no etcd binary"
  command -v etcdctl >/dev/null || die "apt-get installed no etcdctl binary"
}

member_number() {
  [[ "${1:-}" =~ ^[1-3]$ ]] || { echo "usage: $0 kill-member|start-member 1|2|3" >&2; exit 2; }
}

# Starts member $1 unless it runs. A fresh data dir joins the cluster named
# by the initial-cluster flags; an existing one ignores them and rejoins.
start_member() {
  local n=$1 pid
  if pid="$(member_pid "$n")"; then
    log "member $n already running (pid $pid)"
    return 0
  fi
  local cport pport
  cport="$(client_port "$n")" pport="$(peer_port "$n")"
  port_open "$cport" && die "port $cport is in use by a process this script did not start"
  port_open "$pport" && die "port $pport is in use by a process this script did not start"
  local state=new
  [[ -d "$(data_dir "$n")/member" ]] && state=existing
  [[ -f "$(log_file "$n")" ]] && mv -f "$(log_file "$n")" "$(log_file "$n").prev"
  log "starting member $n on $(client_url "$n") (peer $(peer_url "$n"), log: $(log_file "$n"))"
  # setsid + nohup: the member must outlive this script and its process
  # group; 9>&-: it must not inherit (and so forever hold) the flock. The
  # trailing space of the data-dir flag is what member_pid matches on.
  setsid nohup etcd --name "m$n" --data-dir="$(data_dir "$n")" \
    --listen-client-urls "$(client_url "$n")" --advertise-client-urls "$(client_url "$n")" \
    --listen-peer-urls "$(peer_url "$n")" --initial-advertise-peer-urls "$(peer_url "$n")" \
    --initial-cluster "$(initial_cluster)" --initial-cluster-token "$TOKEN" \
    --initial-cluster-state "$state" --heartbeat-interval 100 --election-timeout 1000 \
    ${THALWEG_ETCD_FLAGS:-} --log-level warn --logger zap </dev/null >"$(log_file "$n")" 2>&1 9>&- &
  echo $! >"$(pid_file "$n")"
}

# Start-up failed: show why, and stop the members so the next `up` starts afresh.
fail() {
  local n
  log "ERROR: $1"
  for n in "${MEMBERS[@]}"; do
    log "last lines of $(log_file "$n"):"
    tail -n 20 "$(log_file "$n")" >&2 || true
  done
  down >/dev/null 2>&1 || true
  exit 1
}

up() {
  local t0 n
  t0="$(now)"
  ensure_installed
  mkdir -p "$ROOT"
  # Data dirs made for other ports (an older default, another BASE) hold a
  # cluster that would dial its old peers forever: test data only, so it
  # starts afresh. Only when no member of it runs.
  local made
  made="$TOKEN $(initial_cluster)"
  if [[ -f "$ROOT/cluster" && "$(cat "$ROOT/cluster")" != "$made" ]]; then
    for n in "${MEMBERS[@]}"; do member_pid "$n" >/dev/null && die "member $n runs, on other ports than these; run down first"; done
    log "the data dirs were made for another cluster ($(cat "$ROOT/cluster")); starting afresh"
    for n in "${MEMBERS[@]}"; do rm -rf "$(data_dir "$n")"; done
  fi
  if [[ ! -f "$ROOT/cluster" || "$(cat "$ROOT/cluster")" != "$made" ]]; then
    local dirs=0
    for n in "${MEMBERS[@]}"; do [[ -d "$(data_dir "$n")/member" ]] && dirs=$((dirs + 1)); done
    # Data dirs older than this marker: their ports are unknown, so they go too.
    if ((dirs > 0)) && [[ ! -f "$ROOT/cluster" ]]; then
      for n in "${MEMBERS[@]}"; do member_pid "$n" >/dev/null && die "member $n runs without a cluster marker; run down first"; done
      log "data dirs without a cluster marker; starting afresh"
      for n in "${MEMBERS[@]}"; do rm -rf "$(data_dir "$n")"; done
    fi
    echo "$made" >"$ROOT/cluster"
  fi
  for n in "${MEMBERS[@]}"; do start_member "$n"; done
  local deadline=$(($(date +%s) + TIMEOUT))
  until healthy; do
    for n in "${MEMBERS[@]}"; do member_pid "$n" >/dev/null || fail "member $n exited during start-up"; done
    (($(date +%s) < deadline)) || fail "cluster not healthy after ${TIMEOUT}s"
    sleep 0.2
  done
  log "cluster of ${#MEMBERS[@]} healthy in $(since "$t0")s on $(endpoints)"
  echo "export THALWEG_ETCD_ENDPOINTS=$(endpoints)"
}

down() {
  local n pid
  for n in "${MEMBERS[@]}"; do
    if pid="$(member_pid "$n")"; then stop_pid "$pid" "member $n"; else log "member $n not running"; fi
    rm -f "$(pid_file "$n")"
  done
}

status() {
  local n pid ok=0
  for n in "${MEMBERS[@]}"; do
    if ! pid="$(member_pid "$n")"; then
      log "member $n ($(client_url "$n")): not running"
      ok=1
    elif etcdctl_ --endpoints="$(client_url "$n")" endpoint health >/dev/null 2>&1; then
      log "member $n ($(client_url "$n")): healthy (pid $pid)"
    else
      log "member $n ($(client_url "$n")): running (pid $pid) but not healthy"
      ok=1
    fi
  done
  return $ok
}

kill_member() {
  local pid
  member_number "${1:-}"
  if pid="$(member_pid "$1")"; then
    log "killing member $1 (pid $pid)"
    kill -KILL "$pid"
    while alive "$pid"; do sleep 0.05; done
  else
    log "member $1 not running"
  fi
  rm -f "$(pid_file "$1")"
}

case "${1:-}" in
  up | down) run_command "$1" ;;
  status) status ;;
  kill-member | start-member)
    member_number "${2:-}"
    mkdir -p "$ROOT"
    exec 9>"$ROOT/.lock"
    flock 9
    if [[ $1 == kill-member ]]; then kill_member "$2"; else start_member "$2"; fi
    ;;
  *) echo "usage: $0 up|down|status|kill-member N|start-member N" >&2; exit 2 ;;
esac
