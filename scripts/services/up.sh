#!/usr/bin/env bash
# Starts the services the integration tests need (idempotent) and prints their
# endpoints as `export NAME=value` lines, so `eval "$(pnpm -s services:up)"`
# configures a shell. A service whose variables are already set is the user's
# own: it is not started, and its variables are echoed back unchanged.
# Any service that fails to start fails the whole command (CI never skips).
# Iceberg keeps its warehouse in S3: it starts once S3 is ready, with S3's
# variables, while the others go on starting.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# name -> the variable whose presence means "the user brought their own".
declare -A own=(
  [postgres]=THALWEG_PG_URL
  [kafka]=THALWEG_KAFKA_BROKERS
  [s3]=THALWEG_S3_ENDPOINT
  [prometheus]=THALWEG_PROMETHEUS_URL
  [pulsar]=THALWEG_PULSAR_URL
  [flight]=THALWEG_FLIGHT_URL
  [etcd]=THALWEG_ETCD_ENDPOINTS
)
declare -A pids=()

for name in postgres kafka s3 prometheus pulsar flight etcd; do
  var=${own[$name]}
  if [ -n "${!var:-}" ]; then
    echo "$name: using $var=${!var} from the environment" >&2
    case $name in
      s3)
        for v in THALWEG_S3_ENDPOINT THALWEG_S3_REGION THALWEG_S3_ACCESS_KEY THALWEG_S3_SECRET_KEY; do
          if [ -z "${!v:-}" ]; then echo "s3: $v must be set too when THALWEG_S3_ENDPOINT is" >&2; exit 1; fi
          echo "export $v=${!v}" >>"$out/$name"
        done
        ;;
      prometheus)
        if [ -z "${THALWEG_PROMETHEUS_TARGETS:-}" ]; then
          echo "prometheus: THALWEG_PROMETHEUS_TARGETS (the directory its file_sd_configs watch) must be set too when THALWEG_PROMETHEUS_URL is" >&2
          exit 1
        fi
        promtool=${THALWEG_PROMTOOL:-$(command -v promtool || true)}
        if [ -z "$promtool" ]; then
          echo "prometheus: set THALWEG_PROMTOOL, or put promtool on the PATH (Debian's prometheus package has it)" >&2
          exit 1
        fi
        printf 'export %s\n' "THALWEG_PROMETHEUS_URL=$THALWEG_PROMETHEUS_URL" \
          "THALWEG_PROMETHEUS_TARGETS=$THALWEG_PROMETHEUS_TARGETS" "THALWEG_PROMTOOL=$promtool" >"$out/$name"
        ;;
      pulsar)
        for v in THALWEG_PULSAR_URL THALWEG_PULSAR_WS_URL THALWEG_PULSAR_ADMIN_URL; do
          if [ -z "${!v:-}" ]; then echo "pulsar: $v must be set too when THALWEG_PULSAR_URL is" >&2; exit 1; fi
          echo "export $v=${!v}" >>"$out/$name"
        done
        ;;
      flight)
        # The tests spawn the Flight peers (ipc_producer.py, read_back.py) with a Python that has pyarrow.
        if [ -z "${THALWEG_FLIGHT_PYTHON:-}" ]; then
          echo "flight: THALWEG_FLIGHT_PYTHON (a Python with pyarrow) must be set too when THALWEG_FLIGHT_URL is" >&2
          exit 1
        fi
        printf 'export %s\n' "THALWEG_FLIGHT_URL=$THALWEG_FLIGHT_URL" "THALWEG_FLIGHT_PYTHON=$THALWEG_FLIGHT_PYTHON" >"$out/$name"
        ;;
      *) echo "export $var=${!var}" >"$out/$name" ;;
    esac
    continue
  fi
  bash "$here/$name.sh" up >"$out/$name" &
  pids[$name]=$!
done

failed=()
if [ -n "${pids[s3]:-}" ]; then
  if ! wait "${pids[s3]}"; then failed+=(s3); fi
  unset 'pids[s3]'
fi
if [ -n "${THALWEG_ICEBERG_URL:-}" ]; then
  echo "iceberg: using THALWEG_ICEBERG_URL=$THALWEG_ICEBERG_URL from the environment" >&2
  # The tests spawn the Iceberg peers (write_table.py, read_table.py) with a Python that has pyiceberg.
  for v in THALWEG_ICEBERG_WAREHOUSE THALWEG_ICEBERG_PYTHON; do
    if [ -z "${!v:-}" ]; then echo "iceberg: $v must be set too when THALWEG_ICEBERG_URL is" >&2; exit 1; fi
  done
  printf 'export %s\n' "THALWEG_ICEBERG_URL=$THALWEG_ICEBERG_URL" \
    "THALWEG_ICEBERG_WAREHOUSE=$THALWEG_ICEBERG_WAREHOUSE" "THALWEG_ICEBERG_PYTHON=$THALWEG_ICEBERG_PYTHON" >"$out/iceberg"
elif [ ${#failed[@]} -eq 0 ]; then
  # shellcheck source=/dev/null
  (set -a && . "$out/s3" && set +a && exec bash "$here/iceberg.sh" up) >"$out/iceberg" &
  pids[iceberg]=$!
else
  echo "iceberg: not started, since s3 failed" >&2
  failed+=(iceberg)
fi

for name in "${!pids[@]}"; do
  if ! wait "${pids[$name]}"; then failed+=("$name"); fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "services:up failed: ${failed[*]} (see the messages above)" >&2
  exit 1
fi
cat "$out/postgres" "$out/kafka" "$out/s3" "$out/prometheus" "$out/pulsar" "$out/flight" "$out/etcd" "$out/iceberg"
