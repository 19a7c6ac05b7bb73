#!/usr/bin/env bash
# Debian packages the test suite drives: chromium for the browser tests (Playwright cannot
# download its own browser here, so the tests launch /usr/bin/chromium by path) and nginx for
# the scale-out test (two app processes behind one proxy).
set -euo pipefail
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
if command -v apt-get >/dev/null 2>&1 && { [ -z "$sudo" ] || command -v sudo >/dev/null 2>&1; }; then
  echo "installing Debian's ${missing[*]} for the browser tests..."
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
still=()
command -v chromium >/dev/null 2>&1 || still+=(chromium)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || still+=(nginx)
if [ ${#still[@]} -gt 0 ]; then
  if [ "${CI:-}" = "true" ]; then
    echo "${still[*]} missing and could not be installed: the browser tests cannot run in CI" >&2
    exit 1
  fi
  echo "${still[*]} not found: the tests that need them will be skipped" >&2
fi
