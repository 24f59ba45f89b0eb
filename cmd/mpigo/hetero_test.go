package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Mixed-architecture jobs (docs/hetero.md): ranks built for this machine
// and for linux/s390x (big-endian, run under qemu-user) exchange every
// kind of value and run the collectives, and must print what a job of
// one architecture prints.

var (
	heteroOnce sync.Once
	heteroDir  string
	heteroErr  error
)

// heteroProgs builds heteroprog for this machine (native), for s390x
// (s390x), and for this machine announcing a representation no mpigo
// knows (bogus), once.
func heteroProgs(t *testing.T) (dir, qemu string) {
	t.Helper()
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64") {
		t.Skipf("the mixed-architecture test runs on linux/amd64 or linux/arm64 hosts, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	qemu = needLauncher(t, "qemu-s390x-static", "apt-get install qemu-user-static")
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	heteroOnce.Do(func() {
		heteroDir, heteroErr = os.MkdirTemp("", "mpigo-hetero-test-")
		if heteroErr != nil {
			return
		}
		for _, b := range []struct{ name, arch, ldflags string }{
			{"native", runtime.GOARCH, ""},
			{"s390x", "s390x", ""},
			{"bogus", runtime.GOARCH, "-X github.com/mpigo/mpi.announceOverride=zz99"},
		} {
			cmd := exec.Command("go", "build", "-ldflags", b.ldflags, "-o", filepath.Join(heteroDir, b.name), "./testdata/heteroprog")
			cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+b.arch, "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				heteroErr = &buildError{"./testdata/heteroprog for " + b.arch, string(out)}
				return
			}
		}
	})
	if heteroErr != nil {
		t.Fatal(heteroErr)
	}
	return heteroDir, qemu
}

func TestHeteroJob(t *testing.T) {
	dir, qemu := heteroProgs(t)
	mpigo := filepath.Join(testProgs(t), "mpigo")
	native, s390x := filepath.Join(dir, "native"), filepath.Join(dir, "s390x")

	run := func(t *testing.T, args ...string) string {
		t.Helper()
		out, errs, code := runLaunched(t, exec.Command(mpigo, append([]string{"run"}, args...)...), 3*time.Minute)
		if code != 0 {
			t.Fatalf("mpigo run %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errs)
		}
		if !strings.Contains(out, "2: low Allreduce") || !strings.Contains(out, "2: window Get") {
			t.Fatalf("mpigo run %s: incomplete output:\n%s\nstderr:\n%s", strings.Join(args, " "), out, errs)
		}
		return out
	}
	want := run(t, "-n", "3", native)
	for _, tc := range []struct {
		name string
		args []string
	}{
		// The big-endian rank in the middle of the ring, and as rank 0
		// (root of the final Gather) with a native one between two of it.
		// The launcher sees two architectures and picks tcp by itself.
		{"native-s390x-native", []string{"-n", "1", native, ":", "-n", "1", qemu, s390x, ":", "-n", "1", native}},
		{"s390x-native-s390x", []string{"-n", "1", qemu, s390x, ":", "-n", "1", native, ":", "-n", "1", qemu, s390x}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := run(t, tc.args...); got != want {
				t.Errorf("mixed job printed:\n%s\nthe single-architecture job:\n%s", got, want)
			}
		})
	}
	// Processes of both architectures forced onto shared memory: refused
	// with an error that says why, and the job ends.
	t.Run("shm-refused", func(t *testing.T) {
		out, errs, code := runLaunched(t, exec.Command(mpigo, "run", "-transport", "shm", "-n", "1", native, ":", "-n", "1", qemu, s390x), time.Minute)
		if code == 0 || code == -1 {
			t.Fatalf("exit %d, want a failure\nstdout:\n%s\nstderr:\n%s", code, out, errs)
		}
		if !strings.Contains(errs, "cannot share memory") || !strings.Contains(errs, "MPIGO_TRANSPORT=tcp") {
			t.Errorf("the error does not say why:\n%s", errs)
		}
	})
}

// A peer announcing a representation this mpigo does not know ends the
// job with an error naming it, not a hang.
func TestHeteroUnknownRepresentation(t *testing.T) {
	dir, _ := heteroProgs(t)
	mpigo := filepath.Join(testProgs(t), "mpigo")
	out, errs, code := runLaunched(t, exec.Command(mpigo, "run", "-n", "2", filepath.Join(dir, "native"), ":", "-n", "1", filepath.Join(dir, "bogus")), time.Minute)
	if code == 0 || code == -1 {
		t.Fatalf("exit %d, want a failure\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if !strings.Contains(errs, `rank 2 announced the data representation "zz99"`) {
		t.Errorf("the error does not name the peer and what it announced:\n%s", errs)
	}
}
