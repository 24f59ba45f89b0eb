package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mpigo/mpi/internal/transport/ofi"
	"github.com/mpigo/mpi/internal/transport/ucx"
)

// abiTags: the fabric tags of this build by default; MPIGO_ABI_TAGS
// replaces them, empty for none, and refuses what is not a tag; the
// library's cache directory differs with the tags.
func TestABITags(t *testing.T) {
	var built []string
	if ucx.Built {
		built = append(built, "mpigo_ucx")
	}
	if ofi.Built {
		built = append(built, "mpigo_ofi")
	}
	for _, tc := range []struct {
		env  *string
		want []string
		bad  bool
	}{
		{nil, built, false},
		{ptr(""), nil, false},
		{ptr("mpigo_ucx"), []string{"mpigo_ucx"}, false},
		{ptr(" mpigo_ucx, mpigo_ofi ,"), []string{"mpigo_ucx", "mpigo_ofi"}, false},
		{ptr("mpigo_ucx -o /tmp/x"), nil, true},
		{ptr("a;b"), nil, true},
	} {
		name := "unset"
		if tc.env != nil {
			name = fmt.Sprintf("%q", *tc.env)
			t.Setenv("MPIGO_ABI_TAGS", *tc.env)
		} else {
			t.Setenv("MPIGO_ABI_TAGS", "")
			os.Unsetenv("MPIGO_ABI_TAGS")
		}
		got, err := abiTags()
		switch {
		case tc.bad && err == nil:
			t.Errorf("MPIGO_ABI_TAGS=%s: tags %q, want an error", name, got)
		case !tc.bad && err != nil:
			t.Errorf("MPIGO_ABI_TAGS=%s: %v", name, err)
		case !tc.bad && !slices.Equal(got, tc.want):
			t.Errorf("MPIGO_ABI_TAGS=%s: tags %q, want %q", name, got, tc.want)
		}
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("MPIGO_CACHE", t.TempDir())
	a, err := abiCacheDir(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := abiCacheDir(root, []string{"mpigo_ucx"})
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Errorf("the library with and without mpigo_ucx share the cache directory %s", a)
	}
}

func ptr(s string) *string { return &s }

// A C program built by mpigo cc in a build of mpigo with a fabric
// transport reaches its peers over that fabric: the library was built
// with the same tags. Run with -tags mpigo_ucx or mpigo_ofi.
func TestABIFabric(t *testing.T) {
	if !ucx.Built && !ofi.Built {
		t.Skip("this build has no fabric transport: go test -tags mpigo_ucx (or mpigo_ofi) runs this")
	}
	needCC(t)
	tmp := t.TempDir()
	t.Setenv("MPIGO_CACHE", filepath.Join(tmp, "cache"))
	os.Unsetenv("MPIGO_ABI_TAGS")
	prog := filepath.Join(tmp, "p2p")
	var out strings.Builder
	if code := run([]string{"cc", "-o", prog, filepath.Join("testdata", "abi", "p2p.c")}, &out, &out); code != 0 {
		t.Fatalf("mpigo cc p2p.c: exit %d\n%s", code, out.String())
	}
	fab, want := "ucx", "rank 0 on node"
	if ucx.Built {
		t.Setenv("UCX_TLS", "tcp")
	} else {
		fab = "ofi"
		t.Setenv("FI_PROVIDER", "tcp;ofi_rxm")
	}
	t.Setenv("MPIGO_FABRIC_LOCAL", "1")
	var stdout, stderr strings.Builder
	code := run([]string{"run", "--verbose", "--fabric", fab, "--timeout", "60s", "-n", "2", prog}, &stdout, &stderr)
	if code != 0 || !strings.Contains(stdout.String(), "p2p OK") {
		t.Fatalf("exit %d, want 0 and p2p OK\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	route := "reaches self 0, " + fab + " 1"
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, want) && strings.HasSuffix(line, route) {
			return
		}
	}
	t.Errorf("no line %q ... %q from rank 0\nstderr:\n%s", want, route, stderr.String())
}
