package pgcatalog

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/schema"
)

// firstUserOID is PostgreSQL's FirstNormalObjectId: user objects get
// OIDs from here on, built-in ones below.
const firstUserOID = 16384

// PostgreSQL's fixed OIDs the rows refer to.
const (
	nsPublic     = 2200
	ownerOID     = 10 // the bootstrap superuser
	amHeap       = 2
	amBtree      = 403
	collDefault  = 100
	classPgClass = 1259
	// classPgRewrite and classPgAttrdef are pg_depend's classid of
	// rules and of column defaults.
	classPgRewrite = 2618
	classPgAttrdef = 2604
)

// hiddenTable is shepherd's own table on every replica (its log;
// sqlan.ReservedTable), which no catalog shows.
const hiddenTable = "shepherd_log"

func hidden(name string) bool { return strings.EqualFold(name, hiddenTable) }

// row is one row to insert: into a catalog relation by column name
// (vals), or into a side table in column order (list).
type row struct {
	rel  string
	vals map[string]any
	list []any
}

// oids gives each user object its OID: a hash of its kind and name,
// probed in name order on a collision, so that the same schema gives the
// same OIDs after a restart (see doc.go for what changes them).
type oids struct {
	byKey map[string]int64
}

func assignOIDs(keys []string) oids {
	slices.Sort(keys)
	o := oids{byKey: map[string]int64{}}
	used := map[int64]bool{}
	const span = 1<<31 - firstUserOID
	for _, k := range keys {
		if _, ok := o.byKey[k]; ok {
			continue
		}
		h := fnv.New32a()
		h.Write([]byte(k))
		n := int64(h.Sum32()) % span
		for used[firstUserOID+n] {
			n = (n + 1) % span
		}
		used[firstUserOID+n] = true
		o.byKey[k] = firstUserOID + n
	}
	return o
}

func (o oids) of(key string) int64 { return o.byKey[key] }

// bool01 is how the engine stores a boolean.
func bool01(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// typmod is PostgreSQL's atttypmod of a column.
func typmod(c *schema.Column) int64 {
	switch c.Type {
	case "varchar", "bpchar":
		if len(c.Mods) == 1 {
			return int64(c.Mods[0]) + 4
		}
		if c.Type == "bpchar" {
			return 5 // char alone is char(1)
		}
	case "numeric":
		switch len(c.Mods) {
		case 1:
			return int64(c.Mods[0])<<16 + 4
		case 2:
			return (int64(c.Mods[0])<<16 | int64(c.Mods[1]&0xffff)) + 4
		}
	}
	return -1
}

// defaultText is what pg_get_expr shows for a column's default ("" for
// none).
func defaultText(t *schema.Table, c *schema.Column) string {
	if c.Fill == schema.FillSerial {
		if c.Identity {
			return ""
		}
		return fmt.Sprintf("nextval('%s'::regclass)", seqName(t, c))
	}
	d := c.Default
	if d == "" {
		switch c.Fill {
		case schema.FillNow:
			return "now()"
		case schema.FillDate:
			return "CURRENT_DATE"
		case schema.FillUUID:
			return "gen_random_uuid()"
		case schema.FillRandom:
			return "random()"
		}
		return ""
	}
	if strings.HasPrefix(d, "'") && strings.HasSuffix(d, "'") {
		// PostgreSQL keeps the constant's coercion to the column type.
		d += "::" + sqlTypeName(c.Type, nil)
	}
	return d
}

func seqName(t *schema.Table, c *schema.Column) string { return t.Name + "_" + c.Name + "_seq" }

// sqlTypeName is format_type's name of a type without its modifiers, or
// with them when mods is given.
func sqlTypeName(typ string, mods []int32) string {
	if schema.IsArray(typ) {
		return sqlTypeName(schema.ArrayElement(typ), mods) + "[]"
	}
	name := typ
	switch typ {
	case "int2":
		name = "smallint"
	case "int4":
		name = "integer"
	case "int8":
		name = "bigint"
	case "float4":
		name = "real"
	case "float8":
		name = "double precision"
	case "bool":
		name = "boolean"
	case "varchar":
		name = "character varying"
	case "bpchar":
		name = "character"
	case "timestamp":
		name = "timestamp without time zone"
	case "timestamptz":
		name = "timestamp with time zone"
	case "time":
		name = "time without time zone"
	case "timetz":
		name = "time with time zone"
	case "varbit":
		name = "bit varying"
	}
	if len(mods) > 0 {
		var parts []string
		for _, m := range mods {
			parts = append(parts, strconv.Itoa(int(m)))
		}
		name += "(" + strings.Join(parts, ",") + ")"
	}
	return name
}

// constraint is a key, unique or foreign key constraint of a table.
type constraint struct {
	name string
	kind byte   // 'p', 'u', 'f', 'c'
	expr string // a check's expression
	// pretty is a check's expression as pg_get_constraintdef(oid, true)
	// prints it ("" when checkExpr does not know its form).
	pretty string
	// options are a foreign key's confupdtype, confdeltype and
	// confmatchtype, then (any constraint's) "D" when DEFERRABLE and "I"
	// when INITIALLY DEFERRED.
	options  string
	cols     []string
	parent   string
	refCols  []string
	index    string // the index of a key or unique constraint
	position int    // order among the table's constraints
}

// constraintsOf returns t's constraints as t.Constraints records them
// (the names errors give too): primary key, unique constraints, foreign
// keys, then checks.
func constraintsOf(t *schema.Table, snap *schema.Snapshot) []constraint {
	var out []constraint
	for _, kind := range []string{schema.ConstraintPrimary, schema.ConstraintUnique, schema.ConstraintForeign, schema.ConstraintCheck} {
		for i := range t.Constraints {
			sc := &t.Constraints[i]
			if sc.Kind != kind {
				continue
			}
			c := constraint{name: sc.Name, kind: sc.Kind[0], cols: sc.Columns}
			switch sc.Kind {
			case schema.ConstraintPrimary, schema.ConstraintUnique:
				c.index = sc.Name
			case schema.ConstraintForeign:
				c.parent, c.refCols = sc.RefTable, sc.RefColumns
				if len(c.refCols) == 0 {
					if p := snap.Table(sc.RefTable); p != nil {
						c.refCols = p.Key
					}
				}
				upd, del, match := sc.Actions()
				c.options = string([]byte{upd, del, match})
			case schema.ConstraintCheck:
				c.cols = nil
				c.expr, c.pretty = checkExpr(t, sc.Expr)
				for _, col := range sc.Columns {
					if t.Column(col) != nil {
						c.cols = append(c.cols, col)
					}
				}
			}
			if sc.Deferrable {
				c.options += "D"
			}
			if sc.InitiallyDeferred {
				c.options += "I"
			}
			out = append(out, c)
		}
	}
	return out
}

func attnums(t *schema.Table, cols []string) []int64 {
	out := make([]int64, len(cols))
	for i, name := range cols {
		for j := range t.Columns {
			if t.Columns[j].Name == name {
				out[i] = int64(j + 1)
			}
		}
	}
	return out
}

func quoteIfNeeded(s string) string {
	ok := s != ""
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			ok = false
		}
	}
	if ok && !reserved[s] {
		return s
	}
	return quoteIdent(s)
}

