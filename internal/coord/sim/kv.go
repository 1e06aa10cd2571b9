package sim

import (
	"crypto/sha256"
	"fmt"
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
	// stmtCopy sets key hi to key k's value plus d and returns only the
	// row count, 1, as an INSERT ... SELECT or an UPDATE with a subquery
	// answers: two runs that read different values of k answer alike
	// and write differently.
	stmtCopy
	// stmtDDL sets key k to d, as a schema change: on a replica that
	// commits DDL as it runs it (setup.ddlCommits), at once and for good;
	// elsewhere like any write. It answers 1 (its command tag).
	stmtDDL
	// stmtSwap swaps the names k and hi (through a temporary name, as
	// ALTER TABLE ... RENAME does): from its commit on, a statement that
	// names k reaches the key hi named before, and the other way round.
	// It changes no key and answers 0; on a replica it is a schema change
	// that moves no data (but takes locks, see stmt.locks).
	stmtSwap
	// stmtSavepoint sets savepoint k of its transaction, and
	// stmtRollbackTo rolls the transaction's writes back to it (the
	// savepoint stays, the locks too, as engines keep them). Both
	// answer 0 and are not writes: what they undo was written by the
	// statements between them.
	stmtSavepoint
	stmtRollbackTo
	// stmtAddCheck is stmtAdd under a CHECK constraint: it fails with
	// 23514, changing nothing, when the new value would be a multiple of
	// 3 (every correct replica fails it alike). Drawn only between a
	// savepoint and the ROLLBACK TO its client recovers with.
	stmtAddCheck
)

// checkViolation is the answer the reference gives a stmtAddCheck that
// fails (the client's record of the error).
const checkViolation = -1 << 40

// fails reports whether q fails on the state get reads (stmtAddCheck).
func (q stmt) fails(get func(k int) int) bool {
	return q.kind == stmtAddCheck && (get(q.k)+q.d)%3 == 0
}

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
	case stmtAddCheck:
		return "add-check(k" + strconv.Itoa(q.k) + "," + strconv.FormatInt(int64(q.d), 10) + ")"
	case stmtDDL:
		return "ddl(k" + strconv.Itoa(q.k) + "=" + strconv.Itoa(q.d) + ")"
	case stmtSwap:
		return "swap(n" + strconv.Itoa(q.k) + ",n" + strconv.Itoa(q.hi) + ")"
	case stmtSavepoint:
		return "savepoint(s" + strconv.Itoa(q.k) + ")"
	case stmtRollbackTo:
		return "rollback-to(s" + strconv.Itoa(q.k) + ")"
	case stmtCopy:
		return "copy(k" + strconv.Itoa(q.k) + "+" + strconv.FormatInt(int64(q.d), 10) + "->k" + strconv.Itoa(q.hi) + ")"
	}
	return "sum(k" + strconv.Itoa(q.k) + "..k" + strconv.Itoa(q.hi) + ")"
}

// writes reports whether the statement changes a key.
func (q stmt) writes() bool {
	return q.kind == stmtAdd || q.kind == stmtAddCheck || q.kind == stmtCopy || q.kind == stmtDDL || q.kind == stmtSwap
}

// schemaChange reports whether the statement is DDL (coord.Submit.DDL).
func (q stmt) schemaChange() bool { return q.kind == stmtDDL || q.kind == stmtSwap }

// lockReq is a lock a statement needs on one key.
type lockReq struct {
	k         int
	exclusive bool
}

// locks returns the locks the statement takes under two-phase locking:
// shared on what it only reads, exclusive on what it writes.
func (q stmt) locks() []lockReq {
	switch q.kind {
	case stmtSavepoint, stmtRollbackTo:
		return nil // it moves no data
	case stmtSwap:
		// It moves no data, but takes the lock an ALTER TABLE takes on
		// each table it renames (here the key of each name's number):
		// two swaps of one name are ordered alike on every replica, in
		// the log and in the catalog.
		return []lockReq{{k: q.k, exclusive: true}, {k: q.hi, exclusive: true}}
	case stmtSum:
		var ls []lockReq
		for k := q.k; k <= q.hi; k++ {
			ls = append(ls, lockReq{k: k})
		}
		return ls
	case stmtCopy:
		if q.k == q.hi {
			return []lockReq{{k: q.k, exclusive: true}}
		}
		return []lockReq{{k: q.k}, {k: q.hi, exclusive: true}}
	}
	return []lockReq{{k: q.k, exclusive: q.writes()}}
}

