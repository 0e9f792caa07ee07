#!/usr/bin/env bash
# PostgreSQL from Debian's packages, on loopback, for integration tests.
#   postgres.sh up    start if not running; print `export THALWEG_PG_URL=...` on stdout
#   postgres.sh down  stop what `up` started
# Progress goes to stderr; stdout carries only the export line.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
state="${THALWEG_SERVICES_DIR:-$repo/.cache/services}/postgres"
data="$state/data"
port="${THALWEG_PG_PORT:-25432}"
url="postgres://postgres@127.0.0.1:$port/thalweg"

log() { echo "postgres: $*" >&2; }
# shellcheck source=debian-install.sh
. "$here/debian-install.sh"

pg_bin() {
  local dir
  for dir in /usr/lib/postgresql/*/bin; do
    if [ -x "$dir/pg_ctl" ]; then echo "$dir"; return; fi
  done
  command -v pg_ctl >/dev/null && dirname "$(command -v pg_ctl)" && return
  return 1
}

ensure_installed() {
  if pg_bin >/dev/null; then return; fi
  log "installing postgresql from Debian packages"
  debian_install postgresql
}

# initdb and the server refuse to run as root: run them as `postgres` then.
as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

up() {
  ensure_installed
  local bin started
  bin=$(pg_bin)
  started=$(date +%s.%N)
  mkdir -p "$state"
  if [ "$(id -u)" = 0 ]; then chown postgres: "$state"; fi
  if [ ! -f "$data/PG_VERSION" ]; then
    log "initdb into $data"
    as_owner "$bin/initdb" -D "$data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$state/initdb.log" 2>&1 ||
      { tail -20 "$state/initdb.log" >&2; exit 1; }
  fi
  if ! as_owner "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    # fsync stays on: the durability tests rely on committed meaning durable.
    as_owner "$bin/pg_ctl" -D "$data" -l "$state/postgres.log" -w -t 60 \
      -o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c max_connections=200" \
      start >&2 || { tail -30 "$state/postgres.log" >&2; exit 1; }
  fi
  local i
  for i in $(seq 1 100); do
    if psql "postgres://postgres@127.0.0.1:$port/postgres" -tAc 'select 1' >/dev/null 2>&1; then break; fi
    if [ "$i" = 100 ]; then log "not accepting connections on port $port"; tail -30 "$state/postgres.log" >&2; exit 1; fi
    sleep 0.1
  done
  if ! psql "postgres://postgres@127.0.0.1:$port/postgres" -tAc "select 1 from pg_database where datname='thalweg'" | grep -q 1; then
    psql "postgres://postgres@127.0.0.1:$port/postgres" -qc 'create database thalweg' >&2
  fi
  log "ready in $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $started }")s on 127.0.0.1:$port"
  echo "export THALWEG_PG_URL=$url"
}

down() {
  local bin
  bin=$(pg_bin) || return 0
  if [ -f "$data/postmaster.pid" ]; then
    as_owner "$bin/pg_ctl" -D "$data" -m fast -w stop >&2 || true
  fi
  log "stopped"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  *) echo "usage: $0 up|down" >&2; exit 2 ;;
esac
