package mpi

import (
	"errors"
	"sync"

	"github.com/mpigo/mpi/internal/fileio"
)

// fileQueue runs a file's collective calls one at a time, in the order
// this rank made them, on one goroutine: a non-blocking collective
// (IwriteAll, a split collective's Begin) and a blocking one made after
// it reach the other ranks in the same order on every rank, which is
// what MPI promises and what the file's communicator needs.
//
// A blocking call made while nothing is queued runs at once on the
// caller's goroutine (do): handing it to the queue's goroutine and
// waiting for it cost two goroutine wake-ups per call, which made a
// segmented collective read of 64 KiB per rank twice as slow as Open
// MPI's on 2 goroutine ranks.
type fileQueue struct {
	mu     sync.Mutex
	jobs   chan func()
	done   chan struct{}
	shut   bool
	queued int        // calls queued or running, the one running in do too
	run    sync.Mutex // held by the call running, wherever it runs
}

func newFileQueue() *fileQueue {
	q := &fileQueue{jobs: make(chan func(), 64), done: make(chan struct{})}
	go func() {
		defer close(q.done)
		for j := range q.jobs {
			q.run.Lock()
			j()
			q.run.Unlock()
			q.mu.Lock()
			q.queued--
			q.mu.Unlock()
		}
	}()
	return q
}

var errQueueClosed = errors.New("the file is closed")

// start queues fn; it runs after every call queued before it.
func (q *fileQueue) start(fn func()) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shut {
		return errQueueClosed
	}
	q.queued++
	q.jobs <- fn
	return nil
}

// do runs fn in turn and returns its error: on the caller's goroutine if
// no call is queued or running, else after them on the queue's.
func (q *fileQueue) do(fn func() error) error {
	inline, err := q.enterInline()
	if err != nil {
		return err
	}
	if inline {
		defer q.leaveInline()
		return fn()
	}
	ch := make(chan error, 1)
	if err := q.start(func() { ch <- fn() }); err != nil {
		return err
	}
	return <-ch
}

// enterInline reports whether the caller may run its call now, on its own
// goroutine (no call is queued or running), and if so counts it: the
// caller then calls leaveInline when its call is done. Calls queued from
// now on run after it: they find it counted, and the queue's goroutine
// waits for q.run. errQueueClosed once the file is closing.
func (q *fileQueue) enterInline() (bool, error) {
	q.mu.Lock()
	if q.shut {
		q.mu.Unlock()
		return false, errQueueClosed
	}
	if q.queued != 0 {
		q.mu.Unlock()
		return false, nil
	}
	q.queued++
	q.mu.Unlock()
	q.run.Lock()
	return true, nil
}

// leaveInline ends a call that enterInline let run.
func (q *fileQueue) leaveInline() {
	q.run.Unlock()
	q.mu.Lock()
	q.queued--
	q.mu.Unlock()
}

// stop lets the queued calls finish and ends the goroutine.
func (q *fileQueue) stop() {
	q.mu.Lock()
	if !q.shut {
		q.shut = true
		close(q.jobs)
	}
	q.mu.Unlock()
	<-q.done
}

// The shared file pointer lives in the job, not in a file: rank 0 of the
// file's communicator holds it and serves fetch-and-add requests from
// the other ranks on a goroutine, over the file's private communicator;
// nothing is left on disk, so it works where lock files do not (NFS).

const (
	tagSharedReq   = 1
	tagSharedReply = 2
	sharedAdd      = 1
	sharedSet      = 2
	sharedStop     = 3
)

type sharedPtr struct {
	f    *File
	mu   sync.Mutex // rank 0: guards val; other ranks: one request in flight at a time
	val  int64      // rank 0: the pointer, in etypes
	done chan struct{}
	once sync.Once
}

func newSharedPtr(f *File) *sharedPtr {
	s := &sharedPtr{f: f}
	if f.comm.Rank() == 0 {
		s.done = make(chan struct{})
		go s.serve()
	}
	return s
}

// serve answers the other ranks' requests until stop.
func (s *sharedPtr) serve() {
	defer close(s.done)
	c := s.f.comm
	var req [3]int64
	for {
		st, err := s.next(&req)
		if err != nil {
			return // the job is failing: the ranks waiting on us get its error
		}
		if req[0] == sharedStop {
			return
		}
		old := s.local(req[0], req[1])
		if err := Send(c, old, st.Source, tagSharedReply); err != nil {
			return
		}
	}
}

// next receives the next request into req. Its wait is the server's,
// not the rank's: it is not shown to hang diagnosis, which would
// otherwise take a rank that computes outside MPI while it holds a
// shared pointer for a rank blocked in MPI (mpi4py's test_io under
// mpigo run -n 1 was reported hung). An abort of the job still ends it,
// as it ends every receive.
func (s *sharedPtr) next(req *[3]int64) (Status, error) {
	r, err := s.f.comm.Irecv(AsBytes(req[:]), 3, Int64, AnySource, tagSharedReq)
	if err != nil {
		return Status{}, err
	}
	if er := r.er; er != nil {
		er.WaitRefIn(nil, s.f.comm.p.Blk.Service())
	}
	return r.Wait()
}

// sendShared sends the request (op, v) to rank 0 of c, as the three
// int64s next receives.
func sendShared(c *Comm, op, v int64) error {
	req := [3]int64{op, v, 0}
	return c.Send(AsBytes(req[:]), 3, Int64, 0, tagSharedReq)
}

func (s *sharedPtr) local(op, v int64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.val
	switch op {
	case sharedAdd:
		s.val += v
	case sharedSet:
		s.val = v
	}
	return old
}

// call performs op on the pointer and returns its value before.
func (s *sharedPtr) call(op, v int64) (int64, error) {
	c := s.f.comm
	if c.Rank() == 0 {
		return s.local(op, v), nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := sendShared(c, op, v); err != nil {
		return 0, err
	}
	old, _, err := Recv[int64](c, 0, tagSharedReply)
	return old, err
}

func (s *sharedPtr) add(n int64) (int64, error) { return s.call(sharedAdd, n) }

// set sets the pointer on rank 0 (called there).
func (s *sharedPtr) set(v int64) { s.local(sharedSet, v) }

// stop ends rank 0's server; every rank calls it once all are done.
func (s *sharedPtr) stop() {
	s.once.Do(func() {
		if s.done == nil {
			return
		}
		if err := sendShared(s.f.comm, sharedStop, 0); err == nil {
			<-s.done
		}
	})
}

// segPool recycles the segment lists of accesses.
var segPool = sync.Pool{New: func() any { s := make([]fileio.Seg, 0, 16); return &s }}
