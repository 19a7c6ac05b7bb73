#!/usr/bin/env bash
# Debian packages the test suite drives: chromium for the browser tests (Playwright cannot
# download its own browser here, so the tests launch /usr/bin/chromium by path), nginx for
# the scale-out test (two app processes behind one proxy), postgresql for the class room's store
# tests (a throwaway server on a loopback port, tests/room_postgres.py), trans-de-en (Ding's everyday
# English sentences, the second stage of MiniLM's MLM head) and wordnet-base, the real English
# the lab's MLM is trained on (make train, and the test that rebuilds its training text).
set -euo pipefail

# With arguments, only those of the packages are considered (make train asks for wordnet-base).
only=" ${*:-chromium nginx postgresql wordnet-base trans-de-en} "

missing() {  # the packages not installed yet, space-separated
  local out=()
  [[ $only == *" chromium "* ]] && ! command -v chromium >/dev/null 2>&1 && out+=(chromium)
  [[ $only == *" nginx "* ]] && ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ] && out+=(nginx)
  [[ $only == *" postgresql "* ]] && ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null && out+=(postgresql)
  [[ $only == *" wordnet-base "* ]] && [ ! -f /usr/share/wordnet/data.noun ] && out+=(wordnet-base)
  [[ $only == *" trans-de-en "* ]] && [ ! -f /usr/share/trans/de-en ] && out+=(trans-de-en)
  echo "${out[*]:-}"
}

wanted=$(missing)
[ -z "$wanted" ] && exit 0
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
if command -v apt-get >/dev/null 2>&1 && { [ -z "$sudo" ] || command -v sudo >/dev/null 2>&1; }; then
  echo "installing Debian's $wanted for the tests..."
  $sudo apt-get update -qq
  # shellcheck disable=SC2086  # one word per package
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $wanted >/dev/null
fi
still=$(missing)
if [ -n "$still" ]; then
  if [ "${CI:-}" = "true" ]; then
    echo "$still missing and could not be installed: the tests that need them cannot run in CI" >&2
    exit 1
  fi
  echo "$still not found: the tests that need them will be skipped" >&2
fi
