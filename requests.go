package mpi

import "github.com/mpigo/mpi/internal/engine"

// Requests is a reusable set of non-blocking sends and receives: the Go
// form of the C idiom of an MPI_Request array that a program fills window
// after window and completes with MPI_Waitall. PostIsend and
// PostIrecvInto (or, in the low-level layer, Comm.PostIsend and
// Comm.PostIrecv) start operations in the set; WaitAll (or TestAll) waits
// for all of them, and the next post after that empties the set and reuses
// its memory (even a post that fails: its arguments are checked after the
// set is emptied).
//
// Isend and IrecvInto return a *Request that must stay valid for as long
// as the caller keeps it, so every call allocates one, and in a loop of
// many small messages the garbage collector's work on them costs about a
// third of the message rate. A set hands out no *Request: its requests live in
// the set's own memory, which it reuses once they are complete, so a
// window of messages posted in a set allocates nothing after the first
// (docs/performance.md, "Requests sets").
//
// The zero value is an empty set ready to use. A set is used by one
// goroutine at a time, and must not be copied after first use.
type Requests struct {
	noCopy noCopy
	// reqs are the requests of the operations posted, in order: most are
	// slots of chunks, a few (ProcNull, a send a transport refused) are
	// requests of their own.
	reqs []*Request
	// own has bit i set when reqs[i] is a slot of the set's own, which
	// WaitAll waits for without its lock (Request.waitOwned).
	own []uint64
	// chunks hold the set's slots; a chunk never moves, so a slot's
	// address stays valid while its operation is in flight. ers, made with
	// a chunk's first receive, hold its slots' engine requests for
	// receives, kept from one use of a slot to the next: a receive in a
	// set takes none from the rank's free list and gives none back
	// (newPooledRequest).
	chunks []*[setChunk]Request
	ers    []*[setChunk]engine.Request
	// used counts the slots handed out since the set was last emptied.
	used int
	// done: WaitAll or TestAll completed every request in reqs; the next
	// post empties the set. err is then what completing them returned,
	// which WaitAll and TestAll return again until then.
	done bool
	err  error
}

// setChunk is how many slots a Requests set allocates at a time: two
// windows of the usual 64 messages per chunk. A power of two, unlike
// reqBlock, so that finding a slot divides by a shift: a set allocates
// its chunks once, and the 1280 bytes the allocator's size class leaves
// over matter less than each message's lookup.
const setChunk = 128

// nilSet is the error of a post into a nil *Requests: there is no set to
// hold the request. A nil or freed c is reported first, as by every call
// on it (the check costs nothing on the path of a valid set).
func nilSet(c *Comm, op string) error {
	if err := c.check(op); err != nil {
		return err
	}
	return c.fail(op, ErrRequest, loc{}, "nil Requests set")
}

// noCopy makes go vet's copylocks check report a copy of the struct that
// holds it.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// slot returns a zeroed Request for the next operation, emptying the set
// first if it was completed. The slot counts as used only once add
// records the operation.
func (rs *Requests) slot() *Request {
	if rs.done {
		rs.reqs = rs.reqs[:0]
		rs.own = rs.own[:0]
		rs.used = 0
		rs.done, rs.err = false, nil
	}
	i := rs.used
	if i/setChunk == len(rs.chunks) {
		rs.chunks = append(rs.chunks, new([setChunk]Request))
	}
	r := &rs.chunks[i/setChunk][i%setChunk]
	*r = Request{}
	return r
}

// slotER returns the engine request of the slot slot() returned last,
// for a receive.
func (rs *Requests) slotER() *engine.Request {
	i := rs.used
	for len(rs.ers) <= i/setChunk {
		rs.ers = append(rs.ers, nil)
	}
	ch := rs.ers[i/setChunk]
	if ch == nil {
		ch = new([setChunk]engine.Request)
		rs.ers[i/setChunk] = ch
	}
	return &ch[i%setChunk]
}

// add records r, the request of an operation just posted in slot s (r is
// s unless the operation needed a request of its own).
func (rs *Requests) add(s, r *Request) {
	i := len(rs.reqs)
	if i/64 == len(rs.own) {
		rs.own = append(rs.own, 0)
	}
	if r == s {
		rs.used++
		rs.own[i/64] |= 1 << (i % 64)
	}
	rs.reqs = append(rs.reqs, r)
}

// owns reports whether reqs[i] is a slot of the set's own.
func (rs *Requests) owns(i int) bool { return rs.own[i/64]&(1<<(i%64)) != 0 }

