package progress

import "golang.org/x/sys/unix"

// schedYield gives the core to another runnable process, if any.
func schedYield() { unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }

// rawSchedYield is schedYield without telling the Go runtime of a system
// call. For a goroutine locked to a C thread a system call the runtime
// knows of is a hand-over point: a sched_yield on an oversubscribed node
// often lasts longer than the runtime's monitor waits (20 us) before it
// takes the processor of a thread in a system call away and starts
// another thread to run it, so the waiting thread got it back only
// through futex wake-ups, and the monitor, retaking every 20 us, took a
// fifth of the machine (8 C ranks ping-ponging on 2 cores). sched_yield
// never blocks: nothing needs the processor while it runs.
func rawSchedYield() { unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }
