package sqlan

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// Copy formats.
const (
	CopyText   = "text"
	CopyCSV    = "csv"
	CopyBinary = "binary"
)

// CopySpec is what a COPY statement asks for, its options checked as
// PostgreSQL's ProcessCopyOptions checks them. Only COPY FROM STDIN and
// COPY TO STDOUT get this far: a file or a program is refused at analysis.
type CopySpec struct {
	// From is COPY ... FROM STDIN; else COPY ... TO STDOUT.
	From bool
	// Table is the table named (lower-cased as PostgreSQL folds it), ""
	// for COPY (query) TO.
	Table string
	// Columns is the column list as written, nil for every column.
	Columns []string
	// Query is the text of COPY (query) TO's query (written back from
	// the tree by Stmt.prepare).
	Query string

	// Format is CopyText, CopyCSV or CopyBinary.
	Format string
	// Delimiter, Null, Quote and Escape are the options, with
	// PostgreSQL's defaults for the format filled in.
	Delimiter, Null, Quote, Escape string
	// Header asks for a header line; HeaderMatch (COPY FROM) checks its
	// names against the columns.
	Header, HeaderMatch bool
	// ForceQuote (COPY TO, CSV) lists the columns always quoted;
	// ForceQuoteAll is FORCE_QUOTE *. ForceNotNull and ForceNull (COPY
	// FROM, CSV) list the columns whose null string reads as an empty
	// string, and whose quoted null string reads as NULL.
	ForceQuote    []string
	ForceQuoteAll bool
	ForceNotNull  []string
	ForceNull     []string
	// Freeze is COPY FROM's FREEZE: allowed, as in PostgreSQL, only on
	// a table created or truncated in the same transaction, where it
	// changes nothing a client can see.
	Freeze bool
}

// analyseCopy classifies a COPY statement (Kind Copy) and checks its
// options.
func analyseCopy(st *Stmt, c *pg_query.CopyStmt) error {
	if c.Filename != "" || c.IsProgram {
		return copyFileError(c)
	}
	if c.WhereClause != nil {
		return unsupported("COPY FROM ... WHERE")
	}
	spec := &CopySpec{From: c.IsFrom}
	if c.Relation != nil {
		if s := c.Relation.Schemaname; s != "" && s != "public" {
			return pgerr.New(pgerr.UndefinedTable, "relation \"%s.%s\" does not exist", s, c.Relation.Relname)
		}
		spec.Table = c.Relation.Relname
		for _, a := range c.Attlist {
			spec.Columns = append(spec.Columns, a.GetString_().Sval)
		}
	}
	if err := spec.options(c.Options); err != nil {
		return err
	}
	st.Kind, st.Verb, st.Copy = Copy, "COPY", spec
	return nil
}

// copyFileError is PostgreSQL's answer to a role that is not a superuser
// asking for a server-side file or program: shepherd's replicas' files are
// no client's business.
func copyFileError(c *pg_query.CopyStmt) error {
	var e *pgerr.Error
	switch {
	case c.IsProgram:
		e = pgerr.New(pgerr.InsufficientPrivilege, "must be superuser or have privileges of the pg_execute_server_program role to COPY to or from an external program")
	case c.IsFrom:
		e = pgerr.New(pgerr.InsufficientPrivilege, "must be superuser or have privileges of the pg_read_server_files role to COPY from a file")
	default:
		e = pgerr.New(pgerr.InsufficientPrivilege, "must be superuser or have privileges of the pg_write_server_files role to COPY to a file")
	}
	return e.WithHint("Anyone can COPY to stdout or from stdin. psql's \\copy command also works for anyone.")
}

func copyOptionError(code, format string, args ...any) error {
	return pgerr.New(code, format, args...)
}

