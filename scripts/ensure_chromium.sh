#!/usr/bin/env bash
# Make Debian's chromium available for the browser tests. Playwright cannot download
# its own browser here, so the tests launch /usr/bin/chromium by path.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  echo "installing Debian's chromium for the browser tests..."
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
elif command -v apt-get >/dev/null 2>&1 && command -v sudo >/dev/null 2>&1; then
  sudo apt-get update -qq
  sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
if ! command -v chromium >/dev/null 2>&1; then
  if [ "${CI:-}" = "true" ]; then
    echo "chromium is missing and could not be installed: browser tests cannot run in CI" >&2
    exit 1
  fi
  echo "chromium not found: the browser tests will be skipped (install Debian's chromium to run them)" >&2
fi
