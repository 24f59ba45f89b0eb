package mpi

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	shmtr "github.com/mpigo/mpi/internal/transport/shm"
)

var (
	envName = regexp.MustCompile(`MPIGO_[A-Z0-9_]+`)
	// envRead is a read of a variable in test code, where names that are
	// only set (fabricated ones to check forwarding, say) do not count.
	envRead = regexp.MustCompile(`(?:Getenv|LookupEnv)\("(MPIGO_[A-Z0-9_]+)"\)`)
)

// tableName maps a name found in the code to its row of
// docs/environment.md: the collectives' rules are one row, the tests'
// MPIGO_TEST_ prefix another.
func tableName(n string) string {
	switch {
	case strings.HasPrefix(n, "MPIGO_COLL_") && n != "MPIGO_COLL_SEGMENT":
		return "MPIGO_COLL_<NAME>"
	case n == "MPIGO_TEST_":
		return "MPIGO_TEST_*"
	}
	return n
}

// goFiles calls f with the path (relative to the module's root, slash
// separated) and text of every .go file of the module.
func goFiles(t *testing.T, f func(path, text string)) {
	t.Helper()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f(filepath.ToSlash(path), string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestEnvironmentTable checks that docs/environment.md lists every MPIGO_*
// variable the code names (in test code: reads), and only those.
func TestEnvironmentTable(t *testing.T) {
	doc, err := os.ReadFile("docs/environment.md")
	if err != nil {
		t.Fatal(err)
	}
	table := map[string]bool{}
	for _, line := range strings.Split(string(doc), "\n") {
		if cell, ok := strings.CutPrefix(line, "| `"); ok {
			if name, _, ok := strings.Cut(cell, "`"); ok && strings.HasPrefix(name, "MPIGO_") {
				table[name] = true
			}
		}
	}
	if len(table) < 20 {
		t.Fatalf("docs/environment.md: found %d variables in the table; is it still a table of `| \\`NAME\\` |` rows?", len(table))
	}
	code := map[string]string{} // table row -> a file that names it
	goFiles(t, func(path, text string) {
		var names []string
		if strings.HasSuffix(path, "_test.go") {
			for _, m := range envRead.FindAllStringSubmatch(text, -1) {
				// A test may read a variable named to be absent.
				if !strings.Contains(m[1], "NO_SUCH") {
					names = append(names, m[1])
				}
			}
		} else {
			names = envName.FindAllString(text, -1)
		}
		for _, n := range names {
			if _, ok := code[tableName(n)]; !ok {
				code[tableName(n)] = path
			}
		}
	})
	for n, path := range code {
		if !table[n] {
			t.Errorf("%s names %s, which docs/environment.md does not list", path, n)
		}
	}
	for n := range table {
		if _, ok := code[n]; !ok {
			t.Errorf("docs/environment.md lists %s, which no code reads", n)
		}
	}
}

// envReaders are the functions of the standard library that read the
// process's environment, by package.
var envReaders = map[string][]string{
	"os":      {"Getenv", "LookupEnv", "Environ", "ExpandEnv"},
	"syscall": {"Getenv", "Environ"},
}

// TestEnvironmentReadInOnePlace checks that of the library (package mpi
// and the internal packages; not cmd/, examples/, bench/ or test code)
// only config.go reads the environment: it alone names os.Getenv,
// os.LookupEnv, os.Environ (called or passed as a value, as config.go
// passes its reader to boot.Detect), and the internal packages take what
// they need from their caller. internal/conformance is a harness of the
// tests: it may read its own variables as long as no library file
// imports it.
func TestEnvironmentReadInOnePlace(t *testing.T) {
	const harness = "github.com/mpigo/mpi/internal/conformance"
	checked := 0
	goFiles(t, func(path, text string) {
		if strings.HasSuffix(path, "_test.go") || strings.Contains(path, "/testdata/") ||
			strings.HasPrefix(path, "cmd/") || strings.HasPrefix(path, "examples/") || strings.HasPrefix(path, "bench/") {
			return
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, text, parser.SkipObjectResolution)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			return
		}
		checked++
		local := map[string]string{} // local name -> package path
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if p == harness && !strings.HasPrefix(path, "internal/conformance/") {
				t.Errorf("%s imports %s, a test harness that reads the environment", path, p)
			}
			name := p
			if im.Name != nil {
				name = im.Name.Name
			}
			local[name] = p
		}
		if path == "config.go" || strings.HasPrefix(path, "internal/conformance/") {
			return
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && slices.Contains(envReaders[local[x.Name]], sel.Sel.Name) {
				t.Errorf("%s reads the environment (%s.%s): of the library only config.go reads it; internal packages take values (or a reader) from their caller", path, local[x.Name], sel.Sel.Name)
			}
			return true
		})
	})
	if checked < 100 {
		t.Fatalf("checked only %d files of the library: is goFiles still walking the module?", checked)
	}
}

