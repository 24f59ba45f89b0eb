package main

import (
	"strings"
	"testing"
)

// TestRunRMA runs one-sided communication between real processes: over
// shared memory (NewWindow segments mapped by every process, WindowOf by
// messages) and over tcp (everything by messages), with a target that
// computes without calling MPI while it is written.
func TestRunRMA(t *testing.T) {
	for _, tr := range []string{"shm", "tcp"} {
		t.Run(tr, func(t *testing.T) {
			out, errs, code := runJob(t, "-n", "3", "-transport", tr, "./testdata/rmaprog")
			if code != 0 || strings.TrimSpace(out) != "rma ok 900" {
				t.Fatalf("exit %d, stdout %q, stderr %s", code, out, errs)
			}
		})
	}
}
