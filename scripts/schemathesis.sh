#!/usr/bin/env bash
# Third-party fuzzing in CI: schemathesis (property-based tests generated from the served
# OpenAPI document) against the real service, started as its own process, once on PGlite in
# memory and once on a throwaway PostgreSQL database. Each backend is fuzzed with a customer token
# and then with an admin token (the admin run may delete anything, the only admin included, so it
# comes last), with every check (`--checks all`) and a fixed seed. Any 5xx, or any response that
# contradicts the document, fails the script. Called by .ci/run before `npm test`.
#
#   bash scripts/schemathesis.sh
#
# Environment (all optional):
#   SCHEMATHESIS_ST     the packed schemathesis (default ../shared/tools/schemathesis/st)
#   ST_BACKENDS         "pglite postgres" (default) or one of them
#   ST_ROLES            "customer admin" (default) or one of them
#   ST_MAX_EXAMPLES     examples per operation and phase (default 30)
#   ST_SEED             hypothesis seed (default 20261123)
#   ST_RUN_TIMEOUT      seconds one `st run` may take before it counts as failed (default 600)
#   ST_REPORT_DIR       where JUnit/NDJSON reports go (default: a temporary directory, removed)
#   ST_PG_ADMIN_URL     a PostgreSQL URL allowed to CREATE/DROP DATABASE
#                       (default: the order_service role of scripts/setup-postgres.sh)
#
# Budget: 2 backends x 2 roles x 19 operations, every phase (examples, coverage, fuzzing,
# stateful). Measured on a shared 2-core machine: 25 examples 6 min 10 s, 40 examples 9 min 24 s
# in all; the default 30 takes about 7 minutes. Each `st run` is cut off (and fails) at
# ST_RUN_TIMEOUT, so a slow machine cannot push CI past its limit.
# Safe to run twice: fresh in-memory data, a free port, and the PostgreSQL database is dropped
# before and after the run.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

st=${SCHEMATHESIS_ST:-../shared/tools/schemathesis/st}
backends=${ST_BACKENDS:-pglite postgres}
roles=${ST_ROLES:-customer admin}
max_examples=${ST_MAX_EXAMPLES:-30}
seed=${ST_SEED:-20261123}
run_timeout=${ST_RUN_TIMEOUT:-600}
pg_admin_url=${ST_PG_ADMIN_URL:-postgres://order_service:order_service@127.0.0.1:5432/postgres}
pg_database=order_service_schemathesis

if [ ! -x "${st}" ]; then
  echo "schemathesis: ${st} not found (CI clones the repository with ../shared beside it)" >&2
  exit 1
fi
st=$(cd "$(dirname "${st}")" && pwd)/$(basename "${st}")

# The service and the tokens share these; none of them is a real secret.
export JWT_SECRET=schemathesis-ci-only-secret-0123456789abcdef
export JWT_ISSUER=order-service JWT_AUDIENCE=order-service-api
admin_email=schemathesis-admin@example.com
admin_password=schemathesis-admin-password
customer_email=schemathesis-customer@example.com
customer_password=schemathesis-customer-password

work=$(mktemp -d "${TMPDIR:-/tmp}/schemathesis.XXXXXX")
report_dir=${ST_REPORT_DIR:-${work}/reports}
mkdir -p "${report_dir}"
service_pid=""
pg_url_used=""

stop_service() {
  [ -n "${service_pid}" ] || return 0
  # The service runs in its own process group (setsid): stop npx, tsx and node together.
  kill -TERM -- "-${service_pid}" 2>/dev/null || true
  for _ in $(seq 1 50); do
    kill -0 "${service_pid}" 2>/dev/null || break
    sleep 0.2
  done
  kill -KILL -- "-${service_pid}" 2>/dev/null || true
  wait "${service_pid}" 2>/dev/null || true
  service_pid=""
}

drop_database() {
  PGOPTIONS='--client-min-messages=warning' psql "${pg_admin_url}" -v ON_ERROR_STOP=1 -q -c "DROP DATABASE IF EXISTS ${pg_database} WITH (FORCE)" >/dev/null
}

cleanup() {
  stop_service
  if [ -n "${pg_url_used}" ]; then drop_database || true; fi
  rm -rf "${work}"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close();});'
}

