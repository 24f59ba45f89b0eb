package mpi

import (
	"sync"

	"github.com/mpigo/mpi/internal/bindhook"
	"github.com/mpigo/mpi/internal/engine"
)

// erFreeList recycles one rank's engine requests for its non-blocking
// sends and receives (newPooledRequest), and carves the Requests of its
// non-blocking point-to-point calls out of blocks (newRequestP). The
// Request the user holds must stay valid for as long as the user keeps it
// (waiting again returns the same result), so it is never recycled; its
// engine request, needed only until Wait or Test hands the result over,
// comes back here then. A list per rank with a mutex, not a sync.Pool,
// whose own cost ate most of the gain (docs/performance.md has the
// measurements).
type erFreeList struct {
	mu   sync.Mutex
	free []*engine.Request
	// blk is the block the next Requests come from, next its first unused
	// one.
	blk  *[reqBlock]Request
	next int
	// id and idEnd are the send ids reserved from the engine
	// (engine.EagerIDs) for the short road's sends and not used yet.
	id, idEnd uint64
	// done holds zeroed Requests that a binding gave back
	// (Request.recycle), handed out before the block's.
	done []*Request
}

// idBatch is how many send ids sent reserves at a time.
const idBatch = reqBlock

// erKeep bounds what a rank keeps for later: enough for a window of
// requests in flight; a larger burst's extra requests go to the garbage
// collector.
const erKeep = 256

// reqBlock is how many Requests one allocation makes: the allocator's
// per-object work (about 400 instructions for a 240-byte Request) was a
// third of a small message's cost. A block fills the allocator's 8 KiB
// size class as well as whole Requests can. An object of more than 512
// bytes that holds pointers carries an 8-byte header in front, so 127
// Requests of 64 bytes fit (8128 + 8); 128 took the next size class,
// 9472 bytes, and left 1280 of them unused (TestRequestBlock checks it). A block
// stays in memory while any of its requests is referenced, at most
// reqBlock-1 requests' worth more than needed.
const reqBlock = 127

// request returns a zeroed Request: into if not nil (a slot of a
// Requests set, zeroed by its caller), else one from the block. l.mu is
// held.
func (l *erFreeList) request(into *Request) *Request {
	if into != nil {
		return into
	}
	if n := len(l.done); n > 0 {
		r := l.done[n-1]
		l.done = l.done[:n-1]
		return r
	}
	if l.blk == nil || l.next == reqBlock {
		l.blk, l.next = new([reqBlock]Request), 0
	}
	r := &l.blk[l.next] // zero: a block's requests are handed out once
	l.next++
	return r
}

// sent returns a zeroed Request (into, if not nil: see request) and a
// fresh send id from e, for a send that leaves by the short road
// (Comm.isendNow), under one lock: the ids are reserved from e a batch at
// a time, so that a message costs no atomic increment of its own.
func (l *erFreeList) sent(e *engine.Engine, into *Request) (*Request, uint64) {
	l.mu.Lock()
	r := l.request(into)
	if l.id == l.idEnd {
		l.id = e.EagerIDs(idBatch)
		l.idEnd = l.id + idBatch
	}
	id := l.id
	l.id++
	l.mu.Unlock()
	return r, id
}

// pair returns a zeroed Request (into, if not nil: see request) and a
// cleared engine request with its own Waiter, under one lock.
func (l *erFreeList) pair(into *Request) (*Request, *engine.Request) {
	l.mu.Lock()
	r := l.request(into)
	if n := len(l.free); n > 0 {
		// The slot keeps its pointer: the free list owns er either way,
		// and a store would cost a write barrier while the GC marks.
		er := l.free[n-1]
		l.free = l.free[:n-1]
		l.mu.Unlock()
		return r, er
	}
	l.mu.Unlock()
	er := new(engine.Request)
	er.W = engine.NewWaiter()
	return r, er
}

// put takes back er, which has completed (Done) and which nobody reads
// any more.
func (l *erFreeList) put(er *engine.Request) { l.putAll([]*engine.Request{er}) }

// erBatch holds engine requests that WaitAll's waits released, to give
// them back to their rank's free list under one lock for up to len(ers)
// of them instead of one lock each (two locked instructions saved per
// request, about 6 ns each here: docs/performance.md, "Fewer locked
// instructions"). 64 covers a usual window of receives: with 32, which
// WaitAll would clear faster, BenchmarkMessageRate/shm ran 5% slower
// (flushing in the middle of the window).
type erBatch struct {
	list *erFreeList // the list of the requests held
	n    int
	ers  [64]*engine.Request
}

// add takes er, which goes back to l, flushing first if b is full or
// holds another list's.
func (b *erBatch) add(l *erFreeList, er *engine.Request) {
	if b.n == len(b.ers) || (b.n > 0 && b.list != l) {
		b.flush()
	}
	b.list = l
	b.ers[b.n] = er
	b.n++
}

// flush gives back every engine request in b.
func (b *erBatch) flush() {
	if b.n > 0 {
		b.list.putAll(b.ers[:b.n])
		b.n = 0
	}
}

// putAll is put for several engine requests.
func (l *erFreeList) putAll(ers []*engine.Request) {
	for _, er := range ers {
		er.Reset()
	}
	l.mu.Lock()
	room := max(erKeep-len(l.free), 0)
	l.free = append(l.free, ers[:min(room, len(ers))]...)
	l.mu.Unlock()
}

func init() {
	bindhook.RecycleRequest = func(r any) {
		if q, ok := r.(*Request); ok {
			q.recycle()
		}
	}
}

// recycle takes back r for its rank's later requests
// (bindhook.RecycleRequest): only a request whose result was handed over
// (not live), that holds no engine request and nothing in x (so not a
// persistent, generalized, partitioned or failed one), and that no wait
// still pins. The binding guarantees that nothing else holds r.
func (r *Request) recycle() {
	if r == nil || r.c == nil || r.c.p == nil || r.is(fLive) || !r.is(fFinished) || r.er != nil || r.x != nil || r.pins != 0 {
		return
	}
	l := &r.c.p.ers
	*r = Request{}
	l.mu.Lock()
	if len(l.done) < erKeep {
		l.done = append(l.done, r)
	}
	l.mu.Unlock()
}
