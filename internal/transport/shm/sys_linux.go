package shm

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// defaultDir is where inboxes live unless Config.Dir says otherwise:
// /dev/shm, memory that no disk backs.
// noReserve is retire's flag that the pages need no swap reserved.
const noReserve = unix.MAP_NORESERVE

func defaultDir() string { return "/dev/shm" }

// platform says how this platform's shared memory works, for Available.
const platform = "per-pair rings in files mapped shared, futex wake-ups"

// futexWait sleeps while *w == val, at most d. Spurious returns are
// allowed; the caller checks its condition again. The futex is not
// private: the word lives in memory shared between processes.
func futexWait(w *atomic.Uint32, val uint32, d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWaitOp, uintptr(val), uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// futexWake wakes the sleepers on w.
func futexWake(w *atomic.Uint32) {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWakeOp, 1<<30, 0, 0, 0)
}

// Fetch copies len(dst) bytes at addr in process pid into dst with one
// copy, by Linux cross-memory attach (process_vm_readv). The kernel allows
// it when the caller may ptrace pid: same user and, under Yama's
// ptrace_scope 1, not between siblings.
func Fetch(pid, addr uint64, dst []byte) error {
	for len(dst) > 0 {
		local := []unix.Iovec{{Base: &dst[0]}}
		local[0].SetLen(len(dst))
		remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(dst)}}
		n, err := unix.ProcessVMReadv(int(pid), local, remote, 0)
		if err != nil {
			if err == syscall.EINTR {
				continue
			}
			return fmt.Errorf("shm: reading %d bytes from process %d: %w", len(dst), pid, err)
		}
		if n <= 0 {
			return fmt.Errorf("shm: reading from process %d: no progress", pid)
		}
		dst = dst[n:]
		addr += uint64(n)
	}
	return nil
}

// alive reports whether process pid still runs (a zombie counts as dead).
func alive(pid int) bool {
	if pid <= 0 || pid == os.Getpid() {
		return true
	}
	if err := unix.Kill(pid, 0); errors.Is(err, unix.ESRCH) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	// The state follows the command name in parentheses: "pid (comm) S ...".
	for i := len(b) - 1; i > 0; i-- {
		if b[i] == ')' {
			if i+2 < len(b) {
				return b[i+2] != 'Z' && b[i+2] != 'X'
			}
			break
		}
	}
	return true
}

// CMAStatus says whether single-copy transfers by cross-memory attach are
// possible between processes of one user on this machine, and why not.
func CMAStatus() (bool, string) {
	scope := -1
	if b, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope"); err == nil && len(b) > 0 {
		scope = int(b[0] - '0')
	}
	var probe [8]byte
	src := [8]byte{'m', 'p', 'i', 'g', 'o', 'c', 'm', 'a'}
	if err := Fetch(uint64(os.Getpid()), uint64(uintptr(unsafe.Pointer(&src[0]))), probe[:]); err != nil || probe != src {
		return false, fmt.Sprintf("process_vm_readv refused (%v); large messages are copied through the rings", err)
	}
	switch scope {
	case -1, 0:
		return true, "process_vm_readv (cross-memory attach): large messages are copied once"
	case 1:
		return true, "process_vm_readv allowed by Yama ptrace_scope 1 only towards descendants: each job tests it between its ranks at start-up and falls back to copying through the rings"
	}
	return false, fmt.Sprintf("Yama ptrace_scope is %d: process_vm_readv is refused; large messages are copied through the rings", scope)
}

// futex operations (linux/futex.h), shared between processes: not the
// _PRIVATE variants.
const (
	futexWaitOp = 0
	futexWakeOp = 1
)

// schedYield gives the core to another runnable process, if any.
func schedYield() { unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }
