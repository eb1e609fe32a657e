#!/usr/bin/env bash
# Installs what Redline needs on a fresh Debian machine with Node >= 20.19: pnpm, nats-server
# (apt) and the workspace's packages. Safe to run again: each step is skipped when done.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v pnpm >/dev/null 2>&1 || [ "$(pnpm --version 2>/dev/null)" != "10.34.9" ]; then
  npm install -g pnpm@10.34.9 >/dev/null
fi

if ! command -v nats-server >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nats-server >/dev/null
  else
    echo "nats-server is missing: install it, or set NATS_URL to an existing server" >&2
  fi
fi

# PDF export prints with headless Chromium; `pnpm bench` compares with pandoc and pdftotext.
MISSING=""
command -v chromium >/dev/null 2>&1 || MISSING="$MISSING chromium"
command -v pandoc >/dev/null 2>&1 || MISSING="$MISSING pandoc"
command -v pdftotext >/dev/null 2>&1 || MISSING="$MISSING poppler-utils"
if [ -n "$MISSING" ]; then
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq >/dev/null
    # shellcheck disable=SC2086 # one word per package
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $MISSING >/dev/null
  else
    echo "missing:$MISSING (PDF export needs chromium; pnpm bench needs pandoc and pdftotext)" >&2
  fi
fi

pnpm install --frozen-lockfile --reporter=silent
pnpm --silent codegen
