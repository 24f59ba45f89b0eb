package shm

import (
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// platform says how this platform's shared memory works, for Available.
const platform = "per-pair rings in files mapped shared, _umtx_op wake-ups"

// _umtx_op operations (sys/umtx.h). The non-private variants: the word
// lives in memory shared between processes.
const (
	umtxOpWake     = 3
	umtxOpWaitUint = 11
)

// futexWait sleeps while *w == val, at most d, with FreeBSD's _umtx_op
// (the futex of FreeBSD). Spurious returns are allowed; the caller checks
// its condition again.
func futexWait(w *atomic.Uint32, val uint32, d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	// A relative timeout: uaddr1 holds the size of the timespec that
	// uaddr2 points to.
	unix.Syscall6(unix.SYS__UMTX_OP, uintptr(unsafe.Pointer(w)), umtxOpWaitUint, uintptr(val),
		unsafe.Sizeof(ts), uintptr(unsafe.Pointer(&ts)), 0)
}

// futexWake wakes the sleepers on w.
func futexWake(w *atomic.Uint32) {
	unix.Syscall6(unix.SYS__UMTX_OP, uintptr(unsafe.Pointer(w)), umtxOpWake, 1<<30, 0, 0, 0)
}

// schedYield gives the core to another runnable process, if any.
func schedYield() { unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }
