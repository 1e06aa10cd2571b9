package schema

import (
	"errors"
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/shepherd-db/shepherd/internal/pgerr"
	"github.com/shepherd-db/shepherd/internal/pgtree"
)

func unsupported(format string, args ...any) error {
	return pgerr.New(pgerr.FeatureNotSupported, "shepherd does not support "+format, args...)
}

// TableOf works out the table a CREATE TABLE statement creates, refusing
// column types and defaults shepherd cannot keep identical on every
// replica.
func TableOf(cs *pg_query.CreateStmt) (*Table, error) {
	if cs.Relation == nil {
		return nil, unsupported("CREATE TABLE without a name")
	}
	if len(cs.InhRelations) > 0 || cs.Partspec != nil || cs.Partbound != nil || cs.OfTypename != nil {
		return nil, unsupported("inheritance, partitions or typed tables in CREATE TABLE")
	}
	t := &Table{Name: cs.Relation.Relname}
	for _, e := range cs.TableElts {
		switch {
		case e.GetColumnDef() != nil:
			c, key, err := ColumnOf(e.GetColumnDef())
			if err != nil {
				return nil, err
			}
			if t.Column(c.Name) != nil {
				return nil, pgerr.New(pgerr.DuplicateColumn, "column %q specified more than once", c.Name)
			}
			t.Columns = append(t.Columns, c)
			if key {
				t.Key = []string{c.Name}
			}
		case e.GetConstraint() != nil:
			con := e.GetConstraint()
			if con.Contype == pg_query.ConstrType_CONSTR_PRIMARY {
				t.Key = names(con.Keys)
				for _, k := range t.Key {
					if c := t.Column(k); c != nil {
						c.NotNull = true
					}
				}
			}
		case e.GetTableLikeClause() != nil:
			return nil, unsupported("CREATE TABLE ... (LIKE ...)")
		}
	}
	_, t.Constraints = ConstraintNames(cs)
	return t, nil
}

// renameIn returns list with old replaced by new (a copy when it
// changes).
func renameIn(list []string, old, new string) []string {
	if !slices.Contains(list, old) {
		return list
	}
	out := slices.Clone(list)
	for i, s := range out {
		if s == old {
			out[i] = new
		}
	}
	return out
}

// ColumnOf describes one column definition; key is true when the column
// is declared PRIMARY KEY.
func ColumnOf(cd *pg_query.ColumnDef) (c Column, key bool, err error) {
	typ, mods, serial, ok := TypeOf(cd.TypeName)
	if !ok {
		return c, false, unsupported("the type of column %q (%s)", cd.Colname, typeText(cd.TypeName))
	}
	if cd.CollClause != nil {
		return c, false, unsupported("COLLATE on column %q: replicas compare text byte-wise", cd.Colname)
	}
	c = Column{Name: cd.Colname, Type: typ, Mods: mods, NotNull: cd.IsNotNull}
	if serial {
		c.Fill, c.NotNull = FillSerial, true
	}
	for _, n := range cd.Constraints {
		con := n.GetConstraint()
		if con == nil {
			continue
		}
		switch con.Contype {
		case pg_query.ConstrType_CONSTR_NOTNULL:
			c.NotNull = true
		case pg_query.ConstrType_CONSTR_PRIMARY:
			key, c.NotNull = true, true
		case pg_query.ConstrType_CONSTR_IDENTITY:
			if !IsInteger(typ) {
				return c, false, unsupported("IDENTITY on a column of type %s", typ)
			}
			if len(con.Options) > 0 {
				return c, false, unsupported("sequence options of IDENTITY column %q", cd.Colname)
			}
			c.Fill, c.NotNull, c.Always, c.Identity = FillSerial, true, con.GeneratedWhen == "a", true
		case pg_query.ConstrType_CONSTR_DEFAULT:
			if seq, ok := SeqDefault(con.RawExpr); ok {
				c.Fill, c.Seq = FillNextval, seq
				continue
			}
			f, err := fillOf(con.RawExpr)
			if err != nil {
				return c, false, unsupported("the DEFAULT of column %q: %s", cd.Colname, err.Error())
			}
			if c.Fill == FillNone {
				c.Fill = f
			}
			c.Default = exprText(con.RawExpr)
		case pg_query.ConstrType_CONSTR_GENERATED:
			return c, false, unsupported("generated column %q", cd.Colname)
		}
	}
	if (c.Fill == FillSerial || c.Fill == FillNextval) && !IsInteger(typ) {
		return c, false, unsupported("a sequence default on column %q of type %s", cd.Colname, typ)
	}
	return c, key, nil
}

