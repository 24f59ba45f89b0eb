package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// docFiles returns the text of README.md and every docs/*.md page, by
// path relative to the module's root.
func docFiles(t *testing.T) map[string]string {
	t.Helper()
	paths, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	paths = append(paths, "../../README.md")
	docs := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		docs[strings.TrimPrefix(filepath.ToSlash(p), "../../")] = string(b)
	}
	if len(docs) < 10 {
		t.Fatalf("found only %d documents", len(docs))
	}
	return docs
}

// runCommandRE finds `mpigo run` command lines in the documents: in code
// spans and in shell blocks alike.
var runCommandRE = regexp.MustCompile("mpigo run((?: +[^ `#|]+)+)")

// docRunFlags returns the flags a documented `mpigo run` command line
// gives the launcher: those before the program (the first word that is not
// a flag or a flag's value), with their dashes and any =value removed.
func docRunFlags(fs *flag.FlagSet, words []string) []string {
	var names []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		if !strings.HasPrefix(w, "-") || w == "-" || w == "--" {
			break // the program; what follows is its own
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if !regexp.MustCompile(`^[a-z][a-z0-9-]*$`).MatchString(name) {
			break // a placeholder such as -FLAG... in prose
		}
		names = append(names, name)
		f := fs.Lookup(name)
		if f == nil || hasValue {
			continue
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		i++ // the flag's value
		if name == "genv" || name == "env" {
			// MPICH's -genv VAR VALUE takes two words (joinPairs).
			if i+1 < len(words) && !strings.Contains(words[i], "=") {
				i++
			}
		}
	}
	return names
}

// TestDocsNameRealRunFlags checks the documents against mpigo run's flag
// set both ways: every flag a documented `mpigo run` command gives exists,
// and every flag mpigo run has is documented somewhere. A renamed or
// removed flag then fails here instead of in a user's terminal.
func TestDocsNameRealRunFlags(t *testing.T) {
	docs := docFiles(t)
	fs := runFlags(&runConfig{}, &runGroup{}, new(int), io.Discard)
	checked := 0
	for path, text := range docs {
		for i, line := range strings.Split(text, "\n") {
			for _, m := range runCommandRE.FindAllStringSubmatch(line, -1) {
				for _, name := range docRunFlags(fs, strings.Fields(m[1])) {
					checked++
					if fs.Lookup(name) == nil && name != "h" && name != "help" { // the flag package's own
						t.Errorf("%s:%d: mpigo run has no flag -%s: %s", path, i+1, name, strings.TrimSpace(line))
					}
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("checked only %d documented flags: has the command syntax in the documents changed?", checked)
	}
	all := ""
	for _, text := range docs {
		all += text
	}
	var undocumented []string
	fs.VisitAll(func(f *flag.Flag) {
		if !strings.Contains(all, "-"+f.Name+" ") && !strings.Contains(all, "-"+f.Name+"`") &&
			!strings.Contains(all, "-"+f.Name+"=") && !strings.Contains(all, "-"+f.Name+",") {
			undocumented = append(undocumented, "-"+f.Name)
		}
	})
	sort.Strings(undocumented)
	for _, f := range undocumented {
		t.Errorf("mpigo run %s is in no document (README.md or docs/*.md)", f)
	}
}

// TestDocsRunFlagsCatch makes sure the checker reads a command line as
// mpigo run does: the program's own flags are not the launcher's.
func TestDocsRunFlagsCatch(t *testing.T) {
	fs := runFlags(&runConfig{}, &runGroup{}, new(int), io.Discard)
	got := strings.Join(docRunFlags(fs, strings.Fields("-n 2 --tag-output -genv A 1 -x B=2 --no-such ./prog -v --other")), " ")
	if want := "n tag-output genv x no-such"; got != want {
		t.Errorf("flags %q, want %q", got, want)
	}
}

// TestDocsNameRealVariables checks that every MPIGO_* variable a document
// names is one the code knows (reads or sets somewhere), so no page tells a
// user to set a variable that does nothing.
func TestDocsNameRealVariables(t *testing.T) {
	docs := docFiles(t)
	code := map[string]bool{}
	name := regexp.MustCompile(`MPIGO_[A-Z0-9_]*[A-Z0-9]`)
	err := filepath.WalkDir("../..", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != "../.." {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".sh") || strings.HasSuffix(p, "/run") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, n := range name.FindAllString(string(b), -1) {
				code[n] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	known := func(n string) bool {
		if code[n] {
			return true
		}
		// Families the code builds from a prefix: MPIGO_COLL_<NAME>,
		// MPIGO_TEST_*; and MPIGO_SHM_* in prose for the shm tunables.
		return strings.HasPrefix(n, "MPIGO_COLL_") || strings.HasPrefix(n, "MPIGO_TEST_") || n == "MPIGO_SHM"
	}
	for path, text := range docs {
		for i, line := range strings.Split(text, "\n") {
			for _, n := range name.FindAllString(line, -1) {
				if !known(n) {
					t.Errorf("%s:%d: %s is named here but no code reads or sets it", path, i+1, n)
				}
			}
		}
	}
}

// TestDocsLinks checks that every relative link of README.md and
// docs/*.md points at a file that exists, so moving a section between
// documents cannot leave a reader at a dead link.
func TestDocsLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	codeSpan := regexp.MustCompile("`[^`]*`")
	for path, text := range docFiles(t) {
		dir := filepath.Dir(filepath.Join("../..", path))
		for i, line := range strings.Split(text, "\n") {
			line = codeSpan.ReplaceAllString(line, "") // mpi.Mrecv[T](m) is code, not a link
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				if _, err := os.Stat(filepath.Join(dir, target)); err != nil {
					t.Errorf("%s:%d: link to %s, which does not exist", path, i+1, target)
				}
			}
		}
	}
}

// TestArchitectureNamesExist checks that every file and package
// ARCHITECTURE.md names exists: a file name with a folder from the
// module's root, a bare one anywhere in the module (a glob such as
// coll_typed*.go must match something), so the map cannot point at code
// that was renamed or removed.
func TestArchitectureNamesExist(t *testing.T) {
	b, err := os.ReadFile("../../ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	base := map[string]bool{}
	err = filepath.WalkDir("../..", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != "../.." {
			return filepath.SkipDir
		}
		base[d.Name()] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`(?:\b|\./)((?:internal|cmd|conformance|examples|bench|docs)/[A-Za-z0-9_./*-]*[A-Za-z0-9_*]|[A-Za-z0-9_*]+\.(?:go|md))\b`)
	checked := 0
	for i, line := range strings.Split(string(b), "\n") {
		for _, m := range name.FindAllStringSubmatch(line, -1) {
			n := strings.TrimSuffix(m[1], ".")
			checked++
			if strings.Contains(n, "/") {
				if matches, _ := filepath.Glob(filepath.Join("../..", n)); len(matches) == 0 {
					t.Errorf("ARCHITECTURE.md:%d: %s does not exist", i+1, n)
				}
				continue
			}
			found := base[n]
			if strings.Contains(n, "*") {
				for b := range base {
					if ok, _ := filepath.Match(n, b); ok {
						found = true
						break
					}
				}
			}
			if !found {
				t.Errorf("ARCHITECTURE.md:%d: no file %s in the module", i+1, n)
			}
		}
	}
	if checked < 80 {
		t.Fatalf("checked only %d names in ARCHITECTURE.md", checked)
	}
}
