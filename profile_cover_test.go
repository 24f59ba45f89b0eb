package mpi

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestProfilerCoversEveryCall checks that every exported function and
// method of the package that returns an error starts with the profiler
// hook, naming itself: a call added without it would be invisible to
// profilers. The tools interface itself (tools.go, pvar.go, profile.go)
// is not reported, and neither are Run and RunConfig, which bracket a
// whole job rather than being calls of a rank.
func TestProfilerCoversEveryCall(t *testing.T) {
	skipFiles := map[string]bool{"tools.go": true, "pvar.go": true, "profile.go": true}
	skip := map[string]bool{"Run": true, "RunConfig": true, "RankError.Unwrap": true,
		// Their error result is a value (a class), not a failure.
		"ErrorClass": true, "AddErrorClass": true,
		// It reports how the view was made; it calls nothing.
		"View.Err": true,
		// It reads a field: the request's error is its value.
		"Status.Err": true}
	ents, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	n := 0
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || skipFiles[name] {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || !fd.Name.IsExported() {
				continue
			}
			call := fd.Name.Name
			if fd.Recv != nil {
				rt := fd.Recv.List[0].Type
				if s, ok := rt.(*ast.StarExpr); ok {
					rt = s.X
				}
				switch x := rt.(type) {
				case *ast.IndexExpr:
					rt = x.X
				case *ast.IndexListExpr:
					rt = x.X
				}
				id, ok := rt.(*ast.Ident)
				if !ok || !id.IsExported() {
					continue
				}
				call = id.Name + "." + call
			}
			res := fd.Type.Results
			if skip[call] || res == nil || len(res.List) == 0 {
				continue
			}
			if id, ok := res.List[len(res.List)-1].Type.(*ast.Ident); !ok || id.Name != "error" {
				continue
			}
			n++
			if got := hookName(fd); got != strconv.Quote(call) {
				t.Errorf("%s: %s does not start with the profiler hook naming it (found %s); go run ./internal/profhook inserts it", fset.Position(fd.Pos()), call, got)
			}
		}
	}
	if n < 100 {
		t.Errorf("only %d calls found", n)
	}
}

// hookName returns the name the function's leading profiler hook
// reports (quoted), or "" if it does not start with one.
func hookName(fd *ast.FuncDecl) string {
	if len(fd.Body.List) == 0 {
		return ""
	}
	is, ok := fd.Body.List[0].(*ast.IfStmt)
	if !ok || is.Init == nil || len(is.Body.List) != 1 {
		return ""
	}
	as, ok := is.Init.(*ast.AssignStmt)
	if !ok || len(as.Rhs) != 1 {
		return ""
	}
	ce, ok := as.Rhs[0].(*ast.CallExpr)
	if !ok {
		return ""
	}
	if se, ok := ce.Fun.(*ast.SelectorExpr); !ok || se.Sel.Name != "Load" {
		return ""
	} else if id, ok := se.X.(*ast.Ident); !ok || id.Name != "profiler" {
		return ""
	}
	ds, ok := is.Body.List[0].(*ast.DeferStmt)
	if !ok || len(ds.Call.Args) != 2 {
		return ""
	}
	enter, ok := ds.Call.Args[0].(*ast.CallExpr)
	if !ok || len(enter.Args) == 0 {
		return ""
	}
	lit, ok := enter.Args[0].(*ast.BasicLit)
	if !ok {
		return ""
	}
	return lit.Value
}