// fillOf classifies a DEFAULT expression: a constant (FillNone), or one
// of the nondeterministic defaults shepherd fills in itself. Anything else
// is refused: it could evaluate differently on different replicas.
func fillOf(n *pg_query.Node) (Fill, error) {
	if n == nil {
		return FillNone, nil
	}
	if tc := n.GetTypeCast(); tc != nil {
		return fillOf(tc.Arg)
	}
	if IsConstant(n) {
		return FillNone, nil
	}
	if sv := n.GetSqlvalueFunction(); sv != nil {
		switch sv.Op {
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N,
			pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
			return FillNow, nil
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
			return FillDate, nil
		}
	}
	if fc := n.GetFuncCall(); fc != nil && len(fc.Args) <= 1 {
		switch FuncName(fc) {
		case "now", "transaction_timestamp", "statement_timestamp", "clock_timestamp":
			if len(fc.Args) == 0 {
				return FillNow, nil
			}
		case "gen_random_uuid", "uuid_generate_v4":
			if len(fc.Args) == 0 {
				return FillUUID, nil
			}
		case "random":
			if len(fc.Args) == 0 {
				return FillRandom, nil
			}
		case "nextval":
			return FillNone, errors.New("nextval(...) defaults other than nextval('sequence')")
		}
	}
	return FillNone, errors.New("a column default must be a constant, now(), current_timestamp, current_date, gen_random_uuid() or random()")
}

// IsConstant reports whether n is a literal: a constant, a signed number,
// or a cast of one.
func IsConstant(n *pg_query.Node) bool {
	switch {
	case n == nil:
		return false
	case n.GetAConst() != nil:
		return true
	case n.GetTypeCast() != nil:
		return IsConstant(n.GetTypeCast().Arg)
	case n.GetAExpr() != nil:
		e := n.GetAExpr()
		return e.Kind == pg_query.A_Expr_Kind_AEXPR_OP && e.Lexpr == nil && len(e.Name) == 1 &&
			(OpName(e.Name) == "-" || OpName(e.Name) == "+") && IsConstant(e.Rexpr)
	}
	return false
}

// FuncName returns a function call's name, lower case, without the
// pg_catalog schema; "" for a schema-qualified user function.
func FuncName(fc *pg_query.FuncCall) string {
	var parts []string
	for _, n := range fc.Funcname {
		if s := n.GetString_(); s != nil {
			parts = append(parts, s.Sval)
		}
	}
	if len(parts) == 2 && parts[0] == "pg_catalog" {
		parts = parts[1:]
	}
	if len(parts) != 1 {
		return ""
	}
	return strings.ToLower(parts[0])
}

// OpName returns an operator's name ("+", "~~").
func OpName(name []*pg_query.Node) string {
	var parts []string
	for _, n := range name {
		if s := n.GetString_(); s != nil {
			parts = append(parts, s.Sval)
		}
	}
	if len(parts) == 2 && parts[0] == "pg_catalog" {
		parts = parts[1:]
	}
	return strings.Join(parts, ".")
}

func names(list []*pg_query.Node) []string {
	var out []string
	for _, n := range list {
		if s := n.GetString_(); s != nil {
			out = append(out, s.Sval)
		}
	}
	return out
}

func typeText(tn *pg_query.TypeName) string {
	if tn == nil {
		return "?"
	}
	var parts []string
	for _, n := range tn.Names {
		if s := n.GetString_(); s != nil && s.Sval != "pg_catalog" {
			parts = append(parts, s.Sval)
		}
	}
	s := strings.Join(parts, ".")
	if len(tn.ArrayBounds) > 0 {
		s += "[]"
	}
	return s
}

