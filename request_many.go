package mpi

import (
	"slices"
	"time"

	"github.com/mpigo/mpi/internal/device"
	"github.com/mpigo/mpi/internal/engine"
)

// The Wait/Test family over many requests: WaitAll, WaitAllStatus,
// WaitAny, WaitSome, TestAny, TestSome, TestAll.

// WaitAll waits for every request and returns their errors joined, each
// naming its index (MPI_Waitall).
//
// It waits for the requests from last to first: requests usually complete
// in the order they were started, so waiting for the last one first parks
// the caller once instead of once per request.
func WaitAll(reqs ...Waiter) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("WaitAll", waitersComm(reqs), Undefined, Undefined), &err)
	}

	return inStatus("WaitAll", waitEach(reqs, func(i int) (*Request, bool) {
		w := reqs[i]
		if w == nil {
			return nil, false
		}
		if r, ok := w.(*Request); ok { // most are: no dynamic call
			return r, false
		}
		return w.request(), false
	}))
}

// waitEach waits for every request of list (req gives the request of
// element i, nil to skip it, and whether nobody else can reach it, which
// waitOwned may then wait for without its lock) from last to first,
// giving pooled engine requests back a batch at a time, and returns the
// failures in list order. WaitAll and Requests.WaitAll share it.
func waitEach[W any](list []W, req func(i int) (*Request, bool)) []failure {
	var failed []failure
	var b erBatch
	for i := len(list) - 1; i >= 0; i-- {
		r, owned := req(i)
		if r == nil {
			continue
		}
		var err error
		if owned {
			err = r.waitOwned(&b)
		} else {
			err = r.waitInto(&b, nil)
		}
		if err != nil {
			failed = append(failed, failure{i, r, err})
		}
	}
	b.flush()
	slices.Reverse(failed)
	return failed
}

// WaitAllStatus is WaitAll that also returns every status, in order
// (MPI_Waitall with statuses).
func WaitAllStatus(ws ...Waiter) (_ []Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("WaitAllStatus", requestsComm(requestsOf(ws)), Undefined, Undefined), &err)
	}
	reqs := requestsOf(ws)
	return waitAllStatus(reqs)
}

// waitAllStatus is WaitAllStatus without the profiler hook, for the package's own use.
func waitAllStatus(reqs []*Request) ([]Status, error) {
	sts := make([]Status, len(reqs))
	var failed []failure
	for i := len(reqs) - 1; i >= 0; i-- { // last first, as WaitAll does
		r := reqs[i]
		if r == nil {
			sts[i] = emptyStatus
			continue
		}
		st, err := r.wait()
		if err != nil {
			st.err = err
			failed = append(failed, failure{i, r, err})
		}
		sts[i] = st
	}
	slices.Reverse(failed)
	return sts, inStatus("WaitAll", failed)
}

// park blocks until one of the active requests in reqs completes.
func park(reqs []*Request) {
	var ers []*engine.Request
	var pinned []*Request
	for _, r := range reqs {
		if r.active() {
			r.mu.Lock()
			if r.er != nil {
				if x := r.x; x != nil && x.pub != nil {
					x.pub.backstopLocked()
				}
				ers = append(ers, r.er)
				r.pin()
				pinned = append(pinned, r)
			}
			r.mu.Unlock()
		}
	}
	defer func() {
		for _, r := range pinned {
			r.mu.Lock()
			r.unpin()
			r.mu.Unlock()
		}
	}()
	anyDone := func() bool {
		for _, er := range ers {
			if er.Completing() { // not Done: see Completing
				return true
			}
		}
		return false
	}
	if len(ers) == 0 {
		return
	}
	// Time the wait for the wait_time performance variable if it runs
	// on this rank (the requests' rank: a rank waits for its own).
	if c := requestsComm(reqs); c != nil && c.p != nil && c.p.Stats.WaitOn.Load() != 0 {
		t0 := time.Now()
		defer func() { c.p.Stats.WaitNs.Add(uint64(time.Since(t0))) }()
	}
	w := engine.GetWaiter()
	for _, er := range ers {
		er.SetWaiter(w)
	}
	var bw *device.Parked // this wait as hang diagnosis sees it
	var blk *device.Waits
	if c := requestsComm(reqs); c != nil && c.p != nil {
		blk = &c.p.Blk
	}
	for !anyDone() {
		if blk != nil {
			if bw == nil {
				bw = blk.Add(w)
			} else {
				blk.Rewoken(bw, w)
			}
		}
		w.Park()
	}
	if bw != nil {
		blk.Remove(bw)
	}
	for _, er := range ers {
		er.SetWaiter(nil)
	}
	engine.PutWaiter(w)
}

