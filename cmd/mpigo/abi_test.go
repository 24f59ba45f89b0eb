package main

import (
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/mpigo/mpi/abi"
)

// The tests of the MPI-5.0 ABI build libmpi_abi.so.1 once per test binary
// (through mpigo cc, into a cache of their own) and the C programs of
// testdata/abi with it, then run them under mpigo run.

var (
	abiOnce sync.Once
	abiTmp  string // the test binary's directory: cache/ and bin/
	abiLib  string // the directory of libmpi_abi.so.1
	abiErr  error
)

// abiPrograms are the C programs of testdata/abi.
var abiPrograms = []string{"hello", "p2p", "coll", "types", "errors", "fatal", "dtypes", "groups", "comms", "topo", "attrs", "errh", "greq",
	"p2pmodes", "completion", "collall", "icoll", "neighbor", "rma", "mpit", "ulfm", "mpi4", "mpi41", "pcoll", "part", "info", "waits", "hang", "finattr", "abortcode", "session", "sessonly",
	"io_basic", "io_nb", "io_errors", "io_views", "spawn", "ports", "datarep", "bottomw", "ldouble", "fortran", "errworld", "rmaalloc", "ldrma", "ftypes16", "ext32long"}

// needCC skips the test when there is no C compiler, unless
// MPIGO_REQUIRE_INTEGRATION=1.
func needCC(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the ABI library is built and tested on Linux")
	}
	if _, err := exec.LookPath("cc"); err != nil {
		if os.Getenv("MPIGO_REQUIRE_INTEGRATION") == "1" {
			t.Fatal("no C compiler (cc), and MPIGO_REQUIRE_INTEGRATION=1")
		}
		t.Skip("no C compiler (cc); MPIGO_REQUIRE_INTEGRATION=1 makes this a failure")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
}

// abiSetup builds the library and the test programs once.
func abiSetup(t *testing.T) (lib, bin string) {
	t.Helper()
	needCC(t)
	abiOnce.Do(func() {
		abiTmp, abiErr = os.MkdirTemp("", "mpigo-abi-test-")
		if abiErr != nil {
			return
		}
		os.Setenv("MPIGO_CACHE", filepath.Join(abiTmp, "cache"))
		if abiErr = os.Mkdir(filepath.Join(abiTmp, "bin"), 0o755); abiErr != nil {
			return
		}
		for _, p := range abiPrograms {
			var out strings.Builder
			if code := run([]string{"cc", "-Wall", "-Werror", "-o", filepath.Join(abiTmp, "bin", p), filepath.Join("testdata", "abi", p+".c")}, &out, &out); code != 0 {
				abiErr = fmt.Errorf("mpigo cc %s.c: exit %d\n%s", p, code, out.String())
				return
			}
		}
		libs, _ := filepath.Glob(filepath.Join(abiTmp, "cache", "abi", "*", "lib"))
		if len(libs) != 1 {
			abiErr = fmt.Errorf("want one library directory in the cache, got %v", libs)
			return
		}
		abiLib = libs[0]
	})
	if abiErr != nil {
		t.Fatal(abiErr)
	}
	return abiLib, filepath.Join(abiTmp, "bin")
}

