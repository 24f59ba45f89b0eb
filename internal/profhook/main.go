// Command profhook inserts the profiler hook (profile.go) at the start of
// every exported function and method of package mpi that returns an error
// and lacks it, naming the results where needed. Run it from the module
// root after adding calls, then gofmt:
//
//	go run ./internal/profhook $(ls *.go | grep -v _test) && gofmt -w *.go
//
// TestProfilerCoversEveryCall fails until every call has the hook. A call
// that the package itself uses should keep its body in an unexported form
// that internal callers call, so that profilers see only the user's calls.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"sort"
	"strings"
)

// skip lists calls that are not reported (as TestProfilerCoversEveryCall).
var skip = map[string]bool{"Run": true, "RunConfig": true, "RankError.Unwrap": true,
	// Their error result is a value (a class), not a failure.
	"ErrorClass": true, "AddErrorClass": true}

// skipFiles holds the tools interface, which is not reported.
var skipFiles = map[string]bool{"tools.go": true, "pvar.go": true, "profile.go": true}

type edit struct {
	off  int
	end  int
	text string
}

func main() {
	for _, file := range os.Args[1:] {
		if skipFiles[file] || strings.HasSuffix(file, "_test.go") {
			continue
		}
		src, err := os.ReadFile(file)
		if err != nil {
			panic(err)
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, file, src, parser.ParseComments)
		if err != nil {
			panic(err)
		}
		var edits []edit
		off := func(p token.Pos) int { return fset.Position(p).Offset }
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || !fd.Name.IsExported() {
				continue
			}
			name := fd.Name.Name
			recvType, recvName := "", ""
			if fd.Recv != nil {
				t := fd.Recv.List[0].Type
				if s, ok := t.(*ast.StarExpr); ok {
					t = s.X
				}
				switch x := t.(type) {
				case *ast.Ident:
					recvType = x.Name
				case *ast.IndexExpr:
					recvType = x.X.(*ast.Ident).Name
				case *ast.IndexListExpr:
					recvType = x.X.(*ast.Ident).Name
				}
				if !ast.IsExported(recvType) {
					continue
				}
				if len(fd.Recv.List[0].Names) > 0 {
					recvName = fd.Recv.List[0].Names[0].Name
				}
				name = recvType + "." + name
			}
			if skip[name] {
				continue
			}
			res := fd.Type.Results
			if res == nil || len(res.List) == 0 {
				continue
			}
			last := res.List[len(res.List)-1]
			if id, ok := last.Type.(*ast.Ident); !ok || id.Name != "error" {
				continue
			}
			// Already instrumented?
			if strings.Contains(string(src[off(fd.Body.Lbrace):off(fd.Body.Rbrace)]), "profiler.Load()") {
				continue
			}
			errName := "err"
			if len(last.Names) > 0 {
				errName = last.Names[len(last.Names)-1].Name
			} else {
				// Name the results: _ for all but the error.
				var parts []string
				for _, fl := range res.List {
					ts := string(src[off(fl.Type.Pos()):off(fl.Type.End())])
					n := len(fl.Names)
					if n == 0 {
						n = 1
					}
					for i := 0; i < n; i++ {
						parts = append(parts, "_ "+ts)
					}
				}
				parts[len(parts)-1] = "err error"
				edits = append(edits, edit{off(res.Pos()), off(res.End()), "(" + strings.Join(parts, ", ") + ")"})
			}
			comm := "nil"
			switch recvType {
			case "Comm":
				comm = recvName
			case "Request", "Pending", "Future", "Message":
				comm = recvName + ".comm()"
			}
			peer, tag := "Undefined", "Undefined"
			for _, fl := range fd.Type.Params.List {
				ts := string(src[off(fl.Type.Pos()):off(fl.Type.End())])
				for _, n := range fl.Names {
					if recvType == "" && comm == "nil" {
						if ts == "*Comm" {
							comm = n.Name
						} else if ts == "*Message" {
							comm = n.Name + ".comm()"
						}
					}
					switch n.Name {
					case "dest", "source", "src", "root":
						if peer == "Undefined" {
							peer = n.Name
						}
					case "tag", "sendtag":
						if tag == "Undefined" {
							tag = n.Name
						}
					}
				}
			}
			hook := fmt.Sprintf("\n\tif h := profiler.Load(); h != nil {\n\t\tdefer h.exit(h.enter(%q, %s, %s, %s), &%s)\n\t}\n", name, comm, peer, tag, errName)
			edits = append(edits, edit{off(fd.Body.Lbrace) + 1, off(fd.Body.Lbrace) + 1, hook})
		}
		if len(edits) == 0 {
			continue
		}
		sort.Slice(edits, func(i, j int) bool { return edits[i].off > edits[j].off })
		out := src
		for _, e := range edits {
			out = append(out[:e.off:e.off], append([]byte(e.text), out[e.end:]...)...)
		}
		if err := os.WriteFile(file, out, 0o644); err != nil {
			panic(err)
		}
		fmt.Printf("%s: %d edits\n", file, len(edits))
	}
}
