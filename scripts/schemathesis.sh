#!/usr/bin/env bash
# Third-party fuzzing in CI: schemathesis (property-based tests generated from the served
# OpenAPI document) against the real service, started as its own process, once on PGlite in
# memory and once on a throwaway PostgreSQL database. Each backend is fuzzed with a customer token
# and then with an admin token (the admin run may delete anything, the only admin included, so it
# comes last), with every check (`--checks all`) and a fixed seed: the examples, coverage and
# fuzzing phases operation by operation, and (admin, first) the stateful phase, scenarios of up to
# 10 requests that follow the document's links (order, confirm, pay, ship; create, read, change,
# delete; renew and revoke a token). Any 5xx, or any response that contradicts the document,
# fails the script. Called by .ci/run before `npm test`.
#
#   bash scripts/schemathesis.sh
#
# Environment (all optional):
#   SCHEMATHESIS_ST     the packed schemathesis (default ../shared/tools/schemathesis/st)
#   ST_BACKENDS         "pglite postgres" (default) or one of them
#   ST_ROLES            "customer admin" (default) or one of them
#   ST_MAX_EXAMPLES     examples per operation of the fuzzing phase (default 30)
#   ST_STATEFUL_SCENARIOS  scenarios of the stateful phase, each at most 10 steps (default 50)
#   ST_PHASES_ADMIN     the admin run's phases (default examples,coverage,fuzzing,stateful)
#   ST_PHASES_CUSTOMER  the customer run's phases (default examples,fuzzing; see Budget)
#   ST_PHASES           the phases of every run, instead of the two above
#   ST_SEED             hypothesis seed (default 20261123)
#   ST_RUN_TIMEOUT      seconds one `st run` may take before it counts as failed (default 600)
#   ST_TIME_BUDGET      seconds the whole script may take (default 1500): a run gets at most what
#                       is left, and a run that would start with less than 30 s fails unrun
#   ST_REPORT_DIR       where JUnit/NDJSON reports go (default: a temporary directory, removed)
#   ST_PG_ADMIN_URL     a PostgreSQL URL allowed to CREATE/DROP DATABASE
#                       (default: the order_service role of scripts/setup-postgres.sh)
#
# Budget: 2 backends x 34 operations x (a customer run: examples and fuzzing; an admin run: the
# stateful phase, then examples, coverage and fuzzing). The summary gives each run's CPU time
# (schemathesis and the service), about what it takes on a quiet machine. Measured on a busy
# 2-core machine (load 8-9), PGlite / PostgreSQL, CPU seconds: customer 64 / 60, admin stateful
# 56 / 50, admin examples-coverage-fuzzing 132 / 117: about 8 minutes of CPU in all (19 minutes of
# wall time there). The coverage phase (boundary values of every schema) is most of it; a customer
# meets 403 before any validation on most operations, so it is the admin run's. A slow machine is
# cut off, failing: each run at ST_RUN_TIMEOUT, the whole script at ST_TIME_BUDGET.
# Safe to run twice: fresh in-memory data, a free port, and the PostgreSQL database is dropped
# before and after the run.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

