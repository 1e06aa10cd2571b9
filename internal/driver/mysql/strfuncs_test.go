package mysql_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/shepherd-db/shepherd/internal/answer"
	"github.com/shepherd-db/shepherd/internal/dialect"
	"github.com/shepherd-db/shepherd/internal/driver"
	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// stringCases are expressions whose value (or error) MariaDB and both
// SQLite builds, through the SQL writer (and on SQLite shepherd's string
// functions), must give as PostgreSQL 15 does, or refuse (0A000): NULLs, negative and oversized lengths, multibyte
// characters, empty strings and delimiters, and the functions' errors.
var stringCases = []string{
	"lpad('abc', 5, '')", "lpad('abcdef', 3, '')", "lpad('abc', -1)", "rpad('abc', 2)",
	"lpad('ab', 7, 'xyz')", "rpad('ab', 7, 'xyz')", "lpad('héé', 5, 'é')", "lpad(NULL, 3)",
	"lpad('a', NULL)", "rpad('a', 3, NULL)", "lpad('x', 268435455)",
	"left('abc', -5)", "right('abc', -1)", "left('héllo', 2)", "right('héllo', 3)", "left('abc', 0)",
	"left(NULL, 1)", "right('abc', NULL)", "left('abc', 10)",
	"reverse('héllo')", "reverse('')", "reverse(NULL)",
	"repeat('ab', 3)", "repeat('ab', -1)", "repeat('', 5)", "repeat(NULL, 2)", "repeat('abcd', 300000000)",
	"initcap('hello wORLD éa 3abc a_b x-y ÉCOLE')", "initcap('élan')", "initcap('')", "initcap(NULL)",
	"split_part('a,b,c', ',', 2)", "split_part('a,b,c', ',', 5)", "split_part('a,b,c', ',', -1)",
	"split_part('a,b,c', '', 1)", "split_part('a,b,c', '', 2)", "split_part('', ',', 1)", "split_part('abc', ',', -2)",
	"split_part('a,b', ',', 0)", "split_part('aXXbXXc', 'XX', 3)", "split_part('aaa', 'aa', 2)", "split_part(NULL, ',', 1)",
	"split_part('é|ü', '|', 2)",
	"md5('shepherd')", "md5('')", "md5(NULL)",
	"ascii('A')", "ascii('')", "ascii('é')", "ascii('😀x')", "ascii(NULL)",
	"chr(66)", "chr(233)", "chr(128512)", "chr(0)", "chr(-1)", "chr(1114112)", "chr(55296)", "chr(NULL)",
	"translate('hello', 'el', 'ip')", "translate('hello', 'ell', 'ipq')", "translate('hello', 'lo', 'x')",
	"translate('aéb', 'é', 'ü')", "translate(NULL, 'a', 'b')", "translate('abc', '', 'x')",
	"starts_with('abc', 'ab')", "starts_with('abc', '')", "starts_with('abc', 'b')", "starts_with(NULL, 'a')",
	"format('%s has grade %s', 'Ann', 3)", "format('%s|%L|%L', NULL, NULL, 'a\\b''c')",
	"format('%-5s|%5s|%2$s', 'ab', 'cd')", "format('%x', 1)", "format('%s %s', 1)", "format('100%%')",
	"format('%*s|%-*s', 4, 'a', 3, 'b')", "format('%0$s', 'a')", "format('abc')", "format(NULL, 1)",
	"format('%3$s %s', 'a', 'b', 'c')", "format('%', 1)", "format('%L', 'it''s')",
	"regexp_replace('a1b22c333', '[0-9]+', '#', 'g')", "regexp_replace('a1b22c333', '[0-9]+', '#')",
	"regexp_replace('ab', 'a|ab', 'X')", "regexp_replace('abc', 'B', 'X', 'i')", "regexp_replace('aXbX', 'x', '-', 'gi')",
	"regexp_replace('abc', 'b', '\\\\ \\& \\0 \\1 \\q', 'g')", "regexp_replace('abc', 'x*', '-', 'g')",
	"regexp_replace('abc', 'b*', '-', 'g')", "regexp_replace('abc', '^', '>', 'g')", "regexp_replace('abc', '$', '<', 'g')",
	"regexp_replace('a', 'a', 'b', 'z')", "regexp_replace(NULL, 'a', 'b')", "regexp_replace('héllo wörld', '[^a-z ]', '_', 'g')",
	"regexp_replace('Hello World', '[a-z]+', '*', 'gi')", "regexp_replace('x.y.z', '\\.', '/', 'g')",
	"regexp_replace(E'a\\nb', '.', '_', 'g')", "regexp_replace('tab\there', '\\s', '_', 'g')",
	"regexp_replace('aaa', 'a{2}', 'b', 'g')", "regexp_replace('abcabc', '(?:ab)+', 'X', 'g')",
	"regexp_replace('ÉCOLE école', 'é', 'e', 'gi')",
	"substring('foobar' from 'o+b')", "substring('foo' from 'x')", "substring('foobar' from '^f.')", "substring(NULL from 'a')",
	"'ab' ~ 'a|ab'", "'É' ~* 'é'", "'K' ~* 'k'", "E'a\\nb' ~ 'a.b'", "E'a\\n' ~ 'a$'", "'ab' ~ '\\w\\d'",
	"E'\\x0b' ~ '\\s'", "'a]' ~ '[]a]+'", "'x' ~ '[^]a]'", "'abc' !~ 'B'", "'abc' !~* 'B'", "'abc' ~* '[B-C]$'",
	"concat('a', NULL, 1)", "concat(NULL)", "concat(true, 1)", "concat(1.50, 'x')", "concat(2.5::float8)",
	"concat_ws(',', 'a', NULL, 2)", "concat_ws(NULL, 'a')", "concat_ws(',', true)", "concat_ws(',', 1.50)",
	"concat(DATE '2024-01-02')", "concat('a', 1e20::float8)", "concat(1.5::numeric(5,2))",
	"position('l' in 'héllo')", "strpos('héllo', 'l')", "strpos('abc', '')", "position('' in NULL)", "strpos('abc', 'd')",
	"btrim('xxabcxx', 'xy')", "ltrim('zzyabc', 'yz')", "rtrim('abcxyx', 'xy')", "btrim('  a  ')", "btrim('abc', '')",
	"trim(both 'xy' from 'xyaxy')", "trim(leading 'é' from 'ééaé')", "rtrim(NULL, 'x')", "ltrim('abc', NULL)",
	"replace('abc', '', 'x')", "replace('aaa', 'aa', 'b')", "replace('héllo', 'l', 'L')", "replace('abc', 'b', NULL)",
	"'a' || true", "'a' || 1.50", "1.5::numeric(5,2) || 'x'", "'a' || 2.5::float8", "'a' || NULL", "'a' || 7", "'a' || (0.1::float8 + 0.2::float8)",
	"'a' || DATE '2024-01-02'", "'a' || TIMESTAMP '2024-01-02 03:04:05'", "'a' || INTERVAL '1 day'", "'a' || 'x'::char(3)",
	"regexp_like('Abc', '^a')", "regexp_like('Abc', '^a', 'i')", "regexp_like('abc', 'b', 'g')", "regexp_like(NULL, 'a')",
	"regexp_count('a1b22c333', '[0-9]+')", "regexp_count('abc', 'b*')", "regexp_count('', 'x*')", "regexp_count('aaa', 'a')",
	"regexp_substr('foobar', 'o+(b)')", "regexp_substr('foo', 'x')", "regexp_substr('Hello', '[a-z]+')",
	"'a' ~ '(a{255}){255}'", "'a' ~ '[a-z]{255}[a-z]{255}[a-z]{255}(x|y){200}'",
	"regexp_replace('5551234567', '(\\d{3})(\\d{3})(\\d{4})', '(\\1) \\2-\\3')", "substring('user@example.com' from '@(.*)$')",
	"substring('abc' from 'x(.)')", "substring('foobar' from 'o(b)')", "substring('a1b2' from '([0-9])')",
	"regexp_replace('aaa', '(a)', '<\\1>', 'g')", "regexp_replace('ab', '(a)(x*)b', '[\\2|\\1|\\3]')",
	"substring('xay' from '(a|b)')", "substring('aa' from '(a)*')", "regexp_replace('abab', '(ab)+', '\\1')",
	"substring('ab' from '(a*)(a*)b')", "substring('AbC' from '(b)')", "regexp_replace('x1y22', '([a-z])([0-9]+)', '\\2\\1', 'g')",
	"quote_literal('it''s')", "quote_literal('a\\b')", "quote_literal(E'a\\\\b''c')", "quote_literal(NULL)", "quote_literal(42)",
	"quote_nullable(NULL)", "quote_nullable('x')", "quote_literal('')", "quote_literal('é')",
	"NULL ~ 'a'", "'a' ~ ''", "'' ~ '^$'", "'é' ~ '^.$'", "'x-y' ~ '[a-]'", "'Straße' ~* 'STRASSE'",
}

