package schema

import (
	"math"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// Sequence is a sequence created with CREATE SEQUENCE. It lives in
// shepherd alone: no replica has it, because nextval() would give each
// replica its own values. shepherd hands out its values (Catalog.SeqNext)
// and pins them into the statements the replicas run.
type Sequence struct {
	Name string `json:"name"`
	// Type is int2, int4 or int8 (AS smallint, integer, bigint).
	Type      string `json:"type"`
	Increment int64  `json:"increment"`
	Min       int64  `json:"min"`
	Max       int64  `json:"max"`
	Start     int64  `json:"start"`
	Cache     int64  `json:"cache"`
	Cycle     bool   `json:"cycle,omitempty"`
	// OwnedBy is "table.column" of OWNED BY: dropping the table drops
	// the sequence.
	OwnedBy string `json:"owned_by,omitempty"`
}

// SeqState is where a sequence stands: PostgreSQL's last_value and
// is_called. The next nextval() returns Last when Called is false, and
// the value after Last otherwise.
type SeqState struct {
	Last   int64 `json:"last"`
	Called bool  `json:"called,omitempty"`
}

// Sequence returns the named sequence, or nil.
func (s *Snapshot) Sequence(name string) *Sequence {
	if s == nil {
		return nil
	}
	return s.Sequences[name]
}

// SQLSTATEs of sequence errors (kept here, not in pgerr, as only
// sequences give them).
const (
	codeSeqLimit      = "2200H" // sequence_generator_limit_exceeded
	codeDependents    = "2BP01" // dependent_objects_still_exist
	codeInvalidName   = "42602" // invalid_name
	codeInvalidSchema = "3F000" // invalid_schema_name
)

// seqErr is PostgreSQL's SQLSTATE for a sequence option out of range
// (invalid_parameter_value).
func seqErr(format string, args ...any) error {
	return pgerr.New(pgerr.InvalidParameterValue, format, args...)
}

// typeRange is the range of a sequence's data type.
func typeRange(typ string) (lo, hi int64) {
	switch typ {
	case "int2":
		return math.MinInt16, math.MaxInt16
	case "int4":
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

var seqTypeNames = map[string]string{"int2": "smallint", "int4": "integer", "int8": "bigint"}

// seqOption reads a numeric option's value.
func seqOption(d *pg_query.DefElem) (int64, error) {
	switch {
	case d.Arg.GetInteger() != nil:
		return int64(d.Arg.GetInteger().Ival), nil
	case d.Arg.GetFloat() != nil:
		v, err := strconv.ParseInt(d.Arg.GetFloat().Fval, 10, 64)
		if err != nil {
			return 0, pgerr.New(pgerr.NumericValueOutOfRange, "value \"%s\" is out of range for type bigint", d.Arg.GetFloat().Fval)
		}
		return v, nil
	}
	return 0, pgerr.New(pgerr.SyntaxError, "%s requires a numeric value", d.Defname)
}

// SequenceOf works out the sequence a CREATE SEQUENCE creates, with
// PostgreSQL's defaults and checks.
func SequenceOf(cs *pg_query.CreateSeqStmt) (*Sequence, error) {
	q := &Sequence{Name: cs.Sequence.Relname, Type: "int8", Increment: 1, Cache: 1}
	_, err := q.alter(cs.Options, true)
	return q, err
}

// alter applies CREATE or ALTER SEQUENCE options to q, checks the result
// as PostgreSQL's init_params does, and returns a RESTART's value (nil
// without RESTART). create gives the options' defaults to what is not
// given.
func (q *Sequence) alter(opts []*pg_query.Node, create bool) (*int64, error) {
	var restart *int64
	var minSet, maxSet, startSet, noMin, noMax bool
	oldType := q.Type
	oldLo, oldHi := typeRange(q.Type)
	for _, o := range opts {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		switch d.Defname {
		case "as":
			typ, _, _, ok := TypeOf(d.Arg.GetTypeName())
			if !ok || seqTypeNames[typ] == "" {
				return nil, seqErr("sequence type must be smallint, integer, or bigint")
			}
			q.Type = typ
		case "increment":
			v, err := seqOption(d)
			if err != nil {
				return nil, err
			}
			if v == 0 {
				return nil, seqErr("INCREMENT must not be zero")
			}
			q.Increment = v
		case "minvalue", "maxvalue":
			if d.Arg == nil {
				if d.Defname == "minvalue" {
					noMin = true
				} else {
					noMax = true
				}
				continue
			}
			v, err := seqOption(d)
			if err != nil {
				return nil, err
			}
			if d.Defname == "minvalue" {
				q.Min, minSet = v, true
			} else {
				q.Max, maxSet = v, true
			}
		case "start":
			v, err := seqOption(d)
			if err != nil {
				return nil, err
			}
			q.Start, startSet = v, true
		case "restart":
			if d.Arg == nil {
				restart = new(int64)
				*restart = math.MinInt64 // the start value, once known
				continue
			}
			v, err := seqOption(d)
			if err != nil {
				return nil, err
			}
			restart = &v
		case "cache":
			v, err := seqOption(d)
			if err != nil {
				return nil, err
			}
			if v <= 0 {
				return nil, seqErr("CACHE (%d) must be greater than zero", v)
			}
			q.Cache = v
		case "cycle":
			q.Cycle = d.Arg.GetBoolean().GetBoolval()
		case "owned_by":
			names := names(d.Arg.GetList().GetItems())
			switch {
			case len(names) == 1 && names[0] == "none":
				q.OwnedBy = ""
			case len(names) >= 2:
				q.OwnedBy = names[len(names)-2] + "." + names[len(names)-1]
			default:
				return nil, seqErr("invalid OWNED BY option")
			}
		default:
			return nil, unsupported("sequence option %s", strings.ToUpper(d.Defname))
		}
	}
	lo, hi := typeRange(q.Type)
	// Bounds not given take the defaults for the increment's direction;
	// a changed type moves bounds that were the old type's limits.
	if !maxSet && (create || noMax || q.Type != oldType && q.Max == oldHi && oldType != "") {
		q.Max = hi
		if q.Increment < 0 {
			q.Max = -1
		}
	}
	if !minSet && (create || noMin || q.Type != oldType && q.Min == oldLo && oldType != "") {
		q.Min = 1
		if q.Increment < 0 {
			q.Min = lo
		}
	}
	typeName := seqTypeNames[q.Type]
	if q.Max < lo || q.Max > hi {
		return nil, seqErr("MAXVALUE (%d) is out of range for sequence data type %s", q.Max, typeName)
	}
	if q.Min < lo || q.Min > hi {
		return nil, seqErr("MINVALUE (%d) is out of range for sequence data type %s", q.Min, typeName)
	}
	if q.Min >= q.Max {
		return nil, seqErr("MINVALUE (%d) must be less than MAXVALUE (%d)", q.Min, q.Max)
	}
	if create && !startSet {
		q.Start = q.Min
		if q.Increment < 0 {
			q.Start = q.Max
		}
	}
	if q.Start < q.Min {
		return nil, seqErr("START value (%d) cannot be less than MINVALUE (%d)", q.Start, q.Min)
	}
	if q.Start > q.Max {
		return nil, seqErr("START value (%d) cannot be greater than MAXVALUE (%d)", q.Start, q.Max)
	}
	if restart != nil {
		if *restart == math.MinInt64 {
			*restart = q.Start
		}
		if *restart < q.Min {
			return nil, seqErr("RESTART value (%d) cannot be less than MINVALUE (%d)", *restart, q.Min)
		}
		if *restart > q.Max {
			return nil, seqErr("RESTART value (%d) cannot be greater than MAXVALUE (%d)", *restart, q.Max)
		}
	}
	return restart, nil
}

// Next returns the value nextval() gives from state st and the state
// after it, with PostgreSQL's arithmetic: 2200H at a bound without
// CYCLE, the other bound with it.
func (q *Sequence) Next(st SeqState) (int64, SeqState, error) {
	if !st.Called {
		return st.Last, SeqState{Last: st.Last, Called: true}, nil
	}
	v := st.Last
	// The distance to the bound, as uint64: exact for any two int64s
	// in order, so no step overflows.
	if q.Increment > 0 {
		if uint64(q.Max)-uint64(v) < uint64(q.Increment) {
			if !q.Cycle {
				return 0, st, pgerr.New(codeSeqLimit, "nextval: reached maximum value of sequence \"%s\" (%d)", q.Name, q.Max)
			}
			v = q.Min
		} else {
			v += q.Increment
		}
	} else {
		if uint64(v)-uint64(q.Min) < -uint64(q.Increment) {
			if !q.Cycle {
				return 0, st, pgerr.New(codeSeqLimit, "nextval: reached minimum value of sequence \"%s\" (%d)", q.Name, q.Min)
			}
			v = q.Max
		} else {
			v += q.Increment
		}
	}
	return v, SeqState{Last: v, Called: true}, nil
}

// Ahead returns a state at least k calls of nextval() past st, without
// wrapping: no value the k calls from st give lies past it. (A state
// clamped at a bound makes the next call wrap or fail.)
func (q *Sequence) Ahead(st SeqState, k int64) SeqState {
	steps := k
	if !st.Called {
		steps = k - 1
	}
	v := st.Last
	if steps <= 0 {
		return SeqState{Last: v, Called: true}
	}
	if q.Increment > 0 {
		if room := (uint64(q.Max) - uint64(v)) / uint64(q.Increment); uint64(steps) > room {
			v = q.Max
		} else {
			v = int64(uint64(v) + uint64(steps)*uint64(q.Increment))
		}
	} else {
		if room := (uint64(v) - uint64(q.Min)) / -uint64(q.Increment); uint64(steps) > room {
			v = q.Min
		} else {
			v = int64(uint64(v) - uint64(steps)*-uint64(q.Increment))
		}
	}
	return SeqState{Last: v, Called: true}
}

// Set checks setval()'s value against the sequence's bounds (22003).
func (q *Sequence) Set(v int64, called bool) (SeqState, error) {
	if v < q.Min || v > q.Max {
		return SeqState{}, pgerr.New(pgerr.NumericValueOutOfRange, "setval: value %d is out of bounds for sequence \"%s\" (%d..%d)", v, q.Name, q.Min, q.Max)
	}
	return SeqState{Last: v, Called: called}, nil
}

// Restart returns the state an ALTER SEQUENCE's RESTART leaves, if it
// has one (ok false otherwise). n is the ALTER SEQUENCE, s the snapshot
// it applies to.
func (s *Snapshot) Restart(n *pg_query.Node) (SeqState, bool) {
	as := n.GetAlterSeqStmt()
	if as == nil {
		return SeqState{}, false
	}
	q := s.Sequence(as.Sequence.Relname)
	if q == nil {
		return SeqState{}, false
	}
	c := *q
	restart, err := c.alter(as.Options, false)
	if err != nil || restart == nil {
		return SeqState{}, false
	}
	return SeqState{Last: *restart}, true
}

// CheckAlter checks an ALTER SEQUENCE without RESTART against where the
// sequence stands: PostgreSQL refuses bounds that leave its last value
// outside (22023).
func (s *Snapshot) CheckAlter(n *pg_query.Node, st SeqState) error {
	as := n.GetAlterSeqStmt()
	if as == nil || s.Sequence(as.Sequence.Relname) == nil {
		return nil
	}
	q := *s.Sequence(as.Sequence.Relname)
	restart, err := q.alter(as.Options, false)
	if err != nil || restart != nil {
		return err
	}
	if st.Last < q.Min {
		return seqErr("RESTART value (%d) cannot be less than MINVALUE (%d)", st.Last, q.Min)
	}
	if st.Last > q.Max {
		return seqErr("RESTART value (%d) cannot be greater than MAXVALUE (%d)", st.Last, q.Max)
	}
	return nil
}

// SerialSequence returns the table and column whose SERIAL or IDENTITY
// values a sequence named as PostgreSQL names it (table_column_seq)
// gives, if any.
func (s *Snapshot) SerialSequence(name string) (table, column string, ok bool) {
	if s == nil || !strings.HasSuffix(name, "_seq") {
		return "", "", false
	}
	for tn, t := range s.Tables {
		for _, c := range t.Columns {
			if c.Fill == FillSerial && tn+"_"+c.Name+"_seq" == name {
				return tn, c.Name, true
			}
		}
	}
	return "", "", false
}

// applySequence applies CREATE, ALTER and DROP SEQUENCE to next (a clone
// of s). changed false: nothing to do (IF [NOT] EXISTS).
func (s *Snapshot) applySequence(next *Snapshot, n *pg_query.Node) (changed bool, err error) {
	exists := func(name string) bool {
		_, _, serial := s.SerialSequence(name)
		return s.Sequence(name) != nil || s.Table(name) != nil || serial
	}
	switch {
	case n.GetCreateSeqStmt() != nil:
		cs := n.GetCreateSeqStmt()
		if err := publicOnly(cs.Sequence); err != nil {
			return false, err
		}
		if cs.Sequence.Relpersistence == "t" {
			return false, unsupported("CREATE TEMPORARY SEQUENCE")
		}
		if exists(cs.Sequence.Relname) {
			if cs.IfNotExists {
				return false, nil
			}
			return false, pgerr.New(pgerr.DuplicateTable, "relation \"%s\" already exists", cs.Sequence.Relname)
		}
		q, err := SequenceOf(cs)
		if err != nil {
			return false, err
		}
		if err := s.checkOwner(q); err != nil {
			return false, err
		}
		next.Sequences[q.Name] = q
	case n.GetAlterSeqStmt() != nil:
		as := n.GetAlterSeqStmt()
		if err := publicOnly(as.Sequence); err != nil {
			return false, err
		}
		old := s.Sequence(as.Sequence.Relname)
		if old == nil {
			if as.MissingOk {
				return false, nil
			}
			return false, pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", as.Sequence.Relname)
		}
		q := *old
		if _, err := q.alter(as.Options, false); err != nil {
			return false, err
		}
		if err := s.checkOwner(&q); err != nil {
			return false, err
		}
		next.Sequences[q.Name] = &q
	case n.GetDropStmt() != nil:
		d := n.GetDropStmt()
		for _, o := range d.Objects {
			name := lastName(o)
			if s.Sequence(name) == nil {
				if d.MissingOk {
					continue
				}
				return false, pgerr.New(pgerr.UndefinedTable, "sequence \"%s\" does not exist", name)
			}
			if d.Behavior != pg_query.DropBehavior_DROP_CASCADE {
				for tn, t := range s.Tables {
					for _, c := range t.Columns {
						if c.Seq == name {
							return false, pgerr.New(codeDependents, "cannot drop sequence %s because other objects depend on it", name).
								WithDetail("default value for column %s of table %s depends on sequence %s", c.Name, tn, name).
								WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
						}
					}
				}
			} else {
				return false, unsupported("DROP SEQUENCE ... CASCADE")
			}
			delete(next.Sequences, name)
		}
	}
	return true, nil
}

// renameOwners follows a table's or column's rename in the OWNED BY of
// sequences (s is a clone being changed).
func (s *Snapshot) renameOwners(r *pg_query.RenameStmt) {
	if r.Relation == nil {
		return
	}
	for name, q := range s.Sequences {
		i := strings.LastIndexByte(q.OwnedBy, '.')
		if i < 0 || q.OwnedBy[:i] != r.Relation.Relname {
			continue
		}
		c := *q
		switch {
		case r.RenameType == pg_query.ObjectType_OBJECT_TABLE:
			c.OwnedBy = r.Newname + q.OwnedBy[i:]
		case r.RenameType == pg_query.ObjectType_OBJECT_COLUMN && q.OwnedBy[i+1:] == r.Subname:
			c.OwnedBy = q.OwnedBy[:i+1] + r.Newname
		default:
			continue
		}
		s.Sequences[name] = &c
	}
}

// publicOnly refuses a schema other than public (the only one shepherd
// has) as PostgreSQL does when it does not exist.
func publicOnly(rv *pg_query.RangeVar) error {
	if rv.Schemaname != "" && rv.Schemaname != "public" {
		return pgerr.New(codeInvalidSchema, "schema \"%s\" does not exist", rv.Schemaname)
	}
	return nil
}

// checkOwner checks OWNED BY's table and column (42P01, 42703).
func (s *Snapshot) checkOwner(q *Sequence) error {
	if q.OwnedBy == "" {
		return nil
	}
	i := strings.LastIndexByte(q.OwnedBy, '.')
	t := s.Table(q.OwnedBy[:i])
	if t == nil {
		return pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", q.OwnedBy[:i])
	}
	if t.Column(q.OwnedBy[i+1:]) == nil {
		return pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", q.OwnedBy[i+1:], t.Name)
	}
	return nil
}

// SeqDefault reads a DEFAULT nextval('s') (or 's'::regclass) and returns
// the sequence's name; ok false for any other default.
func SeqDefault(n *pg_query.Node) (string, bool) {
	fc := n.GetFuncCall()
	if fc == nil || FuncName(fc) != "nextval" || len(fc.Args) != 1 {
		return "", false
	}
	a := fc.Args[0]
	if tc := a.GetTypeCast(); tc != nil {
		a = tc.Arg
	}
	sv := a.GetAConst().GetSval()
	if sv == nil {
		return "", false
	}
	name, err := SequenceName(sv.Sval)
	return name, err == nil
}

// SequenceName reads a sequence's name given as text (nextval('s')), as
// PostgreSQL's regclass input does: unquoted parts fold to lower case, a
// schema "public" (the only one shepherd has) may prefix it.
func SequenceName(text string) (string, error) {
	var parts []string
	for i := 0; i < len(text); {
		var part strings.Builder
		if text[i] == '"' {
			i++
			for {
				if i >= len(text) {
					return "", pgerr.New(codeInvalidName, "invalid name syntax")
				}
				if text[i] == '"' {
					if i+1 < len(text) && text[i+1] == '"' {
						part.WriteByte('"')
						i += 2
						continue
					}
					i++
					break
				}
				part.WriteByte(text[i])
				i++
			}
		} else {
			for i < len(text) && text[i] != '.' {
				part.WriteByte(text[i])
				i++
			}
			p := strings.TrimSpace(part.String())
			part.Reset()
			part.WriteString(strings.ToLower(p))
		}
		if part.Len() == 0 {
			return "", pgerr.New(codeInvalidName, "invalid name syntax")
		}
		parts = append(parts, part.String())
		if i < len(text) {
			if text[i] != '.' {
				return "", pgerr.New(codeInvalidName, "invalid name syntax")
			}
			i++
			if i == len(text) {
				return "", pgerr.New(codeInvalidName, "invalid name syntax")
			}
		}
	}
	switch {
	case len(parts) == 1:
		return parts[0], nil
	case len(parts) == 2 && (parts[0] == "public" || parts[0] == "pg_catalog"):
		return parts[1], nil
	case len(parts) == 2:
		return "", pgerr.New(codeInvalidSchema, "schema \"%s\" does not exist", parts[0])
	}
	return "", pgerr.New(codeInvalidName, "improper relation name (too many dotted names): %s", text)
}