// Len returns how many operations the set holds: those posted since it
// was last emptied. A nil *Requests is an empty set that cannot be
// posted to (a post fails with ErrRequest): Len is 0, WaitAll and
// TestAll complete at once with no error, Status is the empty status.
func (rs *Requests) Len() int {
	if rs == nil {
		return 0
	}
	return len(rs.reqs)
}

// PostIsend starts sending v in rs and returns at once, as Isend does. If
// v is a slice, its elements must not be modified until rs completes.
func PostIsend[T any](rs *Requests, c *Comm, v T, dest, tag int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("PostIsend", c, dest, tag), &err)
	}
	if rs == nil {
		return nilSet(c, "Isend")
	}
	s := rs.slot()
	r, err := isendT(s, c, "Isend", v, dest, tag, engine.Standard)
	if err != nil {
		return err
	}
	rs.add(s, r)
	return nil
}

// PostIrecvInto starts receiving elements of E into buf in rs and returns
// at once, as IrecvInto does. buf must not be used until rs completes. E
// must be plain.
func PostIrecvInto[E any](rs *Requests, c *Comm, buf []E, source, tag int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("PostIrecvInto", c, source, tag), &err)
	}
	if rs == nil {
		return nilSet(c, "IrecvInto")
	}
	s := rs.slot()
	r, err := irecvInto(s, rs.slotER(), c, buf, source, tag)
	if err != nil {
		return err
	}
	rs.add(s, r)
	return nil
}

// PostIsend starts a send of count elements of dt from buf in rs and
// returns at once, as Isend does (MPI_Isend into an element of a request
// array). buf must not be modified until rs completes.
func (c *Comm) PostIsend(rs *Requests, buf []byte, count int, dt *Datatype, dest, tag int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.PostIsend", c, dest, tag), &err)
	}
	if rs == nil {
		return nilSet(c, "Isend")
	}
	s := rs.slot()
	r, err := c.isend(s, "Isend", buf, count, dt, dest, tag, engine.Standard)
	if err != nil {
		return err
	}
	rs.add(s, r)
	return nil
}

// PostIrecv starts a receive of up to count elements of dt into buf in rs
// and returns at once, as Irecv does. buf must not be used until rs
// completes.
func (c *Comm) PostIrecv(rs *Requests, buf []byte, count int, dt *Datatype, src, tag int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.PostIrecv", c, src, tag), &err)
	}
	if rs == nil {
		return nilSet(c, "Irecv")
	}
	s := rs.slot()
	r, err := c.irecv(s, rs.slotER(), buf, count, dt, src, tag)
	if err != nil {
		return err
	}
	rs.add(s, r)
	return nil
}

// WaitAll waits for every operation in rs and returns their errors
// joined, each naming its index in the order posted, as WaitAll does for
// a list of requests (MPI_Waitall). Afterwards Status reports each one's
// status, and WaitAll returns the same error again, until the next post
// empties the set. On a nil *Requests it returns nil at once.
func (rs *Requests) WaitAll() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Requests.WaitAll", rs.comm(), Undefined, Undefined), &err)
	}
	if rs == nil {
		return nil
	}
	return rs.waitAll()
}

// comm is the communicator a Profiler sees a call on rs made on; nil for
// a nil set.
func (rs *Requests) comm() *Comm {
	if rs == nil {
		return nil
	}
	return requestsComm(rs.reqs)
}

// waitAll is WaitAll without the profiler hook, for TestAll.
func (rs *Requests) waitAll() error {
	if rs.done {
		return rs.err
	}
	failed := waitEach(rs.reqs, func(i int) (*Request, bool) { return rs.reqs[i], rs.owns(i) })
	rs.done, rs.err = true, inStatus("Requests.WaitAll", failed)
	return rs.err
}

// TestAll reports whether every operation in rs has completed, without
// blocking (MPI_Testall). When it reports true the set is complete as
// after WaitAll, and err holds the operations' errors. A nil *Requests
// is complete: true, nil.
func (rs *Requests) TestAll() (_ bool, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Requests.TestAll", rs.comm(), Undefined, Undefined), &err)
	}
	if rs == nil {
		return true, nil
	}
	if rs.done {
		return true, rs.err
	}
	for _, r := range rs.reqs {
		if !r.done() {
			return false, nil
		}
	}
	return true, rs.waitAll()
}

// Status returns the status of the i-th operation posted in rs (from 0),
// once WaitAll or TestAll has completed the set; the empty status (see
// EmptyStatus) before that, if i is out of range, or on a nil *Requests.
func (rs *Requests) Status(i int) Status {
	if rs == nil || !rs.done || i < 0 || i >= len(rs.reqs) {
		return emptyStatus
	}
	r := rs.reqs[i]
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status()
}
