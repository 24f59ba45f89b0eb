package main

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mpigo/mpi/internal/transport/shm"
)

// startupCmd is mpigo run of the test program earlydie, with the job's
// temporary files (the launcher's run folder, shared-memory inboxes) in
// folders of the test's own, so that what a job leaves behind can be
// seen.
func startupCmd(t *testing.T, dir, tmp, shmDir string, args ...string) *exec.Cmd {
	c := exec.Command(filepath.Join(dir, "mpigo"), append([]string{"run"}, args...)...)
	c.Env = append(os.Environ(), "TMPDIR="+tmp, "MPIGO_SHM_DIR="+shmDir)
	return c
}

// leftovers lists what is in the folders a job was given.
func leftovers(dirs ...string) []string {
	var left []string
	for _, d := range dirs {
		es, _ := os.ReadDir(d)
		for _, e := range es {
			left = append(left, filepath.Join(d, e.Name()))
		}
	}
	return left
}

// A rank that dies during start-up, while the others wait for it at the
// start-up fence, ends the job promptly with that rank named: the launcher
// used to stop the others and then wait forever for its store to close.
// Without a delay the rank dies at any moment of the others' start-up.
func TestStartupRankDies(t *testing.T) {
	dir := testProgs(t)
	type tc struct {
		n         int
		transport string
		mode      string
		delay     string
		code      int
	}
	cases := []tc{
		{4, "shm", "exit", "0.5s", 3},
		{4, "tcp", "exit", "0.5s", 3},
		{4, "shm", "kill", "0.3s", 128 + 9},
		{4, "tcp", "kill", "0.2s", 128 + 9},
	}
	races := 8
	if longTests() {
		races = 40
	}
	for i := 0; i < races; i++ {
		n := []int{4, 8}[i%2]
		cases = append(cases, tc{n, []string{"shm", "tcp"}[i/2%2], []string{"exit", "exitin"}[i/4%2], fmt.Sprintf("%dms", i*7%60), 3})
	}
	for _, c := range cases {
		tmp, shmDir := t.TempDir(), t.TempDir()
		cmd := startupCmd(t, dir, tmp, shmDir, "--timeout", "60s", "--transport", c.transport, "-n", fmt.Sprint(c.n), filepath.Join(dir, "earlydie"), c.mode, c.delay)
		start := time.Now()
		_, errs, code := runLaunched(t, cmd, 30*time.Second)
		if code != c.code || !strings.Contains(errs, "rank 1 ") {
			t.Errorf("%+v: exit %d, want %d and rank 1 named:\n%s", c, code, c.code, errs)
		}
		if d := time.Since(start); d > 15*time.Second {
			t.Errorf("%+v: took %v", c, d)
		}
		if left := leftovers(tmp, shmDir); len(left) > 0 {
			t.Errorf("%+v: left behind %v", c, left)
		}
		if t.Failed() {
			return
		}
	}
}

// --timeout expiring during start-up, and SIGINT during start-up, end the
// job (they used to hang the launcher as a rank's death did).
func TestStartupTimeoutAndSignal(t *testing.T) {
	dir := testProgs(t)
	for _, transport := range []string{"shm", "tcp"} {
		tmp, shmDir := t.TempDir(), t.TempDir()
		cmd := startupCmd(t, dir, tmp, shmDir, "--timeout", "1s", "--transport", transport, "-n", "4", filepath.Join(dir, "earlydie"), "hang")
		_, errs, code := runLaunched(t, cmd, 30*time.Second)
		if code != 124 || !strings.Contains(errs, "timeout after 1s") {
			t.Errorf("%s: timeout during start-up: exit %d:\n%s", transport, code, errs)
		}
		if left := leftovers(tmp, shmDir); len(left) > 0 {
			t.Errorf("%s: left behind %v", transport, left)
		}

		cmd = startupCmd(t, dir, tmp, shmDir, "--transport", transport, "-n", "4", filepath.Join(dir, "earlydie"), "hang")
		cmd.Stdout, cmd.Stderr = nil, nil
		var errb strings.Builder
		cmd.Stderr = &errb
		ownGroup(cmd)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		time.Sleep(700 * time.Millisecond)
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
			errs, code = errb.String(), cmd.ProcessState.ExitCode()
		case <-time.After(30 * time.Second):
			stopTree(cmd, done, 5*time.Second)
			<-done
			t.Fatalf("%s: SIGINT during start-up: the launcher hung:\n%s", transport, errb.String())
		}
		if code != 128+int(syscall.SIGINT) || !strings.Contains(errs, "got interrupt") {
			t.Errorf("%s: SIGINT during start-up: exit %d:\n%s", transport, code, errs)
		}
		if left := leftovers(tmp, shmDir); len(left) > 0 {
			t.Errorf("%s: left behind %v", transport, left)
		}
	}
}

