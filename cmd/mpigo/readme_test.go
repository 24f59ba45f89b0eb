package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readmeBlock returns the shell block that follows the marker comment
// <!-- README test: name --> in README.md.
func readmeBlock(t *testing.T, readme, name string) string {
	t.Helper()
	marker := "<!-- README test: " + name + " -->"
	_, rest, ok := strings.Cut(readme, marker)
	if !ok {
		t.Fatalf("README.md has no %s", marker)
	}
	_, rest, ok = strings.Cut(rest, "```sh\n")
	if !ok {
		t.Fatalf("no sh block after %s", marker)
	}
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatalf("unterminated sh block after %s", marker)
	}
	return block
}

// TestReadmeCommands runs the README's install and first-program commands
// as a new user would type them, in a fresh GOPATH, with the repository
// as the clone (the one thing skipped is the git clone itself): the
// commands must work as written on a machine that has only the clone and
// Go. The module cache is shared and the module proxy turned off, so the
// test needs no network and proves that nothing but the clone is needed
// (the clone's own dependencies are in the cache once it has been built).
func TestReadmeCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mpigo and three programs; skipped in -short")
	}
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	install := readmeBlock(t, readme, "install")
	own := readmeBlock(t, readme, "own program")
	clone := "git clone https://github.com/mpigo/mpi mpigo && "
	if !strings.HasPrefix(install, clone) {
		t.Fatalf("the install block no longer starts with %q: update this test", clone)
	}
	install = strings.TrimPrefix(install, clone)

	// The Quick start in the README is examples/quickstart, which the
	// own-program block copies.
	quick, err := os.ReadFile("../../examples/quickstart/main.go")
	if err != nil {
		t.Fatal(err)
	}
	_, code, _ := strings.Cut(readme, "## Quick start\n\n```go\n")
	code, _, _ = strings.Cut(code, "```")
	if _, body, ok := strings.Cut(string(quick), "package main\n"); !ok || !strings.HasSuffix(code, body) {
		t.Errorf("README's Quick start differs from examples/quickstart/main.go")
	}

	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	env := func(name string) string {
		out, err := exec.Command(goBin, "env", name).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	modcache, gocache := env("GOMODCACHE"), env("GOCACHE")
	tmp := t.TempDir()
	if err := os.Symlink(root, filepath.Join(tmp, "mpigo")); err != nil {
		t.Fatal(err)
	}
	// PATH: the go command, and no mpigo left from elsewhere.
	var path []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "mpigo")); err == nil {
			continue
		}
		path = append(path, d)
	}
	path = append([]string{filepath.Dir(goBin)}, path...)
	script := "set -e\ncd \"$TMPROOT\"\n" + install + own
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = append(os.Environ(),
		"TMPROOT="+tmp,
		"GOPATH="+filepath.Join(tmp, "gopath"),
		"GOMODCACHE="+modcache,
		"GOCACHE="+gocache,
		"GOPROXY=off",
		// The new module's go.sum is checked against the checksum
		// database, which a user reaches and a test may not.
		"GOSUMDB=off",
		"GOFLAGS=-buildvcs=false",
		"PATH="+strings.Join(path, string(os.PathListSeparator)),
	)
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("README commands failed: %v", err)
	}
	for _, want := range []string{"pi is approximately", "sum of ranks: 1"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(tmp, "gopath", "bin", "mpigo")); err != nil {
		t.Errorf("mpigo was not installed where the README says: %v", err)
	}
}
