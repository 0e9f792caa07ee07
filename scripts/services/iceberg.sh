#!/usr/bin/env bash
# Apache Iceberg REST catalog for thalweg's integration tests: Iceberg's own
# RESTCatalogServer (the server of the apache/iceberg-rest-fixture image,
# jars from Maven Central) on loopback, with a JDBC catalog on SQLite and its
# warehouse in the project's S3 (S3FileIO, path-style), and the pyiceberg venv
# whose Python runs the test-side peers (iceberg/write_table.py,
# iceberg/read_table.py).
#
#   bash scripts/services/iceberg.sh up      start (idempotent); prints export lines
#   bash scripts/services/iceberg.sh down    stop what `up` started
#   bash scripts/services/iceberg.sh status  exit 0 if running and healthy
#
# `up` needs the S3 service first: THALWEG_S3_ENDPOINT, _REGION, _ACCESS_KEY
# and _SECRET_KEY set (what `s3.sh up` prints; up.sh starts s3 before this).
# It prints ONLY the export lines on stdout (use: eval "$(bash .../iceberg.sh up)");
# progress and errors go to stderr.  State lives in
# ${THALWEG_SERVICES_DIR:-<repo>/.cache/services}/iceberg: lib/ (jars, resolved
# once from iceberg/pom.xml, pinned), venv/ (from iceberg/requirements.txt,
# pinned), catalog.db (the SQLite catalog), s3-endpoint (the S3 it is on),
# log and pid file.  The warehouse is
# s3://thalweg-iceberg/warehouse; the bucket is created when missing, and then
# the catalog starts empty (moto keeps objects in memory only: the tables an
# older catalog.db lists would point at files that are gone).
# The port is 28181 (THALWEG_ICEBERG_PORT), below Linux's ephemeral range.
# The venv, pid-file and up/down/status logic is python-service-lib.sh's.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
SERVICE=iceberg
STATE="${THALWEG_SERVICES_DIR:-$REPO/.cache/services}"
mkdir -p "$STATE" && STATE="$(cd "$STATE" && pwd)/iceberg"
LIB="$STATE/lib"
DB="$STATE/catalog.db"
S3_USED="$STATE/s3-endpoint"
POM="$HERE/iceberg/pom.xml"
LAUNCHER="$HERE/iceberg/LoopbackRestCatalog.java"
REQS="$HERE/iceberg/requirements.txt"
PACKAGE=pyiceberg
IMPORTS="pyiceberg.catalog.rest, pyiceberg.io.pyarrow, pyarrow.fs"
SERVER="the Iceberg REST catalog"

HOST=127.0.0.1
PORT="${THALWEG_ICEBERG_PORT:-28181}"
URL="http://$HOST:$PORT"
ADDRESS="$URL"
PORT_HINT="set THALWEG_ICEBERG_PORT"
START_TIMEOUT="${THALWEG_ICEBERG_START_TIMEOUT:-90}"
PYTHON="${THALWEG_PYTHON:-python3}"
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
BUCKET=thalweg-iceberg
WAREHOUSE="s3://$BUCKET/warehouse"
# Small heap, C1 only, serial GC: a test catalog on a shared 2-core machine.
JVM_FLAGS=(-Xmx384m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:+ExitOnOutOfMemoryError
  -Djava.awt.headless=true "-Djava.io.tmpdir=$STATE/tmp")

# shellcheck source=python-service-lib.sh
. "$HERE/python-service-lib.sh"

OUR_CMDLINE="$JAVA ${JVM_FLAGS[*]} -cp $LIB/* $LAUNCHER $HOST $PORT "

require_s3() {
  local v
  for v in THALWEG_S3_ENDPOINT THALWEG_S3_REGION THALWEG_S3_ACCESS_KEY THALWEG_S3_SECRET_KEY; do
    [[ -n "${!v:-}" ]] || die "$v is not set: the warehouse is in S3, so start it first (eval \"\$(bash scripts/services/s3.sh up)\") or set the THALWEG_S3_* variables of your own"
  done
}

resolve_jars() { maven_jars "$POM" "$LIB" "the Iceberg REST catalog's jars"; }

