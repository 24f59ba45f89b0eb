package engine

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/mpigo/mpi/internal/memcopy"
)

// Op says what a request does.
type Op uint8

// Request operations.
const (
	OpSend Op = iota + 1
	OpRecv
)

// Mode is the send mode of MPI: standard, synchronous, ready or buffered.
// Buffered sends reach the engine as standard sends from the attached buffer.
type Mode uint8

// Send modes.
const (
	Standard Mode = iota
	Synchronous
	Ready
)

// Status describes a completed receive (or a cancelled operation).
type Status struct {
	Source    int    // rank of the sender in the communicator
	Tag       int    // tag of the message
	Size      int    // bytes the sender sent
	Count     int    // bytes stored in the receive buffer (min of Size and the buffer)
	Sig       uint64 // type signature the sender attached (0: untyped)
	Cancelled bool   // the operation was cancelled
	Err       error  // ErrTruncate, ErrType or a transport error
}

// Request is one send or receive in flight. The caller fills in the public
// fields, hands it to Engine.Send or Engine.PostRecv, and waits on it; the
// engine owns it until it completes. A Request may be reused after Reset.
type Request struct {
	Op      Op
	Mode    Mode
	Context uint32
	// Peer is the communicator rank of the destination (sends) or the
	// source, or AnySource (receives).
	Peer int
	// Self is the sender's own rank in the communicator (sends only).
	Self int
	// FromWorld is, for a receive from a specific source, 1 + the source's
	// world rank, so that FailAll can fail it when that rank dies; 0 for
	// AnySource or unknown.
	FromWorld int
	// To is the world rank (transport address) of the destination (sends only).
	To  int
	Tag int
	// Buf is the send buffer, or the receive buffer. For a receive with a
	// nil Buf and a non-nil Alloc, the buffer is allocated when the message
	// matches and its size is known.
	Buf   []byte
	Alloc func(n int) []byte
	// Layout, if set, replaces Buf: the message is packed from it (sends)
	// or unpacked into it (receives) chunk by chunk, never whole.
	Layout Layout
	// Sig is the type signature: attached to a send; checked by a receive
	// (0 on either side matches anything).
	Sig uint64
	// OnDone, if set, is called once r has completed, on whichever
	// goroutine completed it; it must not block.
	OnDone func(r *Request)
	// Cancellable asks that an eager standard or ready send can still be
	// cancelled after it completed locally (Engine.CancelSend): its frame
	// then carries an id, which costs one atomic increment. Requests the
	// user can cancel (Isend, Ibsend, persistent sends) set it; blocking
	// sends and collectives do not.
	Cancellable bool
	// W, if set, is the Waiter Wait parks on; otherwise one is borrowed
	// from a pool. Pooled requests keep their own to save the borrowing.
	W *Waiter
	// Note is the caller's: the engine never reads it, and Reset clears
	// it. The root package keeps a typed receive's type there, to name it
	// if the message turns out to be of another type.
	Note any

	status Status
	id     uint64
	from   int // receives: world rank of the matched sender
	got    int // receives: rendezvous bytes arrived so far
	want   int // receives: rendezvous bytes expected
	cancel bool
	// placing counts, for a rendezvous receive, the Data payloads a
	// transport is reading straight into Buf (DataDest) whose frames have
	// not been delivered yet (it fits in cancel's padding).
	placing int32
	next    *Request // posted queue link

	// state holds stDone once the result is in and stFin once the
	// completer has stopped touching r (only then may the owner reuse r),
	// and stWaiting once a Waiter was registered (waiter). One word for
	// the three lets a completion with nobody waiting, the common case in
	// a window of receives, publish its result with one locked instruction
	// instead of two (docs/performance.md, "Fewer locked instructions").
	state  atomic.Uint32
	waiter atomic.Pointer[Waiter]
}

// The bits of Request.state.
const (
	stDone    = 1 << iota // the result is in
	stFin                 // the completer no longer touches r
	stWaiting             // a Waiter is registered: the completer must look
	stClaimed             // a completer outside the engine's lock took r (CompleteOnce)
)

