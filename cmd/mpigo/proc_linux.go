package main

import "syscall"

// rankProcAttr puts a rank in a process group of its own (so signals reach
// everything it started) and has the kernel kill it if the launcher dies,
// so that no rank is ever left orphaned.
func rankProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
