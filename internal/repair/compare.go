package repair

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/cluster"
	"github.com/shepherd-db/shepherd/internal/coord"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/replica"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// Options tune one pass.
type Options struct {
	// Table limits the pass to one table ("" for all).
	Table string
	// Repair writes the rows f+1 replicas agree on to the others;
	// otherwise the pass only reports.
	Repair bool
	// Chunk is how many rows (of the primary) one compare step covers
	// (default DefaultChunk); Fanout how many sub-ranges a differing
	// range is split into (DefaultFanout); Leaf the most rows a range may
	// hold on any replica for its rows to be fetched and compared
	// (DefaultLeaf).
	Chunk, Fanout, Leaf int
	// Pace, when set, is called before every step with the rows it will
	// cover: the background runner waits there for its rate and for the
	// replicas to keep up with clients.
	Pace func(ctx context.Context, rows int) error
}

// Defaults of Options.
const (
	DefaultChunk  = 4096
	DefaultFanout = 16
	DefaultLeaf   = 64
)

// Problems a Finding reports.
const (
	Missing     = "missing"      // f+1 replicas have the row, this one not
	Extra       = "extra"        // f+1 replicas lack the row, this one has it
	Differs     = "differs"      // f+1 replicas agree on another value
	NoAgreement = "no agreement" // no value (or absence) has f+1 replicas
	Failed      = "error"        // the replica could not be compared
)

// Finding is one difference: a replica's row (or table) that is not what
// f+1 replicas agree on.
type Finding struct {
	Time    time.Time
	Replica string
	Table   string
	// Key is the row's key as text ("7", "(3, 'x')"); empty for a
	// problem with the whole table.
	Key     string
	Problem string
	// Detail says more: the error, or what the agreeing replicas hold.
	Detail string
	// Action is what the pass did: "" (nothing: a check, or no
	// agreement), "repaired", or "not repaired: why".
	Action string
}

// Repaired is Finding.Action for a row rewritten and verified.
const Repaired = "repaired"

// Report sums up one pass.
type Report struct {
	Findings []Finding
	// Tables compared; Rows read on the primary; Steps run (surveys);
	// Rounds is the deepest descent (1 when the first comparison of a
	// chunk found it equal).
	Tables, Rows, Steps, Rounds int
	// Skipped lists tables not compared, with why.
	Skipped []string
	Elapsed time.Duration
}

// Remaining counts the findings not repaired: differences that remain.
func (r *Report) Remaining() int {
	n := 0
	for _, f := range r.Findings {
		if f.Action != Repaired {
			n++
		}
	}
	return n
}

// Checker compares and repairs the replicas of one cluster.
type Checker struct {
	c       *cluster.Cluster
	catalog *schema.Catalog
	log     *slog.Logger
}

// New returns a checker of c's replicas over the tables catalog knows.
func New(c *cluster.Cluster, catalog *schema.Catalog, log *slog.Logger) *Checker {
	if log == nil {
		log = slog.Default()
	}
	return &Checker{c: c, catalog: catalog, log: log}
}

// ErrNoTable is returned for Options.Table naming a table the catalog
// does not know.
var ErrNoTable = errors.New("repair: no such table")

