#!/usr/bin/env bash
# Makes sure what the tests need beyond npm packages is on the machine: Debian's chromium for the
# browser test of the docs page, Debian's redis-server for the test of one rate limit shared by two
# processes. Runs before `npm test` (pretest) and in .ci/run; idempotent.
set -euo pipefail
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
if [ "${#missing[@]}" -eq 0 ]; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Debian's ${missing[*]} for the tests..."
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
else
  echo "The tests need Debian's ${missing[*]} (/usr/bin/chromium, /usr/bin/redis-server): sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
