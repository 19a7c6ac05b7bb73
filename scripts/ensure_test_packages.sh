#!/usr/bin/env bash
# Debian packages the test suite drives: chromium for the browser tests (Playwright cannot
# download its own browser here, so the tests launch /usr/bin/chromium by path) and nginx for
# the scale-out test (two app processes behind one proxy).
set -euo pipefail

missing() {  # the packages not installed yet, space-separated
  local out=()
  command -v chromium >/dev/null 2>&1 || out+=(chromium)
  command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || out+=(nginx)
  echo "${out[*]:-}"
}

wanted=$(missing)
[ -z "$wanted" ] && exit 0
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
if command -v apt-get >/dev/null 2>&1 && { [ -z "$sudo" ] || command -v sudo >/dev/null 2>&1; }; then
  echo "installing Debian's $wanted for the browser tests..."
  $sudo apt-get update -qq
  # shellcheck disable=SC2086  # one word per package
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $wanted >/dev/null
fi
still=$(missing)
if [ -n "$still" ]; then
  if [ "${CI:-}" = "true" ]; then
    echo "$still missing and could not be installed: the browser tests cannot run in CI" >&2
    exit 1
  fi
  echo "$still not found: the tests that need them will be skipped" >&2
fi
