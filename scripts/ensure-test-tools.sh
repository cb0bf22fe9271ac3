#!/usr/bin/env bash
# Makes sure what the tests need beyond npm packages is on the machine: Debian's chromium for the
# browser test of the docs page. Runs before `npm test` (pretest); idempotent.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Debian's chromium for the browser tests..."
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
else
  echo "The browser tests need Debian's chromium at /usr/bin/chromium: sudo apt-get install chromium" >&2
  exit 1
fi