// TypeText returns a type as the client wrote it, for messages.
func TypeText(tn *pg_query.TypeName) string { return typeText(tn) }

// Apply returns the schema after one DDL statement that committed. A
// statement that does not change what the schema records returns s
// itself.
func (s *Snapshot) Apply(n *pg_query.Node) (*Snapshot, error) {
	next := s.clone()
	changed := true
	switch {
	case n.GetCreateStmt() != nil:
		cs := n.GetCreateStmt()
		if cs.IfNotExists && s.Table(cs.Relation.Relname) != nil {
			return s, nil
		}
		t, err := TableOf(cs)
		if err != nil {
			return nil, err
		}
		for _, c := range t.Columns {
			if c.Fill == FillNextval && s.Sequence(c.Seq) == nil {
				return nil, pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", c.Seq)
			}
		}
		next.Tables[t.Name] = t
	case n.GetCreateSeqStmt() != nil || n.GetAlterSeqStmt() != nil ||
		n.GetDropStmt() != nil && n.GetDropStmt().RemoveType == pg_query.ObjectType_OBJECT_SEQUENCE:
		ok, err := s.applySequence(next, n)
		if err != nil {
			return nil, err
		}
		changed = ok
	case n.GetViewStmt() != nil:
		v := n.GetViewStmt()
		uses, cols := relationsOf(v.Query)
		query, err := pg_query.Deparse(&pg_query.ParseResult{Version: parseVersion, Stmts: []*pg_query.RawStmt{{Stmt: v.Query}}})
		if err != nil {
			query = ""
		}
		next.Tables[v.View.Relname] = &Table{Name: v.View.Relname, View: true, Uses: uses, UsesColumns: cols, Query: query, Aliases: names(v.Aliases)}
	case n.GetIndexStmt() != nil:
		ix := n.GetIndexStmt()
		next.Indexes[IndexName(ix)] = ix.Relation.Relname
		var cols []string
		for _, p := range ix.IndexParams {
			if e := p.GetIndexElem(); e != nil {
				cols = append(cols, e.Name)
			}
		}
		next.IndexColumns[IndexName(ix)] = cols
		if ix.Unique {
			if next.UniqueIndexes == nil {
				next.UniqueIndexes = map[string]bool{}
			}
			next.UniqueIndexes[IndexName(ix)] = true
		}
		if def, ok := indexDef(ix); ok {
			if next.IndexDefs == nil {
				next.IndexDefs = map[string]string{}
			}
			next.IndexDefs[IndexName(ix)] = def
		} else {
			delete(next.IndexDefs, IndexName(ix))
		}
	case n.GetDropStmt() != nil:
		d := n.GetDropStmt()
		for _, o := range d.Objects {
			name := lastName(o)
			switch d.RemoveType {
			case pg_query.ObjectType_OBJECT_TABLE, pg_query.ObjectType_OBJECT_VIEW:
				delete(next.Tables, name)
				// Sequences OWNED BY the table's columns go with it.
				for sn, q := range next.Sequences {
					if strings.HasPrefix(q.OwnedBy, name+".") && !strings.Contains(q.OwnedBy[len(name)+1:], ".") {
						delete(next.Sequences, sn)
					}
				}
				for ix, t := range next.Indexes {
					if t == name {
						delete(next.IndexColumns, ix)
						delete(next.UniqueIndexes, ix)
						delete(next.IndexDefs, ix)
						delete(next.Indexes, ix)
					}
				}
			case pg_query.ObjectType_OBJECT_INDEX:
				delete(next.Indexes, name)
				delete(next.IndexColumns, name)
				delete(next.UniqueIndexes, name)
				delete(next.IndexDefs, name)
			}
		}
	case n.GetAlterTableStmt() != nil:
		at := n.GetAlterTableStmt()
		old := s.Table(at.Relation.Relname)
		if old == nil {
			return s, nil
		}
		t := old.clone()
		for _, cn := range at.Cmds {
			cmd := cn.GetAlterTableCmd()
			if cmd == nil {
				continue
			}
			switch cmd.Subtype {
			case pg_query.AlterTableType_AT_AddColumn:
				c, key, err := ColumnOf(cmd.Def.GetColumnDef())
				if err != nil {
					return nil, err
				}
				t.Columns = append(t.Columns, c)
				if key {
					t.Key = []string{c.Name}
				}
				for _, n := range cmd.Def.GetColumnDef().Constraints {
					if con := n.GetConstraint(); con != nil {
						if k, ok := AddedConstraint(t, con, c.Name); ok {
							t.Constraints = append(t.Constraints, k)
						}
					}
				}
			case pg_query.AlterTableType_AT_DropColumn:
				for i, c := range t.Columns {
					if c.Name == cmd.Name {
						t.Columns = append(t.Columns[:i:i], t.Columns[i+1:]...)
						break
					}
				}
				// PostgreSQL drops the indexes and constraints on the
				// column with it.
				if slices.Contains(t.Key, cmd.Name) {
					t.Key = nil
				}
				for ix, tn := range next.Indexes {
					if tn == t.Name && next.IndexNames(ix, cmd.Name) {
						delete(next.Indexes, ix)
						delete(next.IndexColumns, ix)
						delete(next.UniqueIndexes, ix)
						delete(next.IndexDefs, ix)
					}
				}
				// PostgreSQL drops the constraints on the column with it.
				t.Constraints = slices.DeleteFunc(t.Constraints, func(c Constraint) bool {
					return slices.Contains(c.Columns, cmd.Name)
				})
			case pg_query.AlterTableType_AT_AddConstraint:
				if con := cmd.Def.GetConstraint(); con != nil {
					if c, ok := AddedConstraint(t, con, ""); ok {
						t.Constraints = append(t.Constraints, c)
					}
				}
			case pg_query.AlterTableType_AT_DropConstraint:
				t.Constraints = slices.DeleteFunc(t.Constraints, func(c Constraint) bool { return c.Name == cmd.Name })
			case pg_query.AlterTableType_AT_ColumnDefault:
				if c := t.Column(cmd.Name); c != nil && c.Fill != FillSerial {
					f, err := fillOf(cmd.Def)
					if err != nil {
						return nil, unsupported("the DEFAULT of column %q: %s", cmd.Name, err.Error())
					}
					c.Fill = f
					c.Default = exprText(cmd.Def)
				}
			case pg_query.AlterTableType_AT_AlterColumnType:
				if c, cd := t.Column(cmd.Name), cmd.Def.GetColumnDef(); c != nil && cd != nil {
					if typ, mods, _, ok := TypeOf(cd.TypeName); ok {
						c.Type, c.Mods = typ, mods
					}
				}
			case pg_query.AlterTableType_AT_SetNotNull:
				if c := t.Column(cmd.Name); c != nil {
					c.NotNull = true
				}
			case pg_query.AlterTableType_AT_DropNotNull:
				if c := t.Column(cmd.Name); c != nil {
					c.NotNull = false
				}
			}
		}
		next.Tables[t.Name] = t
	case n.GetRenameStmt() != nil:
		r := n.GetRenameStmt()
		next.renameOwners(r)
		switch r.RenameType {
		case pg_query.ObjectType_OBJECT_TABLE, pg_query.ObjectType_OBJECT_VIEW:
			old := s.Table(r.Relation.Relname)
			if old == nil {
				return s, nil
			}
			t := old.clone()
			t.Name = r.Newname
			delete(next.Tables, old.Name)
			next.Tables[t.Name] = t
			for ix, tn := range next.Indexes {
				if tn == old.Name {
					next.Indexes[ix] = t.Name
				}
			}
			// Foreign keys name their parent table.
			for name, o := range next.Tables {
				if o.references(old.Name) {
					o = o.clone()
					for i := range o.Constraints {
						if o.Constraints[i].RefTable == old.Name {
							o.Constraints[i].RefTable = t.Name
						}
					}
					next.Tables[name] = o
				}
			}
		case pg_query.ObjectType_OBJECT_COLUMN:
			old := s.Table(r.Relation.Relname)
			if old == nil {
				return s, nil
			}
			t := old.clone()
			if c := t.Column(r.Subname); c != nil {
				c.Name = r.Newname
			}
			for i, k := range t.Key {
				if k == r.Subname {
					t.Key[i] = r.Newname
				}
			}
			// The constraints and indexes naming the column follow it.
			next.Tables[t.Name] = t
			for ix, tn := range next.Indexes {
				if tn == t.Name {
					next.IndexColumns[ix] = renameIn(next.IndexColumns[ix], r.Subname, r.Newname)
					// So is its definition, WHERE and expressions too,
					// which a rebuild on SQLite makes the index by again.
					if def, ok := editIndexDef(next.IndexDefs[ix], func(name *string) {
						if *name == r.Subname {
							*name = r.Newname
						}
					}); ok {
						next.IndexDefs[ix] = def
					}
				}
			}
			t.Constraints = renameConstraintColumn(t.Constraints, true, t.Name, r.Subname, r.Newname)
			next.Tables[t.Name] = t
			// Foreign keys of other tables name the column they reference.
			for name, o := range next.Tables {
				if name != t.Name && o.references(t.Name) {
					o = o.clone()
					o.Constraints = renameConstraintColumn(o.Constraints, false, t.Name, r.Subname, r.Newname)
					next.Tables[name] = o
				}
			}
		case pg_query.ObjectType_OBJECT_INDEX:
			if tn, ok := next.Indexes[r.Relation.Relname]; ok {
				old := r.Relation.Relname
				delete(next.Indexes, old)
				next.Indexes[r.Newname] = tn
				// Its columns, uniqueness and definition go with the name.
				if cols, ok := next.IndexColumns[old]; ok {
					delete(next.IndexColumns, old)
					next.IndexColumns[r.Newname] = cols
				}
				if next.UniqueIndexes[old] {
					delete(next.UniqueIndexes, old)
					next.UniqueIndexes[r.Newname] = true
				}
				if def, ok := next.IndexDefs[old]; ok {
					delete(next.IndexDefs, old)
					next.IndexDefs[r.Newname] = def
				}
			}
		default:
			changed = false
		}
	default:
		changed = false
	}
	if !changed {
		return s, nil
	}
	next.Version++
	return next, nil
}

