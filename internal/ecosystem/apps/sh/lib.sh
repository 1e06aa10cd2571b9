# Shared by the shell apps of the ecosystem suite. `step NAME` names the
# current step (and says "ok" of the one before, as the other apps do);
# `finish` says "ok" of the last; `fail MSG` prints "FAIL step: MSG" and
# exits 1; `q ARGS`
# runs psql quietly, stopping on the first error, and fails the step with
# psql's first error line.
set -u
cur=start
step() { [ "$cur" = start ] || echo "ok $cur"; cur=$1; }
finish() { echo "ok $cur"; }
fail() { echo "FAIL $cur: $*"; exit 1; }
q() {
	local out
	out=$(psql -X -q -v ON_ERROR_STOP=1 "$@" 2>&1) || fail "$(printf '%s\n' "$out" | grep -m1 -E 'ERROR|FATAL|error|psql:' || printf '%s\n' "$out" | tail -1)"
	printf '%s\n' "$out"
}
# has TEXT PATTERN WHAT: fail unless TEXT matches the extended regexp.
has() { printf '%s\n' "$1" | grep -Eq "$2" || { printf '%s\n' "$1"; fail "$3: no match for /$2/"; }; }
