#!/usr/bin/env bash
# A fast slice of the suite on other Node versions than the machine's (docs/testing.md#node-versions):
#   bash scripts/test-node-versions.sh              # Node 22 and 24
#   bash scripts/test-node-versions.sh 24 25        # those majors
#   NODE_VERSIONS_TESTS="test/api/orders.test.ts" bash scripts/test-node-versions.sh 22
# Each version comes from the npm registry's `node` package, which ships the binaries (npx caches
# it: the first run downloads about 30 MB per version). The slice runs on PGlite: the pure rules
# (test/unit), the API over HTTP for products and orders (fastify's
# inject, and so cookie@2, which wants Node 22), and the production bundle built and started
# under that version (its service process runs on the same node). The whole suite runs once, on
# the machine's Node, in `npm test`.
set -euo pipefail
cd "$(dirname "$0")/.."

versions=("$@")
[ "${#versions[@]}" -gt 0 ] || versions=(22 24)
read -r -a tests <<<"${NODE_VERSIONS_TESTS:-test/unit test/api/products.test.ts test/api/orders.test.ts test/api/production-bundle.test.ts}"

for version in "${versions[@]}"; do
  printf 'node-versions: Node %s: %s\n' "$version" "${tests[*]}"
  # --project pglite: the PostgreSQL project (TEST_DATABASE_URL) runs in `npm test`.
  npx --yes -p "node@$version" -- node -e 'console.log(`node-versions: running on ${process.version}`)'
  npx --yes -p "node@$version" -- node node_modules/vitest/vitest.mjs run --project pglite "${tests[@]}"
done
