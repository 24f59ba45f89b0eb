//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunOutputHeldByOrphan: a process that outlives its launch agent
// (the agent exited or died of the launcher's SIGTERM, the process
// ignores SIGTERM or is stuck in a C library) and keeps the job's output
// open must not keep mpigo run waiting: once every launched process has
// exited, the launcher waits killGrace for the output, kills what is left
// of each process group, and returns. The agent here starts the rank and,
// beside it, a process that ignores SIGTERM, sleeps for a minute and
// holds the output; before the fix mpigo run waited the minute (found
// with a rank stuck in libfabric's start, issue 46), both when the job
// succeeded and when a failing rank made the launcher stop the others.
func TestRunOutputHeldByOrphan(t *testing.T) {
	needSh(t)
	agent := filepath.Join(t.TempDir(), "agent")
	// The rank keeps the agent's standard input (the job's secret comes
	// that way), which a background command of sh would not.
	script := "#!/bin/sh\nshift\nexec 4<&0\nsh -c \"$*\" <&4 4<&- &\nrank=$!\n(trap '' TERM; exec sleep 60) 4<&- </dev/null &\nwait $rank\n"
	if err := os.WriteFile(agent, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// Rank 1 fails only once rank 0 has said its line (the file), so
	// that the launcher does not stop rank 0 before it runs (seen once
	// in CI under load).
	said := filepath.Join(t.TempDir(), "rank0-said")
	for _, tc := range []struct {
		name, prog string
		code       int
	}{
		{"success", `echo "rank $MPIGO_RANK done"`, 0},
		{"a rank fails", `echo "rank $MPIGO_RANK done"; if [ "$MPIGO_RANK" = 1 ]; then while [ ! -e ` + said + ` ]; do sleep 0.01; done; exit 3; fi; touch ` + said + `; sleep 30`, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			out, errs, code := runJob(t, "--launch-agent", agent, "--host", "localhost:2", "--timeout", "50s", "-n", "2", "sh", "-c", tc.prog)
			took := time.Since(start)
			if code != tc.code || strings.Count(out, " done") != 2 {
				t.Fatalf("exit %d, want %d, and both ranks' line:\n%s\n%s", code, tc.code, out, errs)
			}
			if took > 20*time.Second {
				t.Fatalf("mpigo run took %v: it waited for the process that held the output\n%s", took.Round(time.Millisecond), errs)
			}
			if !strings.Contains(errs, "output is still open after its processes exited") {
				t.Errorf("stderr does not say why it killed what was left:\n%s", errs)
			}
			t.Logf("returned after %v", took.Round(time.Millisecond))
		})
	}
}