st=${SCHEMATHESIS_ST:-../shared/tools/schemathesis/st}
backends=${ST_BACKENDS:-pglite postgres}
roles=${ST_ROLES:-customer admin}
max_examples=${ST_MAX_EXAMPLES:-30}
stateful_scenarios=${ST_STATEFUL_SCENARIOS:-50}
phases_admin=${ST_PHASES:-${ST_PHASES_ADMIN:-examples,coverage,fuzzing,stateful}}
phases_customer=${ST_PHASES:-${ST_PHASES_CUSTOMER:-examples,fuzzing}}
seed=${ST_SEED:-20261123}
run_timeout=${ST_RUN_TIMEOUT:-600}
time_budget=${ST_TIME_BUDGET:-1500}
pg_admin_url=${ST_PG_ADMIN_URL:-postgres://order_service:order_service@127.0.0.1:5432/postgres}
# One database per run: two runs on one machine (two checkouts) never drop each other's.
pg_database=order_service_schemathesis_$$

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
# scripts/schemathesis.toml names the customer's credentials too (the password grant's dictionary).
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
    RATE_LIMIT_MAX=1000000 OAUTH_RATE_LIMIT_MAX=1000000 LOG_LEVEL=warn ADMIN_EMAIL="${admin_email}" ADMIN_PASSWORD="${admin_password}" \
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

# CPU seconds the service's processes (its process group: npx, tsx, node) have used so far.
service_cpu() {
  ps -eo pgid=,times= | awk -v group="${service_pid}" '$1 == group { s += $2 } END { printf "%d", s }'
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
# orders, registers a confidential OAuth client, and sets admin_token / customer_token and
# ST_CLIENT_ID / ST_CLIENT_SECRET (the `clientBasic` credentials schemathesis.toml reads).
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
  # First-party and confidential: client credentials, and password grants (with refresh tokens)
  # for the customer whose credentials the toml's dictionary offers.
  local client
  client=$(api POST /api/v1/clients "${admin_token}" '{"name":"Schemathesis","grant_types":["client_credentials","password","refresh_token"],"scopes":["orders:read","orders:write","payments:write","users:read"],"first_party":true,"confidential":true}')
  ST_CLIENT_ID=$(json_field client_id <<<"${client}")
  ST_CLIENT_SECRET=$(json_field client_secret <<<"${client}")
  export ST_CLIENT_ID ST_CLIENT_SECRET
}

summary=()
failed=0
total_started=${SECONDS}

# run_schemathesis <backend> <role> <token> <part> <schemathesis options...>: one `st run`.
run_schemathesis() {
  local backend=$1 role=$2 token=$3 part=$4
  shift 4
  local name="${backend}-${role}-${part}" log="${work}/st-${backend}-${role}-${part}.log" rc=0 started=${SECONDS}
  # Each run gets ST_RUN_TIMEOUT, and no more than what is left of ST_TIME_BUDGET for the script.
  local limit=$((time_budget - (SECONDS - total_started)))
  [ "${limit}" -le "${run_timeout}" ] || limit=${run_timeout}
  if [ "${limit}" -lt 30 ]; then
    summary+=("$(printf '%-9s %-9s %-9s FAILED (not run: the %ss budget is spent)' "${backend}" "${role}" "${part}" "${time_budget}")")
    failed=1
    return 0
  fi
  echo "schemathesis: ${backend}, ${role} token, ${part} (seed ${seed}: $*)"
  local service_cpu_before
  service_cpu_before=$(service_cpu)
  # Runs in the work directory so that nothing lands in the repository.
  (
    cd "${work}"
    st_rc=0
    # The token goes where the document asks for bearerAuth (schemathesis.toml), not on every
    # request: the OAuth endpoints take the client's HTTP Basic instead.
    ST_BEARER_TOKEN="${token}" timeout --kill-after=30 "${limit}" "${st}" --config-file "${repo}/scripts/schemathesis.toml" run \
      "${base}/api/openapi.json" \
      --checks all \
      "$@" \
      --seed "${seed}" \
      --generation-database none \
      --suppress-health-check filter_too_much,too_slow \
      --request-timeout 30 \
      --no-color \
      --report junit,ndjson --report-dir "${report_dir}/${name}" || st_rc=$?
    # The CPU schemathesis used (its children's user and system time): on a busy machine the
    # wall time says little about what the run costs on a quiet one.
    times >"${work}/cpu-${name}"
    exit "${st_rc}"
  ) >"${log}" 2>&1 || rc=$?
  local st_cpu service_cpu_used
  st_cpu=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); s += t[1] * 60 + t[2] } } END { printf "%d", s }' "${work}/cpu-${name}" 2>/dev/null || echo '?')
  service_cpu_used=$(($(service_cpu) - service_cpu_before))
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
  local cases links verdict
  cases=$(grep -Eo '[0-9]+ generated[^│]*' "${log}" | tail -1 || true)
  # The stateful phase's "API Links: 9 covered / 40 selected / 40 total": links it followed.
  links=$(grep -Eo 'API Links: +[0-9]+ covered / [0-9]+ selected / [0-9]+ total( \([0-9]+ inferred\))?' "${log}" | tail -1 | sed -E 's/API Links: +/links /' || true)
  if [ "${rc}" -eq 0 ]; then
    verdict=passed
  elif [ "${rc}" -eq 124 ]; then
    verdict="FAILED (cut at ${limit}s: over budget)"
    failed=1
  else
    verdict="FAILED (exit ${rc})"
    failed=1
  fi
  summary+=("$(printf '%-9s %-9s %-9s %-32s %4ss (CPU: st %4ss, service %4ss)  %s%s' "${backend}" "${role}" "${part}" "${verdict}" "$((SECONDS - started))" "${st_cpu}" "${service_cpu_used}" "${cases% }" "${links:+; ${links}}")")
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
    local token=${customer_token} phases=${phases_customer}
    [ "${role}" = customer ] || { token=${admin_token}; phases=${phases_admin}; }
    local unit_phases
    unit_phases=$(tr ',' '\n' <<<"${phases}" | grep -vx stateful | paste -sd, - || true)
    # The stateful phase first, while the data is as prepare_data left it (the other phases spend
    # idempotency keys a scenario would replay, and delete the OAuth client), with its own budget:
    # scenarios of valid steps along the document's links (on the command line: --max-examples and
    # --mode there override the configuration file's). Then every other phase, ST_MAX_EXAMPLES each.
    if tr ',' '\n' <<<"${phases}" | grep -qx stateful; then
      run_schemathesis "${backend}" "${role}" "${token}" stateful --phases stateful --max-examples "${stateful_scenarios}" --mode positive
    fi
    if [ -n "${unit_phases}" ]; then
      run_schemathesis "${backend}" "${role}" "${token}" unit --phases "${unit_phases}" --max-examples "${max_examples}"
    fi
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
echo "schemathesis summary (seed ${seed}, ${max_examples} examples per operation, ${stateful_scenarios} stateful scenarios; $((SECONDS - total_started))s of the ${time_budget}s budget):"
printf '%s\n' "${summary[@]}"
[ -z "${ST_REPORT_DIR:-}" ] || echo "reports: ${report_dir}"
if [ "${failed}" -ne 0 ]; then
  echo "schemathesis: FAILED: a 5xx or a response that contradicts the document (see above; replay with the seed)" >&2
  exit 1
fi
echo "schemathesis: passed"