// options reads COPY's options (both the parenthesised list and the old
// keywords, which the parser turns into the same list) as PostgreSQL 15's
// ProcessCopyOptions does, with its messages.
func (s *CopySpec) options(opts []*pg_query.Node) error {
	seen := map[string]bool{}
	var delim, null, quote, escape *string
	redundant := func(name string) error {
		if seen[name] {
			return copyOptionError(pgerr.SyntaxError, "conflicting or redundant options")
		}
		seen[name] = true
		return nil
	}
	for _, o := range opts {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		name := d.Defname
		switch name {
		case "format":
			if err := redundant(name); err != nil {
				return err
			}
			f := strings.ToLower(defString(d))
			switch f {
			case CopyText, CopyCSV, CopyBinary:
				s.Format = f
			default:
				return copyOptionError(pgerr.InvalidParameterValue, "COPY format \"%s\" not recognized", defString(d))
			}
		case "delimiter", "null", "quote", "escape":
			if err := redundant(name); err != nil {
				return err
			}
			v := defString(d)
			switch name {
			case "delimiter":
				delim = &v
			case "null":
				null = &v
			case "quote":
				quote = &v
			case "escape":
				escape = &v
			}
		case "header":
			if err := redundant(name); err != nil {
				return err
			}
			switch v := strings.ToLower(defString(d)); v {
			case "", "true", "on", "1", "t", "y", "yes":
				s.Header = true
			case "false", "off", "0", "f", "n", "no":
			case "match":
				if !s.From {
					return copyOptionError(pgerr.SyntaxError, "cannot use \"match\" with HEADER in COPY TO")
				}
				s.Header, s.HeaderMatch = true, true
			default:
				return copyOptionError(pgerr.SyntaxError, "%s requires a Boolean value or \"match\"", name)
			}
		case "force_quote":
			if err := redundant(name); err != nil {
				return err
			}
			if d.Arg.GetAStar() != nil {
				s.ForceQuoteAll = true
			} else if s.ForceQuote = defList(d); s.ForceQuote == nil {
				return copyOptionError(pgerr.SyntaxError, "argument to option \"%s\" must be a list of column names", name)
			}
		case "force_not_null", "force_null":
			if err := redundant(name); err != nil {
				return err
			}
			l := defList(d)
			if l == nil {
				return copyOptionError(pgerr.SyntaxError, "argument to option \"%s\" must be a list of column names", name)
			}
			if name == "force_null" {
				s.ForceNull = l
			} else {
				s.ForceNotNull = l
			}
		case "freeze":
			if err := redundant(name); err != nil {
				return err
			}
			switch strings.ToLower(defString(d)) {
			case "", "true", "on", "1", "t", "y", "yes":
				s.Freeze = true
			case "false", "off", "0", "f", "n", "no":
			default:
				return copyOptionError(pgerr.SyntaxError, "%s requires a Boolean value", name)
			}
		case "encoding":
			if e := strings.ToLower(strings.ReplaceAll(defString(d), "-", "")); e != "utf8" && e != "unicode" {
				return unsupported("COPY ENCODING other than UTF8")
			}
		default:
			return copyOptionError(pgerr.SyntaxError, "option \"%s\" not recognized", name)
		}
	}
	if s.Format == "" {
		s.Format = CopyText
	}
	csv, binary := s.Format == CopyCSV, s.Format == CopyBinary
	if binary && delim != nil {
		return copyOptionError(pgerr.SyntaxError, "cannot specify DELIMITER in BINARY mode")
	}
	if binary && null != nil {
		return copyOptionError(pgerr.SyntaxError, "cannot specify NULL in BINARY mode")
	}
	if binary && s.Header {
		return copyOptionError(pgerr.FeatureNotSupported, "cannot specify HEADER in BINARY mode")
	}
	s.Delimiter, s.Null = "\t", `\N`
	if csv {
		s.Delimiter, s.Null = ",", ""
	}
	if delim != nil {
		s.Delimiter = *delim
	}
	if null != nil {
		s.Null = *null
	}
	if csv {
		s.Quote = `"`
		if quote != nil {
			s.Quote = *quote
		}
		s.Escape = s.Quote
		if escape != nil {
			s.Escape = *escape
		}
	}
	if len(s.Delimiter) != 1 {
		return copyOptionError(pgerr.FeatureNotSupported, "COPY delimiter must be a single one-byte character")
	}
	if s.Delimiter == "\r" || s.Delimiter == "\n" {
		return copyOptionError(pgerr.InvalidParameterValue, "COPY delimiter cannot be newline or carriage return")
	}
	if strings.ContainsAny(s.Null, "\r\n") {
		return copyOptionError(pgerr.InvalidParameterValue, "COPY null representation cannot use newline or carriage return")
	}
	if !csv && strings.Contains("\\.abcdefghijklmnopqrstuvwxyz0123456789", s.Delimiter) {
		return copyOptionError(pgerr.FeatureNotSupported, "COPY delimiter cannot be \"%s\"", s.Delimiter)
	}
	if !csv && quote != nil {
		return copyOptionError(pgerr.FeatureNotSupported, "COPY quote available only in CSV mode")
	}
	if csv && len(s.Quote) != 1 {
		return copyOptionError(pgerr.FeatureNotSupported, "COPY quote must be a single one-byte character")
	}
	if csv && s.Delimiter == s.Quote {
		return copyOptionError(pgerr.InvalidParameterValue, "COPY delimiter and quote must be different")
	}
	if !csv && escape != nil {
		return copyOptionError(pgerr.FeatureNotSupported, "COPY escape available only in CSV mode")
	}
	if csv && len(s.Escape) != 1 {
		return copyOptionError(pgerr.FeatureNotSupported, "COPY escape must be a single one-byte character")
	}
	if !csv && (s.ForceQuote != nil || s.ForceQuoteAll) {
		return copyOptionError(pgerr.FeatureNotSupported, "COPY force quote available only in CSV mode")
	}
	if (s.ForceQuote != nil || s.ForceQuoteAll) && s.From {
		return copyOptionError(pgerr.FeatureNotSupported, "COPY force quote only available using COPY TO")
	}
	if !csv && s.ForceNotNull != nil {
		return copyOptionError(pgerr.FeatureNotSupported, "COPY force not null available only in CSV mode")
	}
	if s.ForceNotNull != nil && !s.From {
		return copyOptionError(pgerr.FeatureNotSupported, "COPY force not null only available using COPY FROM")
	}
	if !csv && s.ForceNull != nil {
		return copyOptionError(pgerr.FeatureNotSupported, "COPY force null available only in CSV mode")
	}
	if s.ForceNull != nil && !s.From {
		return copyOptionError(pgerr.FeatureNotSupported, "COPY force null only available using COPY FROM")
	}
	if strings.Contains(s.Null, s.Delimiter) {
		return copyOptionError(pgerr.FeatureNotSupported, "COPY delimiter must not appear in the NULL specification")
	}
	if csv && strings.Contains(s.Null, s.Quote) {
		return copyOptionError(pgerr.FeatureNotSupported, "CSV quote character must not appear in the NULL specification")
	}
	return nil
}