// TestStringFunctionsAsPostgres runs stringCases on PostgreSQL, and
// written by the SQL writer on MariaDB and both SQLite builds, and
// compares text and errors (SQLSTATE and message). A refusal passes only
// where PostgreSQL fails too, or on MariaDB (which refuses what it
// cannot mean alike); refusedOnMariaDB lists those, so that a refusal
// that creeps in fails.
func TestStringFunctionsAsPostgres(t *testing.T) {
	set := openEngineSet(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := func(c driver.Conn, sql string) string {
		a, err := c.Exec(ctx, driver.Query{SQL: sql, Verb: "SELECT", ReturnsRows: true})
		switch {
		case err != nil:
			return errText(err)
		case len(a.Rows) != 1 || len(a.Rows[0]) != 1:
			return fmt.Sprintf("rows %v", a.Rows)
		case a.Rows[0][0].Null:
			return "NULL"
		case a.Columns[0].Type == answer.Bool:
			return map[string]string{"t": "1", "f": "0"}[a.Rows[0][0].Text]
		}
		return a.Rows[0][0].Text
	}
	for _, expr := range stringCases {
		want := run(set.conns[0], "SELECT "+expr)
		for i, c := range set.conns[1:] {
			name, d := set.names[i+1], driver.MySQL
			if set.dialects[i+1] == 2 {
				d = driver.SQLite
			}
			tree, err := pg_query.Parse("SELECT " + expr)
			if err != nil {
				t.Fatal(err)
			}
			form, err := dialect.Write(tree.Stmts[0].Stmt, d, nil)
			var got string
			if err != nil {
				got = errText(err)
			} else {
				got = run(c, form.SQL)
			}
			refused := strings.HasPrefix(got, "ERROR 0A000")
			switch {
			case got == want:
			case refused && strings.HasPrefix(want, "ERROR"):
			case refused && d == driver.MySQL && refusedOnMariaDB[expr]:
			case refused && refusedBeyondPostgres[expr]:
			default:
				t.Errorf("%s on %s: got %q, PostgreSQL %q (written: %s)", expr, name, got, want, form.SQL)
			}
		}
	}
}

// refusedBeyondPostgres are the stringCases the other engines refuse:
// concat() of values whose text the engines write otherwise than
// PostgreSQL's output functions (floats, dates).
var refusedBeyondPostgres = map[string]bool{
	"'a' || INTERVAL '1 day'": true,
	"'a' ~ '(a{255}){255}'":   true,
	"concat(2.5::float8)":     true, "concat(DATE '2024-01-02')": true, "concat('a', 1e20::float8)": true,
	"substring('xay' from '(a|b)')": true, "substring('aa' from '(a)*')": true, "regexp_replace('abab', '(ab)+', '\\1')": true,
	"substring('ab' from '(a*)(a*)b')": true,
}

// refusedOnMariaDB are the stringCases MariaDB cannot answer as
// PostgreSQL does: regexp_replace whose match PCRE's
// leftmost-first search picks otherwise, or not global (MariaDB's
// REGEXP_REPLACE replaces every match), chr of a non-constant, format
// beyond %s, lengths past what MariaDB's packet can carry (it answers
// NULL where PostgreSQL answers or fails), split_part with a delimiter of more than one character.
var refusedOnMariaDB = map[string]bool{
	"chr(NULL)": true,
	"format('%s|%L|%L', NULL, NULL, 'a\\b''c')": true, "format('%-5s|%5s|%2$s', 'ab', 'cd')": true,
	"format('%*s|%-*s', 4, 'a', 3, 'b')": true, "format('%L', 'it''s')": true,
	"split_part('a,b,c', '', 1)": true, "split_part('a,b,c', '', 2)": true, "split_part('aXXbXXc', 'XX', 3)": true,
	"split_part('aaa', 'aa', 2)": true, "split_part(NULL, ',', 1)": false,
	"regexp_replace('a1b22c333', '[0-9]+', '#')": true, "regexp_replace('ab', 'a|ab', 'X')": true,
	"regexp_replace('abc', 'B', 'X', 'i')": true, "regexp_replace('abc', 'b', '\\\\ \\& \\0 \\1 \\q', 'g')": true,
	"regexp_replace('abc', 'x*', '-', 'g')": true, "regexp_replace('abc', 'b*', '-', 'g')": true,
	"regexp_replace('abc', '^', '>', 'g')": true, "regexp_replace('abc', '$', '<', 'g')": true,
	"regexp_replace(NULL, 'a', 'b')": true, "regexp_replace(E'a\\nb', '.', '_', 'g')": false,
	"regexp_replace('abcabc', '(?:ab)+', 'X', 'g')": true,
	"lpad('x', 268435455)":                          true, "repeat('abcd', 300000000)": true,
	"'a' || TIMESTAMP '2024-01-02 03:04:05'":                                    true,
	"regexp_replace('5551234567', '(\\d{3})(\\d{3})(\\d{4})', '(\\1) \\2-\\3')": true, "substring('user@example.com' from '@(.*)$')": true,
	"substring('abc' from 'x(.)')": true, "substring('foobar' from 'o(b)')": true, "substring('a1b2' from '([0-9])')": true,
	"regexp_replace('aaa', '(a)', '<\\1>', 'g')": true, "regexp_replace('ab', '(a)(x*)b', '[\\2|\\1|\\3]')": true,
	"substring('AbC' from '(b)')": true, "regexp_replace('x1y22', '([a-z])([0-9]+)', '\\2\\1', 'g')": true,
	"regexp_count('a1b22c333', '[0-9]+')": true, "regexp_count('abc', 'b*')": true, "regexp_count('', 'x*')": true,
	"regexp_count('aaa', 'a')": true, "regexp_substr('foobar', 'o+(b)')": true,
}

func errText(err error) string {
	return "ERROR " + pgerr.Code(err) + " " + pgerr.From(err).Message
}
