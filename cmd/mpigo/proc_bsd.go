//go:build unix && !linux

package main

import "syscall"

// rankProcAttr puts a rank in a process group of its own, so that signals
// reach everything it started. There is no parent-death signal here: a
// rank learns that the launcher is gone from its connections.
func rankProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// zombie reports whether process pid has exited and waits to be reaped:
// without /proc it cannot tell, and says no.
func zombie(pid int) bool { return false }
