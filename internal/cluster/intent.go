package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/sqlan"
	"github.com/shepherd-db/shepherd/internal/wal"
)

// DDL intents. A replica that commits DDL as it runs it (MariaDB) keeps a
// schema change from the moment it ran it, before the transaction's
// commit is decided and logged. Were shepherd to crash then, the log
// would not know of the change and start-up would take that replica in
// beside the others, which never got it. So before a transaction's DDL
// statement is handed to the core, while such a replica is configured,
// the statement is recorded durably in the intent file
// (Options.IntentFile, next to the log), in the order the core gets
// them; the record goes once the outcome is known: the transaction's
// commit record is durable in the log, or it ended without one (dropped
// before its client hears of the failure). Start-up resolves the intents
// left (coord.PlanIntents, internal/server): it completes them (logs and
// replays them everywhere) or retires the replicas that may hold them.

// Intent is one open DDL intent, as the intent file keeps it.
type Intent struct {
	// From is the log barrier below which every record was durable when
	// the intent was recorded: the transaction's record, if any, is at
	// or above it (and in the same run, whose ids it shares, since
	// start-up resolves every intent before a new run begins).
	From uint64 `json:"from"`
	Txn  uint64 `json:"txn"`
	// Lone: the transaction's only statement so far is its first, a DDL
	// statement (coord.DDLIntent.Lone).
	Lone bool `json:"lone"`
	// Deferred: DDL inside a block, deferred on the replicas that commit
	// DDL as they run it until the commit is logged
	// (coord.DDLIntent.Deferred). Such an intent stays until they
	// finished the transaction.
	Deferred bool `json:"deferred,omitempty"`
	// Replicas are the replicas that commit DDL as they run it, by name.
	Replicas []string `json:"replicas"`
	// Statements are the transaction's statements so far, as its log
	// record would hold them: completing it logs exactly these.
	Statements []intentStatement `json:"statements"`
}

// intentStatement is a wal.Statement in JSON; texts and values are kept
// as bytes (base64), since a value may be any bytes (bytea).
type intentStatement struct {
	SQL    []byte        `json:"sql"`
	Args   []intentValue `json:"args,omitempty"`
	Writes bool          `json:"writes"`
	DDL    bool          `json:"ddl"`
	Verb   string        `json:"verb"`
	Forms  []intentForm  `json:"forms"`
}

type intentForm struct {
	Dialect uint8         `json:"dialect"`
	SQL     []byte        `json:"sql"`
	Args    []intentValue `json:"args,omitempty"`
	Rows    bool          `json:"rows,omitempty"`
}

type intentValue struct {
	Null bool   `json:"null,omitempty"`
	Type uint8  `json:"type"`
	Text []byte `json:"text,omitempty"`
}

func toIntentValues(vs []wal.Value) []intentValue {
	out := make([]intentValue, len(vs))
	for i, v := range vs {
		out[i] = intentValue{Null: v.Null, Type: v.Type, Text: []byte(v.Text)}
	}
	return out
}

func fromIntentValues(vs []intentValue) []wal.Value {
	var out []wal.Value
	for _, v := range vs {
		out = append(out, wal.Value{Null: v.Null, Type: v.Type, Text: string(v.Text)})
	}
	return out
}

func toIntentStatement(st wal.Statement) intentStatement {
	is := intentStatement{SQL: []byte(st.SQL), Args: toIntentValues(st.Args), Writes: st.Writes, DDL: st.DDL, Verb: st.Verb}
	for _, f := range st.Forms {
		is.Forms = append(is.Forms, intentForm{Dialect: f.Dialect, SQL: []byte(f.SQL), Args: toIntentValues(f.Args), Rows: f.Rows})
	}
	return is
}

// Record returns the log record that completes the intent at barrier.
func (in Intent) Record(barrier uint64) wal.Record {
	rec := wal.Record{Txn: in.Txn, Barrier: barrier}
	for _, is := range in.Statements {
		st := wal.Statement{SQL: string(is.SQL), Args: fromIntentValues(is.Args), Writes: is.Writes, DDL: is.DDL, Verb: is.Verb}
		for _, f := range is.Forms {
			st.Forms = append(st.Forms, wal.Form{Dialect: f.Dialect, SQL: string(f.SQL), Args: fromIntentValues(f.Args), Rows: f.Rows})
		}
		rec.Statements = append(rec.Statements, st)
	}
	return rec
}