// TestABIPrograms runs the C test programs as singletons (no launcher)
// and under mpigo run.
func TestABIPrograms(t *testing.T) {
	_, bin := abiSetup(t)
	for _, tc := range []struct {
		prog string
		n    int // 0: started directly, a singleton
		want string
	}{
		{"hello", 0, "hello from rank 0 of 1"},
		{"hello", 4, "hello from rank 3 of 4"},
		{"p2p", 0, "p2p OK"},
		{"p2p", 2, "p2p OK"},
		{"p2p", 4, "p2p OK"},
		{"coll", 0, "coll OK"},
		{"coll", 3, "coll OK"},
		{"coll", 4, "coll OK"},
		{"bottomw", 0, "bottomw OK"},
		{"ldouble", 0, "ldouble OK"},
		{"ldouble", 3, "ldouble OK"},
		{"ldrma", 0, "ldrma OK"},
		{"ldrma", 3, "ldrma OK"},
		{"ftypes16", 0, "ftypes16 OK"},
		{"ftypes16", 3, "ftypes16 OK"},
		{"fortran", 0, "fortran OK"},
		{"fortran", 3, "fortran OK"},
		{"errworld", 0, "errworld OK"},
		{"errworld", 2, "errworld OK"},
		{"bottomw", 3, "bottomw OK"},
		{"types", 2, "types OK"},
		{"errors", 0, "errors OK"},
		{"errors", 2, "errors OK"},
		{"dtypes", 2, "dtypes OK"},
		{"groups", 4, "groups OK"},
		{"groups", 2, "groups OK"},
		{"comms", 4, "comms OK"},
		{"topo", 4, "topo OK"},
		{"attrs", 0, "attrs OK"},
		{"attrs", 2, "attrs OK"},
		{"errh", 2, "errh OK"},
		{"greq", 0, "greq OK"},
		{"p2pmodes", 0, "p2pmodes OK"},
		{"p2pmodes", 2, "p2pmodes OK"},
		{"p2pmodes", 4, "p2pmodes OK"},
		{"completion", 0, "completion OK"},
		{"completion", 2, "completion OK"},
		{"completion", 4, "completion OK"},
		{"collall", 0, "collall OK"},
		{"collall", 2, "collall OK"},
		{"collall", 4, "collall OK"},
		{"icoll", 0, "icoll OK"},
		{"icoll", 2, "icoll OK"},
		{"icoll", 4, "icoll OK"},
		{"neighbor", 0, "neighbor OK"},
		{"neighbor", 4, "neighbor OK"},
		{"rma", 0, "rma OK"},
		{"rma", 2, "rma OK"},
		{"rma", 4, "rma OK"},
		{"rmaalloc", 2, "rmaalloc OK"},
		{"rmaalloc", 4, "rmaalloc OK"},
		{"mpit", 0, "mpit OK"},
		{"mpit", 2, "mpit OK"},
		{"mpi4", 0, "mpi4 OK"},
		{"mpi4", 3, "mpi4 OK"},
		{"mpi41", 0, "mpi41 OK"},
		{"mpi41", 2, "mpi41 OK"},
		{"pcoll", 0, "pcoll OK"},
		{"pcoll", 3, "pcoll OK"},
		{"part", 0, "part OK"},
		{"part", 2, "part OK"},
		{"part", 3, "part OK"},
		{"info", 0, "info OK"},
		// More ranks than the 2 cores of a small machine: the polling
		// waits of C threads give the cores away.
		{"waits", 2, "waits OK"},
		{"waits", 8, "waits OK"},
		{"finattr", 0, "finattr OK"},
		{"finattr", 2, "finattr OK"},
		{"session", 0, "session OK"},
		{"session", 3, "session OK"},
		// The Sessions model alone: the rank ends when the program
		// exits after its last MPI_Session_finalize.
		{"sessonly", 0, "sessonly OK"},
		{"sessonly", 3, "sessonly OK"},
		{"ports", 0, "ports OK"},
		{"ports", 2, "ports OK"},
		{"ports", 3, "ports OK"},
		{"datarep", 0, "datarep OK"},
		{"datarep", 2, "datarep OK"},
	} {
		t.Run(fmt.Sprintf("%s-%d", tc.prog, tc.n), func(t *testing.T) {
			prog := filepath.Join(bin, tc.prog)
			var out, errs strings.Builder
			code := 0
			if tc.n == 0 {
				c := exec.Command(prog)
				c.Stdout, c.Stderr = &out, &errs
				if err := c.Run(); err != nil {
					code = -1
					if ee, ok := err.(*exec.ExitError); ok {
						code = ee.ExitCode()
					}
				}
			} else {
				code = run([]string{"run", "--timeout", "60s", "-n", fmt.Sprint(tc.n), prog}, &out, &errs)
			}
			if code != 0 || !strings.Contains(out.String(), tc.want) {
				t.Fatalf("exit %d, want 0 and %q\nstdout:\n%s\nstderr:\n%s", code, tc.want, out.String(), errs.String())
			}
		})
	}
}

