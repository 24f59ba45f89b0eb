//go:build unix

package main

import (
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// rankGroup is how the launcher keeps hold of its local ranks: on Unix
// each rank runs in a process group of its own, which the launcher
// signals as a whole.
type rankGroup struct{}

// newRankGroup prepares to start ranks.
func newRankGroup() (*rankGroup, error) { return &rankGroup{}, nil }

// prepare sets up cmd, a rank about to start; secret, if not nil, is the
// read end of the pipe that carries the job's secret. It returns what the
// rank finds in MPIGO_SECRET_FD: the descriptor the secret comes on.
func (g *rankGroup) prepare(cmd *exec.Cmd, secret *os.File) string {
	cmd.SysProcAttr = rankProcAttr()
	if secret == nil {
		return ""
	}
	cmd.ExtraFiles = []*os.File{secret}
	return "3"
}

// started is told of every rank that has started.
func (g *rankGroup) started(cmd *exec.Cmd) error { return nil }

// signal sends sig to the rank's process group.
func (g *rankGroup) signal(cmd *exec.Cmd, sig syscall.Signal) {
	syscall.Kill(-cmd.Process.Pid, sig)
}

// close lets the ranks go (they have all been waited for).
func (g *rankGroup) close() {}

// reaperProcAttr puts the reaper in a process group of its own, away from
// the terminal's signals.
func reaperProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// ignoreSignals makes the reaper deaf to what would stop it before its
// work is done.
func ignoreSignals() {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE)
}

// processAlive reports whether pid runs (a zombie does not).
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
		return false
	}
	return !zombie(pid)
}

// ownedByMe reports whether the file st describes belongs to this
// process's user.
func ownedByMe(st os.FileInfo) bool {
	s, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(s.Uid) == os.Getuid()
}
