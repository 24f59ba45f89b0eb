package mpi

// RequestList is a list of requests as a C port holds them (an
// MPI_Request array): the Wait and Test family as methods, without
// copying the list into a []Waiter first. Nil entries are null requests
// (MPI_REQUEST_NULL). mpi.RequestList(reqs).WaitAll() waits for a
// []*mpi.Request reqs; indices count in the list.
type RequestList []*Request

// WaitAll waits for every request (MPI_Waitall); see the function WaitAll.
func (l RequestList) WaitAll() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("RequestList.WaitAll", requestsComm(l), Undefined, Undefined), &err)
	}
	return inStatus("WaitAll", waitEach(l, func(i int) (*Request, bool) { return l[i], false }))
}

// WaitAllStatus waits for every request and returns their statuses
// (MPI_Waitall with statuses).
func (l RequestList) WaitAllStatus() (_ []Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("RequestList.WaitAllStatus", requestsComm(l), Undefined, Undefined), &err)
	}
	return waitAllStatus(l)
}

// WaitAny waits until one of the active requests completes (MPI_Waitany);
// see the function WaitAny.
func (l RequestList) WaitAny() (_ int, _ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("RequestList.WaitAny", requestsComm(l), Undefined, Undefined), &err)
	}
	for {
		idx, ok, st, err := testAny(l)
		if ok || err != nil {
			return idx, st, err
		}
		park(l)
	}
}

// TestAny reports whether one of the active requests has completed
// (MPI_Testany); see the function TestAny.
func (l RequestList) TestAny() (_ int, _ bool, _ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("RequestList.TestAny", requestsComm(l), Undefined, Undefined), &err)
	}
	return testAny(l)
}

// WaitSome waits until at least one active request completes
// (MPI_Waitsome); see the function WaitSome.
func (l RequestList) WaitSome() (_ []int, _ []Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("RequestList.WaitSome", requestsComm(l), Undefined, Undefined), &err)
	}
	for {
		idx, sts, err := testSome(l)
		if len(idx) > 0 || err != nil || !anyActive(l) {
			return idx, sts, err
		}
		park(l)
	}
}

// TestSome returns the active requests that have completed
// (MPI_Testsome); see the function TestSome.
func (l RequestList) TestSome() (_ []int, _ []Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("RequestList.TestSome", requestsComm(l), Undefined, Undefined), &err)
	}
	return testSome(l)
}

// TestAll reports whether every request has completed (MPI_Testall); see
// the function TestAll.
func (l RequestList) TestAll() (_ bool, _ []Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("RequestList.TestAll", requestsComm(l), Undefined, Undefined), &err)
	}
	for _, r := range l {
		if r != nil && !r.done() {
			return false, nil, nil
		}
	}
	sts, err := waitAllStatus(l)
	return true, sts, err
}

// StartAll starts every persistent request of the list (MPI_Startall).
func (l RequestList) StartAll() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("RequestList.StartAll", requestsComm(l), Undefined, Undefined), &err)
	}
	for _, r := range l {
		if err := r.begin(); err != nil {
			return err
		}
	}
	return nil
}

// Waiters returns the requests of l as Waiters, for the functions of the
// family that also take *Pending and *Future values mixed with requests.
func (l RequestList) Waiters() []Waiter {
	ws := make([]Waiter, len(l))
	for i, r := range l {
		if r != nil {
			ws[i] = r
		}
	}
	return ws
}
