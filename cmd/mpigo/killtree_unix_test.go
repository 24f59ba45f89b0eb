//go:build unix

package main

import (
	"os/exec"
	"syscall"
	"time"
)

// ownGroup starts c in a process group of its own, so that stopTree can
// reach everything it started (a launcher's ranks and helpers included).
func ownGroup(c *exec.Cmd) {
	if c.SysProcAttr == nil {
		c.SysProcAttr = &syscall.SysProcAttr{}
	}
	c.SysProcAttr.Setpgid = true
}

// stopTree asks c's process group to stop (SIGTERM: srun cancels its step,
// mpirun and mpiexec stop their ranks), then kills the group if it has not
// ended within grace. done is closed when c has been waited for.
func stopTree(c *exec.Cmd, done <-chan error, grace time.Duration) {
	pgid := c.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(grace):
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
}
