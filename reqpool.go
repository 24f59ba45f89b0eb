package mpi

import (
	"sync"

	"github.com/mpigo/mpi/internal/engine"
)

// erFreeList recycles one rank's engine requests for its non-blocking
// sends and receives (newPooledRequest). The Request the user holds must
// stay valid for as long as the user keeps it (waiting again returns the
// same result), so it is allocated for each operation; its engine
// request, more than half of its size, is needed only until Wait or Test
// hands the result over, and comes back here then. A list per rank with
// a mutex, not a sync.Pool, whose own cost ate most of the gain
// (docs/performance.md has the measurements).
type erFreeList struct {
	mu   sync.Mutex
	free []*engine.Request
}

// erKeep bounds what a rank keeps for later: enough for a window of
// requests in flight; a larger burst's extra requests go to the garbage
// collector.
const erKeep = 256

// get returns a cleared engine request with its own Waiter.
func (l *erFreeList) get() *engine.Request {
	l.mu.Lock()
	if n := len(l.free); n > 0 {
		er := l.free[n-1]
		l.free[n-1] = nil
		l.free = l.free[:n-1]
		l.mu.Unlock()
		return er
	}
	l.mu.Unlock()
	er := new(engine.Request)
	er.W = engine.NewWaiter()
	return er
}

// put takes back er, which has completed (Done) and which nobody reads
// any more.
func (l *erFreeList) put(er *engine.Request) {
	er.Reset()
	l.mu.Lock()
	if len(l.free) < erKeep {
		l.free = append(l.free, er)
	}
	l.mu.Unlock()
}