// Logged reports whether records, the log, hold the intent's commit;
// known is false when the log no longer reaches back to From (it was
// truncated past it), so that it cannot tell. An empty log reaches back
// to nothing: it tells only for an intent recorded while nothing was
// durable in a log that started empty (From is 1: barriers start at 1,
// coord.PlanStart), since a log that held a record is never empty again
// (wal.TruncateBefore keeps a durable one). Any other empty log may have
// lost the record (a log truncated whole, a log directory replaced).
func (in Intent) Logged(records []wal.Record) (logged, known bool) {
	for _, r := range records {
		if r.Txn == in.Txn && r.Barrier >= in.From {
			return true, true
		}
	}
	if len(records) == 0 {
		return false, in.From <= 1
	}
	return false, records[0].Barrier <= in.From
}

// intentFile is the form of the intent file.
type intentFile struct {
	Intents []Intent `json:"intents"`
}

// LoadIntents reads the intent file at path, in the order the intents
// were recorded. A missing file means none; one that cannot be read or
// parsed is an error: starting without it could take in a replica that
// holds a change the others lack.
func LoadIntents(path string) ([]Intent, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("DDL intents: %w", err)
	}
	var f intentFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("DDL intents: %s: %w", path, err)
	}
	return f.Intents, nil
}

// SaveIntents writes the intent file atomically and durably (as the
// retirement file: see saveRetired).
func SaveIntents(path string, intents []Intent) error {
	b, err := json.MarshalIndent(intentFile{Intents: intents}, "", "  ")
	if err != nil {
		return err
	}
	return writeFileDurably(path, append(b, '\n'))
}

// intents is the cluster's copy of the intent file. order is held from
// before an intent is written until the core was handed the statement,
// so that the file's order is the order the core got them; mu guards the
// list and the file, and is taken under c.mu, never the other way round.
type intents struct {
	order sync.Mutex
	mu    sync.Mutex
	list  []Intent
	// hook (tests only, SetIntentHook) is called once an intent was
	// recorded durably, before its statement goes to the core.
	hook func(txn uint64) error
}

// SetIntentHook is for tests: fn (nil: none) is called once a DDL
// intent was recorded durably, before its statement goes to the core.
// An error from fn stands for shepherd crashing there: the statement
// goes no further, and the client gets the error.
func (c *Cluster) SetIntentHook(fn func(txn uint64) error) {
	c.intents.mu.Lock()
	defer c.intents.mu.Unlock()
	c.intents.hook = fn
}

// intentFor reports whether t needs an intent before call goes to the
// core: a log, an intent file, a replica that commits DDL as it runs it,
// and a DDL statement, or any statement of a transaction that has an
// intent already (it is no longer lone).
func (c *Cluster) intentFor(t *Txn, call stmtCall) bool {
	if c.opts.WAL == nil || c.opts.IntentFile == "" || call.st == nil || t.survey || !c.ddlCommits() {
		return false
	}
	if t.intent && t.deferAt >= 0 {
		// A deferred block's intent is never completed (see
		// coord.DDLIntent.Deferred): its first one says all start-up
		// needs.
		return false
	}
	return call.st.Kind == sqlan.DDL || t.intent
}

