package shm

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/mpigo/mpi/internal/engine"
)

// The transports of this process that are ready, polled by goroutines
// about to block in Wait (engine.Poller). The list is replaced, never
// changed, so a session keeps the one it began with.
var (
	activeMu sync.Mutex
	active   atomic.Pointer[activeList]
)

type activeList struct {
	ts    []*Transport
	idles atomic.Uint32 // Idle calls
}

func newActiveList(ts []*Transport) *activeList { return &activeList{ts: ts} }

// oversubscribed is set when a transport of this process serves more local
// ranks than the node has cores: waiting ranks then give their core away
// instead of spinning on it.
var oversubscribed atomic.Bool

type waitPoller struct{}

// Begin keeps the transports' pollers awake while this goroutine polls
// (a sleeping poller makes every sender pay for a futex wake).
func (waitPoller) Begin() engine.Polling {
	l := active.Load()
	if l == nil {
		l = newActiveList(nil)
	}
	for _, t := range l.ts {
		t.markWait()
	}
	return l
}

// Poll consumes the rings of every transport of the session.
func (l *activeList) Poll() bool {
	got := false
	for _, t := range l.ts {
		if t.progress(t.cfg.Handler) {
			got = true
		}
	}
	return got
}

// Idle yields the processor to other goroutines and, when the node has
// more ranks than cores, to other processes. On a node with a core per
// rank it yields only every 16th call (every 256 polls): each yield lets
// the process's poller goroutine take a turn, and a message that arrives
// meanwhile waits for it (8-byte shm latency 0.33 -> 0.28 us). Yielding
// far less often (every 16384 polls) for a waiter whose peer is on the
// node gained 8% of the 8-byte latency but starved the goroutine that
// sends a rendezvous's Data frames: a 1 MiB shm allreduce took 4x as long.
func (l *activeList) Idle() {
	for _, t := range l.ts {
		t.markWait() // still here: the poller keeps napping
	}
	if oversubscribed.Load() {
		runtime.Gosched()
		schedYield()
		return
	}
	if l.idles.Add(1)&15 == 0 {
		runtime.Gosched()
	}
}

// End ends a wait. A wait that completed has nothing to undo: the poller
// clears the mark of Begin and Idle itself, and resumes its own polling
// one nap after the last mark. A waiter about to park clears the mark, so
// that the poller, delivering in its place, does not nap again. The
// poller's sleep protocol covers what arrives next: a sender wakes a
// poller that sleeps.
func (l *activeList) End(done bool) {
	if done {
		return
	}
	for _, t := range l.ts {
		t.endWait()
	}
}

func register(t *Transport) {
	activeMu.Lock()
	defer activeMu.Unlock()
	var ts []*Transport
	if p := active.Load(); p != nil {
		ts = append(ts, p.ts...)
	}
	active.Store(newActiveList(append(ts, t)))
	if t.cfg.Oversubscribed {
		oversubscribed.Store(true)
	}
	engine.SetPoller(waitPoller{})
}

func unregister(t *Transport) {
	activeMu.Lock()
	defer activeMu.Unlock()
	p := active.Load()
	if p == nil {
		return
	}
	var ts []*Transport
	for _, u := range p.ts {
		if u != t {
			ts = append(ts, u)
		}
	}
	if len(ts) == 0 {
		engine.SetPoller(nil)
		active.Store(nil)
		return
	}
	active.Store(newActiveList(ts))
}
