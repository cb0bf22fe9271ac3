#!/usr/bin/env bash
# Starts the machine's PostgreSQL cluster and makes sure the test role and database exist.
# Idempotent. Needs root (the server runs as the postgres user).
set -euo pipefail

if ! command -v pg_ctlcluster >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi

version=$(pg_lsclusters -h | awk 'NR==1 {print $1}')
cluster=$(pg_lsclusters -h | awk 'NR==1 {print $2}')
if [ -z "${version}" ]; then
  echo "no PostgreSQL cluster found" >&2
  exit 1
fi
status=$(pg_lsclusters -h | awk 'NR==1 {print $4}')
if [ "${status}" != "online" ]; then
  pg_ctlcluster "${version}" "${cluster}" start
fi

for _ in $(seq 1 30); do
  if su postgres -c "pg_isready -q -h 127.0.0.1 -p 5432"; then break; fi
  sleep 1
done

su postgres -c "psql -v ON_ERROR_STOP=1 -q" <<'SQL'
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'order_service') THEN
    CREATE ROLE order_service LOGIN CREATEDB PASSWORD 'order_service';
  ELSE
    ALTER ROLE order_service LOGIN CREATEDB PASSWORD 'order_service';
  END IF;
END $$;
-- DROP DATABASE ... WITH (FORCE) from a role that is not a superuser is refused while an
-- autovacuum worker is in that database; the tests drop their own copies that way.
GRANT pg_signal_backend TO order_service;
SELECT 'CREATE DATABASE order_service_test OWNER order_service'
WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'order_service_test')\gexec
SQL
echo "PostgreSQL ${version}/${cluster} is up; database order_service_test is ready."
