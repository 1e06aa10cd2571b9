#!/usr/bin/env bash
# Measures what the proxy costs: pgbench select-only (-S) against one
# PostgreSQL directly and through shepherd in passthrough mode, alternating
# in one run, and prints the throughput ratio. The machine is shared and
# noisy, so only the ratio of runs taken side by side means anything.
#
#   bench/passthrough-pgbench.sh [seconds-per-run] [clients] [rounds]
set -euo pipefail
secs=${1:-10}; clients=${2:-8}; rounds=${3:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
work=$(mktemp -d); chmod 755 "$work"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
sport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cleanup() {
  [ -n "${shep:-}" ] && kill "$shep" 2>/dev/null || true
  runuser -u postgres -- "$pgbin/pg_ctl" -D "$work/pg" -m fast stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir "$work/pg" && chown postgres "$work/pg"
runuser -u postgres -- "$pgbin/initdb" -D "$work/pg" -A trust -U postgres >/dev/null
runuser -u postgres -- "$pgbin/pg_ctl" -D "$work/pg" -l "$work/pg/log" -o "-p $port -k $work/pg -c listen_addresses=127.0.0.1" -w start >/dev/null
pgbench -h 127.0.0.1 -p "$port" -U postgres -i -s 1 -q postgres >/dev/null 2>&1
cat > "$work/shepherd.toml" <<TOML
listen = "127.0.0.1:$sport"
data_dir = "$work/data"
mode = "passthrough"
f = 0
[[replicas]]
name = "pg"
driver = "postgres"
dsn = "postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
TOML
(cd "$root" && go build -o "$work/shepherd" ./cmd/shepherd)
"$work/shepherd" serve --config "$work/shepherd.toml" >"$work/shepherd.log" 2>&1 &
shep=$!
for _ in $(seq 100); do pg_isready -q -h 127.0.0.1 -p "$sport" && break; sleep 0.1; done
run() { pgbench -h 127.0.0.1 -p "$1" -U postgres -n -S -M "$2" -c "$clients" -j 2 -T "$secs" postgres 2>&1 | sed -n 's/^tps = \([0-9.]*\) .*/\1/p'; }
for mode in simple prepared; do
  d=0; p=0
  for _ in $(seq "$rounds"); do
    d=$(awk -v a="$d" -v b="$(run "$port" "$mode")" 'BEGIN{print a+b}')
    p=$(awk -v a="$p" -v b="$(run "$sport" "$mode")" 'BEGIN{print a+b}')
  done
  awk -v m="$mode" -v c="$clients" -v d="$d" -v p="$p" -v r="$rounds" 'BEGIN{
    printf "select-only -M %-8s clients=%d: direct %.0f tps, via shepherd passthrough %.0f tps, ratio %.2f\n", m, c, d/r, p/r, p/d}'
done
