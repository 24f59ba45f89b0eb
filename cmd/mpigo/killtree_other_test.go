//go:build !unix

package main

import (
	"os"
	"os/exec"
	"time"
)

func ownGroup(c *exec.Cmd) {}

func stopTree(c *exec.Cmd, done <-chan error, grace time.Duration) { c.Process.Kill() }

// pidExists reports whether process pid exists.
func pidExists(pid int) bool { return processAlive(pid) }

// killPid kills process pid.
func killPid(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

// childrenCPU would return the CPU time of this process's children; there
// is no such accounting here.
func childrenCPU() (time.Duration, bool) { return 0, false }
