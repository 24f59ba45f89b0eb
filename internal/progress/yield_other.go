//go:build !linux && !freebsd

package progress

// schedYield would give the core to another process; where Go reaches no
// sched_yield without cgo (macOS, Windows, ...) the callers yield to the
// goroutines beside them only.
func schedYield() {}

// rawSchedYield is schedYield.
func rawSchedYield() {}