// defString is a DefElem's argument as text: a string, a keyword, a
// number, or "" for none.
func defString(d *pg_query.DefElem) string {
	switch a := d.Arg; {
	case a == nil:
		return ""
	case a.GetString_() != nil:
		return a.GetString_().Sval
	case a.GetBoolean() != nil:
		if a.GetBoolean().Boolval {
			return "true"
		}
		return "false"
	case a.GetInteger() != nil:
		if a.GetInteger().Ival != 0 {
			return "true"
		}
		return "false"
	case a.GetTypeName() != nil:
		names := a.GetTypeName().Names
		if len(names) > 0 {
			return names[len(names)-1].GetString_().Sval
		}
	}
	return ""
}

// defList is a DefElem's argument as a list of names, nil if it is not one.
func defList(d *pg_query.DefElem) []string {
	l := d.Arg.GetList()
	if l == nil {
		return nil
	}
	out := []string{}
	for _, it := range l.Items {
		out = append(out, it.GetString_().Sval)
	}
	return out
}

// TypeOID returns the OID of a type the catalog knows by its internal
// name (schema.Column.Type), 0 for others.
func TypeOID(name string) uint32 { return typeOIDs[name] }

// prepareCopy writes COPY (query) TO's query back as text, for the
// session to run as any query.
func (s *Stmt) prepareCopy() error {
	q := s.tree.GetCopyStmt().GetQuery()
	if q == nil {
		return nil
	}
	text, err := pg_query.Deparse(&pg_query.ParseResult{Version: s.version, Stmts: []*pg_query.RawStmt{{Stmt: q}}})
	if err != nil {
		return pgerr.Wrap(pgerr.InternalError, err, "COPY (query)")
	}
	s.Copy.Query = text
	return nil
}
