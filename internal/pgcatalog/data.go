package pgcatalog

import (
	"embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The files under data/ are written by data/gen.sh from a fresh
// PostgreSQL 15: the catalog relations' columns and the built-in rows.
//
//go:embed data/*.tsv
var dataFiles embed.FS

// column is one column of a catalog relation.
type column struct {
	name string
	typ  string // PostgreSQL's type name (pg_type.typname; arrays start with _)
}

// relation is a catalog relation: schema ("pg_catalog" or
// "information_schema"), name, columns, and its built-in rows in COPY
// text form (nil values are NULL).
type relation struct {
	schema, name string
	cols         []column
	rows         [][]*string
}

func (r *relation) col(name string) int {
	for i, c := range r.cols {
		if c.name == name {
			return i
		}
	}
	return -1
}

// pgType is what the engine needs of a built-in type.
type pgType struct {
	oid   uint32
	name  string
	len   int16
	elem  uint32 // element type of an array type
	array uint32 // array type of the type
	// storage, align and byval are typstorage, typalign, typbyval: what
	// a column of the type gets as attstorage, attalign, attbyval.
	storage, align string
	byval          bool
}

var (
	relations  []*relation
	relByName  = map[string]*relation{} // "pg_class", "information_schema.tables"
	typeByName = map[string]*pgType{}
	typeByOID  = map[uint32]*pgType{}
	// catalogRelOID is the OID of each catalog relation (keys as
	// relByName's).
	catalogRelOID = map[string]int64{}
)

func init() {
	b, err := dataFiles.ReadFile("data/relations.tsv")
	if err != nil {
		panic(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 3 {
			panic("pgcatalog: bad relations.tsv line " + line)
		}
		r := relByName[f[0]]
		if r == nil {
			r = &relation{schema: "pg_catalog", name: f[0]}
			if s, n, ok := strings.Cut(f[0], "."); ok {
				r.schema, r.name = s, n
			}
			relByName[f[0]] = r
			relations = append(relations, r)
		}
		r.cols = append(r.cols, column{name: f[1], typ: f[2]})
	}
	for key, r := range relByName {
		b, err := dataFiles.ReadFile("data/" + key + ".tsv")
		if err != nil {
			continue // no built-in rows
		}
		for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			if line == "" {
				continue
			}
			f := strings.Split(line, "\t")
			if len(f) != len(r.cols) {
				panic(fmt.Sprintf("pgcatalog: %s.tsv has %d fields, %d columns", key, len(f), len(r.cols)))
			}
			row := make([]*string, len(f))
			for i, v := range f {
				if v != `\N` {
					s := copyUnescape(v)
					row[i] = &s
				}
			}
			r.rows = append(r.rows, row)
		}
	}
	c := relByName["pg_class"]
	coid, cname, cns := c.col("oid"), c.col("relname"), c.col("relnamespace")
	for _, row := range c.rows {
		key := *row[cname]
		if *row[cns] != "11" {
			key = "information_schema." + key
		}
		n, _ := strconv.ParseInt(*row[coid], 10, 64)
		catalogRelOID[key] = n
	}
	t := relByName["pg_type"]
	oid, name, ln, elem, arr := t.col("oid"), t.col("typname"), t.col("typlen"), t.col("typelem"), t.col("typarray")
	for _, row := range t.rows {
		p := &pgType{oid: atou(*row[oid]), name: *row[name], elem: atou(*row[elem]), array: atou(*row[arr]),
			storage: *row[t.col("typstorage")], align: *row[t.col("typalign")], byval: *row[t.col("typbyval")] == "t"}
		l, _ := strconv.Atoi(*row[ln])
		p.len = int16(l)
		typeByName[p.name] = p
		typeByOID[p.oid] = p
	}
}

func atou(s string) uint32 {
	n, _ := strconv.ParseUint(s, 10, 32)
	return uint32(n)
}

// copyUnescape decodes a field of COPY's text format.
func copyUnescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// kind is how the engine stores a PostgreSQL type in SQLite.
type kind uint8

const (
	kText  kind = iota // TEXT, as PostgreSQL prints it
	kInt               // INTEGER: integers, OIDs and reg* types
	kBool              // INTEGER 0/1
	kFloat             // REAL
	kArray             // TEXT holding a JSON array (int2vector and oidvector too)
)

func kindOf(typ string) kind {
	switch {
	case strings.HasPrefix(typ, "_") || typ == "int2vector" || typ == "oidvector" || typ == "anyarray":
		return kArray
	case typ == "bool":
		return kBool
	case typ == "float4" || typ == "float8":
		return kFloat
	case typ == "int2" || typ == "int4" || typ == "int8" || typ == "oid" || typ == "xid" || typ == "cid" ||
		strings.HasPrefix(typ, "reg"):
		return kInt
	}
	return kText
}

func (k kind) affinity() string {
	switch k {
	case kInt, kBool:
		return "INTEGER"
	case kFloat:
		return "REAL"
	}
	return "TEXT"
}

// storeValue converts a value in PostgreSQL's text form to what the
// engine stores for type typ.
func storeValue(typ string, v *string) any {
	if v == nil {
		return nil
	}
	s := *v
	switch kindOf(typ) {
	case kInt:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return s
		}
		return n
	case kBool:
		if s == "t" || s == "true" {
			return int64(1)
		}
		return int64(0)
	case kFloat:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return s
		}
		return f
	case kArray:
		return arrayJSON(typ, s)
	}
	return s
}

// arrayJSON converts an array in PostgreSQL's text form ({a,"b c",NULL};
// for int2vector and oidvector "1 2") to a JSON array.
func arrayJSON(typ, s string) string {
	var elems []*string
	if typ == "int2vector" || typ == "oidvector" {
		for _, f := range strings.Fields(s) {
			elems = append(elems, &f)
		}
	} else {
		elems = parseArray(s)
	}
	elemType := strings.TrimPrefix(typ, "_")
	if typ == "int2vector" {
		elemType = "int2"
	} else if typ == "oidvector" {
		elemType = "oid"
	}
	out := make([]any, len(elems))
	for i, e := range elems {
		switch v := storeValue(elemType, e).(type) {
		case nil:
			out[i] = nil
		case int64:
			if kindOf(elemType) == kBool {
				out[i] = v == 1
			} else {
				out[i] = v
			}
		default:
			out[i] = v
		}
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// parseArray splits a one-dimensional array literal into its elements
// (nil for NULL).
func parseArray(s string) []*string {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return []*string{&s}
	}
	s = s[1 : len(s)-1]
	var out []*string
	for i := 0; i < len(s); {
		var b strings.Builder
		quoted := false
		if s[i] == '"' {
			quoted = true
			i++
			for i < len(s) && s[i] != '"' {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				b.WriteByte(s[i])
				i++
			}
			i++ // closing quote
		} else {
			for i < len(s) && s[i] != ',' {
				b.WriteByte(s[i])
				i++
			}
		}
		e := b.String()
		if !quoted && strings.EqualFold(e, "NULL") {
			out = append(out, nil)
		} else {
			out = append(out, &e)
		}
		i++ // comma
	}
	return out
}