// TestABIIO runs the MPI-IO programs, each in a directory of its own
// (their argument), as singletons and under mpigo run.
func TestABIIO(t *testing.T) {
	_, bin := abiSetup(t)
	for _, prog := range []string{"io_basic", "io_nb", "io_errors", "io_views", "ext32long"} {
		for _, n := range []int{0, 2, 3} {
			t.Run(fmt.Sprintf("%s-%d", prog, n), func(t *testing.T) {
				dir := t.TempDir()
				var out, errs strings.Builder
				code := 0
				if n == 0 {
					c := exec.Command(filepath.Join(bin, prog), dir)
					c.Stdout, c.Stderr = &out, &errs
					if err := c.Run(); err != nil {
						code = -1
						if ee, ok := err.(*exec.ExitError); ok {
							code = ee.ExitCode()
						}
					}
				} else {
					code = run([]string{"run", "--timeout", "60s", "-n", fmt.Sprint(n), filepath.Join(bin, prog), dir}, &out, &errs)
				}
				if want := prog + " OK"; code != 0 || !strings.Contains(out.String(), want) {
					t.Fatalf("exit %d, want 0 and %q\nstdout:\n%s\nstderr:\n%s", code, want, out.String(), errs.String())
				}
			})
		}
	}
}

// TestABIIOFatal: MPI_ERRORS_ARE_FATAL set on a file ends the job, with
// the error's class (MPI_ERR_ACCESS, 20) as status and a message naming
// the call.
func TestABIIOFatal(t *testing.T) {
	_, bin := abiSetup(t)
	var out, errs strings.Builder
	code := run([]string{"run", "--timeout", "60s", "-n", "2", filepath.Join(bin, "io_errors"), t.TempDir(), "fatal"}, &out, &errs)
	const errAccess = 20
	if code != errAccess || strings.Contains(out.String(), "not reached") || !strings.Contains(errs.String(), "MPI_File_read_at") {
		t.Fatalf("exit %d, want %d (MPI_ERR_ACCESS) and a message naming MPI_File_read_at\nstdout:\n%s\nstderr:\n%s", code, errAccess, out.String(), errs.String())
	}
}

// TestABISessionMPMD: the process sets of an MPMD job, mpigo://app and
// mpigo://app/<i>, follow mpigo run's groups (MPIGO_APPS).
func TestABISessionMPMD(t *testing.T) {
	_, bin := abiSetup(t)
	prog := filepath.Join(bin, "session")
	var out, errs strings.Builder
	code := run([]string{"run", "--timeout", "60s", "-n", "2", prog, ":", "-n", "1", prog}, &out, &errs)
	for _, want := range []string{"session OK", "rank 0 app size 2", "rank 1 app size 2", "rank 2 app size 1"} {
		if code != 0 || !strings.Contains(out.String(), want) {
			t.Fatalf("exit %d, want 0 and %q\nstdout:\n%s\nstderr:\n%s", code, want, out.String(), errs.String())
		}
	}
}

// TestABISessionsLeave: a program of the Sessions model whose rank leaves
// while another still needs it is reported, not passed: with its session
// live (it never finalized it) the launcher names the rank that exited;
// after its MPI_Session_finalize, the rank waits at its end and the hang
// report says it returned while rank 0 waits for it.
func TestABISessionsLeave(t *testing.T) {
	_, bin := abiSetup(t)
	for _, tc := range []struct{ mode, want string }{
		{"live", "rank 2 (pid"},
		{"early", "rank 2 returned from its function while rank 0 waits in Recv from it"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			var out, errs strings.Builder
			code := run([]string{"run", "--hang-report", "1s", "--timeout", "60s", "-n", "3", filepath.Join(bin, "sessonly"), tc.mode}, &out, &errs)
			if code == 0 || !strings.Contains(errs.String(), tc.want) || strings.Contains(out.String(), "sessonly OK") {
				t.Fatalf("exit %d, want a failure and %q\nstdout:\n%s\nstderr:\n%s", code, tc.want, out.String(), errs.String())
			}
			if tc.mode == "live" && !strings.Contains(errs.String(), "exited (status 0) before") {
				t.Fatalf("the rank that left with a live session is not reported as leaving early\nstderr:\n%s", errs.String())
			}
		})
	}
}

