package mpi

import (
	"errors"

	"github.com/mpigo/mpi/internal/engine"
)

// grequest is the state of a generalized request (GrequestStart).
type grequest struct {
	query  func(st *Status) error
	free   func() error
	cancel func(complete bool) error

	completed bool // GrequestComplete has been called
	freedFn   bool // free has been called
}

// GrequestStart starts a generalized request (MPI_Grequest_start): an
// operation that the program carries out itself, on its own goroutines,
// and that it declares done with GrequestComplete. The request works
// like any other: Wait, Test, GetStatus, Cancel, Free, and WaitAll,
// WaitAny, WaitSome, TestAll, TestAny and TestSome among other requests.
// MPI's extra_state is whatever the functions capture.
//
//   - query fills in the status that Wait, Test or GetStatus reports once
//     the request is complete (Source, Tag, SetElements, SetCancelled); it
//     starts as the empty status. It is called once; its error is what
//     the wait returns.
//   - free releases the program's resources once nobody can wait for the
//     request any more: after query, in the Wait or Test that completes
//     the request; or, for a request freed with Free, in Free or in
//     GrequestComplete, whichever comes last. Its error is returned by
//     that call.
//   - cancel is called by Cancel while the request is active, with
//     complete telling whether GrequestComplete has been called already;
//     its error is returned by Cancel. A cancellation is reported by
//     query, with SetCancelled.
//
// Any of the functions may be nil (nothing to do). The functions run on
// the goroutine of the call that invokes them, and must not call methods
// of the request itself. c names the calling rank in errors and supplies
// the error handler.
func (c *Comm) GrequestStart(query func(st *Status) error, free func() error, cancel func(complete bool) error) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.GrequestStart", c, Undefined, Undefined), &err)
	}

	if err := c.check("GrequestStart"); err != nil {
		return nil, err
	}
	r := c.newRequest("GrequestStart", loc{})
	r.x.g = &grequest{query: query, free: free, cancel: cancel}
	return r, nil
}

// GrequestComplete tells that the operation of the generalized request r
// is complete (MPI_Grequest_complete): a Wait on it returns, and Test
// reports it done. It is ErrRequest to call it on another kind of request
// or twice.
func (r *Request) GrequestComplete() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Request.GrequestComplete", r.comm(), Undefined, Undefined), &err)
	}

	if r == nil {
		return (*Comm)(nil).errorf("GrequestComplete", ErrRequest, loc{}, "nil request")
	}
	r.mu.Lock()
	g := r.greq()
	if g == nil {
		r.mu.Unlock()
		return r.c.handle(r.c.errorf("GrequestComplete", ErrRequest, r.at(), "not a generalized request"))
	}
	if g.completed {
		r.mu.Unlock()
		return r.c.handle(r.c.errorf("GrequestComplete", ErrRequest, r.at(), "generalized request completed already"))
	}
	g.completed = true
	free := r.is(fFreed) && !g.freedFn // freed before it completed: free now
	if free {
		g.freedFn = true
	}
	r.mu.Unlock()
	r.x.e.CompleteOnce(engine.Status{Source: AnySource, Tag: AnyTag}) // wakes the waiters (unless a failed job ended them: endWaits)
	if free {
		return r.grequestErr("GrequestComplete", "free", g.free)
	}
	return nil
}

// greq returns r's generalized request, nil if r is not one.
func (r *Request) greq() *grequest {
	if r.x == nil {
		return nil
	}
	return r.x.g
}

// grequestErr calls the user function f (if any) named what on behalf of
// call op, and wraps its error.
func (r *Request) grequestErr(op, what string, f func() error) error {
	if f == nil {
		return nil
	}
	if err := f(); err != nil {
		return r.c.handle(r.grequestWrap(op, what, err))
	}
	return nil
}

func (r *Request) grequestWrap(op, what string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err // already says where
	}
	e = r.c.errorf(op, ErrOther, r.at(), "generalized request's %s function", what).(*Error)
	e.Cause = err
	return e
}