// recordIntent records durably that t is about to hand call to the core.
// The caller holds c.intents.order until the core has it.
func (c *Cluster) recordIntent(t *Txn, call stmtCall) error {
	in := Intent{From: c.durable.get(), Txn: uint64(t.id), Lone: !t.intent && len(t.stmts) == 0,
		Deferred: t.deferAt >= 0 || c.defers(t, call)}
	for i, m := range c.managers {
		if m.Engine().Dialect() == driver.MySQL {
			in.Replicas = append(in.Replicas, c.managers[i].Name())
		}
	}
	c.mu.Lock()
	for _, prev := range t.stmts {
		if prev.st != nil {
			in.Statements = append(in.Statements, toIntentStatement(c.walStatement(prev)))
		}
	}
	c.mu.Unlock()
	in.Statements = append(in.Statements, toIntentStatement(c.walStatement(call)))
	c.intents.mu.Lock()
	defer c.intents.mu.Unlock()
	// A later statement of t replaces its intent where it stands: the
	// order is that of the first DDL statements.
	list := append(make([]Intent, 0, len(c.intents.list)+1), c.intents.list...)
	if i := slices.IndexFunc(list, func(o Intent) bool { return o.Txn == in.Txn }); i >= 0 {
		list[i] = in
	} else {
		list = append(list, in)
	}
	if err := SaveIntents(c.opts.IntentFile, list); err != nil {
		return pgerr.Wrap(pgerr.IOError, err, "could not record the schema change's intent; it was not run").
			WithDetail("A replica commits DDL as it runs it: shepherd records the change before it runs, so that a crash cannot leave it on that replica alone.")
	}
	c.intents.list = list
	t.intent = true
	if c.intents.hook != nil {
		if err := c.intents.hook(uint64(t.id)); err != nil {
			return pgerr.Wrap(pgerr.InternalError, err, "test hook")
		}
	}
	return nil
}

// dropIntent removes t's intent, durably: its outcome is known (its
// commit record is durable, or it ended without one). Called under c.mu
// or not; a failure to write is logged, and leaves the intent to
// start-up, which then completes it or retires the replicas that may
// hold it.
func (c *Cluster) dropIntent(txn coord.TxnID, why string) {
	c.intents.mu.Lock()
	defer c.intents.mu.Unlock()
	list := make([]Intent, 0, len(c.intents.list))
	for _, o := range c.intents.list {
		if o.Txn != uint64(txn) {
			list = append(list, o)
		}
	}
	if len(list) == len(c.intents.list) {
		return
	}
	if err := SaveIntents(c.opts.IntentFile, list); err != nil {
		c.log.Error("a DDL intent could not be struck; start-up will resolve it", "txn", uint64(txn), "outcome", why, "err", err)
		return
	}
	c.intents.list = list
}

// failedReply reports whether a reply tells a client its transaction
// failed for good: not a cancel of a transaction that commits anyway
// (coord.ErrCommitsAnyway), not an unknown outcome (08007).
func failedReply(o outcome) bool {
	switch {
	case o.err == nil:
		return false
	case errors.Is(o.err, coord.ErrCommitsAnyway), o.err.Code == pgerr.TransactionResolutionUnknown:
		return false
	}
	return true
}

// TryIntents runs the statements of intents, in order, on one replica
// that runs DDL in transactions (PostgreSQL, SQLite), over c, in one
// engine transaction that it then rolls back: start-up's trial of what
// it would complete (coord.DDLIntent.Refused). A statement that finds
// its effect there already is refused as Replay would refuse it: these
// replicas commit DDL with its log-table row, so they cannot hold an
// open intent's change (alreadyDone). It returns the Txn of the first
// intent refused, with the error, or 0; err is set when the trial could
// not be made (it then proves nothing).
func TryIntents(ctx context.Context, c driver.Conn, d driver.Dialect, intents []Intent) (refused uint64, why, err error) {
	if err := c.Begin(ctx, driver.TxOptions{}); err != nil {
		return 0, nil, err
	}
	defer c.Rollback(ctx)
	for i, in := range intents {
		for _, st := range in.Record(0).Statements {
			if !st.Writes {
				continue
			}
			q, ok := replayQuery(d, st)
			if !ok {
				return 0, nil, fmt.Errorf("intent of transaction %d: %s: %w (dialect %s)", in.Txn, st.SQL, ErrUnreplayable, d)
			}
			if _, err := c.Exec(ctx, q); err != nil && !alreadyDone(d, err) {
				switch code := pgerr.Code(err); {
				case ctx.Err() != nil, code == "", strings.HasPrefix(code, "08"), strings.HasPrefix(code, "40"),
					strings.HasPrefix(code, "53"), strings.HasPrefix(code, "57"):
					// The connection, a lock, resources: says nothing
					// of the change itself.
					return 0, nil, err
				}
				return intents[i].Txn, err, nil
			}
		}
	}
	return 0, nil, nil
}
