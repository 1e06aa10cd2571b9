package sim

import (
	"crypto/sha256"
	"math/rand/v2"
	"strconv"

	"github.com/shepherd-db/shepherd/internal/coord"
)

// stmtKind is what a statement of the toy SQL does.
type stmtKind uint8

const (
	// stmtRead returns the value of key k.
	stmtRead stmtKind = iota + 1
	// stmtAdd adds d to key k and returns the new value.
	stmtAdd
	// stmtSum returns the sum of the keys k..hi (inclusive).
	stmtSum
)

// stmt is one statement of the toy key-value SQL. Keys are small integers;
// every key exists from the start, so there are no phantoms to lock.
type stmt struct {
	kind  stmtKind
	k, hi int
	d     int
}

// String renders the statement as traces show it.
func (q stmt) String() string {
	switch q.kind {
	case stmtRead:
		return "read(k" + strconv.Itoa(q.k) + ")"
	case stmtAdd:
		return "add(k" + strconv.Itoa(q.k) + "," + strconv.FormatInt(int64(q.d), 10) + ")"
	}
	return "sum(k" + strconv.Itoa(q.k) + "..k" + strconv.Itoa(q.hi) + ")"
}

// writes reports whether the statement changes a key.
func (q stmt) writes() bool { return q.kind == stmtAdd }

// keys returns the keys the statement reads or writes, in increasing order.
func (q stmt) keys() (lo, hi int) {
	if q.kind == stmtSum {
		return q.k, q.hi
	}
	return q.k, q.k
}

// run executes the statement against get and put and returns its answer:
// the value read, the new value, or the sum. Every engine model and the
// reference store run statements through this one function.
func (q stmt) run(get func(k int) int, put func(k, v int)) int {
	switch q.kind {
	case stmtRead:
		return get(q.k)
	case stmtAdd:
		v := get(q.k) + q.d
		put(q.k, v)
		return v
	}
	sum := 0
	for k := q.k; k <= q.hi; k++ {
		sum += get(k)
	}
	return sum
}

// randomStmt draws a statement over keys 0..keys-1.
func randomStmt(rng *rand.Rand, keys int) stmt {
	k := rng.IntN(keys)
	switch p := rng.IntN(100); {
	case p < 35:
		return stmt{kind: stmtRead, k: k}
	case p < 75:
		return stmt{kind: stmtAdd, k: k, d: rng.IntN(19) - 9}
	default:
		return stmt{kind: stmtSum, k: k, hi: min(keys-1, k+rng.IntN(4))}
	}
}

// store is a committed key-value state: the value of key k is store[k].
type store []int

// apply runs stmts one after another on s (the reference serial
// execution) and returns their answers.
func (s store) apply(stmts []stmt) []int {
	get := func(k int) int { return s[k] }
	put := func(k, v int) { s[k] = v }
	out := make([]int, len(stmts))
	for i, q := range stmts {
		out[i] = q.run(get, put)
	}
	return out
}

// voteFor digests a successful statement answer the way the shell digests
// canonical rows: equal values, equal digests.
func voteFor(v int) coord.Vote {
	var buf [24]byte
	b := strconv.AppendInt(append(buf[:0], 'v'), int64(v), 10)
	return coord.Vote{Digest: sha256.Sum256(b)}
}
