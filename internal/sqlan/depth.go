package sqlan

import (
	"strings"

	"github.com/shepherd-db/shepherd/internal/pgerr"
)

// stackDepthExceeded is PostgreSQL's SQLSTATE for an expression nested too
// deeply to analyse (statement_too_complex's neighbour, 54001).
const stackDepthExceeded = "54001"

// MaxExprDepth bounds how deeply a statement may nest, as estimated by
// nestingDepth before it is parsed.
//
// The bound is there because parsing is not safe without it: PostgreSQL's
// grammar builds a chain of left-associative operators (1+1+...+1, x::int::int,
// a || b || ...) without limit, and pg_query then walks the tree
// recursively on the C stack, where some 20,000 links (fewer on a smaller
// thread stack) crash the whole process, not just the session. Everything
// after parsing recurses over the tree too. PostgreSQL itself refuses such
// statements with 54001 (stack depth limit exceeded); shepherd does the
// same, earlier and at a fixed depth.
const MaxExprDepth = 1000

// checkDepth refuses, before any parsing, a query string whose
// expressions may nest more than MaxExprDepth deep.
func checkDepth(sql string) error {
	if d := nestingDepth(sql); d > MaxExprDepth {
		return pgerr.New(stackDepthExceeded, "stack depth limit exceeded").
			WithDetail("The statement nests expressions about %d deep; shepherd accepts at most %d (each operator in a chain such as 1+1+...+1 and each parenthesis counts).", d, MaxExprDepth).
			WithHint("Write long sums or concatenations as an aggregate over rows, or split the statement.")
	}
	return nil
}

// nestingDepth is an upper bound on the depth of the parse tree of sql's
// statements, computed from its tokens in one pass. It never
// underestimates what PostgreSQL's grammar can build:
//
//   - within one parenthesised group, a run of operators and operator
//     keywords between separators (commas, AND, OR, semicolons) can nest
//     at most one level per operator character or keyword, plus the
//     deepest group inside the run;
//   - set operations (UNION, INTERSECT, EXCEPT) and joins nest too, one
//     level each, whatever separates them;
//   - AND and OR lists are flattened by the grammar (one node whatever
//     their length), so they separate runs and add two levels;
//   - each parenthesis, bracket or CASE ... END adds a level.
//
// Strings, quoted identifiers, dollar-quoted bodies and comments are
// skipped as PostgreSQL's scanner skips them (standard_conforming_strings
// on; strings prefixed with E take backslash escapes).
func nestingDepth(sql string) int {
	type group struct {
		run, child, best int
		// chain counts the set operations and joins of the group,
		// which nest across commas (SELECT a, b UNION SELECT a, b).
		chain    int
		bool     bool
		caseExpr bool // opened by CASE, closed by END
	}
	stack := []group{{}}
	top := func() *group { return &stack[len(stack)-1] }
	endRun := func() {
		g := top()
		g.best = max(g.best, g.run+g.child)
		g.run, g.child = 0, 0
	}
	closeGroup := func() int {
		endRun()
		g := stack[len(stack)-1]
		d := g.best + g.chain + 1
		if g.bool {
			d += 2
		}
		return d
	}
	pop := func() {
		d := closeGroup()
		stack = stack[:len(stack)-1]
		top().child = max(top().child, d)
	}
	deepest := 0
	i, n := 0, len(sql)
	for i < n {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < n && sql[i+1] == '-':
			for i < n && sql[i] != '\n' && sql[i] != '\r' {
				i++
			}
		case c == '/' && i+1 < n && sql[i+1] == '*':
			i = skipBlockComment(sql, i)
		case c == '\'':
			i = skipQuoted(sql, i, '\'', false)
		case c == '"':
			i = skipQuoted(sql, i, '"', false)
		case c == '$' && i+1 < n && sql[i+1] >= '0' && sql[i+1] <= '9':
			i++ // a parameter $n: the digits follow as a number
		case c == '$':
			i = skipDollar(sql, i)
		case c == '(' || c == '[':
			stack = append(stack, group{})
			i++
		case c == ')' || c == ']':
			if len(stack) > 1 {
				pop()
			}
			i++
		case c == ',':
			endRun()
			i++
		case c == ';':
			for len(stack) > 1 {
				pop()
			}
			deepest = max(deepest, closeGroup())
			stack[0] = group{}
			i++
		case strings.IndexByte("+-*/<>=~!@#%^&|`?:", c) >= 0:
			top().run++
			i++
		case isIdentStart(c):
			j := i
			for j < n && isIdentChar(sql[j]) {
				j++
			}
			word := strings.ToLower(sql[i:j])
			if j < n && sql[j] == '\'' && (word == "e" || word == "x" || word == "b" || word == "n") {
				// A prefixed string: E'...' reads backslash escapes.
				i = skipQuoted(sql, j, '\'', word == "e")
				continue
			}
			if word == "u" && j+1 < n && sql[j] == '&' && (sql[j+1] == '\'' || sql[j+1] == '"') {
				i = skipQuoted(sql, j+1, sql[j+1], false)
				continue
			}
			switch word {
			case "case":
				stack = append(stack, group{caseExpr: true})
			case "end":
				if len(stack) > 1 && top().caseExpr {
					pop()
				}
			case "and", "or":
				endRun()
				top().bool = true
			case "union", "intersect", "except", "join":
				top().chain++
			case "at", "collate", "is", "isnull", "notnull", "not", "like", "ilike", "similar",
				"between", "in", "overlaps", "escape", "uescape", "operator":
				top().run++
			}
			i = j
		default:
			i++
		}
	}
	for len(stack) > 1 {
		pop()
	}
	return max(deepest, closeGroup())
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

func isIdentChar(c byte) bool {
	return isIdentStart(c) || c >= '0' && c <= '9' || c == '$'
}

// skipQuoted returns the index after the quoted token that starts at
// sql[i] == q; a doubled quote stands for itself, and with backslashes
// a backslash escapes the next byte. An unterminated token runs to the
// end.
func skipQuoted(sql string, i int, q byte, backslashes bool) int {
	for i++; i < len(sql); i++ {
		switch {
		case backslashes && sql[i] == '\\':
			i++
		case sql[i] == q:
			if i+1 < len(sql) && sql[i+1] == q {
				i++
				continue
			}
			return i + 1
		}
	}
	return len(sql)
}

// skipBlockComment returns the index after the comment that starts at
// sql[i:i+2] == "/*"; PostgreSQL's comments nest.
func skipBlockComment(sql string, i int) int {
	depth := 0
	for i < len(sql) {
		switch {
		case strings.HasPrefix(sql[i:], "/*"):
			depth++
			i += 2
		case strings.HasPrefix(sql[i:], "*/"):
			depth--
			i += 2
			if depth == 0 {
				return i
			}
		default:
			i++
		}
	}
	return len(sql)
}

// skipDollar returns the index after the dollar-quoted string that
// starts at sql[i] == '$' ($$...$$ or $tag$...$tag$), or after the '$'
// alone when it opens none.
func skipDollar(sql string, i int) int {
	j := i + 1
	for j < len(sql) && sql[j] != '$' && (isIdentStart(sql[j]) || sql[j] >= '0' && sql[j] <= '9') {
		j++
	}
	if j >= len(sql) || sql[j] != '$' {
		return i + 1
	}
	tag := sql[i : j+1]
	end := strings.Index(sql[j+1:], tag)
	if end < 0 {
		return len(sql)
	}
	return j + 1 + end + len(tag)
}