json_field() {
  node -e 'let s="";process.stdin.on("data",(c)=>s+=c).on("end",()=>{const v=JSON.parse(s)[process.argv[1]];if(v===undefined)process.exit(1);console.log(v);});' "$1"
}

# start_service <DATABASE_URL> <log file>: starts the service and waits for /api/health.
start_service() {
  local database_url=$1 log=$2
  port=$(free_port)
  base="http://127.0.0.1:${port}"
  env NODE_ENV=test HOST=127.0.0.1 PORT="${port}" DATABASE_URL="${database_url}" DATA_DIR="${work}/data" \
    RATE_LIMIT_MAX=1000000 LOG_LEVEL=warn ADMIN_EMAIL="${admin_email}" ADMIN_PASSWORD="${admin_password}" \
    setsid npx tsx server/main.ts >"${log}" 2>&1 &
  service_pid=$!
  for _ in $(seq 1 120); do
    if curl -fsS -o /dev/null "${base}/api/health" 2>/dev/null; then return 0; fi
    if ! kill -0 "${service_pid}" 2>/dev/null; then break; fi
    sleep 0.5
  done
  echo "schemathesis: the service did not become healthy on ${base}; its log:" >&2
  cat "${log}" >&2
  return 1
}

api() {
  # api <method> <path> <token or -> [json body]: prints the body, fails on a non-2xx status.
  local method=$1 path=$2 token=$3 body=${4:-}
  local args=(-sS --fail-with-body -X "${method}" -H 'Accept: application/json')
  [ "${token}" = "-" ] || args+=(-H "Authorization: Bearer ${token}")
  [ -z "${body}" ] || args+=(-H 'Content-Type: application/json' --data-binary "${body}")
  curl "${args[@]}" "${base}${path}"
}

mint() {
  npx --no-install tsx scripts/mint-token.ts "$1" "$2" 7200 2>/dev/null
}

# Prepares a fresh service: finds the bootstrap admin, registers a customer, seeds products and
# orders, and sets admin_token / customer_token.
prepare_data() {
  # On a fresh database the bootstrap admin is the first user (id 1): verify it rather than trust it.
  admin_token=$(mint 1 admin)
  local admin
  admin=$(api GET /api/v1/users/1 "${admin_token}")
  if [ "$(json_field email <<<"${admin}")" != "${admin_email}" ] || [ "$(json_field role <<<"${admin}")" != admin ]; then
    echo "schemathesis: user 1 is not the bootstrap admin: ${admin}" >&2
    return 1
  fi
  local customer customer_id
  customer=$(api POST /api/v1/users - "{\"email\":\"${customer_email}\",\"name\":\"Schemathesis Customer\",\"password\":\"${customer_password}\"}")
  customer_id=$(json_field id <<<"${customer}")
  customer_token=$(mint "${customer_id}" customer)
  local p1 p2 p3
  p1=$(api POST /api/v1/products "${admin_token}" '{"sku":"ST-TEE","name":"Tee","category":"apparel","price":1999,"stock":100000}' | json_field id)
  p2=$(api POST /api/v1/products "${admin_token}" '{"sku":"ST-MUG","name":"Mug","category":"kitchen","price":899,"stock":100000}' | json_field id)
  p3=$(api POST /api/v1/products "${admin_token}" '{"sku":"ST-PEN","name":"Pen","category":"office","price":150,"stock":100000}' | json_field id)
  local order
  for _ in 1 2; do
    api POST /api/v1/orders "${customer_token}" "{\"items\":[{\"product_id\":${p1},\"quantity\":2},{\"product_id\":${p2},\"quantity\":1}],\"address\":\"1 Main St\"}" >/dev/null
  done
  order=$(api POST /api/v1/orders "${customer_token}" "{\"items\":[{\"product_id\":${p3},\"quantity\":3}],\"address\":\"2 Side St\"}" | json_field id)
  api POST "/api/v1/orders/${order}/confirm" "${customer_token}" >/dev/null
}

summary=()
failed=0