// Run makes one pass over the tables.
func (k *Checker) Run(ctx context.Context, opts Options) (*Report, error) {
	if opts.Chunk <= 0 {
		opts.Chunk = DefaultChunk
	}
	if opts.Fanout < 2 {
		opts.Fanout = DefaultFanout
	}
	if opts.Leaf <= 0 {
		opts.Leaf = DefaultLeaf
	}
	start := time.Now()
	p := &pass{k: k, opts: opts, rep: &Report{}, dialects: k.c.Dialects(), names: k.c.Names(), f: k.c.F()}
	defer p.close()
	snap := k.catalog.Snapshot()
	names := tableOrder(snap)
	if opts.Table != "" {
		if t := snap.Table(opts.Table); t == nil || t.View {
			return nil, fmt.Errorf("%w: %q", ErrNoTable, opts.Table)
		}
		names = []string{opts.Table}
	}
	if len(p.names) < 2 {
		p.rep.Skipped = append(p.rep.Skipped, "one replica: nothing to compare")
		names = nil
	}
	p.absent = map[int]bool{}
	for i, up := range k.c.Up() {
		if !up && len(names) > 0 {
			p.absent[i] = true
			p.finding(Finding{Replica: p.names[i], Problem: Failed, Detail: "down or catching up: not compared"})
		}
	}
	for _, name := range names {
		t, err := newTable(snap.Table(name))
		if err != nil {
			p.rep.Skipped = append(p.rep.Skipped, err.Error())
			k.log.Warn("table not compared", "why", err.Error())
			continue
		}
		p.rep.Tables++
		if err := p.table(ctx, t); err != nil {
			return p.rep, err
		}
	}
	p.rep.Elapsed = time.Since(start)
	return p.rep, nil
}

// tableOrder lists the catalog's tables, parents before the tables whose
// foreign keys reference them (a missing parent row is inserted before
// its children's), otherwise by name.
func tableOrder(snap *schema.Snapshot) []string {
	var names []string
	if snap != nil {
		for name, t := range snap.Tables {
			if !t.View {
				names = append(names, name)
			}
		}
	}
	sort.Strings(names)
	var out []string
	seen := map[string]bool{}
	var visit func(string, int)
	visit = func(n string, depth int) {
		if seen[n] || depth > len(names) {
			return
		}
		seen[n] = true
		if t := snap.Table(n); t != nil {
			for _, p := range t.Parents() {
				visit(p, depth+1)
			}
		}
		if t := snap.Table(n); t != nil && !t.View {
			out = append(out, n)
		}
	}
	for _, n := range names {
		visit(n, 0)
	}
	return out
}

// pass is the state of one Run.
type pass struct {
	k        *Checker
	opts     Options
	rep      *Report
	dialects []driver.Dialect
	names    []string
	f        int
	conns    map[int]driver.Conn
	// broken marks replicas that failed on the current table (a schema
	// difference): they are reported once and left out of it.
	broken map[int]bool
	// absent marks replicas that were out when the pass began.
	absent map[int]bool
}

func (p *pass) close() {
	for _, c := range p.conns {
		c.Close()
	}
}

// direct runs q on replica r outside the coordinator: for where to split
// ranges, which needs no agreement.
func (p *pass) direct(ctx context.Context, r int, q driver.Query) (*answer.Answer, error) {
	if p.conns == nil {
		p.conns = map[int]driver.Conn{}
	}
	conn := p.conns[r]
	if conn == nil {
		c, err := p.k.c.Connect(ctx, r)
		if err != nil {
			return nil, err
		}
		conn, p.conns[r] = c, c
	}
	a, err := conn.Exec(ctx, q)
	if err != nil {
		conn.Close()
		delete(p.conns, r)
	}
	return a, err
}

// keysOf reads key values from an answer of key columns.
func keysOf(a *answer.Answer) [][]answer.Value {
	out := make([][]answer.Value, len(a.Rows))
	for i, row := range a.Rows {
		out[i] = slices.Clone(row)
	}
	return out
}

func (p *pass) table(ctx context.Context, t *table) error {
	p.broken = map[int]bool{}
	var lo []answer.Value
	// The first comparison of a chunk runs while the previous chunk's
	// result is looked at: the primary hashes the next chunk while the
	// secondaries, which start after it, hash this one.
	var prev *inflight
	defer func() {
		if prev != nil {
			<-prev.done
		}
	}()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		primary := p.primary()
		a, err := p.direct(ctx, primary, boundaryQuery(p.dialects[primary], t, lo, p.opts.Chunk))
		if err != nil {
			p.finding(Finding{Replica: p.names[primary], Table: t.t.Name, Problem: Failed, Detail: err.Error()})
			return nil
		}
		r := keyRange{lo: lo}
		if len(a.Rows) > 0 {
			r.hi = slices.Clone(a.Rows[0])
		}
		if p.opts.Pace != nil {
			if err := p.opts.Pace(ctx, p.opts.Chunk); err != nil {
				return err
			}
		}
		if t.hashed {
			cur := p.launch(ctx, t, r)
			if prev != nil {
				if err := p.finish(ctx, t, prev); err != nil {
					return err
				}
			}
			prev = cur
		} else if err := p.compareRows(ctx, t, r, 1); err != nil {
			return err
		}
		if r.hi == nil {
			break
		}
		lo = r.hi
	}
	if prev != nil {
		last := prev
		prev = nil
		return p.finish(ctx, t, last)
	}
	return nil
}