// run executes the statement against get and put and returns its answer:
// the value read, the new value, or the sum. Every engine model and the
// reference store run statements through this one function.
func (q stmt) run(get func(k int) int, put func(k, v int)) int {
	switch q.kind {
	case stmtRead:
		return get(q.k)
	case stmtAdd, stmtAddCheck:
		v := get(q.k) + q.d
		put(q.k, v)
		return v
	case stmtCopy:
		put(q.hi, get(q.k)+q.d)
		return 1
	case stmtDDL:
		put(q.k, q.d)
		return 1
	case stmtSwap, stmtSavepoint, stmtRollbackTo:
		return 0 // (savepoints: see store.apply and attempt.savepoint)
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
	case p < 65:
		return stmt{kind: stmtAdd, k: k, d: rng.IntN(19) - 9}
	case p < 75:
		return stmt{kind: stmtCopy, k: k, hi: rng.IntN(keys), d: rng.IntN(19) - 9}
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
	// undo journals the values overwritten, for ROLLBACK TO.
	var undo []kv
	marks := map[int]int{}
	put := func(k, v int) {
		undo = append(undo, kv{k, s[k]})
		s[k] = v
	}
	out := make([]int, len(stmts))
	for i, q := range stmts {
		switch q.kind {
		case stmtSavepoint:
			marks[q.k] = len(undo)
		case stmtRollbackTo:
			m := marks[q.k]
			for j := len(undo) - 1; j >= m; j-- {
				s[undo[j].k] = undo[j].v
			}
			undo = undo[:m]
		default:
			if q.fails(get) {
				out[i] = checkViolation
				continue
			}
			out[i] = q.run(get, put)
		}
	}
	return out
}

// survivors reports, for each of stmts, whether its effect survives the
// transaction's ROLLBACK TOs: what the log keeps (as the shell's
// cluster.survivors does), so that replay runs writes only once and
// never those rolled back.
func survivors(stmts []stmt) []bool {
	keep := make([]bool, len(stmts))
	marks := map[int]int{}
	var kept []int // indices kept so far, in order
	for i, q := range stmts {
		switch q.kind {
		case stmtSavepoint:
			marks[q.k] = len(kept)
		case stmtRollbackTo:
			if m, ok := marks[q.k]; ok {
				kept = kept[:m]
			}
		default:
			kept = append(kept, i)
		}
	}
	for _, i := range kept {
		keep[i] = true
	}
	return keep
}

// voteFor digests a successful statement answer the way the shell digests
// canonical rows: equal values, equal digests.
func voteFor(v int) coord.Vote {
	var buf [24]byte
	b := strconv.AppendInt(append(buf[:0], 'v'), int64(v), 10)
	return coord.Vote{Digest: sha256.Sum256(b)}
}

// catalog maps the names statements use to the keys they denote, as
// shepherd's schema catalog maps a client's names to what each replica's
// dialect is sent. It starts as the identity; stmtSwap changes it.
type catalog []int

// translate resolves the names of q against the catalog, as shepherd
// translates a statement when the client submits it: read, add and copy
// name their keys; a sum ranges over key positions (a scan by primary
// key), a DDL statement writes the schema key, and a swap names names,
// so they are sent as they are.
func (c catalog) translate(q stmt) stmt {
	switch q.kind {
	case stmtRead, stmtAdd, stmtAddCheck:
		q.k = c[q.k]
	case stmtCopy:
		q.k, q.hi = c[q.k], c[q.hi]
	}
	return q
}

// commit applies a committed schema change to the catalog.
func (c catalog) commit(q stmt) {
	if q.kind == stmtSwap {
		c[q.k], c[q.hi] = c[q.hi], c[q.k]
	}
}

// encode writes q as the log keeps a statement's text; decodeStmt reads
// it back.
func (q stmt) encode() string { return fmt.Sprintf("%d %d %d %d", q.kind, q.k, q.hi, q.d) }

func decodeStmt(text string) (stmt, error) {
	var q stmt
	_, err := fmt.Sscanf(text, "%d %d %d %d", &q.kind, &q.k, &q.hi, &q.d)
	return q, err
}