# run_schemathesis <backend> <role> <token>
run_schemathesis() {
  local backend=$1 role=$2 token=$3
  local name="${backend}-${role}" log="${work}/st-${backend}-${role}.log" rc=0 started=${SECONDS}
  echo "schemathesis: ${backend}, ${role} token (seed ${seed}, ${max_examples} examples)"
  # Runs in the work directory so that nothing lands in the repository.
  (
    cd "${work}"
    timeout --kill-after=30 "${run_timeout}" "${st}" --config-file "${repo}/scripts/schemathesis.toml" run \
      "${base}/api/openapi.json" \
      --checks all \
      -H "Authorization: Bearer ${token}" \
      --seed "${seed}" \
      --max-examples "${max_examples}" \
      --generation-database none \
      --suppress-health-check filter_too_much,too_slow \
      --request-timeout 30 \
      --no-color \
      --report junit,ndjson --report-dir "${report_dir}/${name}"
  ) >"${log}" 2>&1 || rc=$?
  # The live progress is noise in a CI log: print from the errors or failures (or the summary) on,
  # with schemathesis's "===== TEXT =====" rules written "-- TEXT --". Its closing one ("=== 3
  # warnings in 63.83s ===") has the form of pytest's closing line, and a CI reader that knows
  # pytest reads it as a run of no test: on a passing run (the one that lands) it is left out; a
  # failing run keeps its text (the failure count), as CI fails anyway.
  local rules='s/^=+ (.*) =+$/-- \1 --/' closing='/^=+ .* in [0-9.]+s =+$/d'
  if grep -Eq '^=* (ERRORS|FAILURES) =*$' "${log}"; then
    sed -En '/^=* (ERRORS|FAILURES) =*$/,$p' "${log}" | sed -E "${rules}"
  elif grep -q '^=* SUMMARY =*$' "${log}"; then
    sed -n '/^=* SUMMARY =*$/,$p' "${log}" | sed -E -e "${closing}" -e "${rules}"
  else
    sed -E -e "${closing}" -e "${rules}" "${log}"
  fi
  local cases verdict
  cases=$(grep -Eo '[0-9]+ generated[^│]*' "${log}" | tail -1 || true)
  if [ "${rc}" -eq 0 ]; then
    verdict=passed
  elif [ "${rc}" -eq 124 ]; then
    verdict="FAILED (over the ${run_timeout}s budget)"
    failed=1
  else
    verdict="FAILED (exit ${rc})"
    failed=1
  fi
  summary+=("$(printf '%-9s %-9s %-40s %4ss  %s' "${backend}" "${role}" "${verdict}" "$((SECONDS - started))" "${cases}")")
}

# fuzz_backend <backend> <DATABASE_URL>
fuzz_backend() {
  local backend=$1 database_url=$2
  for role in ${roles}; do
    # A fresh service per role: the admin run may delete what the customer run needs, and the
    # other way round.
    local log="${work}/service-${backend}-${role}.log"
    start_service "${database_url}" "${log}"
    prepare_data
    if [ "${role}" = admin ]; then run_schemathesis "${backend}" admin "${admin_token}"; else run_schemathesis "${backend}" customer "${customer_token}"; fi
    if ! kill -0 "${service_pid}" 2>/dev/null; then
      echo "schemathesis: the service died during the run; its log:" >&2
      cat "${log}" >&2
      failed=1
    elif grep -q '"level":[56]0' "${log}"; then
      echo "service errors logged during the run (${backend}, ${role}):"
      grep '"level":[56]0' "${log}" | head -20
    fi
    stop_service
    if [ "${backend}" = postgres ]; then
      drop_database
      psql "${pg_admin_url}" -v ON_ERROR_STOP=1 -q -c "CREATE DATABASE ${pg_database}" >/dev/null
    fi
  done
}

total_started=${SECONDS}
for backend in ${backends}; do
  case "${backend}" in
    pglite) fuzz_backend pglite memory:// ;;
    postgres)
      pg_url_used=yes
      drop_database
      psql "${pg_admin_url}" -v ON_ERROR_STOP=1 -q -c "CREATE DATABASE ${pg_database}" >/dev/null
      fuzz_backend postgres "${pg_admin_url%/*}/${pg_database}"
      ;;
    *) echo "schemathesis: unknown backend ${backend}" >&2; exit 2 ;;
  esac
done

echo
echo "schemathesis summary (seed ${seed}, ${max_examples} examples per operation, $((SECONDS - total_started))s):"
printf '%s\n' "${summary[@]}"
[ -z "${ST_REPORT_DIR:-}" ] || echo "reports: ${report_dir}"
if [ "${failed}" -ne 0 ]; then
  echo "schemathesis: FAILED: a 5xx or a response that contradicts the document (see above; replay with the seed)" >&2
  exit 1
fi
echo "schemathesis: passed"
