package dialect

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// QuoteDuckNames quotes, in text deparsed from a tree DuckDB rewrote,
// every name DuckDB's parser reserves and PostgreSQL's does not
// (duckReserved: at, by, qualify, ...): the deparser leaves them bare,
// where DuckDB would read a keyword (a column named at). The deparser
// writes SQL's keywords in capitals and a bare name only in small
// letters (any other name it quotes), so a word of small letters that
// is a token of its own is a name; string constants are tokens of their
// own and stay as they are. DuckDB matches names without regard to case,
// quoted or not, so the quoted name is the same name. Text the scanner
// cannot read is returned as it is (DuckDB then fails it as a syntax
// error, as it did before).
func QuoteDuckNames(text string) string {
	res, err := pg_query.Scan(text)
	if err != nil {
		return text
	}
	var b strings.Builder
	last := 0
	for _, tok := range res.Tokens {
		word := text[tok.Start:tok.End]
		if !duckReserved[word] {
			continue
		}
		b.WriteString(text[last:tok.Start])
		b.WriteString(quoteDuck(word))
		last = int(tok.End)
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}