// Reset clears r for reuse, keeping its Waiter. r must be complete (or
// never started).
func (r *Request) Reset() {
	w := r.W
	*r = Request{}
	r.W = w
}

// Done reports whether r has completed. It never blocks.
func (r *Request) Done() bool { return r.state.Load()&stFin != 0 }

// Completing reports whether r's result is in, though its completer may
// still be finishing (Done may still report false for a moment). A
// goroutine parked on a Waiter registered with SetWaiter must stop
// parking when it sees this: the completer loads the waiter right after
// it stores the result, and only then marks r Done, so a parker that
// registered too late for the wake-up and checked Done in between would
// park for good.
func (r *Request) Completing() bool { return r.state.Load()&stDone != 0 }

// Status returns r's status. It is meaningful only once Done reports true.
func (r *Request) Status() Status { return r.status }

// StatusRef is Status in place: r's own, valid until r is reset. Copying
// the status out cost a store-forwarding stall on every completed
// non-blocking receive (docs/performance.md, "One cache line per
// request").
func (r *Request) StatusRef() *Status { return &r.status }

// size returns the bytes r sends, or has room to receive.
func (r *Request) size() int {
	if r.Layout != nil {
		return r.Layout.Len()
	}
	return len(r.Buf)
}

// store writes received message bytes at offset off.
func (r *Request) store(src []byte, off int) {
	if r.Layout != nil {
		r.Layout.Unpack(src, off)
		return
	}
	memcopy.Copy(r.Buf[off:], src)
}

// Buffer returns the receive buffer, which may have been allocated on match.
func (r *Request) Buffer() []byte { return r.Buf }

// complete records st and wakes whoever waits on r. The waiter handshake:
// the completer stores done and then loads waiter; a waiter stores waiter
// and then loads done; so at least one of them sees the other and no
// wake-up is lost. fin is stored last: after it, r is not touched here, so
// its owner may reuse it.
func (r *Request) complete(st Status) {
	r.status = st
	r.finish()
}

// finish is complete with the status already in r.
func (r *Request) finish() {
	onDone := r.OnDone
	// Nobody registered a Waiter: done and finished at once. A waiter
	// registers by setting stWaiting in the same word (register), so
	// either it sees stDone and does not park, or this fails and the
	// Waiter is woken below.
	if !r.state.CompareAndSwap(0, stDone|stFin) {
		r.state.Or(stDone)
		if w := r.waiter.Load(); w != nil {
			w.Wake()
		}
		r.state.Or(stFin)
	}
	if onDone != nil {
		onDone(r)
	}
}

// register makes w the Waiter that r's completer wakes, and reports
// whether r's result is in already (then w may never be woken).
func (r *Request) register(w *Waiter) bool {
	r.waiter.Store(w)
	return r.state.Or(stWaiting)&stDone != 0
}

// Fail completes r with err, unless it is already complete.
func (r *Request) Fail(err error) {
	if !r.Done() {
		r.complete(Status{Source: r.Peer, Tag: r.Tag, Err: err})
	}
}

// Wait blocks until r completes and returns its status. It parks at once:
// a wait that should poll its job's transports first uses WaitIn.
func (r *Request) Wait() Status { return r.WaitIn(nil, nil) }

// Progress is what a waiter does before it parks: Await may poll the
// transports of the request's job for a while (internal/progress), and
// reports whether r has completed meanwhile. The engine itself never
// polls, sleeps or reads a clock.
type Progress interface {
	Await(r *Request) bool
}

// Blocker is told about waits that park, and only about those: a wait that
// completes while it spins or polls costs it nothing. Park is called once
// before the waiting goroutine first parks on w, Woken each time it wakes
// with r still incomplete (a spurious wake-up, or one the Blocker caused
// with w.Wake to ask the goroutine something), and Unpark once the wait is
// over. All three run on the waiting goroutine and must not block for
// long. Hang diagnosis uses it to know which calls are blocked.
type Blocker interface {
	Park(r *Request, w *Waiter)
	Woken(r *Request)
	Unpark(r *Request)
}