// TestABIFatal: under the default handler, MPI_ERRORS_ARE_FATAL, an error
// ends the job with the error class as exit status and a message naming
// the call.
func TestABIFatal(t *testing.T) {
	_, bin := abiSetup(t)
	var out, errs strings.Builder
	code := run([]string{"run", "--timeout", "60s", "-n", "2", filepath.Join(bin, "fatal")}, &out, &errs)
	const errRank = 6
	if code != errRank || strings.Contains(out.String(), "not reached") ||
		!strings.Contains(errs.String(), "MPI_Send") || !strings.Contains(errs.String(), "MPI_ERRORS_ARE_FATAL") {
		t.Fatalf("exit %d, want %d (MPI_ERR_RANK) and a message naming MPI_Send\nstdout:\n%s\nstderr:\n%s", code, errRank, out.String(), errs.String())
	}
}

// TestABIAbortStatus: a job ended by MPI_Abort, or by a fatal error
// handler raising a class of MPI_Add_error_class, never exits with status
// 0, even when the code's low 8 bits (all an exit status keeps) are zero.
func TestABIAbortStatus(t *testing.T) {
	_, bin := abiSetup(t)
	for _, mode := range []string{"abort", "class"} {
		for _, n := range []int{0, 1, 2} {
			t.Run(fmt.Sprintf("%s-%d", mode, n), func(t *testing.T) {
				prog := filepath.Join(bin, "abortcode")
				var out, errs strings.Builder
				code := 0
				if n == 0 {
					c := exec.Command(prog, mode)
					c.Stdout, c.Stderr = &out, &errs
					if err := c.Run(); err != nil {
						code = -1
						if ee, ok := err.(*exec.ExitError); ok {
							code = ee.ExitCode()
						}
					}
				} else {
					code = run([]string{"run", "--timeout", "60s", "-n", fmt.Sprint(n), prog, mode}, &out, &errs)
				}
				if code == 0 || strings.Contains(out.String(), "not reached") {
					t.Fatalf("exit %d, want non-zero\nstdout:\n%s\nstderr:\n%s", code, out.String(), errs.String())
				}
			})
		}
	}
}

// TestABIULFM: under mpigo run --ft, the last of 4 ranks kills itself
// and the three survivors see MPIX_ERR_PROC_FAILED, revoke, acknowledge,
// agree and shrink through the MPIX_ extension; the job's status is the
// killed rank's.
func TestABIULFM(t *testing.T) {
	_, bin := abiSetup(t)
	var out, errs strings.Builder
	code := run([]string{"run", "--ft", "--timeout", "60s", "-n", "4", filepath.Join(bin, "ulfm")}, &out, &errs)
	if code != 137 || strings.Count(out.String(), "ulfm OK") != 3 {
		t.Fatalf("exit %d, want 137 (the killed rank's) and 3 survivors OK\nstdout:\n%s\nstderr:\n%s", code, out.String(), errs.String())
	}
}

// TestABIHangReport: two C ranks that each receive from the other first
// get the hang report, which names both receives (their waits, on
// goroutines locked to the C threads, park as mpigo's own do), and the
// job ends.
func TestABIHangReport(t *testing.T) {
	_, bin := abiSetup(t)
	var out, errs strings.Builder
	code := run([]string{"run", "--hang-report", "1s", "--timeout", "60s", "-n", "2", filepath.Join(bin, "hang")}, &out, &errs)
	e := errs.String()
	if code == 0 || strings.Contains(out.String(), "not reached") || !strings.Contains(e, "hang report") ||
		!strings.Contains(e, "rank 0: waits in Recv from 1 tag 7") || !strings.Contains(e, "rank 1: waits in Recv from 0 tag 7") {
		t.Fatalf("exit %d, want a failure and a hang report naming both receives\nstdout:\n%s\nstderr:\n%s", code, out.String(), e)
	}
}

