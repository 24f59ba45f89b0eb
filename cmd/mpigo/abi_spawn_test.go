package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuilder is a strings.Builder for the output of a launcher whose
// spawned jobs write to it too, each job under a lock of its own.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestABISpawn: a C program under mpigo run spawns copies of itself,
// built with mpigo cc, with MPI_Comm_spawn (3 children, arguments,
// every errcode MPI_SUCCESS), MPI_Comm_spawn_multiple (2 commands, info
// keys wdir, soft and path, MPI_APPNUM) and MPI_Comm_spawn from the last
// rank; parents and children exchange data, merge and disconnect
// (testdata/abi/spawn.c checks each). The spawned jobs' exit status does
// not reach mpigo run's, so every child's "spawn child OK" line is
// counted.
func TestABISpawn(t *testing.T) {
	_, bin := abiSetup(t)
	prog := filepath.Join(bin, "spawn")
	var out, errs lockedBuilder
	start := time.Now()
	code := run([]string{"run", "--timeout", "60s", "-n", "2", prog}, &out, &errs)
	t.Logf("3 spawns of 7 children in all, with their checks: %v", time.Since(start))
	o := out.String()
	if code != 0 || !strings.Contains(o, "spawn OK") || strings.Count(o, "spawn child OK") != 7 ||
		strings.Count(o, "app 0") != 5 || strings.Count(o, "app 1") != 2 {
		t.Fatalf("exit %d, want 0, \"spawn OK\" and 7 children OK (5 of app 0, 2 of app 1)\nstdout:\n%s\nstderr:\n%s", code, o, errs.String())
	}
}

// TestABISpawnRefused: a singleton cannot start programs: MPI_Comm_spawn
// fails at once with MPI_ERR_SPAWN.
func TestABISpawnRefused(t *testing.T) {
	_, bin := abiSetup(t)
	out, err := exec.Command(filepath.Join(bin, "spawn"), "nospawn").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "spawn OK (cannot spawn)") {
		t.Fatalf("%v\n%s", err, out)
	}
}

// TestABIAppNum: in an MPMD job of mpigo run, MPI_APPNUM is the index of
// the rank's program (it was 0 for every rank: mpigo run told the ranks
// of a spawned job their command but not those of its own groups).
func TestABIAppNum(t *testing.T) {
	_, bin := abiSetup(t)
	prog := filepath.Join(bin, "spawn")
	var out, errs lockedBuilder
	code := run([]string{"run", "--timeout", "60s", "-n", "2", prog, "appnum", ":", "-n", "1", prog, "appnum"}, &out, &errs)
	for _, want := range []string{"rank 0 appnum 0", "rank 1 appnum 0", "rank 2 appnum 1"} {
		if code != 0 || !strings.Contains(out.String(), want) {
			t.Fatalf("exit %d, want 0 and %q\nstdout:\n%s\nstderr:\n%s", code, want, out.String(), errs.String())
		}
	}
}
