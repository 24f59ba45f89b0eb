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
	// local is the same list for waiters whose peer one of ts serves:
	// they yield far less often (see Idle); local.local is local.
	local *activeList
	rare  bool
}

func newActiveList(ts []*Transport) *activeList {
	l := &activeList{ts: ts}
	l.local = &activeList{ts: ts, rare: true}
	l.local.local = l.local
	return l
}

// oversubscribed is set when a transport of this process serves more local
// ranks than the node has cores: waiting ranks then give their core away
// instead of spinning on it.
var oversubscribed atomic.Bool

type waitPoller struct{}

// Begin keeps the transports' pollers awake while this goroutine polls
// (a sleeping poller makes every sender pay for a futex wake).
func (waitPoller) Begin(peer int) engine.Polling {
	l := active.Load()
	if l == nil {
		l = newActiveList(nil)
	}
	for _, t := range l.ts {
		t.waiters.Add(1)
		// Only a peer in another process: one that is a goroutine of this
		// process needs this processor to send.
		if p := t.peer(peer); p != nil && p.pid != t.pid {
			l = l.local
		}
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
// meanwhile waits for it (8-byte shm latency 0.33 -> 0.28 us). A waiter
// for a peer these transports serve yields only every 1024th call: what
// it waits for can only come through its own polls (the poller goroutine
// would take it no sooner), and a yield to that goroutine cost 8% of an
// 8-byte ping-pong (0.26 -> 0.24 us). A waiter for anyone else (a tcp
// peer, AnySource) keeps yielding often, so that the goroutines reading
// other transports run.
func (l *activeList) Idle() {
	if oversubscribed.Load() {
		runtime.Gosched()
		schedYield()
		return
	}
	mask := uint32(15)
	if l.rare {
		mask = 1023
	}
	if l.idles.Add(1)&mask == 0 {
		runtime.Gosched()
	}
}

// End undoes Begin. The pollers' own sleep protocol covers what arrives
// next: a sender wakes a poller that sleeps.
func (l *activeList) End() {
	for _, t := range l.ts {
		t.waiters.Add(-1)
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
