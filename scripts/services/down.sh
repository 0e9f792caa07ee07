#!/usr/bin/env bash
# Stops the services that services:up started (never a service of the user's own).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
status=0
for name in iceberg etcd flight pulsar prometheus s3 kafka postgres; do
  bash "$here/$name.sh" down || status=1
done
exit $status
