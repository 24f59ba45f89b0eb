package shm

import (
	"sync/atomic"
	"time"
)

// platform says how this platform's shared memory works, for Available.
const platform = "per-pair rings in files mapped shared; a sleeping rank polls its wake-up word (no futex on macOS)"

// Longest nap of a sleeping poller between two looks at its wake-up word:
// the wake-up latency after an idle spell is at most about this.
const maxNap = time.Millisecond

// futexWait sleeps while *w == val, at most d. macOS offers no futex that
// Go reaches without cgo (its __ulock calls are private), so the sleeper
// looks at the word itself, with naps growing from 20 us to maxNap. A
// sender wakes it by clearing the word (peer.wake's compare-and-swap), so
// no wake-up is lost; it only comes up to maxNap late.
func futexWait(w *atomic.Uint32, val uint32, d time.Duration) {
	deadline := time.Now().Add(d)
	nap := 20 * time.Microsecond
	for w.Load() == val {
		left := time.Until(deadline)
		if left <= 0 {
			return
		}
		time.Sleep(min(nap, left))
		nap = min(2*nap, maxNap)
	}
}

// futexWake wakes the sleeper on w by clearing the word it watches. A
// sender has cleared it already (peer.wake); Close has not. Clearing a
// word that is about to be set again costs at most a spurious return of
// futexWait, which its callers allow.
func futexWake(w *atomic.Uint32) { w.Store(0) }

// schedYield would give the core to another process; macOS has no
// sched_yield system call that Go reaches without cgo, and the callers
// yield to goroutines beside it.
func schedYield() {}
