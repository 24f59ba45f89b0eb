//go:build linux && mpigo_ofi

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A rank killed in a job over libfabric's shm provider leaves nothing in
// /dev/shm: its endpoint's file is named after the job
// (mpigo-<job>-<rank>-ofi, not the provider's own name after the process
// ID, which a later process with that ID could not take), and mpigo run
// removes the job's files when the job ends.
func TestRunKillFabricShm(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	bin := filepath.Join(t.TempDir(), "ring")
	if out, err := exec.Command("go", "build", "-tags", "mpigo_ofi", "-o", bin, "./testdata/ring").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	t.Setenv("MPIGO_FABRIC", "ofi")
	t.Setenv("MPIGO_FABRIC_LOCAL", "1")
	t.Setenv("FI_PROVIDER", "shm")
	dir := t.TempDir()
	const n = 2
	type result struct {
		errs string
		code int
	}
	done := make(chan result, 1)
	go func() {
		_, errs, code := runJob(t, "--timeout", "60s", "--verbose", "-n", strconv.Itoa(n), bin, "-pid", dir)
		done <- result{errs, code}
	}()
	pids := make([]int, n)
	var job string
	deadline := time.Now().Add(30 * time.Second)
	for r := 0; r < n; r++ {
		for pids[r] == 0 {
			select {
			case res := <-done:
				t.Fatalf("the job ended before it ran: exit %d\n%s", res.code, res.errs)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatal("ranks did not start")
			}
			b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("pid.%d", r)))
			pids[r], _ = strconv.Atoi(string(b))
			time.Sleep(5 * time.Millisecond)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "job")); len(b) > 0 {
		job = string(b)
	} else {
		t.Fatal("the job's id was not written")
	}
	for r := 0; r < n; r++ {
		name := fmt.Sprintf("/dev/shm/mpigo-%s-%d-ofi", job, r)
		if _, err := os.Stat(name); err != nil {
			t.Errorf("rank %d's shm endpoint: %v", r, err)
		}
	}
	killPid(pids[1])
	var res result
	select {
	case res = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the job did not end after rank 1 was killed")
	}
	if res.code != 128+9 || !strings.Contains(res.errs, "libfabric provider shm") {
		t.Errorf("exit %d, stderr %q", res.code, res.errs)
	}
	if pidExists(pids[0]) {
		time.Sleep(100 * time.Millisecond)
		if pidExists(pids[0]) {
			killPid(pids[0])
			t.Error("rank 0 survived")
		}
	}
	if left, _ := filepath.Glob("/dev/shm/mpigo-" + job + "-*"); len(left) > 0 {
		t.Errorf("the job left %v", left)
	}
}
