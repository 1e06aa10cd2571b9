# pgbench 15: -i (its tables, COPY of pgbench_accounts, primary keys,
# VACUUM) and a short built-in TPC-B-like run of a fixed number of
# transactions.
. "$(dirname "$0")/lib.sh"
step init
out=$(pgbench -i -s 1 -q 2>&1) || fail "$(printf '%s\n' "$out" | grep -m1 -E 'ERROR|FATAL|error' || printf '%s\n' "$out" | tail -1)"
n=$(q -At -c 'SELECT count(*) FROM pgbench_accounts')
[ "$n" = 100000 ] || fail "pgbench_accounts has $n rows"
step run
out=$(pgbench -n -c 2 -t 50 2>&1) || fail "$(printf '%s\n' "$out" | grep -m1 -E 'ERROR|FATAL|error|aborted' || printf '%s\n' "$out" | tail -1)"
has "$out" 'number of transactions actually processed: 100/100' 'every transaction processed'
n=$(q -At -c 'SELECT count(*) FROM pgbench_history')
[ "$n" = 100 ] || fail "pgbench_history has $n rows"
finish