// A rank's output line without end is passed on in bounded pieces: the
// launcher never holds more than maxOutLine bytes of it.
func TestStartupOutputLinesBounded(t *testing.T) {
	var mu sync.Mutex
	var out strings.Builder
	var wg sync.WaitGroup
	wg.Add(1)
	huge := strings.Repeat("x", 5*maxOutLine+17)
	lineWriter{&mu, &out, nil}.copyFrom(strings.NewReader("short\n"+huge+"\nend"), "[3] ", nil, true, &wg)
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 8 || lines[0] != "[3] short" || lines[7] != "[3] end" {
		t.Fatalf("%d lines: first %.20q, last %.20q", len(lines), lines[0], lines[len(lines)-1])
	}
	total := 0
	for _, l := range lines[1:7] {
		if !strings.HasPrefix(l, "[3] x") || len(l) > len("[3] ")+maxOutLine {
			t.Errorf("piece of %d bytes", len(l))
		}
		total += len(l) - len("[3] ")
	}
	if total != len(huge) {
		t.Errorf("%d bytes passed on, want %d", total, len(huge))
	}
}

// markedProcs lists the processes whose environment holds mark.
func markedProcs(mark string) []int {
	var pids []int
	ds, _ := os.ReadDir("/proc")
	for _, d := range ds {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/environ")
		if err == nil && bytes.Contains(b, []byte(mark)) {
			if st, err := os.ReadFile("/proc/" + d.Name() + "/stat"); err == nil {
				if i := bytes.LastIndexByte(st, ')'); i > 0 && i+2 < len(st) && st[i+2] == 'Z' {
					continue // a zombie about to be reaped
				}
			}
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitGone waits until no process holds mark, or fails the test.
func waitGone(t *testing.T, mark string, d time.Duration) bool {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		left := markedProcs(mark)
		if len(left) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			for _, pid := range left {
				killPid(pid)
			}
			t.Errorf("processes %v survived for %v", left, d)
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The launcher killed (kill -9) at random moments of start-up and of the
// job: no process of the job survives, and nothing is left in the
// shared-memory folder or in the temporary folder, even though every rank
// dies with the launcher (the parent-death signal) at whatever point of
// start-up it had reached.
func TestStartupLauncherKilled(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs Linux's parent-death signal and /proc")
	}
	dir := testProgs(t)
	rounds := 20
	if longTests() {
		rounds = 60
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	var early, late int
	for round := 0; round < rounds; round++ {
		tmp, shmDir := t.TempDir(), t.TempDir()
		mark := fmt.Sprintf("MPIGO_TEST_MARK=kill-%d-%d", os.Getpid(), round)
		transport := []string{"shm", "tcp"}[round%2]
		c := startupCmd(t, dir, tmp, shmDir, "--transport", transport, "-n", "4", filepath.Join(dir, "earlydie"), "none", "0.5s")
		c.Env = append(c.Env, mark)
		var errb strings.Builder
		c.Stderr = &errb
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		delay := time.Duration(rng.Intn(700)) * time.Millisecond
		time.Sleep(delay)
		if files, _ := os.ReadDir(shmDir); len(files) > 0 {
			early++ // killed while inboxes were linked
		} else {
			late++
		}
		c.Process.Kill()
		c.Wait()
		if !waitGone(t, mark, 15*time.Second) {
			return
		}
		if left := leftovers(tmp, shmDir); len(left) > 0 {
			t.Fatalf("round %d (%s, killed after %v): left behind %v\n%s", round, transport, delay, left, errb.String())
		}
	}
	t.Logf("%d rounds: %d killed while inboxes existed, %d at other moments", rounds, early, late)

	// Killed while it builds the program: the run folder stays (with the
	// build's output) until the next launcher removes it.
	tmp, shmDir := t.TempDir(), t.TempDir()
	mark := fmt.Sprintf("MPIGO_TEST_MARK=build-%d", os.Getpid())
	c := startupCmd(t, dir, tmp, shmDir, "-n", "2", "./testdata/earlydie", "none")
	c.Env = append(c.Env, mark)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100 && len(leftovers(tmp)) == 0; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	c.Process.Kill()
	c.Wait()
	waitGone(t, mark, 60*time.Second)
	c = startupCmd(t, dir, tmp, shmDir, "-n", "1", "true")
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if left := leftovers(tmp, shmDir); len(left) > 0 {
		t.Errorf("the next launcher did not remove %v", left)
	}
}

// The job's secret is on no command line and in no environment: not on
// the launch agent's (which ps shows to everyone on both machines), not in
// a rank's (which /proc shows while it runs), locally or through an agent.
func TestStartupSecretHidden(t *testing.T) {
	needSh(t)
	dir := testProgs(t)
	tmp := t.TempDir()
	agent := filepath.Join(tmp, "agent.sh")
	calls := filepath.Join(tmp, "calls")
	if err := os.WriteFile(agent, []byte("#!/bin/sh\necho \"$*\" >> "+calls+"\nhost=$1; shift\nexec sh -c \"$*\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{nil, {"--launch-agent", agent, "--host", "localhost:1,127.0.0.1:2"}} {
		c := exec.Command(filepath.Join(dir, "mpigo"), append(append([]string{"run", "--timeout", "60s"}, args...), "-n", "3", filepath.Join(dir, "earlydie"), "env")...)
		out, errs, code := runLaunched(t, c, 60*time.Second)
		if code != 0 || strings.Count(out, "environ read true, has MPIGO_SECRET= false, has MPIGO_SECRET_FD now false") != 3 {
			t.Errorf("%v: exit %d:\n%s\n%s", args, code, out, errs)
		}
	}
	b, _ := os.ReadFile(calls)
	if strings.Count(string(b), "MPIGO_SECRET_FD=3") != 3 || strings.Contains(string(b), "MPIGO_SECRET=") {
		t.Errorf("agent calls:\n%s", b)
	}
}

// Ranks that ignore SIGINT and SIGTERM (as programs started with & from a
// script ignore SIGINT) are killed after the grace time, and the launcher
// says so, rather than report them as failed ranks.
func TestStartupRanksIgnoreSignals(t *testing.T) {
	needSh(t)
	dir := testProgs(t)
	c := exec.Command(filepath.Join(dir, "mpigo"), "run", "-n", "2", "sh", "-c", `trap "" INT TERM; echo up; sleep 20`)
	var out, errb syncBuf
	c.Stdout, c.Stderr = &out, &errb
	ownGroup(c)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	for i := 0; i < 200 && strings.Count(out.String(), "up") < 2; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	c.Process.Signal(os.Interrupt)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		stopTree(c, done, time.Second)
		<-done
		t.Fatalf("the launcher did not end: %s", errb.String())
	}
	errs := errb.String()
	if code := c.ProcessState.ExitCode(); code != 128+int(syscall.SIGINT) {
		t.Errorf("exit %d, want %d", code, 128+int(syscall.SIGINT))
	}
	if strings.Count(errs, "ignored SIGINT and was killed") != 2 || strings.Contains(errs, "killed by signal 9") || !strings.Contains(errs, "did not stop after SIGINT") {
		t.Errorf("stderr:\n%s", errs)
	}
}

// syncBuf is a buffer a test may read while a command writes it.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// MPIGO_SHM_DIR reaches the ranks of a launched job (package mpi's config
// reads it and gives it to the shm transport): a folder that does not
// exist stops the job with an error naming it, and in one that exists the
// job runs and leaves nothing behind.
func TestStartupShmDir(t *testing.T) {
	if ok, why := shm.Available(); !ok {
		t.Skip(why)
	}
	dir := testProgs(t)
	tmp := t.TempDir()
	missing := filepath.Join(t.TempDir(), "no-such-folder")
	c := startupCmd(t, dir, tmp, missing, "--timeout", "60s", "--transport", "shm", "-n", "2", filepath.Join(dir, "earlydie"), "none")
	out, errs, code := runLaunched(t, c, 90*time.Second)
	if code == 0 || !strings.Contains(errs, missing) {
		t.Errorf("MPIGO_SHM_DIR=%s: exit %d, want a failure naming the folder:\n%s\n%s", missing, code, out, errs)
	}
	shmDir := t.TempDir()
	c = startupCmd(t, dir, tmp, shmDir, "--timeout", "60s", "--transport", "shm", "-n", "2", filepath.Join(dir, "earlydie"), "none")
	if out, errs, code := runLaunched(t, c, 90*time.Second); code != 0 {
		t.Errorf("MPIGO_SHM_DIR=%s: exit %d:\n%s\n%s", shmDir, code, out, errs)
	}
	if left := leftovers(shmDir); len(left) > 0 {
		t.Errorf("left in MPIGO_SHM_DIR: %v", left)
	}
}

// TestHoldBack checks that a survivor's report of a failed peer waits for
// the launcher's line on the cause, that other lines pass at once, and
// that held lines come out by themselves when no cause is named.
func TestHoldBack(t *testing.T) {
	var mu sync.Mutex
	var out bytes.Buffer
	h := &holdBack{mu: &mu, w: &out, holdMax: 50 * time.Millisecond}
	lw := lineWriter{&mu, &out, h}
	var wg sync.WaitGroup
	wg.Add(1)
	lw.copyFrom(strings.NewReader("hello\nmpigo: rank 0: mpi: Recv: process failed: rank 2\n"), "", nil, true, &wg)
	mu.Lock()
	got := out.String()
	mu.Unlock()
	if got != "hello\n" {
		t.Fatalf("before the cause: %q", got)
	}
	mu.Lock()
	out.WriteString("mpigo run: rank 2 was killed\n")
	h.releaseLocked()
	mu.Unlock()
	if want := "hello\nmpigo run: rank 2 was killed\nmpigo: rank 0: mpi: Recv: process failed: rank 2\n"; out.String() != want {
		t.Fatalf("after the cause: %q, want %q", out.String(), want)
	}

	// No cause: the held line comes out after holdMax.
	out.Reset()
	h2 := &holdBack{mu: &mu, w: &out, holdMax: 20 * time.Millisecond}
	wg.Add(1)
	lineWriter{&mu, &out, h2}.copyFrom(strings.NewReader("mpigo: process failed\n"), "[1] ", nil, true, &wg)
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		got := out.String()
		mu.Unlock()
		if got == "[1] mpigo: process failed\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("held line never released: %q", got)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
