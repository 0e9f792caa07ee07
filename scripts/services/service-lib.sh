# What every service script shares: sourced by kafka.sh, pulsar.sh,
# prometheus.sh and etcd.sh (and, through python-service-lib.sh, by s3.sh,
# flight.sh and iceberg.sh) after they set SERVICE (their name, for
# messages) and ROOT (their state directory).

log() { echo "$SERVICE: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# Not `kill -0`: that also accepts a zombie (a server that died while still our child).
alive() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  [[ "${stat##*) }" != Z* ]]
}

# The pid in pid file $1 if that process is alive and its command line holds
# $2: a recycled pid is not mistaken for our server.
pid_of() {
  local pid
  [[ -f "$1" ]] || return 1
  pid="$(cat "$1")"
  [[ -n "$pid" ]] && alive "$pid" || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$2" || return 1
  echo "$pid"
}

# Stops process $1 (named $2 in messages): TERM, then KILL after 30 s, so a
# stuck shutdown never hangs CI.
stop_pid() {
  local pid=$1 what=$2 i
  log "stopping $what (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 300; i++)); do
    alive "$pid" || break
    sleep 0.1
  done
  if alive "$pid"; then
    log "$what did not stop in 30s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
    while alive "$pid"; do sleep 0.1; done
  fi
  log "stopped"
}

# Runs `up` or `down` ($1), one call at a time on the service's lock (parallel
# test jobs may all run `up`).
run_command() {
  case "${1:-}" in
    up | down) ;;
    *) echo "usage: $0 up|down" >&2; exit 2 ;;
  esac
  mkdir -p "$ROOT"
  exec 9>"$ROOT/.lock"
  flock 9
  "$1"
}

# maven_jars POM LIB WHAT: the runtime jars of POM copied into LIB by Maven,
# once. LIB/.stamp holds the pom's hash, so editing the pom (a version bump)
# resolves again and an unchanged pom needs no network. WHAT names the jars
# in messages ("the Kafka jars").
maven_jars() {
  local pom="$1" lib="$2" what="$3" stamp t0
  stamp="$(sha256sum "$pom" | cut -d' ' -f1)"
  [[ -f "$lib/.stamp" && "$(cat "$lib/.stamp")" == "$stamp" ]] && return 0
  command -v mvn >/dev/null || die "mvn not found (needed once to fetch $what; on Debian: apt-get install maven)"
  log "resolving $what with Maven into $lib ..."
  t0="$(now)"
  rm -rf "$lib.tmp"
  # Plugin version pinned: Maven 3.8's default dependency plugin is ancient.
  # sed: Debian's mvn 3.8 prints stray colour codes even with -q -B.
  mvn -B -q -f "$pom" \
    org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$lib.tmp" 2>&1 \
    | sed 's/\x1b\[[0-9;]*m//g' >&2 \
    || die "mvn dependency:copy-dependencies failed (see above)"
  echo "$stamp" >"$lib.tmp/.stamp"
  rm -rf "$lib" && mv "$lib.tmp" "$lib"
  log "jars resolved in $(since "$t0")s"
}
