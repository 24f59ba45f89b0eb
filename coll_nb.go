package mpi

import (
	"errors"

	"github.com/mpigo/mpi/internal/engine"
)

// Non-blocking collectives.
//
// A non-blocking collective takes its tag base from c's non-blocking
// collective sequence number when it starts, on the caller's goroutine
// (nbCollTag); MPI requires every rank to start collectives on a
// communicator in the same order, so the ranks agree on it. Blocking and
// non-blocking calls are numbered apart, so a blocking collective made
// while a non-blocking one is pending on another rank's other side of it
// does not take its messages. A goroutine
// then runs the blocking algorithm on a view of c pinned to that tag base,
// so the operation progresses while the caller computes, and concurrent
// collectives on one communicator never exchange each other's messages.
// The request completes when the goroutine is done. Buffers and values
// passed to the call (slices, maps, ...) must not be modified until then.
// Cancel has no effect on such a request (MPI makes cancelling a
// collective erroneous); Free lets it finish unobserved.

// pinnedView returns a view of c whose next (and only) collective uses
// tag base tag. It reports errors without calling c's error handler; the
// request does that when it is waited for.
func (c *Comm) pinnedView(tag int) *Comm {
	v := &Comm{p: c.p, ctx: c.ctx, rank: c.rank, group: c.group, name: c.name, shadow: c.shadow, pinned: tag + 1, hc: c.hc.snapshot(), topo: c.topo, inter: c.inter}
	v.errh.Store(ErrorsReturn)
	v.freeEpoch = freeEpoch.Load()
	return v
}

// typeProblem is dt.checkComm for a collective on c. A pinned view runs
// a non-blocking or persistent collective after its call returned, and
// a datatype the program freed since still counts as usable there.
func (c *Comm) typeProblem(dt *Datatype) string {
	if c.pinned != 0 {
		return dt.checkCommBefore(c.freeEpoch)
	}
	return dt.checkComm()
}

// startColl starts body on a pinned view of c in its own goroutine and
// returns the request that completes with it. Errors name the call op.
func (c *Comm) startColl(op string, body func(v *Comm) error) (*Request, error) {
	if err := c.check(op); err != nil {
		return nil, err
	}
	return c.startCollAt(op, c.nbCollTag(1), body), nil
}

// startCollAt is startColl with the tag base already taken (neighbourhood
// collectives take several tags per call).
func (c *Comm) startCollAt(op string, tag int, body func(v *Comm) error) *Request {
	v := c.pinnedView(tag)
	r := c.newRequest(op, loc{})
	var berr error
	r.x.finish = func(engine.Status) error { return berr }
	er := r.er
	go func() {
		err := body(v)
		var e *Error
		if errors.As(err, &e) && e.Op != op {
			e.Op = op + " (" + e.Op + ")"
		}
		berr = err
		er.CompleteOnce(engine.Status{Source: -1, Tag: -1}) // unless a failed job ended the wait first (endWaits)
	}()
	return r
}

// Future is a typed non-blocking collective in flight (Iallreduce,
// Ibcast, ...). Wait returns its result. The values passed to the call
// must not be modified until it completes. It is also a Waiter, so WaitAll
// takes it; its Request works with WaitAny, Test and the like.
type Future[T any] struct {
	req *Request
	v   T
	// keepOnErr: the result is valid even with an error (Iagree's value
	// beside ErrProcFailed).
	keepOnErr bool
}

// request returns f's request; a nil *Future is a null request.
func (f *Future[T]) request() *Request {
	if f == nil {
		return nil
	}
	return f.req
}

// Request returns the underlying request.
func (f *Future[T]) Request() *Request { return f.request() }

// Wait blocks until the collective is complete on this rank and returns
// its result. Waiting again returns the same result.
func (f *Future[T]) Wait() (_ T, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Future.Wait", f.comm(), Undefined, Undefined), &err)
	}

	if f == nil { // a null request
		var zero T
		return zero, nil
	}
	if _, err := f.req.wait(); err != nil {
		var zero T
		if f.keepOnErr {
			zero = f.v
		}
		return zero, err
	}
	return f.v, nil
}

// Test reports whether the collective is complete, without blocking, and
// if so returns its result.
func (f *Future[T]) Test() (_ bool, _ T, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Future.Test", f.comm(), Undefined, Undefined), &err)
	}

	done, _, err := f.request().test()
	if !done && err == nil {
		f.request().comm().missed()
	}
	if f == nil {
		var zero T
		return done, zero, err
	}
	if !done || err != nil {
		var zero T
		if done && f.keepOnErr {
			zero = f.v
		}
		return done, zero, err
	}
	return true, f.v, nil
}

// startFuture runs body as a non-blocking collective with a typed result.
func startFuture[T any](c *Comm, op string, body func(v *Comm) (T, error)) (*Future[T], error) {
	return futureOf(c.startColl, op, body)
}

// futureOf runs body through start (startColl, or startNbr for the
// neighbourhood collectives) and keeps its typed result in a Future.
func futureOf[T any](start func(op string, body func(v *Comm) error) (*Request, error), op string, body func(v *Comm) (T, error)) (*Future[T], error) {
	f := &Future[T]{}
	r, err := start(op, func(v *Comm) error {
		res, err := body(v)
		f.v = res
		return err
	})
	if err != nil {
		return nil, err
	}
	f.req = r
	return f, nil
}
