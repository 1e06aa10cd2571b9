#!/usr/bin/env bash
# Installs the database engines the integration tests start (PostgreSQL 15
# server binaries and MariaDB), and the clients they drive (psql, pgbench,
# psycopg2, PgBouncer), from Debian's packages, when they are missing. Tests start their own throw-away servers; nothing is configured
# here and no service is left running.
set -euo pipefail

need=()
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || need+=(postgresql)
command -v mariadbd >/dev/null 2>&1 || command -v mysqld >/dev/null 2>&1 || need+=(mariadb-server)
command -v psql >/dev/null 2>&1 || need+=(postgresql-client)
# psycopg2 for the COPY client test (TestCopyClients).
/usr/bin/python3 -c 'import psycopg2' >/dev/null 2>&1 || need+=(python3-psycopg2)
# PgBouncer, which the benchmarks compare passthrough with
# (testenv.StartPgBouncer).
command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] || need+=(pgbouncer)
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "install-engines: missing ${need[*]}; run as root or: sudo apt-get install -y ${need[*]}" >&2
  exit 1
fi
echo "install-engines: installing ${need[*]} from Debian's packages"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# policy-rc.d keeps the packages from starting system services: tests run
# their own servers on free ports.
# It is removed again however the install ends, unless it was there before
# (the host's own), so the test command leaves the host's services as it
# found them.
if [ ! -e /usr/sbin/policy-rc.d ]; then
	trap 'rm -f /usr/sbin/policy-rc.d' EXIT
	printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
fi
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