// exprText writes an expression back as PostgreSQL's parser would (""
// for none or when it cannot).
func exprText(n *pg_query.Node) string {
	if n == nil {
		return ""
	}
	sel := &pg_query.SelectStmt{TargetList: []*pg_query.Node{{Node: &pg_query.Node_ResTarget{ResTarget: &pg_query.ResTarget{Val: n}}}}}
	text, err := pg_query.Deparse(&pg_query.ParseResult{Version: parseVersion, Stmts: []*pg_query.RawStmt{{Stmt: &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: sel}}}}})
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(text, "SELECT ")
}

// indexDef returns the CREATE INDEX statement ix as PostgreSQL's parser
// reads it back, under its name and without IF NOT EXISTS (see
// Snapshot.IndexDefs).
func indexDef(ix *pg_query.IndexStmt) (string, bool) {
	c, ok := proto.Clone(ix).(*pg_query.IndexStmt)
	if !ok {
		return "", false
	}
	c.Idxname = IndexName(ix)
	c.IfNotExists = false
	text, err := pg_query.Deparse(&pg_query.ParseResult{Version: parseVersion, Stmts: []*pg_query.RawStmt{{Stmt: &pg_query.Node{Node: &pg_query.Node_IndexStmt{IndexStmt: c}}}}})
	return text, err == nil
}

