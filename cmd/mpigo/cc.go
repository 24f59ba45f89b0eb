package main

// mpigo cc and mpigo c++: compiler wrappers for C and C++ programs on the
// MPI-5.0 standard ABI (docs/abi.md), in the manner of mpicc_abi. mpigo
// stays free of cgo: it builds libmpi_abi.so.1 by running `go build` and
// compiles by running the C compiler.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/mpigo/mpi/internal/transport/ofi"
	"github.com/mpigo/mpi/internal/transport/ucx"
)

const modulePath = "github.com/mpigo/mpi"

// ccCmd runs the C (lang "cc") or C++ ("c++") compiler on args with the
// flags that find mpi.h and link libmpi_abi.so.1, building the library
// first if its cached copy is missing or its sources changed. -show
// prints the command instead of running it.
func ccCmd(lang string, args []string, stdout, stderr io.Writer) int {
	show := false
	var user []string
	for _, a := range args {
		switch a {
		case "-show", "--show", "-showme", "--showme":
			show = true
		default:
			user = append(user, a)
		}
	}
	if len(user) == 0 && !show {
		fmt.Fprintf(stderr, "usage: mpigo %s [-show] [compiler flags and files]\n"+
			"compiles and links a program for the MPI-5.0 standard ABI with mpigo's libmpi_abi.so.1 (docs/abi.md)\n", lang)
		return 2
	}
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintf(stderr, "mpigo %s: %v\n", lang, err)
		return 1
	}
	tags, err := abiTags()
	if err != nil {
		fmt.Fprintf(stderr, "mpigo %s: %v\n", lang, err)
		return 1
	}
	dir, err := abiCacheDir(root, tags)
	if err != nil {
		fmt.Fprintf(stderr, "mpigo %s: %v\n", lang, err)
		return 1
	}
	cmd := compilerCommand(lang, dir, user)
	if show {
		fmt.Fprintln(stdout, strings.Join(cmd, " "))
		return 0
	}
	if err := buildABI(root, dir, tags, stderr); err != nil {
		fmt.Fprintf(stderr, "mpigo %s: building libmpi_abi.so.1: %v\n", lang, err)
		return 1
	}
	c := exec.Command(cmd[0], cmd[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, stdout, stderr
	c.Env = append(os.Environ(), nestedEnv+"=1")
	if err := c.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		fmt.Fprintf(stderr, "mpigo %s: %v\n", lang, err)
		return 1
	}
	return 0
}

// compilerCommand is the compiler's command line: the compiler named by
// MPIGO_CC (MPIGO_CXX), CC (CXX), or cc (c++); the user's arguments; and
// the include and, unless only compiling (-c, -E, -S), link flags.
func compilerCommand(lang, dir string, user []string) []string {
	cmd := append(strings.Fields(compilerFor(lang)), "-I"+filepath.Join(dir, "include"))
	cmd = append(cmd, user...)
	link := true
	for _, a := range user {
		if a == "-c" || a == "-E" || a == "-S" || a == "-M" || a == "-MM" {
			link = false
		}
	}
	if link {
		lib := filepath.Join(dir, "lib")
		cmd = append(cmd, "-L"+lib, "-Wl,-rpath,"+lib, "-lmpi_abi")
	}
	return cmd
}

// compilerFor is the compiler mpigo cc (lang "cc") or mpigo c++ runs:
// MPIGO_CC (MPIGO_CXX), else CC (CXX), else cc (c++), passing over a
// setting that leads back to mpigo.
func compilerFor(lang string) string {
	cc := "cc"
	vars := []string{"MPIGO_CC", "CC"}
	if lang == "c++" {
		cc, vars = "c++", []string{"MPIGO_CXX", "CXX"}
	}
	for _, v := range vars {
		s := os.Getenv(v)
		if s == "" || callsMpigo(s) {
			continue
		}
		if v == vars[1] && os.Getenv(nestedEnv) != "" {
			// We are the compiler that an outer mpigo cc ran: $CC
			// names a wrapper that leads back to us.
			continue
		}
		return s
	}
	return cc
}

// nestedEnv is set in the environment of the compiler mpigo cc runs, so
// that an mpigo cc started under it (CC naming a script that calls mpigo
// cc) ignores CC instead of running the script again, for ever.
const nestedEnv = "MPIGO_CC_NESTED"

// callsMpigo reports whether the compiler command cc starts mpigo itself:
// builds configured with CC="mpigo cc" export CC, and mpigo cc would
// otherwise run itself as its own compiler, without end.
func callsMpigo(cc string) bool {
	f := strings.Fields(cc)
	if len(f) == 0 {
		return false
	}
	base := strings.TrimSuffix(filepath.Base(f[0]), ".exe")
	if base == "mpigo" {
		return true
	}
	self, err := os.Executable()
	if err != nil {
		return false
	}
	p, err := exec.LookPath(f[0])
	if err != nil {
		return false
	}
	a, err1 := filepath.EvalSymlinks(p)
	b, err2 := filepath.EvalSymlinks(self)
	return err1 == nil && err2 == nil && a == b
}

