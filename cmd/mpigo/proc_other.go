//go:build unix && !linux

package main

import "syscall"

// rankProcAttr puts a rank in a process group of its own, so that signals
// reach everything it started.
func rankProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
