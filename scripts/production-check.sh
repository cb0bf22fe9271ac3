#!/usr/bin/env bash
# The production path of docs/operations.md#installing-for-production, from a clean copy of this
# checkout (its tracked files as they are now: nothing built, nothing installed):
#   1. build, where the dev dependencies are (`npm run build`);
#   2. `npm ci --omit=dev`: the dependencies alone, no esbuild command, no vitest;
#   3. `npm run migrate`, then `MIGRATE_ON_START=false npm run start:prod` in production mode;
#   4. the API, the OpenAPI document and the health check answer; SIGTERM stops it with status 0.
# Issue 36 item 9: `npm ci --omit=dev && npm start` failed with `esbuild: not found`.
# The build step uses this checkout's node_modules (what `npm ci` installed from the same lock file
# for the rest of CI) instead of installing the dev dependencies a second time. Each run works in
# a directory of its own under $TMPDIR, removed at the end, on a port the service picks: safe to
# run twice, and at once.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/order-service-production.XXXXXX")"
app="$work/app"
service=""

say() { printf 'production-check: %s\n' "$*"; }
fail() {
  say "FAILED: $*" >&2
  if [ -f "$work/service.log" ]; then tail -n 40 "$work/service.log" >&2; fi
  exit 1
}
cleanup() {
  # The service was started in a process group of its own (setsid): end that group only.
  if [ -n "$service" ] && kill -0 "$service" 2>/dev/null; then kill -KILL -- "-$service" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

[ -d "$root/node_modules/.bin" ] || fail "run npm ci in $root first (the build step uses its dev dependencies)"

mkdir -p "$app"
# Tracked files only (`git ls-files`), as they are in the working tree; one deleted but not yet
# committed is skipped.
(cd "$root" && git ls-files -z | tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -xf - -C "$app"
[ -f "$app/package-lock.json" ] || fail "no package-lock.json in the copy"

say "build (dev dependencies)"
ln -s "$root/node_modules" "$app/node_modules"
(cd "$app" && npm run build --silent)
rm "$app/node_modules" # the link only
[ -f "$app/dist/server/main.mjs" ] || fail "npm run build wrote no dist/server/main.mjs"

say "npm ci --omit=dev"
(cd "$app" && npm ci --omit=dev --prefer-offline --no-audit --no-fund --loglevel=error >"$work/install.log" 2>&1) || {
  cat "$work/install.log" >&2
  fail "npm ci --omit=dev"
}
[ ! -e "$app/node_modules/.bin/esbuild" ] || fail "esbuild's command is installed: the check would not show the service runs without it"
[ ! -e "$app/node_modules/vitest" ] || fail "vitest is installed: dev dependencies were not omitted"

export NODE_ENV=production HOST=127.0.0.1 PORT=0 DATA_DIR="$work/data" PUBLIC_URL=http://127.0.0.1 TRUST_PROXY=true SHUTDOWN_DELAY_MS=0
JWT_SECRET="$(head -c 48 /dev/urandom | base64 | tr -d '\n')"
export JWT_SECRET
unset DATABASE_URL

say "npm run migrate"
(cd "$app" && npm run migrate --silent) >"$work/migrate.log" 2>&1 || {
  cat "$work/migrate.log" >&2
  fail "npm run migrate"
}

say "npm run start:prod"
cd "$app"
MIGRATE_ON_START=false setsid npm run start:prod --silent >"$work/service.log" 2>&1 &
service=$!
base=""
for _ in $(seq 1 240); do
  base="$(grep -o 'Server listening at http://127\.0\.0\.1:[0-9]*' "$work/service.log" | head -n 1 | sed 's/^Server listening at //' || true)"
  [ -n "$base" ] && break
  kill -0 "$service" 2>/dev/null || fail "the service exited before it listened"
  sleep 0.5
done
[ -n "$base" ] || fail "the service did not listen within 2 minutes"

for path in /api/health /api/v1/products /api/openapi.json; do
  status="$(curl -s --max-time 30 -o /dev/null -w '%{http_code}' "$base$path")"
  [ "$status" = 200 ] || fail "GET $path answered $status"
done

# SIGTERM to the service's node process (its pid is on every log line), as a process manager
# stops it; npm passes on its exit status.
node_pid="$(grep -o '"pid":[0-9]*' "$work/service.log" | head -n 1 | cut -d: -f2)"
[ -n "$node_pid" ] || fail "no pid in the service's log"
kill -TERM "$node_pid"
code=0
wait "$service" || code=$?
service=""
[ "$code" = 0 ] || fail "npm run start:prod exited $code after SIGTERM"
grep -q '"msg":"stopped"' "$work/service.log" || fail "no graceful stop logged"
say "ok: built, installed without dev dependencies, migrated, served $base and stopped"