// inflight is a chunk's first comparison, running.
type inflight struct {
	r     keyRange
	done  chan struct{}
	res   *cluster.SurveyResult
	steps int
	err   error
}

// launch starts the first comparison of chunk r.
func (p *pass) launch(ctx context.Context, t *table, r keyRange) *inflight {
	f := &inflight{r: r, done: make(chan struct{})}
	probe := cluster.Probe{Queries: make([]driver.Query, len(p.names)), Ordered: true}
	for i, d := range p.dialects {
		probe.Queries[i] = hashQuery(d, t, r, nil)
	}
	c := p.k.c
	go func() {
		defer close(f.done)
		f.res, f.steps, f.err = trySurvey(ctx, c, []cluster.Probe{probe})
	}()
	return f
}

// finish waits for a launched comparison and goes on from its result.
func (p *pass) finish(ctx context.Context, t *table, f *inflight) error {
	<-f.done
	p.rep.Steps += f.steps
	res, err := p.settle(ctx, t, f.res, f.err)
	if res == nil {
		return err
	}
	return p.hashed(ctx, t, f.r, nil, 1, res)
}

// primary is the replica that sets chunk bounds: the coordinator's
// primary, or the first replica that is up.
func (p *pass) primary() int {
	up := p.k.c.Up()
	if pr := p.k.c.Replicas(); len(pr) > 0 {
		for i, s := range pr {
			if s.Role == "primary" && up[i] {
				return i
			}
		}
	}
	for i, u := range up {
		if u {
			return i
		}
	}
	return 0
}

// signature is one bucket's count and hash sums on one replica.
type signature struct {
	count int
	sums  string
}

// hashRound hashes r in the buckets bounds makes and goes on with every
// bucket whose signatures differ.
func (p *pass) hashRound(ctx context.Context, t *table, r keyRange, bounds [][]answer.Value, depth int) error {
	probe := cluster.Probe{Queries: make([]driver.Query, len(p.names)), Ordered: true}
	for i, d := range p.dialects {
		probe.Queries[i] = hashQuery(d, t, r, bounds)
	}
	res, err := p.survey(ctx, t, []cluster.Probe{probe})
	if err != nil || res == nil {
		return err
	}
	return p.hashed(ctx, t, r, bounds, depth, res)
}

