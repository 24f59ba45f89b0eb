//go:build linux

package main

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// chaosRounds is how many jobs TestChaosKill kills: MPIGO_TEST_CHAOS if
// set (the 200-run figure is taken with it), else a count that
// fits CI.
func chaosRounds(t *testing.T) int {
	if s := os.Getenv("MPIGO_TEST_CHAOS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("MPIGO_TEST_CHAOS=%q: want a positive count", s)
		}
		return n
	}
	if longTests() {
		return 30
	}
	return 10
}

// rankPids lists the ranks of the job marked with mark: the processes
// whose environment holds both mark and a rank number.
func rankPids(mark string) []int {
	var pids []int
	for _, pid := range markedProcs(mark) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err == nil && bytes.Contains(b, []byte("\x00MPIGO_RANK=")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Kill -9 at random moments — during start-up, in the running job and
// during its shutdown — of a random rank or of the launcher itself, over
// shm and tcp: every job ends within a bounded time, names the killed
// rank when it fails, leaves no process running and nothing in its
// temporary or shared-memory folders.
func TestChaosKill(t *testing.T) {
	dir := testProgs(t)
	prog := filepath.Join(t.TempDir(), "ring")
	if out, err := exec.Command("go", "build", "-o", prog, "./testdata/ring").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	rounds := chaosRounds(t)
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	tally := map[string]int{}
	for round := 0; round < rounds; round++ {
		tmp, shmDir := t.TempDir(), t.TempDir()
		transport := []string{"shm", "tcp"}[round%2]
		killLauncher := rng.Intn(3) == 0
		delay := time.Duration(rng.Intn(2500)) * time.Millisecond
		mark := fmt.Sprintf("MPIGO_TEST_MARK=chaos-%d-%d", os.Getpid(), round)
		c := startupCmd(t, dir, tmp, shmDir, "--timeout", "60s", "--transport", transport, "-n", "4", prog, "400")
		c.Env = append(c.Env, mark)
		var errb syncBuf
		c.Stderr = &errb
		ownGroup(c)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { c.Wait(); close(done) }()
		what := fmt.Sprintf("round %d (%s, kill after %v", round, transport, delay)
		select {
		case <-done:
			tally["finished first"]++
			what += ": the job had finished)"
		case <-time.After(delay):
			if killLauncher {
				c.Process.Kill()
				tally["launcher killed"]++
				what += " of the launcher)"
				break
			}
			pids := rankPids(mark)
			if len(pids) == 0 {
				tally["no rank yet or left"]++
				what += ": no rank to kill)"
				break
			}
			victim := pids[rng.Intn(len(pids))]
			if syscall.Kill(victim, syscall.SIGKILL) == nil {
				tally["rank killed"]++
				what += fmt.Sprintf(" of pid %d)", victim)
			}
		}
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			stopTree(c, nil, time.Second)
			t.Fatalf("%s: the launcher did not end within 30 s:\n%s", what, errb.String())
		}
		if code := c.ProcessState.ExitCode(); code != 0 && code != -1 && !strings.Contains(errb.String(), "rank ") {
			t.Errorf("%s: exit %d without naming a rank:\n%s", what, code, errb.String())
		}
		if !waitGone(t, mark, 15*time.Second) {
			t.Fatalf("%s: processes survived", what)
		}
		if left := leftovers(tmp, shmDir); len(left) > 0 {
			t.Fatalf("%s: left behind %v\n%s", what, left, errb.String())
		}
	}
	t.Logf("%d rounds, 0 hangs, nothing left: %v", rounds, tally)
}