// TestABISymbols: every function of the table is exported from the
// library as PMPI_ (global) and MPI_ (weak, so that profiling libraries
// interpose), and the generated symbol list says the same.
func TestABISymbols(t *testing.T) {
	lib, _ := abiSetup(t)
	f, err := elf.Open(filepath.Join(lib, "libmpi_abi.so.1"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	bind := map[string]elf.SymBind{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Section != elf.SHN_UNDEF {
			bind[s.Name] = elf.ST_BIND(s.Info)
		}
	}
	tb, err := abi.Load()
	if err != nil {
		t.Fatal(err)
	}
	var list strings.Builder
	for _, fn := range tb.AllFuncs() {
		if b, ok := bind["P"+fn.Name]; !ok || b != elf.STB_GLOBAL {
			t.Errorf("P%s: exported %v, binding %v; want a global function", fn.Name, ok, b)
		}
		if b, ok := bind[fn.Name]; !ok || b != elf.STB_WEAK {
			t.Errorf("%s: exported %v, binding %v; want a weak function", fn.Name, ok, b)
		}
		fmt.Fprintf(&list, "%s\nP%s\n", fn.Name, fn.Name)
	}
	got, err := os.ReadFile("../../abi/symbols.txt")
	if err != nil || string(got) != list.String() {
		t.Errorf("abi/symbols.txt differs from the table (%v): run go generate ./abi", err)
	}
	if len(tb.Funcs) != 690 {
		t.Errorf("%d functions of the standard in the table, want 690", len(tb.Funcs))
	}
	// The extensions (MPIX_ fault tolerance) are counted apart.
	if len(tb.ExtFuncs) != 9 {
		t.Errorf("%d extension functions in the table, want 9", len(tb.ExtFuncs))
	}
}

// TestABIHeader compiles static assertions of every constant of the table
// against the generated mpi.h, and the MPI_Status layout; and the header
// as C++.
func TestABIHeader(t *testing.T) {
	needCC(t)
	tb, err := abi.Load()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("#include <stddef.h>\n#include <mpi.h>\n#define SA(e) _Static_assert(e, #e)\n")
	b.WriteString("SA(sizeof(MPI_Status) == 8 * sizeof(int));\nSA(offsetof(MPI_Status, MPI_SOURCE) == 0);\nSA(offsetof(MPI_Status, MPI_TAG) == sizeof(int));\nSA(offsetof(MPI_Status, MPI_ERROR) == 2 * sizeof(int));\n")
	b.WriteString("SA(sizeof(MPI_Aint) == sizeof(void *));\nSA(sizeof(MPI_Offset) == 8);\nSA(sizeof(MPI_Count) == 8);\nSA(sizeof(MPI_Comm) == sizeof(void *));\n")
	n := 0
	for _, c := range append(append([]abi.Const(nil), tb.Consts...), tb.ExtConsts...) {
		switch c.Kind {
		case "int":
			fmt.Fprintf(&b, "SA(%s == %s);\n", c.Name, c.Value)
		case "handle", "ptr":
			fmt.Fprintf(&b, "SA((intptr_t)%s == %s);\n", c.Name, c.Value)
		case "alias":
			fmt.Fprintf(&b, "SA(%s == %s);\n", c.Name, c.Value)
		default:
			continue
		}
		n++
	}
	if n < 300 {
		t.Fatalf("only %d constants", n)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "consts.c")
	if err := os.WriteFile(src, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	inc := filepath.Join("..", "..", "abi", "include")
	if out, err := exec.Command("cc", "-std=c11", "-Wall", "-Werror", "-fsyntax-only", "-I", inc, src).CombinedOutput(); err != nil {
		t.Fatalf("%d static assertions: %v\n%s", n, err, out)
	}
	if _, err := exec.LookPath("c++"); err == nil {
		cxx := filepath.Join(dir, "h.cc")
		os.WriteFile(cxx, []byte("#include <mpi.h>\nint f(MPI_Comm c) { int r; return MPI_Comm_rank(c, &r) + PMPI_Barrier(MPI_COMM_WORLD); }\n"), 0o644)
		if out, err := exec.Command("c++", "-Wall", "-Werror", "-fsyntax-only", "-I", inc, cxx).CombinedOutput(); err != nil {
			t.Fatalf("mpi.h as C++: %v\n%s", err, out)
		}
	}
}

// TestABILoader does what mpi4py's loader does: dlopen libmpi_abi.so.1,
// call MPI_Abi_get_version before anything else, expect 1.0.
func TestABILoader(t *testing.T) {
	lib, _ := abiSetup(t)
	loader := filepath.Join(t.TempDir(), "loader")
	if out, err := exec.Command("cc", "-o", loader, filepath.Join("testdata", "abi", "loader.c"), "-ldl").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err := exec.Command(loader, filepath.Join(lib, "libmpi_abi.so.1")).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "rc 0 version 1.0" {
		t.Fatalf("%v: %q, want \"rc 0 version 1.0\"", err, out)
	}
}

// TestCCShow: mpigo cc -show prints the command: the include directory,
// and for a link the library's directory, its run path and -lmpi_abi;
// compiling only (-c) links nothing. It builds nothing.
func TestCCShow(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	t.Setenv("MPIGO_CACHE", t.TempDir())
	t.Setenv("MPIGO_CC", "")
	t.Setenv("CC", "gcc -m64")
	t.Setenv("MPIGO_CXX", "")
	t.Setenv("CXX", "")
	var out, errs strings.Builder
	if code := run([]string{"cc", "-show", "x.c", "-o", "x"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	f := strings.Fields(out.String())
	if len(f) < 8 || f[0] != "gcc" || f[1] != "-m64" || !strings.HasPrefix(f[2], "-I") || f[3] != "x.c" ||
		!strings.HasPrefix(f[6], "-L") || f[7] != "-Wl,-rpath,"+strings.TrimPrefix(f[6], "-L") || f[len(f)-1] != "-lmpi_abi" {
		t.Errorf("mpigo cc -show: %q", out.String())
	}
	if _, err := os.Stat(strings.TrimPrefix(f[6], "-L")); err == nil {
		t.Errorf("-show built the library")
	}
	out.Reset()
	if code := run([]string{"c++", "-show", "-c", "x.cc"}, &out, &errs); code != 0 || strings.Contains(out.String(), "-lmpi_abi") || !strings.HasPrefix(out.String(), "c++ ") {
		t.Errorf("mpigo c++ -show -c: exit %d %q", code, out.String())
	}
}

// TestCCNotItself: a build configured with CC="mpigo cc" exports CC, and
// mpigo cc must not take it for the compiler to run (it ran itself, each
// copy starting the next, until the machine ran out of processes); nor
// may an mpigo cc that an outer one started (CC a script calling mpigo cc)
// run $CC again. MPIGO_CC still counts in both cases.
func TestCCNotItself(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	self, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	t.Setenv("MPIGO_CACHE", t.TempDir())
	t.Setenv("MPIGO_CXX", "")
	t.Setenv("CXX", "")
	cases := []struct{ mpigoCC, cc, nested, want string }{
		{"", "mpigo cc", "", "cc"},
		{"", "/usr/local/bin/mpigo cc -O2", "", "cc"},
		{"", self + " cc", "", "cc"},
		{"mpigo cc", "", "", "cc"},
		{"", "gcc", "1", "cc"},
		{"clang", "gcc", "1", "clang"},
		{"", "gcc", "", "gcc"},
	}
	for _, c := range cases {
		t.Setenv("MPIGO_CC", c.mpigoCC)
		t.Setenv("CC", c.cc)
		t.Setenv(nestedEnv, c.nested)
		var out, errs strings.Builder
		if code := run([]string{"cc", "-show", "x.c"}, &out, &errs); code != 0 {
			t.Fatalf("MPIGO_CC=%q CC=%q: exit %d: %s", c.mpigoCC, c.cc, code, errs.String())
		}
		if f := strings.Fields(out.String()); len(f) == 0 || f[0] != c.want {
			t.Errorf("MPIGO_CC=%q CC=%q %s=%q: mpigo cc -show: %q, want it to run %s", c.mpigoCC, c.cc, nestedEnv, c.nested, out.String(), c.want)
		}
	}
}

// TestCCBuildNotItself: the go build that makes libmpi_abi.so.1 runs cgo,
// which compiles with $CC; with CC="mpigo cc" (a configure run exports it)
// that was mpigo cc again, which started the library's build again,
// without end. A stand-in go command records the CC it is given.
func TestCCBuildNotItself(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in go command is a shell script")
	}
	tmp := t.TempDir()
	rec := filepath.Join(tmp, "cc-seen")
	fake := "#!/bin/sh\nprintf '%s' \"$CC\" > " + rec + "\nexit 3\n"
	if err := os.WriteFile(filepath.Join(tmp, "go"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", tmp+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("MPIGO_CC", "")
	t.Setenv("CC", "/opt/bin/mpigo cc")
	t.Setenv(nestedEnv, "")
	if err := buildABI(tmp, filepath.Join(tmp, "cache", "abi", "x"), nil, io.Discard); err == nil {
		t.Fatal("buildABI succeeded with a go command that fails")
	}
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatalf("the stand-in go command did not run: %v", err)
	}
	if string(b) != "cc" {
		t.Errorf("go build of the library ran with CC=%q, want cc", b)
	}
}

// TestInitUnderLauncher: a Go program that starts its rank with mpi.Init
// and ends it with mpi.Finalize, instead of mpi.Main, joins a job started
// by mpigo run as Main's ranks do.
func TestInitUnderLauncher(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	prog := filepath.Join(t.TempDir(), "initprog")
	if out, err := exec.Command("go", "build", "-o", prog, "./testdata/initprog").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var out, errs strings.Builder
	if code := run([]string{"run", "--timeout", "60s", "-n", "3", prog}, &out, &errs); code != 0 || !strings.Contains(out.String(), "size 3 sum 6") {
		t.Fatalf("exit %d, want 0 and \"size 3 sum 6\"\nstdout:\n%s\nstderr:\n%s", code, out.String(), errs.String())
	}
}

// TestCgoShare: a Go program that links a C library using MPI
// (testdata/cgoshare, built with cgo) shares one MPI with it through
// abi/capi: communicators handed both ways, messages from C received in
// Go, a communicator split in C used from Go, C's MPI_Finalize refused,
// MPI_Finalized true after mpi.Finalize; and the other way round, MPI
// started and ended in C with the Go side on its world; as singletons and
// under mpigo run.
func TestCgoShare(t *testing.T) {
	needCC(t)
	prog := filepath.Join(t.TempDir(), "cgoshare")
	cmd := exec.Command("go", "build", "-o", prog, "./testdata/cgoshare")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out, err := exec.Command(prog).CombinedOutput(); err != nil || !strings.Contains(string(out), "cgoshare OK rank 0 of 1 sum 1") {
		t.Fatalf("singleton: %v\n%s", err, out)
	}
	if out, err := exec.Command(prog, "cinit").CombinedOutput(); err != nil || !strings.Contains(string(out), "cgoshare cinit OK rank 0 of 1 sum 1") {
		t.Fatalf("singleton, MPI started in C: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		n    int
		args []string
		want string
	}{
		{2, nil, "cgoshare OK rank 1 of 2 sum 3"},
		{3, nil, "cgoshare OK rank 2 of 3 sum 6"},
		{3, []string{"cinit"}, "cgoshare cinit OK rank 2 of 3 sum 6"},
	} {
		var out, errs strings.Builder
		args := append([]string{"run", "--timeout", "60s", "-n", fmt.Sprint(tc.n), prog}, tc.args...)
		if code := run(args, &out, &errs); code != 0 || !strings.Contains(out.String(), tc.want) {
			t.Fatalf("%v: exit %d, want 0 and %q\nstdout:\n%s\nstderr:\n%s", args, code, tc.want, out.String(), errs.String())
		}
	}
}
