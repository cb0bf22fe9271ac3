#!/usr/bin/env bash
# Makes sure what the tests need beyond npm packages is on the machine: Debian's chromium for the
# browser tests (the docs page, the sign-in form, the storefront example: its npm packages it
# installs itself), Debian's redis-server for the test of one rate limit shared by two processes,
# Debian's nginx for the test of three instances behind deploy/nginx.conf (it runs its
# own nginx process; the package's service is not needed). Runs before `npm test` (pretest) and in
# .ci/run; idempotent, and apt-get update runs at most once, only when the install needs it.
set -euo pipefail
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
# /usr/sbin may not be on an unprivileged user's PATH.
[ -x /usr/sbin/nginx ] || command -v nginx >/dev/null 2>&1 || missing+=(nginx)
if [ "${#missing[@]}" -eq 0 ]; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Debian's ${missing[*]} for the tests..."
  install() { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; }
  # The package lists are fetched only when they lack the packages (a fresh machine) or are stale.
  install 2>/dev/null || { apt-get update -qq && install; }
else
  echo "The tests need Debian's ${missing[*]} (/usr/bin/chromium, /usr/bin/redis-server, /usr/sbin/nginx): sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