// WaitAny waits until one of the active requests completes and returns its
// index and status (MPI_Waitany). Nil and inactive requests (persistent
// ones not started, requests already waited for) are ignored; if no
// request is active, it returns Undefined and the empty status at once.
// The value of a *Pending it names is then read with its Wait.
func WaitAny(ws ...Waiter) (_ int, _ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("WaitAny", requestsComm(requestsOf(ws)), Undefined, Undefined), &err)
	}
	reqs := requestsOf(ws)

	for {
		idx, ok, st, err := testAny(reqs)
		if ok || err != nil {
			return idx, st, err
		}
		park(reqs)
	}
}

// TestAny reports whether one of the active requests has completed, and
// which, without blocking (MPI_Testany). If none is active it reports
// (Undefined, true). A request that stays pending with an error (a
// receive from AnySource interrupted by a failure under fault tolerance:
// ErrProcFailedPending) is reported with its index, false and the error;
// WaitAny returns it the same way.
func TestAny(ws ...Waiter) (_ int, _ bool, _ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("TestAny", requestsComm(requestsOf(ws)), Undefined, Undefined), &err)
	}
	reqs := requestsOf(ws)
	i, ok, st, err := testAny(reqs)
	if !ok && err == nil {
		requestsComm(reqs).missed()
	}
	return i, ok, st, err
}

// testAny is TestAny without the profiler hook, for the package's own use.
func testAny(reqs []*Request) (int, bool, Status, error) {
	any := false
	for i, r := range reqs {
		if !r.active() {
			continue
		}
		any = true
		ok, st, err := r.test()
		if ok {
			return i, true, st, err
		}
		if err != nil {
			// Still pending but in error: a receive from AnySource that a
			// failure interrupted (ErrProcFailedPending, ft.go). Said, not
			// skipped: WaitAny would otherwise post it again and again.
			return i, false, st, err
		}
	}
	if !any {
		return Undefined, true, emptyStatus, nil
	}
	return Undefined, false, Status{}, nil
}

// WaitSome waits until at least one active request completes and returns
// the indices and statuses of all that have (MPI_Waitsome). If none is
// active it returns nil slices.
func WaitSome(ws ...Waiter) (_ []int, _ []Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("WaitSome", requestsComm(requestsOf(ws)), Undefined, Undefined), &err)
	}
	reqs := requestsOf(ws)
	for {
		idx, sts, err := testSome(reqs)
		if len(idx) > 0 || err != nil || !anyActive(reqs) {
			return idx, sts, err
		}
		park(reqs)
	}
}

func anyActive(reqs []*Request) bool {
	for _, r := range reqs {
		if r.active() {
			return true
		}
	}
	return false
}

// TestSome returns the indices and statuses of the active requests that
// have completed, without blocking (MPI_Testsome).
func TestSome(ws ...Waiter) (_ []int, _ []Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("TestSome", requestsComm(requestsOf(ws)), Undefined, Undefined), &err)
	}
	reqs := requestsOf(ws)
	idx, sts, err := testSome(reqs)
	if len(idx) == 0 && err == nil {
		requestsComm(reqs).missed()
	}
	return idx, sts, err
}

// testSome is TestSome without the profiler hook, for the package's own use.
func testSome(reqs []*Request) ([]int, []Status, error) {
	var idx []int
	var sts []Status
	var failed []failure
	for i, r := range reqs {
		if !r.active() || !r.done() {
			continue
		}
		_, st, err := r.test()
		if err != nil {
			st.err = err
			failed = append(failed, failure{i, r, err})
		}
		idx = append(idx, i)
		sts = append(sts, st)
	}
	return idx, sts, inStatus("TestSome", failed)
}

// TestAll reports whether every request has completed, without blocking
// (MPI_Testall). Only when it reports true are the requests finished (and
// the statuses returned).
func TestAll(ws ...Waiter) (_ bool, _ []Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("TestAll", requestsComm(requestsOf(ws)), Undefined, Undefined), &err)
	}
	reqs := requestsOf(ws)
	for _, r := range reqs {
		if r != nil && !r.done() {
			r.comm().missed()
			return false, nil, nil
		}
	}
	sts, err := waitAllStatus(reqs)
	return true, sts, err
}