// TestTransportsNamedInOnePlace checks that of the library's files (package
// mpi and its internal packages, but the transports themselves) only
// internal/device/routes.go imports a concrete transport (inproc, self,
// shm, tcp): everything else sees transports through the router and
// capabilities. The launcher (cmd/) may name them.
func TestTransportsNamedInOnePlace(t *testing.T) {
	concrete := regexp.MustCompile(`"github.com/mpigo/mpi/internal/transport/(inproc|self|shm|tcp)"`)
	checked := 0
	goFiles(t, func(path, text string) {
		if strings.HasSuffix(path, "_test.go") || path == "internal/device/routes.go" ||
			strings.HasPrefix(path, "cmd/") || strings.HasPrefix(path, "internal/transport/") ||
			strings.Contains(path, "/testdata/") {
			return
		}
		checked++
		if m := concrete.FindStringSubmatch(text); m != nil {
			t.Errorf("%s imports the %s transport: only internal/device/routes.go names concrete transports", path, m[1])
		}
	})
	if checked < 100 {
		t.Fatalf("checked only %d files: is goFiles still walking the module?", checked)
	}
}

// TestShmDirFromEnvironment checks that MPIGO_SHM_DIR, which config.go
// reads, is where the shm transport puts its inboxes: a job given a
// folder that does not exist fails to start and names it, and one given
// a folder that exists runs.
func TestShmDirFromEnvironment(t *testing.T) {
	if ok, why := shmtr.Available(); !ok {
		t.Skip(why)
	}
	missing := filepath.Join(t.TempDir(), "no-such-folder")
	t.Setenv("MPIGO_SHM_DIR", missing)
	cfg := DefaultConfig()
	if cfg.shmDir != missing {
		t.Fatalf("DefaultConfig: shmDir %q, want %q", cfg.shmDir, missing)
	}
	cfg.Transport = "shm"
	err := RunConfig(2, cfg, func(c *Comm) error { return Barrier(c) })
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("a job with MPIGO_SHM_DIR=%s: %v, want an error naming the folder", missing, err)
	}
	t.Setenv("MPIGO_SHM_DIR", t.TempDir())
	cfg = DefaultConfig()
	cfg.Transport = "shm"
	if err := RunConfig(2, cfg, func(c *Comm) error { return Barrier(c) }); err != nil {
		t.Errorf("a job with MPIGO_SHM_DIR an existing folder: %v", err)
	}
}

// TestRunSetupErrors checks that a job Run cannot build fails with an
// *Error of the right class: an unknown transport, a bad MPIGO_TCP_PROTECT.
func TestRunSetupErrors(t *testing.T) {
	for _, tc := range []struct {
		transport, protect string
		class              error
		want               string
	}{
		{"pigeon", "", ErrArg, `unknown transport "pigeon"`},
		{"tcp", "sometimes", ErrArg, "sometimes"},
	} {
		cfg := DefaultConfig()
		cfg.Transport, cfg.TCPProtect = tc.transport, tc.protect
		err := RunConfig(2, cfg, func(c *Comm) error { return nil })
		var e *Error
		if !errors.As(err, &e) || e.Op != "Run" || !errors.Is(err, tc.class) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("transport %q, protect %q: %T %v; want an *Error of Run, class %v, saying %q", tc.transport, tc.protect, err, err, tc.class, tc.want)
		}
	}
}
