package mpi

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var (
	envName = regexp.MustCompile(`MPIGO_[A-Z0-9_]+`)
	// envRead is a read of a variable in test code, where names that are
	// only set (fabricated ones to check forwarding, say) do not count.
	envRead = regexp.MustCompile(`(?:Getenv|LookupEnv)\("(MPIGO_[A-Z0-9_]+)"\)`)
	// envCall is a read of the environment by the os package.
	envCall = regexp.MustCompile(`\bos\.(?:Getenv|LookupEnv|Environ)\(`)
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

// TestEnvironmentReadInOnePlace checks that package mpi reads the
// environment only in config.go, and that of the internal packages only
// those docs/environment.md names as readers do.
func TestEnvironmentReadInOnePlace(t *testing.T) {
	readers := []string{"config.go", "internal/boot/", "internal/transport/shm/", "internal/conformance/"}
	goFiles(t, func(path, text string) {
		if strings.HasSuffix(path, "_test.go") || strings.Contains(path, "/testdata/") ||
			strings.HasPrefix(path, "cmd/") || strings.HasPrefix(path, "examples/") || strings.HasPrefix(path, "bench/") {
			return
		}
		if !envCall.MatchString(text) {
			return
		}
		if !slices.ContainsFunc(readers, func(r string) bool { return path == r || strings.HasPrefix(path, r) && strings.HasSuffix(r, "/") }) {
			t.Errorf("%s reads the environment: package mpi reads it only in config.go, internal packages take values through their config", path)
		}
	})
}

// TestTransportsNamedInOnePlace checks that of package mpi's files only
// device_routes.go imports a concrete transport (inproc, self, shm, tcp):
// everything else sees transports through the router and capabilities.
func TestTransportsNamedInOnePlace(t *testing.T) {
	concrete := regexp.MustCompile(`"github.com/mpigo/mpi/internal/transport/(inproc|self|shm|tcp)"`)
	goFiles(t, func(path, text string) {
		if strings.Contains(path, "/") || strings.HasSuffix(path, "_test.go") || path == "device_routes.go" {
			return
		}
		if m := concrete.FindStringSubmatch(text); m != nil {
			t.Errorf("%s imports the %s transport: only device_routes.go names concrete transports", path, m[1])
		}
	})
}