# The warehouse bucket, created when missing; a fresh bucket means a fresh
# catalog (a running server is stopped, so `up` starts it on an empty store).
ensure_bucket() {
  local said pid
  said="$(cd "$HERE/iceberg" && timeout 60 "$VENV/bin/python" ensure_bucket.py "$BUCKET")" \
    || die "could not reach or create bucket $BUCKET at $THALWEG_S3_ENDPOINT (is the S3 service up? bash scripts/services/s3.sh status)"
  [[ "$said" == created ]] || return 0
  log "created bucket $BUCKET at $THALWEG_S3_ENDPOINT; the catalog starts empty"
  pid="$(our_pid)"
  if [[ -n "$pid" ]]; then stop_pid "$pid" "$SERVER"; fi
  rm -f "$DB"
}

# A catalog started on another S3 (THALWEG_S3_ENDPOINT changed) is stopped,
# and starts again empty: its tables' files are in the other S3.
follow_s3() {
  local pid
  [[ -f "$S3_USED" && "$(cat "$S3_USED")" == "$THALWEG_S3_ENDPOINT" ]] && return 0
  pid="$(our_pid)"
  if [[ -n "$pid" ]]; then
    log "the catalog was started on another S3 ($(cat "$S3_USED" 2>/dev/null || echo unknown)); restarting it empty on $THALWEG_S3_ENDPOINT"
    stop_pid "$pid" "$SERVER"
  fi
  rm -f "$DB"
  printf '%s' "$THALWEG_S3_ENDPOINT" >"$S3_USED"
}

prepare_up() {
  require_s3
  command -v "$JAVA" >/dev/null || die "java not found (a JDK or JRE 17+ is needed; on Debian: apt-get install openjdk-17-jre-headless)"
  "$JAVA" -version 2>&1 | grep -qE 'version "(1[7-9]|[2-9][0-9])' \
    || die "$("$JAVA" -version 2>&1 | head -n1) is too old: Java 17+ is needed"
  resolve_jars
  ensure_venv
  follow_s3
  ensure_bucket
}

# RESTCatalogServer reads every CATALOG_* variable as a catalog property
# (CATALOG_IO__IMPL -> io-impl, CATALOG_S3_PATH__STYLE__ACCESS ->
# s3.path-style-access): the caller's own must not leak in.
launch_server() {
  local v
  for v in $(compgen -e); do
    if [[ "$v" == CATALOG_* ]]; then unset "$v"; fi
  done
  mkdir -p "$STATE/tmp"
  CATALOG_CATALOG__IMPL=org.apache.iceberg.jdbc.JdbcCatalog \
  CATALOG_URI="jdbc:sqlite:$DB" \
  CATALOG_JDBC_USER=user \
  CATALOG_JDBC_PASSWORD=password \
  CATALOG_JDBC_STRICT__MODE=true \
  CATALOG_WAREHOUSE="$WAREHOUSE" \
  CATALOG_IO__IMPL=org.apache.iceberg.aws.s3.S3FileIO \
  CATALOG_S3_ENDPOINT="$THALWEG_S3_ENDPOINT" \
  CATALOG_S3_PATH__STYLE__ACCESS=true \
  CATALOG_S3_ACCESS__KEY__ID="$THALWEG_S3_ACCESS_KEY" \
  CATALOG_S3_SECRET__ACCESS__KEY="$THALWEG_S3_SECRET_KEY" \
  CATALOG_CLIENT_REGION="$THALWEG_S3_REGION" \
    nohup "$JAVA" "${JVM_FLAGS[@]}" -cp "$LIB/*" "$LAUNCHER" "$HOST" "$PORT" &
}

print_exports() {
  printf 'export THALWEG_ICEBERG_URL=%s\n' "$URL"
  printf 'export THALWEG_ICEBERG_WAREHOUSE=%s\n' "$WAREHOUSE"
  printf 'export THALWEG_ICEBERG_PYTHON=%s\n' "$VENV/bin/python"
}

# A catalog call, not just an open port: GET /v1/config answers with the
# server's endpoints. The time limit matters: a connection accepted while the
# launcher moves the server to loopback is never answered.
healthy() {
  local body
  port_open || return 1
  if command -v curl >/dev/null 2>&1; then
    body="$(curl -sS --fail --max-time 2 "$URL/v1/config" 2>/dev/null)" || return 1
  else
    [[ -x "$VENV/bin/python" ]] || return 1
    body="$("$VENV/bin/python" -c 'import sys, urllib.request
print(urllib.request.urlopen(sys.argv[1], timeout=2).read().decode())' "$URL/v1/config" 2>/dev/null)" || return 1
  fi
  [[ "$body" == *'"endpoints"'* ]]
}

python_service_main "$@"
