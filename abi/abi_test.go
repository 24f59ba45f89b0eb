package abi

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestGeneratedFilesFresh fails if a file generated from the table differs
// from what the generator makes now: run go generate ./abi.
func TestGeneratedFilesFresh(t *testing.T) {
	tb, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	docs, err := os.ReadFile(DocsFile)
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generate(tb, docs)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go generate ./abi", name)
		}
	}
}

// TestTable checks facts of the standard the rest relies on: every
// function once, the MPI_Status layout constants, predefined handles in
// 1..4095, and the handles the library's code names.
func TestTable(t *testing.T) {
	tb, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range tb.Funcs {
		if seen[f.Name] {
			t.Errorf("%s twice", f.Name)
		}
		seen[f.Name] = true
	}
	// 664 functions of the MPI-4.2 ABI draft plus MPI-5.0's toint/fromint
	// (22) and Fortran-info calls (4).
	if len(tb.Funcs) != 690 {
		t.Errorf("%d functions, want 690", len(tb.Funcs))
	}
	vals := map[string]string{}
	for _, c := range tb.Consts {
		vals[c.Name] = c.Value
		if c.Kind == "handle" && !strings.HasPrefix(c.CType, "MPI_T_") {
			v, err := strconv.ParseUint(c.Value, 0, 64)
			if err != nil || v < 1 || v > 4095 {
				t.Errorf("%s = %s: a predefined handle is in 1..4095", c.Name, c.Value)
			}
		}
	}
	for name, want := range map[string]string{
		"MPI_COMM_WORLD": "0x101", "MPI_COMM_SELF": "0x102", "MPI_INT": "0x209", "MPI_DOUBLE": "0x214",
		"MPI_SUM": "0x21", "MPI_ERRORS_RETURN": "0x143", "MPI_ERRORS_ABORT": "0x142", "MPI_REQUEST_NULL": "0x180",
		"MPI_ERR_UNSUPPORTED_OPERATION": "55", "MPI_ERR_RANK": "6", "MPI_THREAD_FUNNELED": "1024", "MPI_THREAD_MULTIPLE": "4096",
		"MPI_SEEK_SET": "403", "MPI_APPNUM": "505", "MPI_UNIVERSE_SIZE": "507", "MPI_CHARACTER": "0x21e",
		"MPI_F_STATUS_SIZE": "8", "MPI_ANY_TAG": "-2", "MPI_PROC_NULL": "-3", "MPI_VERSION": "5",
	} {
		if vals[name] != want {
			t.Errorf("%s = %q, want %s", name, vals[name], want)
		}
	}
}

// TestExtensions: the extensions are the MPIX_ fault-tolerance calls and
// error classes, apart from the standard's functions, with MPICH's values.
func TestExtensions(t *testing.T) {
	tb, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.ExtFuncs) != 9 {
		t.Errorf("%d extension functions, want 9", len(tb.ExtFuncs))
	}
	for _, f := range tb.ExtFuncs {
		if !strings.HasPrefix(f.Name, "MPIX_") || !f.Ext || !f.Impl {
			t.Errorf("%s: an extension is an implemented MPIX_ function", f.Name)
		}
	}
	for _, f := range tb.Funcs {
		if f.Ext || strings.HasPrefix(f.Name, "MPIX_") {
			t.Errorf("%s among the standard's functions", f.Name)
		}
	}
	want := map[string]string{"MPIX_ERR_PROC_FAILED": "101", "MPIX_ERR_PROC_FAILED_PENDING": "102", "MPIX_ERR_REVOKED": "103"}
	for _, c := range tb.ExtConsts {
		if want[c.Name] != c.Value {
			t.Errorf("%s = %s, want %s", c.Name, c.Value, want[c.Name])
		}
		delete(want, c.Name)
	}
	if len(want) != 0 {
		t.Errorf("missing %v", want)
	}
}

// TestLibFilesNeedCgo checks that every Go file of abi/capi and abi/lib
// but the stubs builds only with cgo: a file without the constraint breaks
// the cgo-free builds (CGO_ENABLED=0, every cross-compile), where the stubs
// stand alone.
func TestLibFilesNeedCgo(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("capi", "*.go"))
	lib, err2 := filepath.Glob(filepath.Join("lib", "*.go"))
	files = append(files, lib...)
	if err != nil || err2 != nil || len(files) < 10 || len(lib) != 2 {
		t.Fatalf("abi/capi's and abi/lib's Go files: %v %v (%d found)", err, err2, len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// The first line is the constraint: cgo, or cgo and more (a
		// test file for the race detector, say); nocgo.go's is !cgo.
		first, _, _ := strings.Cut(string(b), "\n")
		ok := first == "//go:build cgo" || strings.HasPrefix(first, "//go:build cgo && ")
		want := "//go:build cgo"
		if filepath.Base(f) == "nocgo.go" {
			want = "//go:build !cgo"
			ok = first == want
		}
		if !ok {
			t.Errorf("%s does not start with %q", f, want)
		}
	}
}