// IndexName returns the name of the index a CREATE INDEX makes: the
// given one, or PostgreSQL's default (table_col_idx) when none is given.
func IndexName(ix *pg_query.IndexStmt) string {
	if ix.Idxname != "" {
		return ix.Idxname
	}
	parts := []string{ix.Relation.Relname}
	for _, p := range ix.IndexParams {
		if e := p.GetIndexElem(); e != nil && e.Name != "" {
			parts = append(parts, e.Name)
		}
	}
	return strings.Join(parts, "_") + "_idx"
}

// lastName returns the last element of a qualified name list node.
func lastName(o *pg_query.Node) string {
	if l := o.GetList(); l != nil && len(l.Items) > 0 {
		if s := l.Items[len(l.Items)-1].GetString_(); s != nil {
			return s.Sval
		}
	}
	if s := o.GetString_(); s != nil {
		return s.Sval
	}
	return ""
}

// relationsOf returns the tables and views a query reads (the relations
// it names, less the names of its own WITH queries) and the column names
// it mentions ("*" for a star), each sorted, once each.
func relationsOf(q *pg_query.Node) (rels, cols []string) {
	ctes, seen, seenCol := map[string]bool{}, map[string]bool{}, map[string]bool{}
	var out []string
	col := func(name string) {
		if !seenCol[name] {
			seenCol[name] = true
			cols = append(cols, name)
		}
	}
	visit := func(m protoreflect.Message) bool {
		switch x := m.Interface().(type) {
		case *pg_query.CommonTableExpr:
			ctes[x.Ctename] = true
		case *pg_query.RangeVar:
			if !seen[x.Relname] {
				seen[x.Relname] = true
				out = append(out, x.Relname)
			}
		case *pg_query.ColumnRef:
			if len(x.Fields) > 0 {
				last := x.Fields[len(x.Fields)-1]
				switch {
				case last.GetAStar() != nil:
					col("*")
				case last.GetString_() != nil:
					col(last.GetString_().Sval)
				}
			}
		case *pg_query.JoinExpr:
			for _, u := range x.UsingClause {
				if s := u.GetString_(); s != nil {
					col(s.Sval)
				}
			}
			if x.IsNatural {
				col("*")
			}
		}
		return true
	}
	if q != nil {
		pgtree.Walk(q.ProtoReflect(), visit)
	}
	out = slices.DeleteFunc(out, func(name string) bool { return ctes[name] })
	slices.Sort(out)
	slices.Sort(cols)
	return out, cols
}

