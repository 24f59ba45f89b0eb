package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// rankProcAttr puts a rank in a process group of its own (so signals reach
// everything it started) and has the kernel kill it if the launcher dies,
// so that no rank is ever left orphaned.
func rankProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// zombie reports whether process pid has exited and waits to be reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return os.IsNotExist(err)
	}
	if i := strings.LastIndexByte(string(b), ')'); i > 0 && i+2 < len(b) {
		return b[i+2] == 'Z' || b[i+2] == 'X'
	}
	return false
}
