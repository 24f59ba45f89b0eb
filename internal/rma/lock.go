// Package rma holds the synchronisation words of one-sided communication
// (MPI-3.1 chapter 11) that origins manipulate directly in a target's
// memory: the passive-target lock and the accumulate mutex. The words may
// live in Go memory (goroutine ranks) or in a shared mapping (processes on
// one node); both are used only through sync/atomic, so the same code
// serves both.
//
// Waiting spins briefly, then yields, then sleeps with a growing pause
// (at most MaxNap), asking its caller's giveUp between naps: a wait never
// burns a core for long and ends when the caller says the peer is gone.
package rma

import (
	"runtime"
	"sync/atomic"
	"time"

	"github.com/mpigo/mpi/internal/hint"
)

// order gives the race detector the order the lock words make: they may
// live in shared mappings, whose atomics it does not see, while the
// memory they guard is Go memory it watches (a window over a slice, whose
// target's server writes what origins sent). Under the race detector,
// every release adds to it and every acquire reads it after.
var order atomic.Uint64

func acquired() {
	if raceEnabled {
		order.Load()
	}
}

func releasing() {
	if raceEnabled {
		order.Add(1)
	}
}

// MaxNap bounds one pause of a waiting origin.
const MaxNap = time.Millisecond

// Exclusive is the value of a lock word held exclusively; a positive value
// counts shared holders; 0 is free.
const Exclusive = -1

// TryShared takes a shared hold of the lock word w if nobody holds it
// exclusively.
func TryShared(w *atomic.Int64) bool {
	for {
		v := w.Load()
		if v < 0 {
			return false
		}
		if w.CompareAndSwap(v, v+1) {
			acquired()
			return true
		}
	}
}

// TryExclusive takes w exclusively if nobody holds it.
func TryExclusive(w *atomic.Int64) bool {
	if w.CompareAndSwap(0, Exclusive) {
		acquired()
		return true
	}
	return false
}

// Unlock releases one hold of w (exclusive or shared).
func Unlock(w *atomic.Int64, exclusive bool) {
	releasing()
	if exclusive {
		w.Store(0)
		return
	}
	w.Add(-1)
}

// Backoff paces a waiting loop: Next returns false when giveUp (asked
// only when the waiter is about to sleep) reported an error, which Err
// then returns.
type Backoff struct {
	n      int
	nap    time.Duration
	giveUp func() error
	err    error
}

// NewBackoff starts a wait; giveUp may be nil.
func NewBackoff(giveUp func() error) Backoff { return Backoff{giveUp: giveUp} }

// Next waits a little before the caller tries again.
func (b *Backoff) Next() bool {
	b.n++
	switch {
	case b.n < 32:
		hint.Pause() // the word is another core's to change
		return true
	case b.n < 256:
		runtime.Gosched()
		return true
	}
	if b.giveUp != nil {
		if err := b.giveUp(); err != nil {
			b.err = err
			return false
		}
	}
	if b.nap == 0 {
		b.nap = time.Microsecond
	} else if b.nap < MaxNap {
		b.nap *= 2
	}
	time.Sleep(b.nap)
	return true
}

// Err is why Next returned false.
func (b *Backoff) Err() error { return b.err }

// TryLock takes w, shared or exclusive, if it can at once.
func TryLock(w *atomic.Int64, exclusive bool) bool {
	if exclusive {
		return TryExclusive(w)
	}
	return TryShared(w)
}

// Lock takes w, shared or exclusive, waiting as long as needed; it fails
// only with giveUp's error.
func Lock(w *atomic.Int64, exclusive bool, giveUp func() error) error {
	b := NewBackoff(giveUp)
	for {
		if exclusive && TryExclusive(w) || !exclusive && TryShared(w) {
			return nil
		}
		if !b.Next() {
			return b.Err()
		}
	}
}

// AccLock takes the accumulate mutex m, which makes accumulate-family
// operations on one window atomic with respect to each other.
func AccLock(m *atomic.Uint32, giveUp func() error) error {
	if m.CompareAndSwap(0, 1) {
		acquired()
		return nil
	}
	b := NewBackoff(giveUp)
	for {
		if m.Load() == 0 && m.CompareAndSwap(0, 1) {
			acquired()
			return nil
		}
		if !b.Next() {
			return b.Err()
		}
	}
}

// TryAcc takes the accumulate mutex m if it is free.
func TryAcc(m *atomic.Uint32) bool {
	if m.CompareAndSwap(0, 1) {
		acquired()
		return true
	}
	return false
}

// AccUnlock releases m.
func AccUnlock(m *atomic.Uint32) {
	releasing()
	m.Store(0)
}

// Barrier is a full memory barrier (MPI_Win_sync on one copy): an atomic
// read-modify-write of a word of the caller's.
func Barrier(w *int32) { atomic.AddInt32(w, 0) }

// Pause waits a little before try i+1 of a short retry loop: a spin
// first, then a yield.
func Pause(i int) {
	if i < 32 {
		hint.Pause()
		return
	}
	runtime.Gosched()
}