// WaitIn is Wait letting p (if not nil) poll first, and telling b (if not
// nil) when it parks.
func (r *Request) WaitIn(p Progress, b Blocker) Status {
	r.waitIn(p, b)
	return r.status
}

// waitIn is WaitIn returning nothing: WaitRefIn's callers read the status
// in place, and copying it out as a result cost about 40 instructions a
// wait.
func (r *Request) waitIn(p Progress, b Blocker) {
	if !r.Done() && (p == nil || !p.Await(r)) {
		w := r.W
		if w == nil {
			w = getWaiter()
		}
		if !r.register(w) {
			if b != nil {
				b.Park(r, w)
			}
			for !r.Completing() {
				w.Park()
				if b != nil && !r.Completing() {
					b.Woken(r)
				}
			}
			if b != nil {
				b.Unpark(r)
			}
		}
		for !r.Done() { // the completer is finishing; it takes nanoseconds
			runtime.Gosched()
		}
		r.waiter.Store(nil)
		if w != r.W {
			putWaiter(w)
		}
	}
}

// WaitRef is Wait returning the status in place: r's own, valid until r
// is reset. Hot paths use it to spare copying the status.
func (r *Request) WaitRef() *Status {
	r.waitIn(nil, nil)
	return &r.status
}

// WaitRefIn is WaitRef with a Progress and a Blocker (see WaitIn).
func (r *Request) WaitRefIn(p Progress, b Blocker) *Status {
	r.waitIn(p, b)
	return &r.status
}

// Size returns the number of bytes r sends, or its receive buffer holds.
// A receive whose buffer is allocated when it matches (Alloc) gets it
// under the engine's lock: a goroutine other than the matching one asks
// Engine.SizeOf instead.
func (r *Request) Size() int { return r.size() }

// SetWaiter registers w to be woken when r completes (nil unregisters).
// WaitAny and WaitSome use one Waiter for many requests. After
// unregistering, a late Wake may still reach w: Waiter users must tolerate
// spurious wake-ups.
func (r *Request) SetWaiter(w *Waiter) {
	if w == nil {
		r.waiter.Store(nil)
		return
	}
	r.register(w)
}

// Waiter parks a goroutine until some request wakes it. Wakeups may be
// spurious: always re-check the condition after Park returns.
type Waiter struct{ ch chan struct{} }

// NewWaiter returns a ready Waiter.
func NewWaiter() *Waiter { return &Waiter{ch: make(chan struct{}, 1)} }

// Wake wakes the parked goroutine, or makes its next Park return at once.
func (w *Waiter) Wake() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// Park blocks until Wake is called.
func (w *Waiter) Park() { <-w.ch }

var waiterPool = sync.Pool{New: func() any { return NewWaiter() }}

func getWaiter() *Waiter  { return waiterPool.Get().(*Waiter) }
func putWaiter(w *Waiter) { waiterPool.Put(w) }

// GetWaiter and PutWaiter lend pooled Waiters.
func GetWaiter() *Waiter { return getWaiter() }

// PutWaiter returns a Waiter to the pool.
func PutWaiter(w *Waiter) { putWaiter(w) }

// Complete records st and wakes whoever waits on r. The runtime calls it for
// the Done request of an Item once the transport has accepted the frame.
// A request that two goroutines may complete outside the engine's lock
// is completed with CompleteOnce instead.
func (r *Request) Complete(st Status) { r.complete(st) }

// CompleteOnce is Complete for a request that more than one goroutine may
// try to complete outside the engine's lock: its own completer (a
// non-blocking collective's goroutine, the executor once a frame left, a
// generalized request's owner) and a failed job's wait reaper. The first
// one completes r; the others do nothing and get false. One atomic
// operation: it is not for the per-message paths the engine completes
// under its lock.
func (r *Request) CompleteOnce(st Status) bool {
	if r.state.Or(stClaimed)&(stClaimed|stDone) != 0 {
		return false
	}
	r.complete(st)
	return true
}

// FailOnce is CompleteOnce with the error err (Fail's status).
func (r *Request) FailOnce(err error) bool {
	return r.CompleteOnce(Status{Source: r.Peer, Tag: r.Tag, Err: err})
}