// completeG is complete for a generalized request: its status comes from
// query. r.mu is held.
func (r *Request) completeG() {
	st := emptyStatus
	var err error
	if g := r.x.g; g.query != nil {
		if qerr := g.query(&st); qerr != nil {
			err = r.grequestWrap(r.opName(), "query", qerr)
		}
	}
	r.setStatus(st)
	r.setErr(err)
	r.set(fFinished, true)
}

// retire runs when Wait or Test has returned r's result for good: a
// generalized request calls its free function then. It returns the
// result's error joined with free's. r.mu is held.
func (r *Request) retire(err error) error {
	if r.x == nil || r.x.g == nil {
		return err
	}
	return r.retireG(err)
}

// retireG is retire for a generalized request.
func (r *Request) retireG(err error) error {
	g := r.x.g
	if g.freedFn || !g.completed {
		return err
	}
	g.freedFn = true
	if g.free == nil {
		return err
	}
	if ferr := g.free(); ferr != nil {
		ferr = r.grequestWrap(r.opName(), "free", ferr)
		if err == nil {
			r.setErr(ferr)
			return ferr
		}
		return errors.Join(err, ferr)
	}
	return err
}

// GetStatus reports whether r has completed and if so its status, like
// Test, but leaves r as it is (MPI_Request_get_status): a request that
// has completed stays to be waited for, a persistent one stays active,
// and WaitAny and friends still return it. An inactive persistent
// request reports true and the empty status.
func (r *Request) GetStatus() (_ bool, _ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Request.GetStatus", r.comm(), Undefined, Undefined), &err)
	}

	if r == nil {
		return false, Status{}, (*Comm)(nil).errorf("GetStatus", ErrRequest, loc{}, "nil request")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.is(fFreed) {
		return false, Status{}, (*Comm)(nil).errorf("GetStatus", ErrRequest, loc{}, "request has been freed")
	}
	if !r.is(fLive) && r.persistent() {
		return true, emptyStatus, nil
	}
	if r.er == nil || r.is(fFinished) {
		return true, r.status(), r.errv()
	}
	if x := r.x; x != nil && x.pub != nil {
		if x.pub.ready() {
			r.completePub()
			return true, r.status(), r.errv()
		}
		x.pub.backstopLocked() // as Test
	}
	if !r.arrived() { // collects, as Test does
		return false, Status{}, nil
	}
	r.complete()
	return true, r.status(), r.errv()
}

// SetElements makes the status report count basic elements of dt
// (MPI_Status_set_elements), for the query function of a generalized
// request: Count reports them in elements of dt, Bytes in bytes. For a
// derived datatype, count must be a whole number of its elements.
func (s *Status) SetElements(dt *Datatype, count int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Status.SetElements", nil, Undefined, Undefined), &err)
	}

	if dt == nil || dt.t == nil {
		return (*Comm)(nil).errorf("SetElements", ErrType, loc{}, "nil datatype")
	}
	if count < 0 {
		return (*Comm)(nil).errorf("SetElements", ErrCount, loc{}, "negative count %d", count)
	}
	per := int(dt.t.NBasic)
	if per <= 0 || dt.size == 0 {
		if count != 0 {
			return (*Comm)(nil).errorf("SetElements", ErrType, loc{}, "%s has no elements", dt.name)
		}
		s.bytes, s.elem = 0, dt.size
		return nil
	}
	if count%per != 0 {
		return (*Comm)(nil).errorf("SetElements", ErrCount, loc{}, "%d basic elements are not a whole number of %s (%d each)", count, dt.name, per)
	}
	s.bytes, s.size, s.elem = count/per*dt.size, count/per*dt.size, dt.size
	return nil
}

// SetCancelled records in the status whether the operation was cancelled
// (MPI_Status_set_cancelled), for the query function of a generalized
// request.
func (s *Status) SetCancelled(flag bool) { s.cancelled = flag }
