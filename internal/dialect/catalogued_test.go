package dialect

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/shepherd-db/shepherd/internal/pgfunc"
)

// TestWrittenFunctionsCatalogued reads the writer's source for the
// functions it writes (the names its code compares a call's name with)
// and checks that pgfunc, which types them, has each: a function the
// writer learns without a catalogue entry would be written but typed
// unknown.
func TestWrittenFunctionsCatalogued(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fs := token.NewFileSet()
	found := map[string]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fs, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !takesCall(fd) {
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				var lits []ast.Expr
				switch x := n.(type) {
				case *ast.SwitchStmt:
					if x.Tag != nil && isFuncName(x.Tag) {
						for _, c := range x.Body.List {
							lits = append(lits, c.(*ast.CaseClause).List...)
						}
					}
				case *ast.BinaryExpr:
					if x.Op == token.EQL && isFuncName(x.X) {
						lits = append(lits, x.Y)
					}
				}
				for _, l := range lits {
					if b, ok := l.(*ast.BasicLit); ok && b.Kind == token.STRING {
						if s, _ := strconv.Unquote(b.Value); s != "" {
							found[s] = fs.Position(b.Pos()).String()
						}
					}
				}
				return true
			})
		}
	}
	if len(found) < 50 {
		t.Fatalf("found only %d function names in the writer's source: the scan is broken", len(found))
	}
	t.Logf("%d functions written", len(found))
	for name, where := range found {
		if pgfunc.Lookup(name) == nil {
			t.Errorf("%s (%s) is written but has no pgfunc entry", name, where)
		}
	}
}

// takesCall reports whether a function has a *pg_query.FuncCall
// parameter: the functions that write calls.
func takesCall(fd *ast.FuncDecl) bool {
	for _, p := range fd.Type.Params.List {
		if s, ok := p.Type.(*ast.StarExpr); ok {
			if sel, ok := s.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "FuncCall" {
				return true
			}
		}
	}
	return false
}

// isFuncName reports whether e is a function's name: the variable name,
// or schema.FuncName(...).
func isFuncName(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name == "name"
	case *ast.CallExpr:
		s, ok := x.Fun.(*ast.SelectorExpr)
		return ok && s.Sel.Name == "FuncName"
	}
	return false
}
