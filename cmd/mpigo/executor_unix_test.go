//go:build unix

package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunSweep runs examples/sweep (the executor, issue 45) as processes:
// 1,024 tasks over 4 workers come back complete and in order, over shared
// memory and tcp; under --ft, a worker killed with SIGKILL in the middle
// of its third task loses nothing: the output is the same, and the job's
// status reports the dead rank.
func TestRunSweep(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "sweep")
	if out, err := exec.Command("go", "build", "-o", bin, "../../examples/sweep").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var want string
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"shm", []string{"--transport", "shm", "-n", "5", bin}, 0},
		{"tcp", []string{"--transport", "tcp", "-n", "5", bin}, 0},
		{"ft-kill", []string{"--ft", "--timeout", "60s", "-n", "5", bin, "-kill", "2"}, 137},
		{"ft-kill-tcp", []string{"--ft", "--timeout", "60s", "--transport", "tcp", "-n", "5", bin, "-kill", "3"}, 137},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runJob(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errs)
			}
			if !strings.HasPrefix(out, "1024 results, in order: true\n") {
				t.Fatalf("stdout:\n%s\nstderr:\n%s", out, errs)
			}
			if tc.code != 0 && !strings.Contains(errs, "was killed by signal 9") {
				t.Errorf("stderr does not name the killed worker:\n%s", errs)
			}
			if want == "" {
				want = out
			} else if out != want {
				t.Fatalf("stdout:\n%s\nwant (as without a failure):\n%s", out, want)
			}
		})
	}
}
