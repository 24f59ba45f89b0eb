// Package fabric is what the cgo fabric transports (internal/transport/ucx
// and internal/transport/ofi) share, in pure Go: the progress goroutine's
// policy (Loop), making endpoints to peers on first use (Endpoints), the
// per-peer queues that deliver each peer's frames in order (Queues), the
// wait of a send for its completion (Await), and the checks and reports
// around them. It knows nothing of UCX or libfabric: each transport passes
// its library's calls in as functions.
package fabric

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/mpigo/mpi/internal/wire"
)

// DefaultSpin is how long a transport's goroutine polls after the last
// event before it sleeps in its library, unless the transport's Config.Spin
// says otherwise.
const DefaultSpin = 50 * time.Microsecond

// WaiterNap is how long the transport's goroutine naps while a goroutine
// of the process polls in a wait (MarkWait); it looks again after each nap.
const WaiterNap = 20 * time.Microsecond

// SpinFor returns the spin of a Config.Spin: 0 is DefaultSpin, negative is
// none (sleep at once), positive is nanoseconds.
func SpinFor(spin int64) time.Duration {
	switch {
	case spin == 0:
		return DefaultSpin
	case spin > 0:
		return time.Duration(spin)
	}
	return 0
}

// OneProc reports whether the process runs Go code on one processor
// (GOMAXPROCS 1). A wait that polls its library on the caller's goroutine
// must then yield now and then: the progress goroutine, or a handler's,
// may need that very processor. With more it must not: a call from C (the
// ABI library) runs on a goroutine locked to the program's thread, where
// each runtime.Gosched hands the processor to another thread and takes it
// back, microseconds and two futex calls (an MPI_Fetch_and_op loop over
// UCX spent 20% of its time there). Read it once per wait: it takes the
// scheduler's lock.
func OneProc() bool { return runtime.GOMAXPROCS(0) < 2 }

// CheckFrame says why f cannot go over transport name ("ucx", "ofi") of a
// job of size ranks: no such rank, or a payload larger than a frame's.
func CheckFrame(name string, f wire.Frame, size int) error {
	if f.To < 0 || f.To >= size {
		return fmt.Errorf("%s: no rank %d", name, f.To)
	}
	if len(f.Payload) > wire.MaxPayload {
		return fmt.Errorf("%s: frame payload of %d bytes exceeds %d", name, len(f.Payload), wire.MaxPayload)
	}
	return nil
}

// Failure is a peer found failed under a transport's lock, to report
// (Report) once the lock is released.
type Failure struct {
	Peer int
	Err  error
}

// Report calls on (a Config.OnPeerError, which may be nil) for each
// failure.
func Report(fails []Failure, on func(peer int, err error)) {
	if on == nil {
		return
	}
	for _, f := range fails {
		on(f.Peer, f.Err)
	}
}

// Loop is the policy of a transport's progress goroutine: it polls its
// library for Spin after the last event, then sleeps in the library (on
// its wait descriptor) until there is work or a sender wakes it. While a
// goroutine of the process polls in a wait (MarkWait), the loop stays out
// of its way: it naps in Go, off the processor, and looks again after each
// nap, so that the waiter alone polls the library and sees its reply on
// its own goroutine. Two pollers of one completion queue took turns at its
// lock and each paid the library's system calls, and the reply often came
// to the goroutine that was not waiting for it; on a loaded node each
// spinning poller was also a thread more for the cores.
type Loop struct {
	// Spin is how long the goroutine polls after the last event before
	// it sleeps in the library.
	Spin time.Duration
	// Wake makes the library's sleep return (a write to a wake pipe).
	Wake func()

	sleeping atomic.Bool // in the library's sleep: a sender must Wake it
	waiting  atomic.Bool // a goroutine polls in a wait (MarkWait)
	naps     atomic.Uint64
	napWake  chan struct{}
}

// NewLoop returns the loop of a transport that spins for spin and whose
// library's sleep wake ends.
func NewLoop(spin time.Duration, wake func()) *Loop {
	return &Loop{Spin: spin, Wake: wake, napWake: make(chan struct{}, 1)}
}

// Run progresses until stop is closed: step polls the library once and
// delivers what is complete, reporting whether anything happened; sleep
// sleeps in the library until it has work, Wake is called, or a time-out
// the transport chooses.
func (l *Loop) Run(stop <-chan struct{}, step func() bool, sleep func()) {
	last := time.Now()
	nap := time.NewTimer(time.Hour)
	nap.Stop()
	for {
		select {
		case <-stop:
			return
		default:
		}
		// While a waiter polls, the goroutine only naps: a step of its
		// own would contend with the waiter's for the transport.
		if !l.waiting.Load() && step() {
			last = time.Now()
			continue
		}
		if l.waiting.Load() {
			// Forget the mark: a waiter still polling after the nap will
			// have marked again. Counted first, so that a mark seen gone
			// is a nap counted (Naps).
			l.naps.Add(1)
			l.waiting.Store(false)
			nap.Reset(WaiterNap)
			select {
			case <-l.napWake:
				nap.Stop()
			case <-nap.C:
			case <-stop:
				return
			}
			last = time.Now()
			continue
		}
		if time.Since(last) < l.Spin {
			// Let a goroutine of this processor run: a waiter that
			// would mark, or the one the frames are for.
			runtime.Gosched()
			continue
		}
		l.sleeping.Store(true)
		sleep()
		l.sleeping.Store(false)
		last = time.Now()
	}
}

// Kick makes the goroutine step soon, from a nap as from a sleep in the
// library: work waits that only a step does (frames gathered to send).
func (l *Loop) Kick() {
	select {
	case l.napWake <- struct{}{}:
	default:
	}
	l.Nudge()
}

