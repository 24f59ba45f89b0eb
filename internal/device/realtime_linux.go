package device

import "golang.org/x/sys/unix"

// realtime reports whether this process's scheduling policy is a real-time
// one (SCHED_FIFO or SCHED_RR, as chrt sets), under which a thread that
// never blocks keeps its CPU from every other thread of its priority.
func realtime() bool {
	policy, _, errno := unix.RawSyscall(unix.SYS_SCHED_GETSCHEDULER, 0, 0, 0)
	if errno != 0 {
		return false
	}
	const resetOnFork = 0x40000000 // SCHED_RESET_ON_FORK, or-ed into the policy
	switch policy &^ resetOnFork {
	case 1, 2: // SCHED_FIFO, SCHED_RR
		return true
	}
	return false
}