// hashed goes on from the hashes of r in the buckets bounds makes: every
// bucket whose signatures differ is split again, or its rows compared.
func (p *pass) hashed(ctx context.Context, t *table, r keyRange, bounds [][]answer.Value, depth int, res *cluster.SurveyResult) error {
	p.rep.Rounds = max(p.rep.Rounds, depth)
	// sig[replica][bucket]
	sigs := map[int]map[int]signature{}
	for i, a := range p.answers(t, res) {
		m := map[int]signature{}
		for _, row := range a.Rows {
			if len(row) != 4 {
				continue
			}
			var b, n int
			fmt.Sscan(row[0].Text, &b)
			fmt.Sscan(row[1].Text, &n)
			m[b] = signature{count: n, sums: answer.CanonicalDecimal(row[2].Text) + "/" + answer.CanonicalDecimal(row[3].Text)}
		}
		sigs[i] = m
	}
	if depth == 1 && bounds == nil {
		if n := sigs[p.primary()][0].count; n > 0 {
			p.rep.Rows += n
		}
	}
	for b := 0; b <= len(bounds); b++ {
		sub := r
		if b > 0 {
			sub.lo = bounds[b-1]
		}
		if b < len(bounds) {
			sub.hi = bounds[b]
		}
		most, from, differ := 0, -1, false
		var first *signature
		for i, m := range sigs {
			s := m[b]
			if first == nil {
				first = &s
			} else if s != *first {
				differ = true
			}
			if s.count > most || from < 0 {
				most, from = s.count, i
			}
		}
		if !differ {
			continue
		}
		if most <= p.opts.Leaf {
			if err := p.compareRows(ctx, t, sub, depth+1); err != nil {
				return err
			}
			continue
		}
		step := (most + p.opts.Fanout - 1) / p.opts.Fanout
		a, err := p.direct(ctx, from, splitQuery(p.dialects[from], t, sub, step))
		if err != nil {
			p.brokenReplica(t, from, err.Error())
			continue
		}
		next := keysOf(a)
		if len(next) == 0 {
			if err := p.compareRows(ctx, t, sub, depth+1); err != nil {
				return err
			}
			continue
		}
		if err := p.hashRound(ctx, t, sub, next, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// survey runs probes; a failure of the primary's own statement is a
// finding against it (the others never ran the statement).
func (p *pass) survey(ctx context.Context, t *table, probes []cluster.Probe) (*cluster.SurveyResult, error) {
	res, err := p.try(ctx, probes)
	return p.settle(ctx, t, res, err)
}

// settle turns a survey's failure into a finding against the primary
// (nil result, nil error), or ctx's error.
func (p *pass) settle(ctx context.Context, t *table, res *cluster.SurveyResult, err error) (*cluster.SurveyResult, error) {
	if err == nil {
		return res, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	p.brokenReplica(t, p.primary(), err.Error())
	return nil, nil
}

// maxAttempts bounds the runs of one step that lock conflicts with
// clients roll back.
const maxAttempts = 20

func (p *pass) try(ctx context.Context, probes []cluster.Probe) (*cluster.SurveyResult, error) {
	if p.opts.Pace != nil {
		// Descents and repairs cover no new rows, but wait for lagging
		// replicas as chunks do.
		if err := p.opts.Pace(ctx, 0); err != nil {
			return nil, err
		}
	}
	res, n, err := trySurvey(ctx, p.k.c, probes)
	p.rep.Steps += n
	return res, err
}

// trySurvey runs a survey again, after a pause, while a replica rolled it
// back (a deadlock or serialization failure against client work, class
// 40), as a client would retry it. It returns how many runs it took.
func trySurvey(ctx context.Context, c *cluster.Cluster, probes []cluster.Probe) (*cluster.SurveyResult, int, error) {
	for attempt := 1; ; attempt++ {
		res, err := c.Survey(ctx, probes)
		retry := pgerr.IsRetryable(err)
		if err == nil {
			for i, took := range res.Took {
				for _, row := range res.Answers {
					if took && row[i].Err != nil && pgerr.IsRetryable(row[i].Err) {
						retry = true
					}
				}
			}
		}
		if !retry || attempt == maxAttempts {
			return res, attempt, err
		}
		if err := sleep(ctx, time.Duration(attempt)*5*time.Millisecond); err != nil {
			return nil, attempt, err
		}
	}
}

// answers returns the answers to a survey's only statement of the
// replicas it took that are still compared on t; a replica whose answer
// is an error is reported and left out.
func (p *pass) answers(t *table, res *cluster.SurveyResult) map[int]*answer.Answer {
	out := map[int]*answer.Answer{}
	for i, took := range res.Took {
		if !took && !p.broken[i] && !p.absent[i] {
			p.brokenReplica(t, i, "did not answer in time (lagging, stalled or taken out): not compared")
		}
		if !took || p.broken[i] {
			continue
		}
		r := res.Answers[0][i]
		if r.Err != nil {
			p.brokenReplica(t, i, r.Err.Error())
			continue
		}
		out[i] = r.Answer
	}
	return out
}

// brokenReplica reports a replica that cannot be compared on t.
func (p *pass) brokenReplica(t *table, r int, why string) {
	if p.broken[r] {
		return
	}
	p.broken[r] = true
	p.finding(Finding{Replica: p.names[r], Table: t.t.Name, Problem: Failed, Detail: why})
}

func (p *pass) finding(f Finding) {
	f.Time = time.Now()
	p.rep.Findings = append(p.rep.Findings, f)
	log := p.k.log.Warn
	if f.Problem == NoAgreement {
		log = p.k.log.Error
	}
	log("replicas differ", "replica", f.Replica, "table", f.Table, "key", f.Key, "problem", f.Problem,
		"detail", f.Detail, "action", f.Action)
}

// seen is one replica's row as read.
type seen struct {
	row   []answer.Value
	hash  string // the engine's own hash of it (for guarded writes)
	canon string // canonical form, comparable across engines
}

// rowsOf reads a rowsQuery answer into canonical key → row.
func rowsOf(t *table, a *answer.Answer) (map[string]seen, []string) {
	m := map[string]seen{}
	var order []string
	for _, row := range a.Rows {
		if len(row) != len(t.t.Columns)+1 {
			continue
		}
		vals := row[1:]
		var kb, rb []byte
		for _, k := range t.key {
			kb = answer.AppendHinted(kb, vals[k], colOf(a, k+1), t.hints[k])
		}
		for i := range vals {
			rb = answer.AppendHinted(rb, vals[i], colOf(a, i+1), t.hints[i])
		}
		key := string(kb)
		if _, dup := m[key]; !dup {
			order = append(order, key)
		}
		m[key] = seen{row: slices.Clone(vals), hash: row[0].Text, canon: string(rb)}
	}
	return m, order
}

func colOf(a *answer.Answer, i int) answer.Column {
	if i < len(a.Columns) {
		return a.Columns[i]
	}
	return answer.Column{}
}

// compareRows fetches range r from every replica and compares its rows.
func (p *pass) compareRows(ctx context.Context, t *table, r keyRange, depth int) error {
	probe := cluster.Probe{Queries: make([]driver.Query, len(p.names)), Ordered: true}
	for i, d := range p.dialects {
		probe.Queries[i] = rowsQuery(d, t, r)
	}
	res, err := p.survey(ctx, t, []cluster.Probe{probe})
	if err != nil || res == nil {
		return err
	}
	p.rep.Rounds = max(p.rep.Rounds, depth)
	views := map[int]map[string]seen{}
	var keys []string
	have := map[string]bool{}
	answers := p.answers(t, res)
	for i := range p.names {
		a, ok := answers[i]
		if !ok {
			continue
		}
		m, order := rowsOf(t, a)
		views[i] = m
		for _, k := range order {
			if !have[k] {
				have[k] = true
				keys = append(keys, k)
			}
		}
	}
	if !t.hashed && depth == 1 {
		p.rep.Rows += len(views[p.primary()])
	}
	var replicas []int
	for i := range views {
		replicas = append(replicas, i)
	}
	sort.Ints(replicas)
	for _, key := range keys {
		if err := p.compareKey(ctx, t, key, replicas, views); err != nil {
			return err
		}
	}
	return nil
}

// compareKey decides one key: which state f+1 replicas agree on, which
// replicas differ, and (when repairing) rewrites them.
func (p *pass) compareKey(ctx context.Context, t *table, key string, replicas []int, views map[int]map[string]seen) error {
	groups := map[string][]int{} // canonical row ("" absent) → replicas
	var keyVals []answer.Value
	for _, i := range replicas {
		s, ok := views[i][key]
		state := ""
		if ok {
			state = "row:" + s.canon
			if keyVals == nil || p.dialects[i] == driver.Postgres {
				keyVals = keyValues(t, s.row)
			}
		}
		groups[state] = append(groups[state], i)
	}
	if len(groups) == 1 {
		return nil
	}
	agreed, found := agreement(groups, p.f)
	keyText := t.keyString(keyVals)
	if !found {
		for _, i := range replicas {
			p.finding(Finding{Replica: p.names[i], Table: t.t.Name, Key: keyText, Problem: NoAgreement,
				Detail: fmt.Sprintf("%d different versions among %d replicas; nothing written", len(groups), len(replicas))})
		}
		return nil
	}
	var dissent []int
	for _, i := range replicas {
		if !slices.Contains(groups[agreed], i) {
			dissent = append(dissent, i)
		}
	}
	var good seen
	if agreed != "" {
		good = views[p.source(groups[agreed])][key]
	}
	var fs []Finding
	for _, i := range dissent {
		f := Finding{Replica: p.names[i], Table: t.t.Name, Key: keyText}
		_, has := views[i][key]
		switch {
		case agreed == "":
			f.Problem, f.Detail = Extra, fmt.Sprintf("%d replicas have no such row", len(groups[agreed]))
		case !has:
			f.Problem, f.Detail = Missing, fmt.Sprintf("%d replicas have it", len(groups[agreed]))
		default:
			f.Problem, f.Detail = Differs, fmt.Sprintf("%d replicas agree on %s", len(groups[agreed]), t.rowString(good.row))
		}
		fs = append(fs, f)
	}
	if p.opts.Repair {
		why, err := p.fix(ctx, t, key, keyVals, agreed != "", good, groups[agreed], dissent, views)
		if err != nil {
			return err
		}
		for i := range fs {
			fs[i].Action = Repaired
			if why != "" {
				fs[i].Action = "not repaired: " + why
			}
		}
	}
	for _, f := range fs {
		p.finding(f)
	}
	return nil
}

// agreement picks the state (a key of groups, which maps each state to
// the replicas in it) that f+1 replicas and more replicas than any other
// state hold (coord.Agreement, which the simulator checks).
func agreement(groups map[string][]int, f int) (state string, ok bool) {
	return coord.Agreement(groups, f)
}

// source picks the agreeing replica whose values are copied: a
// PostgreSQL one when there is one (its text is PostgreSQL's own).
func (p *pass) source(members []int) int {
	for _, i := range members {
		if p.dialects[i] == driver.Postgres {
			return i
		}
	}
	return members[0]
}

func keyValues(t *table, row []answer.Value) []answer.Value {
	out := make([]answer.Value, len(t.key))
	for i, k := range t.key {
		out[i] = row[k]
	}
	return out
}

// valueString shows value v of column i as PostgreSQL would print it,
// whichever engine it came from.
func (t *table) valueString(i int, v answer.Value) string {
	if v.Null {
		return "NULL"
	}
	text, _ := answer.PGText(t.hints[i].Type, v.Text)
	switch t.hints[i].Type {
	case answer.Int, answer.Numeric, answer.Float:
		return text
	case answer.Bool:
		if b, ok := answer.ParseBool(text); ok {
			return map[bool]string{true: "true", false: "false"}[b]
		}
	}
	return "'" + strings.ReplaceAll(text, "'", "''") + "'"
}

// keyString shows a key: the value alone for a one-column key, else a
// row of values.
func (t *table) keyString(vals []answer.Value) string {
	if len(vals) == 1 {
		s := t.valueString(t.key[0], vals[0])
		if strings.HasPrefix(s, "'") {
			s = strings.ReplaceAll(s[1:len(s)-1], "''", "'")
		}
		return s
	}
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = t.valueString(t.key[i], v)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// rowString shows a whole row.
func (t *table) rowString(vals []answer.Value) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = t.valueString(i, v)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// fix writes the agreed state of one key to the dissenting replicas, in
// one survey that commits only if every replica's row was still the one
// seen (see the package doc). It returns why it did not, "" when it did;
// the rows are then read again to make sure they now agree.
func (p *pass) fix(ctx context.Context, t *table, key string, keyVals []answer.Value, present bool, good seen,
	agree, dissent []int, views map[int]map[string]seen) (string, error) {
	probe := cluster.Probe{Queries: make([]driver.Query, len(p.names))}
	expect := make([]func(replica.Result) bool, len(p.names))
	for i, d := range p.dialects {
		s, has := views[i][key]
		switch {
		case slices.Contains(agree, i) && present:
			probe.Queries[i], expect[i] = countQuery(d, t, keyVals, s.hash), countIs(1)
		case slices.Contains(agree, i):
			probe.Queries[i], expect[i] = countQuery(d, t, keyVals, ""), countIs(0)
		case slices.Contains(dissent, i) && !present:
			probe.Queries[i], expect[i] = deleteQuery(d, t, keyVals, s.hash), affected(1)
		case slices.Contains(dissent, i) && !has:
			probe.Queries[i], expect[i] = insertQuery(d, t, good.row), affected(1)
		case slices.Contains(dissent, i):
			probe.Queries[i], expect[i] = updateQuery(d, t, keyVals, s.hash, good.row), affected(1)
		default:
			// Not compared (down or catching up): left for a later pass.
			probe.Queries[i], expect[i] = driver.Query{SQL: "SELECT 1", ReturnsRows: true, Verb: "SELECT"}, func(replica.Result) bool { return true }
		}
	}
	probe.Vote = func(r int, res replica.Result) coord.Vote {
		if res.Err == nil && expect[r](res) {
			return coord.Vote{Digest: sha256.Sum256([]byte("as expected"))}
		}
		// Distinct per replica: a survey commits only when all expected.
		return coord.Vote{Digest: sha256.Sum256(fmt.Appendf(nil, "unexpected at %d", r))}
	}
	res, err := p.try(ctx, []cluster.Probe{probe})
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return err.Error(), nil
	}
	if !res.Committed {
		var why []string
		for i, took := range res.Took {
			if !took {
				continue
			}
			out := res.Answers[0][i]
			switch {
			case out.Err != nil:
				why = append(why, p.names[i]+": "+out.Err.Error())
			case !expect[i](out):
				why = append(why, p.names[i]+": the row changed since it was read")
			}
		}
		if len(why) == 0 {
			why = append(why, "a replica left the survey")
		}
		return strings.Join(why, "; ") + " (retried by the next pass)", nil
	}
	for _, i := range dissent {
		if !res.Took[i] {
			return p.names[i] + " did not take part in time (retried by the next pass)", nil
		}
	}
	// Read the row again everywhere: written values must now compare
	// equal to the agreed ones.
	probe = cluster.Probe{Queries: make([]driver.Query, len(p.names)), Ordered: true}
	for i, d := range p.dialects {
		probe.Queries[i] = keyRowQuery(d, t, keyVals)
	}
	again, err := p.try(ctx, []cluster.Probe{probe})
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "written, but reading it back failed: " + err.Error(), nil
	}
	states := map[string]bool{}
	for i, took := range again.Took {
		if !took || !slices.Contains(append(slices.Clone(agree), dissent...), i) {
			continue
		}
		out := again.Answers[0][i]
		if out.Err != nil {
			return "written, but reading it back failed on " + p.names[i] + ": " + out.Err.Error(), nil
		}
		m, _ := rowsOf(t, out.Answer)
		s, ok := m[key]
		state := ""
		if ok {
			state = s.canon
		}
		states[state] = true
	}
	if len(states) > 1 {
		return "written, but the replicas still read it differently", nil
	}
	return "", nil
}

func countIs(n int) func(replica.Result) bool {
	want := fmt.Sprint(n)
	return func(r replica.Result) bool {
		return r.Answer != nil && len(r.Answer.Rows) == 1 && len(r.Answer.Rows[0]) == 1 && r.Answer.Rows[0][0].Text == want
	}
}

func affected(n int64) func(replica.Result) bool {
	return func(r replica.Result) bool { return r.Answer != nil && r.Answer.RowsAffected == n }
}