// Nudge wakes the goroutine if it sleeps in the library: there is work
// (a send to progress).
func (l *Loop) Nudge() {
	if l.sleeping.Load() {
		l.Wake()
	}
}

// MarkWait says that a goroutine polls in a wait (transport.Polled): the
// loop naps meanwhile.
func (l *Loop) MarkWait() {
	if !l.waiting.Load() {
		l.waiting.Store(true)
	}
}

// Naps returns how many times the loop took a waiter's mark off to nap.
// A mark that MarkWait put and Waiting no longer sees was taken by a nap,
// which this counted before the mark went.
func (l *Loop) Naps() uint64 { return l.naps.Load() }

// Waiting reports whether a waiter's mark is on the loop (MarkWait).
func (l *Loop) Waiting() bool { return l.waiting.Load() }

// EndWait says that the waiting goroutine stops polling to park: the loop
// must poll in its place from now on, so its nap ends now, and a sleep in
// the library too (the waiter's polls may have taken the event it slept
// on).
func (l *Loop) EndWait() {
	l.waiting.Store(false)
	l.Kick()
}

// Endpoints makes a transport's endpoint to each peer once, on first use:
// when the first frame goes to the peer or comes from it.
type Endpoints struct {
	// Name is the transport's ("ucx"), What what a peer publishes
	// ("worker address") in errors.
	Name, What string
	// Addrs returns the address a peer published (Config.Addrs).
	Addrs func(peer int) ([]byte, error)
	// Closed reports whether the transport is closed.
	Closed func() bool
	// Make makes the endpoint to peer from its address; it takes the
	// transport's lock itself, and fails if the transport is closed.
	Make func(peer int, addr []byte) error

	mu  sync.Mutex // serialises Make (Addrs may block)
	has []atomic.Bool
}

// Init readies e for a job of size ranks.
func (e *Endpoints) Init(size int) { e.has = make([]atomic.Bool, size) }

// Has reports whether the endpoint to peer is made.
func (e *Endpoints) Has(peer int) bool { return e.has[peer].Load() }

// Ensure makes the endpoint to peer if there is none.
func (e *Endpoints) Ensure(peer int) error {
	if e.has[peer].Load() {
		return nil
	}
	if e.Closed() {
		return errors.New(e.Name + ": transport closed")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.has[peer].Load() {
		return nil
	}
	addr, err := e.Addrs(peer)
	if err == nil && len(addr) == 0 {
		err = errors.New("empty address")
	}
	if err != nil {
		return fmt.Errorf("%s: no %s for rank %d: %w", e.Name, e.What, peer, err)
	}
	if err := e.Make(peer, addr); err != nil {
		return err
	}
	e.has[peer].Store(true)
	return nil
}

// Queues holds each peer's arrivals in the order they are to be delivered,
// and which peers have any. It is not safe for concurrent use: the
// transport's lock guards it.
type Queues[T any] struct {
	q      [][]T
	active []int // peers with something queued
}

// NewQueues returns the queues of a job of size ranks.
func NewQueues[T any](size int) *Queues[T] { return &Queues[T]{q: make([][]T, size)} }

// Push queues x after what peer has queued.
func (q *Queues[T]) Push(peer int, x T) {
	if len(q.q[peer]) == 0 {
		q.active = append(q.active, peer)
	}
	q.q[peer] = append(q.q[peer], x)
}

// Peer returns what peer has queued, first first.
func (q *Queues[T]) Peer(peer int) []T { return q.q[peer] }

// Busy reports whether any peer has something queued.
func (q *Queues[T]) Busy() bool { return len(q.active) > 0 }

// Active returns the peers with something queued.
func (q *Queues[T]) Active() []int { return q.active }

// Take removes from the front of each peer's queue, in order, what ready
// says is ready, up to the first that is not, and passes each to take.
func (q *Queues[T]) Take(ready func(x T) bool, take func(peer int, x T)) {
	var zero T
	for i := 0; i < len(q.active); i++ {
		p := q.active[i]
		l := q.q[p]
		for len(l) > 0 && ready(l[0]) {
			take(p, l[0])
			l[0] = zero
			l = l[1:]
		}
		q.q[p] = l
		if len(l) == 0 {
			q.active = append(q.active[:i], q.active[i+1:]...)
			i--
		}
	}
}

// Reset empties every queue.
func (q *Queues[T]) Reset() {
	for i := range q.q {
		q.q[i] = nil
	}
	q.active = nil
}

// Await waits for the end of a send that the transport's progress
// goroutine reports on done. That goroutine may be stuck in the handler,
// which holds dmu (the engine's reply queue is full, and the reply sender
// is this goroutine): tick is called every millisecond, with stuck true
// when dmu is held, so that the sender progresses the library itself
// without delivering.
func Await(done <-chan error, dmu *sync.Mutex, tick func(stuck bool)) error {
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-t.C:
			stuck := !dmu.TryLock()
			if !stuck {
				dmu.Unlock() // the progress goroutine is free to do it
			}
			tick(stuck)
		}
	}
}

// PutInt stores v's low size bytes (4 or 8) at the start of *p, as an
// integer of that size in the machine's byte order: an operand of a
// fabric's atomic operation (transport.Atomics).
func PutInt(p *uint64, size int, v uint64) {
	if size == 4 {
		*(*uint32)(unsafe.Pointer(p)) = uint32(v)
		return
	}
	*p = v
}

// GetInt loads the integer of size bytes (4 or 8) at the start of *p.
func GetInt(p *uint64, size int) uint64 {
	if size == 4 {
		return uint64(*(*uint32)(unsafe.Pointer(p)))
	}
	return *p
}