// moduleRoot finds the source of module github.com/mpigo/mpi: MPIGO_ROOT;
// the module the current directory belongs to or requires; or, for an
// installed mpigo, the module cache's copy of mpigo's own version or the
// checkout it was built from.
func moduleRoot() (string, error) {
	if r := os.Getenv("MPIGO_ROOT"); r != "" {
		return r, nil
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", modulePath).Output()
	if d := strings.TrimSpace(string(out)); err == nil && d != "" {
		return d, nil
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Path == modulePath && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		out, err := exec.Command("go", "mod", "download", "-json", modulePath+"@"+bi.Main.Version).Output()
		if err == nil {
			var m struct{ Dir string }
			if json.Unmarshal(out, &m) == nil && m.Dir != "" {
				return m.Dir, nil
			}
		}
	}
	// An mpigo built from a checkout (go build, go install without
	// -trimpath) knows where its source was.
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		d := filepath.Dir(filepath.Dir(filepath.Dir(file)))
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && bytes.HasPrefix(b, []byte("module "+modulePath+"\n")) {
			return d, nil
		}
	}
	return "", fmt.Errorf("cannot find the source of %s (needed to build libmpi_abi.so.1): run mpigo inside a module that requires it, or set MPIGO_ROOT to its directory", modulePath)
}

// abiTags are the build tags libmpi_abi.so.1 is built with: those of the
// fabric transports built into this mpigo (mpigo_ucx, mpigo_ofi), so that
// a C program reaches other nodes by the road a Go program built like
// mpigo takes (docs/fabric.md), or MPIGO_ABI_TAGS when it is set (a
// comma-separated list; empty for none).
func abiTags() ([]string, error) {
	if v, ok := os.LookupEnv("MPIGO_ABI_TAGS"); ok {
		var tags []string
		for _, tag := range strings.Split(v, ",") {
			tag = strings.TrimSpace(tag)
			if tag == "" {
				continue
			}
			if strings.Trim(tag, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") != "" {
				return nil, fmt.Errorf("MPIGO_ABI_TAGS=%q: %q is not a build tag (letters, digits, _ and .)", v, tag)
			}
			tags = append(tags, tag)
		}
		return tags, nil
	}
	var tags []string
	if ucx.Built {
		tags = append(tags, "mpigo_ucx")
	}
	if ofi.Built {
		tags = append(tags, "mpigo_ofi")
	}
	return tags, nil
}

// abiCacheDir is the directory of the library built from root's sources
// with tags: MPIGO_CACHE (or the user's cache directory)/mpigo/abi/HASH,
// where HASH covers the tags and every Go, C and header file of the
// module but tests and test data, so that any change of the sources or
// the tags gives a new library.
func abiCacheDir(root string, tags []string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "tags\x00%s\x00", strings.Join(tags, ","))
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "docs") {
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(name)
		if (ext == ".go" && !strings.HasSuffix(name, "_test.go")) || ext == ".c" || ext == ".h" || ext == ".txt" || name == "go.mod" || name == "go.sum" {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(root, f)
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(b))
		h.Write(b)
	}
	if v, err := exec.Command("go", "env", "GOVERSION").Output(); err == nil {
		h.Write(bytes.TrimSpace(v))
	}
	base := os.Getenv("MPIGO_CACHE")
	if base == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("no cache directory (set MPIGO_CACHE): %v", err)
		}
		base = filepath.Join(c, "mpigo")
	}
	return filepath.Join(base, "abi", hex.EncodeToString(h.Sum(nil))[:16]), nil
}

// buildABI builds libmpi_abi.so.1 from root with tags into dir unless it
// is there: in a directory of its own first, renamed into place, so that
// concurrent builds and interrupted ones never leave a half-written
// library.
func buildABI(root, dir string, tags []string, stderr io.Writer) error {
	if _, err := os.Stat(filepath.Join(dir, "lib", "libmpi_abi.so.1")); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	lib, inc := filepath.Join(tmp, "lib"), filepath.Join(tmp, "include")
	for _, d := range []string{lib, inc} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	args := []string{"build", "-buildmode=c-shared", "-ldflags=-extldflags=-Wl,-soname,libmpi_abi.so.1"}
	with := ""
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
		with = " with -tags " + strings.Join(tags, ",")
	}
	args = append(args, "-o", filepath.Join(lib, "libmpi_abi.so.1"), "./abi/lib")
	fmt.Fprintf(stderr, "mpigo: building libmpi_abi.so.1%s (once per version of the sources) in %s\n", with, dir)
	c := exec.Command("go", args...)
	c.Dir = root
	// cgo compiles with $CC: under a build configured with CC="mpigo cc"
	// that was mpigo cc again, which built the library again, for ever.
	c.Env = append(os.Environ(), "CGO_ENABLED=1", "CC="+compilerFor("cc"), "CXX="+compilerFor("c++"), nestedEnv+"=1")
	c.Stdout, c.Stderr = stderr, stderr
	if err := c.Run(); err != nil {
		return err
	}
	// go build writes the Go view of the exports as a header beside the
	// library; C programs use abi/include/mpi.h.
	os.Remove(filepath.Join(lib, "libmpi_abi.so.h"))
	if err := os.Symlink("libmpi_abi.so.1", filepath.Join(lib, "libmpi_abi.so")); err != nil {
		return err
	}
	h, err := os.ReadFile(filepath.Join(root, "abi", "include", "mpi.h"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(inc, "mpi.h"), h, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, "lib", "libmpi_abi.so.1")); serr == nil {
			return nil // another build got there first
		}
		return err
	}
	return nil
}
