// Package abi holds the table of the MPI-5.0 standard application binary
// interface (the constants of mpi.h and every function's C prototype) and
// reads it. One table drives everything that must agree with the standard:
// the generator (abi/internal/gen, run by go generate) turns it into
// include/mpi.h, the Go export skeleton and C aliases of the library in
// abi/capi (built by abi/lib as libmpi_abi.so.1), the symbol list, and docs/abi.md's list of the
// functions not implemented yet; tests check the generated files are not
// stale and that the built library and header agree with the table.
//
// The package is pure Go (no cgo): `mpigo cc` and the tests read it.
package abi

//go:generate go run ./internal/gen

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"
)

//go:embed spec/constants.txt
var constantsText string

//go:embed spec/functions.txt
var functionsText string

//go:embed spec/extensions.txt
var extensionsText string

// Const is one line of spec/constants.txt.
type Const struct {
	Kind  string // handletype, handle, int, ptr, alias, ctypedef
	CType string // the C type: of the handle, pointer or integer
	Name  string // the C name (struct tag for a handletype)
	Value string // the value as written in the table (the aliased name for alias; the declaration for ctypedef)
}

// Param is one parameter of a C prototype.
type Param struct {
	CType string // the C type, arrays written as pointers ("const int *")
	Name  string
}

// Func is one function of the ABI.
type Func struct {
	Ret      string  // the C return type
	Name     string  // MPI_ name; the PMPI_ twin is "P" + Name
	Params   []Param // in order; empty for (void)
	Variadic bool    // the prototype ends in "..." (MPI_Pcontrol)
	Impl     bool    // marked "+" in the table: implemented for real
	Ext      bool    // an extension (spec/extensions.txt), not the standard's
	Proto    string  // the prototype as written, without the "+"
}

// Table is the whole ABI, and the extensions the library adds to it.
type Table struct {
	Consts []Const
	Funcs  []Func // the standard's functions only
	// ExtConsts and ExtFuncs are the extensions of spec/extensions.txt
	// (the MPIX_ fault-tolerance calls of Open MPI and MPICH): declared
	// in mpi.h apart from the standard's names and exported the same way,
	// but not counted as the standard's.
	ExtConsts []Const
	ExtFuncs  []Func
}

// AllFuncs returns the standard's functions followed by the extensions.
func (t *Table) AllFuncs() []Func {
	return append(append([]Func(nil), t.Funcs...), t.ExtFuncs...)
}

// HandleTypes returns the C names of the handle types (MPI_Comm, ...).
func (t *Table) HandleTypes() map[string]bool {
	m := map[string]bool{}
	for _, c := range t.Consts {
		if c.Kind == "handletype" {
			m[c.CType] = true
		}
	}
	return m
}

// Load parses the embedded table.
func Load() (*Table, error) {
	t := &Table{}
	for i, line := range strings.Split(constantsText, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		bad := func() error { return fmt.Errorf("spec/constants.txt:%d: bad line %q", i+1, line) }
		var c Const
		switch f[0] {
		case "handletype":
			if len(f) != 3 {
				return nil, bad()
			}
			c = Const{Kind: f[0], CType: f[1], Name: f[2]}
		case "handle", "ptr":
			if len(f) != 4 {
				return nil, bad()
			}
			c = Const{Kind: f[0], CType: f[1], Name: f[2], Value: f[3]}
		case "int":
			if len(f) != 3 && len(f) != 4 {
				return nil, bad()
			}
			c = Const{Kind: f[0], CType: "int", Name: f[1], Value: f[2]}
			if len(f) == 4 {
				c.CType = f[3]
			}
		case "alias":
			if len(f) != 3 {
				return nil, bad()
			}
			c = Const{Kind: f[0], Name: f[1], Value: f[2]}
		case "ctypedef":
			c = Const{Kind: f[0], Value: strings.TrimSpace(strings.TrimPrefix(line, "ctypedef"))}
		default:
			return nil, bad()
		}
		t.Consts = append(t.Consts, c)
	}
	for i, line := range strings.Split(functionsText, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f, err := parseProto(line)
		if err != nil {
			return nil, fmt.Errorf("spec/functions.txt:%d: %v", i+1, err)
		}
		t.Funcs = append(t.Funcs, f)
	}
	for i, line := range strings.Split(extensionsText, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if f := strings.Fields(line); len(f) == 3 && f[0] == "int" && !strings.Contains(line, "(") {
			t.ExtConsts = append(t.ExtConsts, Const{Kind: "int", CType: "int", Name: f[1], Value: f[2]})
			continue
		}
		f, err := parseProto(line)
		if err != nil {
			return nil, fmt.Errorf("spec/extensions.txt:%d: %v", i+1, err)
		}
		f.Ext = true
		t.ExtFuncs = append(t.ExtFuncs, f)
	}
	return t, nil
}

var protoRE = regexp.MustCompile(`^(\+ )?([A-Za-z_][A-Za-z0-9_ ]*?) *\b(MPIX?_[A-Za-z0-9_]+)\((.*)\)$`)
var paramRE = regexp.MustCompile(`^(.*?)\b([A-Za-z_][A-Za-z0-9_]*)((?:\[\d*\])*)$`)

func parseProto(line string) (Func, error) {
	m := protoRE.FindStringSubmatch(line)
	if m == nil {
		return Func{}, fmt.Errorf("not a prototype: %q", line)
	}
	f := Func{Impl: m[1] != "", Ret: m[2], Name: m[3], Proto: strings.TrimPrefix(line, "+ ")}
	if m[4] == "void" {
		return f, nil
	}
	for _, p := range strings.Split(m[4], ",") {
		p = strings.TrimSpace(p)
		if p == "..." {
			f.Variadic = true
			continue
		}
		pm := paramRE.FindStringSubmatch(p)
		if pm == nil || strings.TrimSpace(pm[1]) == "" {
			return Func{}, fmt.Errorf("%s: bad parameter %q", f.Name, p)
		}
		ct := strings.TrimSpace(pm[1])
		// An array parameter is a pointer (int ranges[][3]: a pointer too).
		if pm[3] != "" {
			ct += " *"
		}
		ct = strings.ReplaceAll(ct, " *", "*")
		ct = strings.ReplaceAll(ct, "*", " *")
		ct = strings.ReplaceAll(ct, "*  *", "**")
		ct = strings.ReplaceAll(strings.ReplaceAll(ct, "* *", "**"), "* *", "**")
		f.Params = append(f.Params, Param{CType: ct, Name: pm[2]})
	}
	return f, nil
}

// IsPointer reports whether a C type from the table is a pointer.
func IsPointer(ctype string) bool { return strings.Contains(ctype, "*") }
