# Debian packages for the service scripts, one apt at a time: sourced by
# etcd.sh, prometheus.sh, postgres.sh and test-all.sh.
#
# `pnpm services:up` starts the services in parallel, so on a fresh machine
# several scripts install at once; two `apt-get update`s then fail on the
# package lists' lock (DPkg::Lock::Timeout waits only on dpkg's own lock).
# The flock on one file under /tmp serialises every install of every clone
# on the machine.

# debian_install [apt-get install options...] PACKAGE...: updates the lists
# only when they lack one of the packages named, then installs.
debian_install() {
  local lock="${TMPDIR:-/tmp}/thalweg-apt.lock" arg need_update=0
  for arg in "$@"; do
    [[ "$arg" == -* ]] && continue
    apt-cache policy "$arg" 2>/dev/null | grep -q 'Candidate: [0-9]' || need_update=1
  done
  (
    flock -w 600 9 || { echo "debian-install: another apt-get held $lock for 10 minutes" >&2; exit 1; }
    if ((need_update)); then apt-get -o DPkg::Lock::Timeout=300 update -qq >&2; fi
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq "$@" >&2
  ) 9>"$lock"
}
