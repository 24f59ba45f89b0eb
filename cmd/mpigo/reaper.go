package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mpigo/mpi/internal/transport/shm"
)

// What a job leaves in files (its ranks' shared-memory inboxes until every
// rank has mapped them, and the launcher's run folder with the programs it
// built) must go however the job ends, even when the launcher is killed
// with SIGKILL and its ranks with it (they have the parent-death signal).
// The launcher cleans up when it returns; for when it cannot, it starts a
// reaper: a process of its own (this executable, run as "mpigo __reap"),
// in a process group of its own and deaf to the terminal's signals, that
// waits for the launcher's pipe to close. If the launcher said "done"
// first, there is nothing to do; otherwise the reaper waits for the ranks
// the launcher named to be gone, then removes the job's inboxes and the
// run folder. A later launcher removes what a killed reaper left
// (removeStale).

const reapCmd = "__reap"

// reaper is the launcher's end of the reaper's pipe.
type reaper struct {
	w   io.WriteCloser
	cmd *exec.Cmd
}

// inboxDir is where the ranks of a job on this node put their
// shared-memory inboxes: MPIGO_SHM_DIR, which the ranks inherit and read
// too (package mpi's Config), else the platform's folder.
func inboxDir() string {
	if d := os.Getenv("MPIGO_SHM_DIR"); d != "" {
		return d
	}
	return shm.DefaultDir()
}

// startReaper starts the reaper of job jobID, whose inboxes are in shmDir
// and whose run folder (if any) is runDir. A launcher that cannot start
// one runs without: it still cleans up when it returns.
func startReaper(jobID uint64, shmDir, runDir string) *reaper {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	if shmDir == "" {
		shmDir = inboxDir()
	}
	c := exec.Command(exe, reapCmd, strconv.FormatUint(jobID, 10), shmDir, runDir)
	c.Env = os.Environ()
	c.SysProcAttr = reaperProcAttr()
	w, err := c.StdinPipe()
	if err != nil {
		return nil
	}
	if err := c.Start(); err != nil {
		return nil
	}
	return &reaper{w: w, cmd: c}
}

// rank tells the reaper of a rank's process.
func (r *reaper) rank(pid int) {
	if r != nil {
		fmt.Fprintf(r.w, "pid %d\n", pid)
	}
}

// runDir tells the reaper the run folder has been removed already.
func (r *reaper) runDirGone() {
	if r != nil {
		io.WriteString(r.w, "rundir-gone\n")
	}
}

// done tells the reaper the launcher has cleaned up, and lets it go.
func (r *reaper) done() {
	if r == nil {
		return
	}
	io.WriteString(r.w, "done\n")
	r.w.Close()
	go r.cmd.Wait()
}

// reap is the reaper's body: mpigo __reap JOBID SHMDIR RUNDIR, with the
// launcher's pipe on standard input.
func reap(args []string) int {
	ignoreSignals()
	if len(args) != 3 {
		return 2
	}
	jobID, err := strconv.ParseUint(args[0], 10, 64)
	if err != nil {
		return 2
	}
	shmDir, runDir := args[1], args[2]
	var pids []int
	sc := bufio.NewScanner(os.Stdin) // lines of at most 64 KiB
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "done":
			return 0
		case line == "rundir-gone":
			runDir = ""
		case strings.HasPrefix(line, "pid "):
			if pid, err := strconv.Atoi(line[4:]); err == nil && pid > 0 {
				pids = append(pids, pid)
			}
		}
	}
	// The launcher is gone without a word: its ranks are being killed.
	// Wait (a little) until they are, so that none creates its inbox
	// after the sweep.
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for time.Now().Before(deadline) && processAlive(pid) {
			time.Sleep(20 * time.Millisecond)
		}
	}
	shm.RemoveJob(shmDir, jobID)
	if runDir != "" && strings.HasPrefix(filepath.Base(runDir), "mpigo-run-") {
		os.RemoveAll(runDir)
	}
	return 0
}

// removeStale removes what killed jobs of this user left: inboxes whose
// creator is dead (shm.RemoveStale), and run folders of launchers that are
// gone (named mpigo-run-PID-*).
func removeStale() {
	shm.RemoveStale(inboxDir(), time.Minute)
	names, _ := filepath.Glob(filepath.Join(os.TempDir(), "mpigo-run-*-*"))
	for _, d := range names {
		f := strings.SplitN(strings.TrimPrefix(filepath.Base(d), "mpigo-run-"), "-", 2)
		pid, err := strconv.Atoi(f[0])
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		st, err := os.Lstat(d)
		if err != nil || !st.IsDir() || !ownedByMe(st) {
			continue
		}
		if !processAlive(pid) {
			os.RemoveAll(d)
		}
	}
}
