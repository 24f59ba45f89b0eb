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

// pidExists reports whether process pid exists (a zombie does).
func pidExists(pid int) bool { return syscall.Kill(pid, 0) == nil }

// killPid kills process pid.
func killPid(pid int) { syscall.Kill(pid, syscall.SIGKILL) }

// childrenCPU returns the CPU time this process's waited-for children
// used.
func childrenCPU() (time.Duration, bool) {
	var r syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &r) != nil {
		return 0, false
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano()), true
}