// reserved are the keywords PostgreSQL quotes in names it prints (the
// common ones).
var reserved = map[string]bool{"user": true, "order": true, "group": true, "table": true, "select": true,
	"from": true, "where": true, "check": true, "default": true, "primary": true, "references": true,
	"column": true, "limit": true, "offset": true, "to": true, "end": true, "desc": true, "asc": true}

func colList(cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = quoteIfNeeded(c)
	}
	return strings.Join(q, ", ")
}

// buildRows returns the rows of snap's user objects.
func buildRows(snap *schema.Snapshot, viewCols func(*schema.Table) []answer.Column, databaseName string, others ...string) []row {
	var out []row
	// The session's database and the others, each as a copy of
	// postgres's row.
	seen := map[string]bool{"postgres": true, "template0": true, "template1": true}
	var dbKeys []string
	for _, name := range append([]string{databaseName}, others...) {
		if !seen[name] {
			seen[name] = true
			dbKeys = append(dbKeys, "database:"+name)
		}
	}
	db := relByName["pg_database"]
	for _, key := range dbKeys {
		for _, r := range db.rows {
			if *r[db.col("datname")] != "postgres" {
				continue
			}
			vals := map[string]any{}
			for i, c := range db.cols {
				vals[c.name] = storeValue(c.typ, r[i])
			}
			// Each database's OID is its name's alone.
			vals["oid"] = assignOIDs([]string{key}).of(key)
			vals["datname"] = strings.TrimPrefix(key, "database:")
			out = append(out, row{rel: "pg_database", vals: vals})
		}
	}
	if snap == nil {
		return out
	}
	var names []string
	for name := range snap.Tables {
		if !hidden(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	var keys []string
	for _, name := range names {
		t := snap.Tables[name]
		keys = append(keys, "class:"+name, "type:"+name, "type:_"+name)
		if t.View {
			keys = append(keys, "rewrite:"+name)
		}
		for _, c := range constraintsOf(t, snap) {
			keys = append(keys, "con:"+name+"."+c.name)
			if c.index != "" {
				keys = append(keys, "class:"+c.index)
			}
		}
		for i := range t.Columns {
			c := &t.Columns[i]
			if c.Fill == schema.FillSerial {
				keys = append(keys, "class:"+seqName(t, c))
			}
			keys = append(keys, "attrdef:"+name+"."+c.Name)
		}
	}
	for ix := range snap.Indexes {
		keys = append(keys, "class:"+ix)
	}
	var seqs []string // CREATE SEQUENCE's
	for name := range snap.Sequences {
		seqs = append(seqs, name)
		keys = append(keys, "class:"+name)
	}
	slices.Sort(seqs)
	o := assignOIDs(keys)

	add := func(rel string, vals map[string]any) { out = append(out, row{rel: rel, vals: vals}) }
	side := func(rel string, list ...any) { out = append(out, row{rel: rel, list: list}) }
	classRow := func(oid int64, name string, kind string, am int64, natts int, hasIndex bool) map[string]any {
		return map[string]any{"oid": oid, "relname": name, "relnamespace": int64(nsPublic), "relowner": int64(ownerOID),
			"relam": am, "relfilenode": oid, "reltuples": float64(-1), "relhasindex": bool01(hasIndex),
			"relpersistence": "p", "relkind": kind, "relnatts": int64(natts), "relispopulated": int64(1),
			"relreplident": "d"}
	}
	info := func(vals map[string]any) map[string]any {
		for _, k := range []string{"table_catalog", "constraint_catalog", "unique_constraint_catalog", "sequence_catalog"} {
			if _, ok := vals[k]; ok {
				vals[k] = databaseName
			}
		}
		return vals
	}
	// The sequences of CREATE SEQUENCE, as PostgreSQL shows them: a
	// relation of kind S with its three columns, its pg_sequence row,
	// an OWNED BY column's dependency, information_schema.sequences.
	for _, name := range seqs {
		q := snap.Sequences[name]
		seqOID := o.of("class:" + name)
		sr := classRow(seqOID, name, "S", 0, 3, false)
		sr["reltuples"] = float64(1)
		add("pg_class", sr)
		for k, a := range []struct{ name, typ string }{{"last_value", "int8"}, {"log_cnt", "int8"}, {"is_called", "bool"}} {
			at := typeByName[a.typ]
			add("pg_attribute", map[string]any{"attrelid": seqOID, "attname": a.name, "atttypid": int64(at.oid),
				"attstattarget": int64(-1), "attlen": int64(at.len), "attnum": int64(k + 1), "attcacheoff": int64(-1),
				"atttypmod": int64(-1), "attnotnull": int64(1), "attidentity": "", "attgenerated": "", "attislocal": int64(1),
				"attcompression": "", "attalign": "d", "attstorage": "p"})
		}
		typ := q.Type
		if typeByName[typ] == nil {
			typ = "int8"
		}
		add("pg_sequence", map[string]any{"seqrelid": seqOID, "seqtypid": int64(typeByName[typ].oid), "seqstart": q.Start,
			"seqincrement": q.Increment, "seqmax": q.Max, "seqmin": q.Min, "seqcache": q.Cache, "seqcycle": bool01(q.Cycle)})
		if tab, col, ok := strings.Cut(q.OwnedBy, "."); ok {
			if t := snap.Tables[tab]; t != nil {
				for i := range t.Columns {
					if t.Columns[i].Name == col {
						add("pg_depend", map[string]any{"classid": int64(classPgClass), "objid": seqOID, "objsubid": int64(0),
							"refclassid": int64(classPgClass), "refobjid": o.of("class:" + tab), "refobjsubid": int64(i + 1), "deptype": "a"})
					}
				}
			}
		}
		cycle := "NO"
		if q.Cycle {
			cycle = "YES"
		}
		add("information_schema.sequences", info(map[string]any{"sequence_catalog": "", "sequence_schema": "public",
			"sequence_name": name, "data_type": sqlTypeName(typ, nil), "numeric_precision": map[string]int64{"int2": 16, "int4": 32, "int8": 64}[typ],
			"numeric_precision_radix": int64(2), "numeric_scale": int64(0), "start_value": strconv.FormatInt(q.Start, 10),
			"minimum_value": strconv.FormatInt(q.Min, 10), "maximum_value": strconv.FormatInt(q.Max, 10),
			"increment": strconv.FormatInt(q.Increment, 10), "cycle_option": cycle}))
	}
	indexRow := func(ix string, table string, t *schema.Table, cols []string, unique, primary bool) {
		ixOID, relOID := o.of("class:"+ix), o.of("class:"+table)
		ir := classRow(ixOID, ix, "i", amBtree, len(cols), false)
		ir["reltuples"], ir["relpages"] = float64(0), int64(1) // a new btree: its metapage
		add("pg_class", ir)
		keys := attnums(t, cols)
		zeros := make([]int64, len(cols))
		colls := make([]int64, len(cols))
		classes := make([]int64, len(cols))
		for i, name := range cols {
			if c := t.Column(name); c != nil {
				classes[i] = btreeOpclass(c.Type)
				if schema.IsText(c.Type) {
					colls[i] = collDefault
				}
			}
		}
		add("pg_index", map[string]any{"indexrelid": ixOID, "indrelid": relOID, "indnatts": int64(len(cols)),
			"indnkeyatts": int64(len(cols)), "indisunique": bool01(unique), "indisprimary": bool01(primary),
			"indimmediate": int64(1), "indisvalid": int64(1), "indisready": int64(1), "indislive": int64(1),
			"indkey": jsonOf(keys), "indcollation": jsonOf(colls), "indclass": jsonOf(classes), "indoption": jsonOf(zeros)})
		for i, name := range cols {
			var typOID, typLen, mod int64 = 0, -1, -1
			coll := int64(0)
			align, storage, byval := "i", "p", int64(0)
			if c := t.Column(name); c != nil {
				if typ := typeByName[c.Type]; typ != nil {
					typOID, typLen = int64(typ.oid), int64(typ.len)
					align, storage, byval = typ.align, typ.storage, bool01(typ.byval)
				}
				mod = typmod(c)
				if schema.IsText(c.Type) {
					coll = collDefault
				}
			}
			add("pg_attribute", map[string]any{"attrelid": ixOID, "attname": name, "atttypid": typOID,
				"attstattarget": int64(-1), "attlen": typLen, "attnum": int64(i + 1), "attcacheoff": int64(-1),
				"atttypmod": mod, "attidentity": "", "attgenerated": "", "attislocal": int64(1), "attcollation": coll,
				"attcompression": "", "attalign": align, "attstorage": storage, "attbyval": byval})
		}
		u := ""
		if unique {
			u = "UNIQUE "
		}
		def := fmt.Sprintf("CREATE %sINDEX %s ON public.%s USING btree (%s)", u, quoteIfNeeded(ix), quoteIfNeeded(table), colList(cols))
		quoted := make([]string, len(cols))
		for i, c := range cols {
			quoted[i] = quoteIfNeeded(c)
		}
		side("shepherd_indexdef", ixOID, def, jsonOf(quoted))
	}

	for _, name := range names {
		t := snap.Tables[name]
		if t.View && viewCols != nil && len(t.Columns) == 0 {
			t = viewTable(t, viewCols(t))
		}
		relOID := o.of("class:" + name)
		cons := constraintsOf(t, snap)
		hasIndex := false
		for _, c := range cons {
			hasIndex = hasIndex || c.index != ""
		}
		for _, tn := range snap.Indexes {
			hasIndex = hasIndex || tn == name
		}
		kind, am, ttype := "r", int64(amHeap), "BASE TABLE"
		if t.View {
			kind, am, ttype = "v", 0, "VIEW"
		}
		cr := classRow(relOID, name, kind, am, len(t.Columns), hasIndex)
		// Its row type and the array of it, as PostgreSQL makes them
		// (copies of pg_class's own, renamed).
		typOID, arrOID := o.of("type:"+name), o.of("type:_"+name)
		cr["reltype"] = typOID
		if row := builtinTypeRow(83, map[string]any{"oid": typOID, "typname": name, "typnamespace": int64(nsPublic),
			"typrelid": relOID, "typarray": arrOID}); row != nil {
			add("pg_type", row)
		}
		if row := builtinTypeRow(273, map[string]any{"oid": arrOID, "typname": "_" + name, "typnamespace": int64(nsPublic),
			"typelem": typOID}); row != nil {
			add("pg_type", row)
		}
		if t.View {
			cr["relhasrules"], cr["relreplident"] = int64(1), "n"
		}
		if len(t.ForeignKeys()) > 0 || len(snap.Children(name)) > 0 {
			cr["relhastriggers"] = int64(1)
		}
		cr["relchecks"] = int64(t.CountChecks())
		add("pg_class", cr)
		add("information_schema.tables", info(map[string]any{"table_catalog": "", "table_schema": "public",
			"table_name": name, "table_type": ttype, "is_insertable_into": yesNo(!t.View), "is_typed": "NO"}))
		if t.View {
			// Its _RETURN rule, which depends on the view and on the
			// columns of the relations its query reads (pg_dump orders
			// a view after them by these rows).
			ruleOID := o.of("rewrite:" + name)
			add("pg_rewrite", map[string]any{"oid": ruleOID, "rulename": "_RETURN", "ev_class": relOID, "ev_type": "1",
				"ev_enabled": "O", "is_instead": int64(1), "ev_qual": "<>", "ev_action": ""})
			dep := func(ref, sub int64, deptype string) {
				add("pg_depend", map[string]any{"classid": int64(classPgRewrite), "objid": ruleOID, "objsubid": int64(0),
					"refclassid": int64(classPgClass), "refobjid": ref, "refobjsubid": sub, "deptype": deptype})
			}
			dep(relOID, 0, "i")
			dep(relOID, 0, "n")
			for _, u := range t.Uses {
				ut := snap.Tables[u]
				if ut == nil || hidden(u) {
					continue
				}
				for k, uc := range ut.Columns {
					if slices.Contains(t.UsesColumns, uc.Name) || slices.Contains(t.UsesColumns, "*") {
						dep(o.of("class:"+u), int64(k+1), "n")
					}
				}
			}
			plain, pretty, qualified, prettyQualified, ok := viewDef(snap, t.Query)
			if !ok {
				plain = " " + t.Query + ";"
				pretty, qualified, prettyQualified = plain, plain, plain
			}
			side("shepherd_viewdef", relOID, plain, pretty, qualified, prettyQualified)
			add("information_schema.views", info(map[string]any{"table_catalog": "", "table_schema": "public",
				"table_name": name, "view_definition": plain, "check_option": "NONE", "is_updatable": "NO",
				"is_insertable_into": "NO", "is_trigger_updatable": "NO", "is_trigger_deletable": "NO",
				"is_trigger_insertable_into": "NO"}))
		}
		if !t.View {
			// The system columns every table has.
			for k, sc := range []struct{ name, typ string }{{"ctid", "tid"}, {"xmin", "xid"}, {"cmin", "cid"},
				{"xmax", "xid"}, {"cmax", "cid"}, {"tableoid", "oid"}} {
				st := typeByName[sc.typ]
				add("pg_attribute", map[string]any{"attrelid": relOID, "attname": sc.name, "atttypid": int64(st.oid),
					"attlen": int64(st.len), "attnum": int64(-1 - k), "attcacheoff": int64(-1), "atttypmod": int64(-1),
					"attbyval": bool01(st.byval), "attalign": st.align, "attstorage": st.storage, "attnotnull": int64(1),
					"attidentity": "", "attgenerated": "", "attislocal": int64(1), "attcompression": "", "attstattarget": int64(0)})
			}
		}
		for i := range t.Columns {
			c := &t.Columns[i]
			typ := typeByName[c.Type]
			var typOID int64
			var typLen int64 = -1
			align, storage, byval := "i", "p", int64(0)
			if typ != nil {
				typOID, typLen = int64(typ.oid), int64(typ.len)
				align, storage, byval = typ.align, typ.storage, bool01(typ.byval)
			}
			def := defaultText(t, c)
			identity := ""
			if c.Identity {
				identity = "d"
				if c.Always {
					identity = "a"
				}
			}
			coll := int64(0)
			if schema.IsText(c.Type) {
				coll = collDefault
			}
			add("pg_attribute", map[string]any{"attrelid": relOID, "attname": c.Name, "atttypid": typOID,
				"attstattarget": int64(-1), "attlen": typLen, "attnum": int64(i + 1), "attcacheoff": int64(-1),
				"atttypmod": typmod(c), "attnotnull": bool01(c.NotNull), "atthasdef": bool01(def != ""),
				"attidentity": identity, "attgenerated": "", "attislocal": int64(1), "attcollation": coll,
				"attcompression": "", "attalign": align, "attstorage": storage, "attbyval": byval})
			if def != "" {
				add("pg_attrdef", map[string]any{"oid": o.of("attrdef:" + name + "." + c.Name), "adrelid": relOID,
					"adnum": int64(i + 1), "adbin": def})
				// The default belongs to its column and, a SERIAL's,
				// uses the sequence (pg_dump writes such a default
				// apart, after the sequence).
				adep := func(ref, sub int64, deptype string) {
					add("pg_depend", map[string]any{"classid": int64(classPgAttrdef), "objid": o.of("attrdef:" + name + "." + c.Name),
						"objsubid": int64(0), "refclassid": int64(classPgClass), "refobjid": ref, "refobjsubid": sub, "deptype": deptype})
				}
				if c.Fill == schema.FillSerial {
					adep(o.of("class:"+seqName(t, c)), 0, "n")
				}
				adep(relOID, int64(i+1), "a")
			}
			if c.Fill == schema.FillSerial {
				seq := seqName(t, c)
				seqOID := o.of("class:" + seq)
				sr := classRow(seqOID, seq, "S", 0, 3, false)
				sr["reltuples"] = float64(1)
				add("pg_class", sr)
				for k, a := range []struct{ name, typ string }{{"last_value", "int8"}, {"log_cnt", "int8"}, {"is_called", "bool"}} {
					at := typeByName[a.typ]
					add("pg_attribute", map[string]any{"attrelid": seqOID, "attname": a.name, "atttypid": int64(at.oid),
						"attstattarget": int64(-1), "attlen": int64(at.len), "attnum": int64(k + 1), "attcacheoff": int64(-1),
						"atttypmod": int64(-1), "attnotnull": int64(1), "attidentity": "", "attgenerated": "", "attislocal": int64(1),
						"attcompression": "", "attalign": "d", "attstorage": "p"})
				}
				maxv := map[string]int64{"int2": 32767, "int4": 2147483647, "int8": 9223372036854775807}[c.Type]
				add("pg_sequence", map[string]any{"seqrelid": seqOID, "seqtypid": typOID, "seqstart": int64(1),
					"seqincrement": int64(1), "seqmax": maxv, "seqmin": int64(1), "seqcache": int64(1), "seqcycle": int64(0)})
				// The sequence belongs to the column: automatically
				// (SERIAL) or internally (IDENTITY), as pg_depend says.
				deptype := "a"
				if c.Identity {
					deptype = "i"
				}
				add("pg_depend", map[string]any{"classid": int64(classPgClass), "objid": seqOID, "objsubid": int64(0),
					"refclassid": int64(classPgClass), "refobjid": relOID, "refobjsubid": int64(i + 1), "deptype": deptype})
				side("shepherd_serial", name, c.Name, "public."+seq)
				side("shepherd_serial", "public."+name, c.Name, "public."+seq)
				if !c.Identity { // PostgreSQL lists the sequences of SERIAL columns, not of identities
					add("information_schema.sequences", info(map[string]any{"sequence_catalog": "", "sequence_schema": "public",
						"sequence_name": seq, "data_type": sqlTypeName(c.Type, nil), "numeric_precision": map[string]int64{"int2": 16, "int4": 32, "int8": 64}[c.Type],
						"numeric_precision_radix": int64(2), "numeric_scale": int64(0), "start_value": "1", "minimum_value": "1",
						"maximum_value": strconv.FormatInt(maxv, 10), "increment": "1", "cycle_option": "NO"}))
				}
			}
			add("information_schema.columns", info(columnInfo(name, i, t, c, def, databaseName)))
			if c.NotNull && !t.View {
				// PostgreSQL 15 shows NOT NULL as a CHECK constraint in
				// information_schema, named by OIDs and column number.
				cname := fmt.Sprintf("%d_%d_%d_not_null", nsPublic, relOID, i+1)
				add("information_schema.table_constraints", info(map[string]any{"constraint_catalog": "", "constraint_schema": "public",
					"constraint_name": cname, "table_catalog": "", "table_schema": "public", "table_name": name,
					"constraint_type": "CHECK", "is_deferrable": "NO", "initially_deferred": "NO", "enforced": "YES", "nulls_distinct": nil}))
				add("information_schema.check_constraints", info(map[string]any{"constraint_catalog": "", "constraint_schema": "public",
					"constraint_name": cname, "check_clause": quoteIfNeeded(c.Name) + " IS NOT NULL"}))
			}
		}
		for _, c := range cons {
			conOID := o.of("con:" + name + "." + c.name)
			vals := map[string]any{"oid": conOID, "conname": c.name, "connamespace": int64(nsPublic), "contype": string(c.kind),
				"convalidated": int64(1), "conrelid": relOID, "conislocal": int64(1), "conkey": jsonOf(attnums(t, c.cols)),
				"confupdtype": " ", "confdeltype": " ", "confmatchtype": " ", "connoinherit": int64(1)}
			ctype := map[byte]string{'p': "PRIMARY KEY", 'u': "UNIQUE", 'f': "FOREIGN KEY", 'c': "CHECK"}[c.kind]
			def := ctype + " (" + colList(c.cols) + ")"
			if c.kind == 'c' {
				def = "CHECK ((" + c.expr + "))"
				vals["conbin"], vals["connoinherit"] = c.expr, int64(0)
				add("information_schema.check_constraints", info(map[string]any{"constraint_catalog": "",
					"constraint_schema": "public", "constraint_name": c.name, "check_clause": "((" + c.expr + "))"}))
			}
			if c.index != "" {
				vals["conindid"] = o.of("class:" + c.index)
				indexRow(c.index, name, t, c.cols, true, c.kind == 'p')
			}
			if c.kind == 'f' {
				vals["confrelid"] = o.of("class:" + c.parent)
				vals["confupdtype"], vals["confdeltype"], vals["confmatchtype"] = c.options[0:1], c.options[1:2], c.options[2:3]
				vals["condeferrable"] = bool01(strings.Contains(c.options[3:], "D"))
				vals["condeferred"] = bool01(strings.Contains(c.options[3:], "I"))
				vals["connoinherit"] = int64(1)
				if p := snap.Table(c.parent); p != nil {
					vals["confkey"] = jsonOf(attnums(p, c.refCols))
					for _, pc := range constraintsOf(p, snap) {
						if pc.kind != 'f' && slices.Equal(pc.cols, c.refCols) {
							vals["conindid"] = o.of("class:" + pc.index)
						}
					}
				}
				def += " REFERENCES " + quoteIfNeeded(c.parent) + "(" + colList(c.refCols) + ")"
				if c.options[2] == 'f' {
					def += " MATCH FULL"
				}
				if a := fkAction[c.options[0]]; a != "NO ACTION" {
					def += " ON UPDATE " + a
				}
				if a := fkAction[c.options[1]]; a != "NO ACTION" {
					def += " ON DELETE " + a
				}
				if strings.Contains(c.options[3:], "D") {
					def += " DEFERRABLE"
					if strings.Contains(c.options[3:], "I") {
						def += " INITIALLY DEFERRED"
					}
				}
			}
			add("pg_constraint", vals)
			var pretty any
			if c.kind == 'c' && c.pretty != "" {
				pretty = "CHECK (" + c.pretty + ")"
			}
			side("shepherd_condef", conOID, def, pretty)
			add("information_schema.table_constraints", info(map[string]any{"constraint_catalog": "", "constraint_schema": "public",
				"constraint_name": c.name, "table_catalog": "", "table_schema": "public", "table_name": name,
				"constraint_type": ctype, "is_deferrable": yesNo(strings.Contains(c.options, "D")),
				"initially_deferred": yesNo(strings.Contains(c.options, "I")), "enforced": "YES",
				"nulls_distinct": nullsDistinct(c.kind)}))
			for i, col := range c.cols {
				if c.kind == 'c' {
					break
				}
				kcu := map[string]any{"constraint_catalog": "", "constraint_schema": "public", "constraint_name": c.name,
					"table_catalog": "", "table_schema": "public", "table_name": name, "column_name": col,
					"ordinal_position": int64(i + 1)}
				if c.kind == 'f' {
					kcu["position_in_unique_constraint"] = int64(i + 1)
				} else {
					kcu["position_in_unique_constraint"] = nil
				}
				add("information_schema.key_column_usage", info(kcu))
			}
			ccuTable, ccuCols := name, c.cols
			if c.kind == 'f' {
				ccuTable, ccuCols = c.parent, c.refCols
				uname := ""
				if p := snap.Table(c.parent); p != nil {
					for _, pc := range constraintsOf(p, snap) {
						if pc.kind != 'f' && slices.Equal(pc.cols, c.refCols) {
							uname = pc.name
						}
					}
				}
				add("information_schema.referential_constraints", info(map[string]any{"constraint_catalog": "",
					"constraint_schema": "public", "constraint_name": c.name, "unique_constraint_catalog": "",
					"unique_constraint_schema": "public", "unique_constraint_name": uname,
					"match_option": map[byte]string{'s': "NONE", 'f': "FULL", 'p': "PARTIAL"}[c.options[2]],
					"update_rule":  fkAction[c.options[0]], "delete_rule": fkAction[c.options[1]]}))
			}
			for _, col := range ccuCols {
				add("information_schema.constraint_column_usage", info(map[string]any{"table_catalog": "", "table_schema": "public",
					"table_name": ccuTable, "column_name": col, "constraint_catalog": "", "constraint_schema": "public",
					"constraint_name": c.name}))
			}
		}
	}
	var ixNames []string
	for ix, tn := range snap.Indexes {
		if !hidden(tn) && snap.Table(tn) != nil {
			ixNames = append(ixNames, ix)
		}
	}
	slices.Sort(ixNames)
	for _, ix := range ixNames {
		tn := snap.Indexes[ix]
		indexRow(ix, tn, snap.Table(tn), snap.IndexColumns[ix], snap.UniqueIndexes[ix], false)
	}
	return out
}

// viewTable is a view with the columns its query gives (nullable, no
// defaults), as the catalog shows them.
func viewTable(t *schema.Table, cols []answer.Column) *schema.Table {
	v := *t
	v.Columns = nil
	for _, c := range cols {
		typ := typeByOID[c.TypeOID()]
		if typ == nil {
			continue
		}
		col := schema.Column{Name: c.Name, Type: typ.name}
		if c.Mod >= 4 {
			switch typ.name {
			case "varchar", "bpchar":
				col.Mods = []int32{c.Mod - 4}
			case "numeric":
				col.Mods = []int32{(c.Mod - 4) >> 16, (c.Mod - 4) & 0xffff}
			}
		}
		v.Columns = append(v.Columns, col)
	}
	return &v
}

// builtinTypeRow is the built-in pg_type row of oid with some columns
// replaced, as engine values (nil when there is no such row).
func builtinTypeRow(oid int, with map[string]any) map[string]any {
	r := relByName["pg_type"]
	for _, row := range r.rows {
		if *row[r.col("oid")] != strconv.Itoa(oid) {
			continue
		}
		vals := map[string]any{}
		for i, c := range r.cols {
			vals[c.name] = storeValue(c.typ, row[i])
		}
		for k, v := range with {
			vals[k] = v
		}
		return vals
	}
	return nil
}

// btreeOpclass is the default btree operator class of a type (text's
// for varchar, as PostgreSQL picks it), from the built-in pg_opclass.
func btreeOpclass(typ string) int64 {
	if typ == "varchar" {
		typ = "text"
	}
	t := typeByName[typ]
	r := relByName["pg_opclass"]
	if t == nil || r == nil {
		return 0
	}
	oid, method, def, in := r.col("oid"), r.col("opcmethod"), r.col("opcdefault"), r.col("opcintype")
	for _, row := range r.rows {
		if *row[method] == "403" && *row[def] == "t" && *row[in] == strconv.Itoa(int(t.oid)) {
			n, _ := strconv.ParseInt(*row[oid], 10, 64)
			return n
		}
	}
	return 0
}

// fkAction names a foreign key action code.
var fkAction = map[byte]string{'a': "NO ACTION", 'r': "RESTRICT", 'c': "CASCADE", 'n': "SET NULL", 'd': "SET DEFAULT"}

func yesNo(b bool) string {
	if b {
		return "YES"
	}
	return "NO"
}

func nullsDistinct(kind byte) any {
	if kind == 'u' || kind == 'p' {
		return "YES"
	}
	return nil
}

// defaultDatabase is the database a session that names none is in.
const defaultDatabase = "postgres"

// columnInfo is the information_schema.columns row of column i of t.
func columnInfo(table string, i int, t *schema.Table, c *schema.Column, def, databaseName string) map[string]any {
	v := map[string]any{"table_catalog": "", "table_schema": "public", "table_name": table, "column_name": c.Name,
		"ordinal_position": int64(i + 1), "is_nullable": yesNo(!c.NotNull), "data_type": sqlTypeName(c.Type, nil),
		"udt_catalog": databaseName, "udt_schema": "pg_catalog", "udt_name": c.Type, "dtd_identifier": strconv.Itoa(i + 1),
		"is_self_referencing": "NO", "is_identity": yesNo(c.Identity), "is_generated": "NEVER", "is_updatable": yesNo(!t.View),
		"character_maximum_length": nil, "character_octet_length": nil, "numeric_precision": nil,
		"numeric_precision_radix": nil, "numeric_scale": nil, "datetime_precision": nil}
	if c.Type == "bpchar" || c.Type == "varchar" || c.Type == "text" {
		v["data_type"] = map[string]string{"bpchar": "character", "varchar": "character varying", "text": "text"}[c.Type]
		if len(c.Mods) == 1 {
			v["character_maximum_length"] = int64(c.Mods[0])
			v["character_octet_length"] = int64(c.Mods[0]) * 4
		} else if c.Type == "bpchar" {
			v["character_maximum_length"], v["character_octet_length"] = int64(1), int64(4)
		} else {
			v["character_octet_length"] = int64(1073741824)
		}
	}
	if schema.IsArray(c.Type) {
		v["data_type"] = "ARRAY"
	}
	switch c.Type {
	case "int2", "int4", "int8":
		v["numeric_precision"] = map[string]int64{"int2": 16, "int4": 32, "int8": 64}[c.Type]
		v["numeric_precision_radix"], v["numeric_scale"] = int64(2), int64(0)
	case "float4", "float8":
		v["numeric_precision"] = map[string]int64{"float4": 24, "float8": 53}[c.Type]
		v["numeric_precision_radix"] = int64(2)
	case "numeric":
		v["numeric_precision_radix"] = int64(10)
		if len(c.Mods) > 0 {
			v["numeric_precision"] = int64(c.Mods[0])
			v["numeric_scale"] = int64(0)
			if len(c.Mods) > 1 {
				v["numeric_scale"] = int64(c.Mods[1])
			}
		}
	case "date":
		v["datetime_precision"] = int64(0)
	case "time", "timestamp", "timestamptz", "interval":
		v["datetime_precision"] = int64(6)
	}
	if def != "" {
		v["column_default"] = def
	}
	if c.Identity {
		v["identity_generation"] = "BY DEFAULT"
		if c.Always {
			v["identity_generation"] = "ALWAYS"
		}
		maxv := map[string]int64{"int2": 32767, "int4": 2147483647, "int8": 9223372036854775807}[c.Type]
		v["identity_start"], v["identity_increment"], v["identity_minimum"] = "1", "1", "1"
		v["identity_maximum"], v["identity_cycle"] = strconv.FormatInt(maxv, 10), "NO"
	} else {
		v["identity_cycle"] = "NO"
	}
	return v
}