// parseVersion is the parse tree version of the linked parser (Deparse
// checks it).
var parseVersion = func() int32 {
	t, err := pg_query.Parse("SELECT 1")
	if err != nil {
		return 0
	}
	return t.Version
}()

// IndexNames reports whether index ix names column col: among its
// columns, or in its recorded definition's expressions or WHERE (see
// Snapshot.IndexDefs). PostgreSQL drops such an index with the column.
func (s *Snapshot) IndexNames(ix, col string) bool {
	if slices.Contains(s.IndexColumns[ix], col) {
		return true
	}
	found := false
	editIndexDef(s.IndexDefs[ix], func(names *string) {
		found = found || *names == col
	})
	return found
}

// editIndexDef calls edit with every column name CREATE INDEX statement
// def names (its columns, and the columns its expressions and WHERE
// read) and returns the statement written back after the edits; ok is
// false when def does not read back.
func editIndexDef(def string, edit func(name *string)) (string, bool) {
	if def == "" {
		return "", false
	}
	tree, err := pg_query.Parse(def)
	if err != nil || len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetIndexStmt() == nil {
		return "", false
	}
	pgtree.Walk(tree.Stmts[0].Stmt.ProtoReflect(), func(m protoreflect.Message) bool {
		switch x := m.Interface().(type) {
		case *pg_query.IndexElem:
			if x.Name != "" {
				edit(&x.Name)
			}
		case *pg_query.ColumnRef:
			if len(x.Fields) > 0 {
				if s := x.Fields[len(x.Fields)-1].GetString_(); s != nil {
					edit(&s.Sval)
				}
			}
		}
		return true
	})
	text, err := pg_query.Deparse(tree)
	return text, err == nil
}
