package mpi

import (
	"errors"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/mpigo/mpi/internal/engine"
)

// Request is a non-blocking or persistent operation in flight
// (MPI_Request). Wait or Test it to learn how it ended. A Request may be
// waited on by one goroutine at a time; waiting again after completion
// returns the same result.
type Request struct {
	c *Comm

	mu sync.Mutex
	er *engine.Request // the engine's request; nil if none is active
	// x holds what only some requests use (persistent, generalized,
	// buffered and converting ones, the fault-tolerant repost, an error
	// result, a status or a call name that does not fit the compact
	// fields below); nil for most. It keeps a Request small: the requests
	// of non-blocking calls are allocated for every message, and what each
	// message costs grows with their bytes (docs/performance.md, "Smaller
	// requests").
	x *reqMore
	// The result's status, compactly (status and setStatus; a status
	// whose source, tag, element size or byte counts do not fit int32 is
	// kept in x.st, and fWide says so). Before the result, stElem already
	// holds the size of one element of the receive's type, which complete
	// keeps. A non-blocking send that left at once by the short road
	// (Comm.isendNow) has no engine request and an empty status: stBytes
	// and stSize then hold its send id, for Cancel, and fSent says so
	// (sentID).
	stBytes, stSize, stSource, stTag, stElem int32
	// peer and tag are the request's loc (peer and tag, for error
	// messages), compactly: see setAt and at.
	peer, tag int32
	// pins counts the goroutines that hold er outside r.mu (a Wait
	// blocked on it, WaitAny parking on it). A pooled er that was pinned
	// when it was released is left to the garbage collector; so is one
	// whose count reached pinMax, where it stays (see pin).
	pins uint8
	// where says which loc peer and tag are (see setAt); op names the
	// call that made the request (opName).
	where, op uint8
	flags     reqFlags
}

// reqFlags are a Request's yes-or-no facts, one bit each: with them
// and the byte-sized fields above, a Request fills one 64-byte cache
// line (TestRequestBlock).
type reqFlags uint8

const (
	// fLive: r has an operation whose result Wait or Test has not
	// returned yet; from creation (or Start, for a persistent request)
	// until then. A request that is not live is inactive: WaitAny and
	// friends ignore it, and a persistent one waits with the empty
	// status.
	fLive reqFlags = 1 << iota
	// fFinished: r's result is in its status fields (complete ran), or
	// r never needed the engine.
	fFinished
	fFreed
	// fPooled: er came from the rank's free list (erFreeList) and goes
	// back there once Wait or Test has handed its result over, unless
	// pins says someone else may still hold it.
	fPooled
	// fSliceOf: the type is written []t (IrecvInto), for a mismatch's
	// message (recvStatusErr's tname "[]").
	fSliceOf
	fCancelled // the status's cancelled
	fWide      // the status is in x.st
	fSent      // stBytes and stSize hold a short-road send's id (sentID)
)

// is reports whether all of f are set in r.
func (r *Request) is(f reqFlags) bool { return r.flags&f == f }

// set sets or clears f in r. r is not shared yet, or r.mu is held.
func (r *Request) set(f reqFlags, on bool) {
	if on {
		r.flags |= f
	} else {
		r.flags &^= f
	}
}

// setSent marks r as a send that left by the short road with send id
// id (0: none), keeping the id where the empty status has room.
func (r *Request) setSent(id uint64) {
	if id == 0 {
		return
	}
	r.stBytes, r.stSize = int32(uint32(id)), int32(uint32(id>>32))
	r.set(fSent, true)
}

// sentID returns the send id setSent kept, 0 if none.
func (r *Request) sentID() uint64 {
	if !r.is(fSent) {
		return 0
	}
	return uint64(uint32(r.stBytes)) | uint64(uint32(r.stSize))<<32
}

// pinMax is where pins stops counting.
const pinMax = 255

// pin counts one more goroutine holding er outside r.mu; unpin one
// fewer. A count that reached pinMax stays there: its er is then never
// given back to the free list, only to the garbage collector, which is
// safe whatever the true count. r.mu is held.
func (r *Request) pin() {
	if r.pins < pinMax {
		r.pins++
	}
}

func (r *Request) unpin() {
	if r.pins < pinMax {
		r.pins--
	}
}

// reqMore is the part of a Request that few requests use (Request.x).
type reqMore struct {
	// e is r's own engine request (persistent and generalized requests,
	// collectives); nil for a pooled one (see newPooledRequest).
	e     *engine.Request
	start func(r *Request) error // persistent: posts a new operation
	conv  *convLow               // receives into memory in a mixed job: the conversion (hetero.go)
	// bsend is, for a buffered send (Ibsend, BsendInit), the engine's
	// send from the attached buffer: the request itself completes at once,
	// but Cancel may still withdraw that send. Cancel also puts here the
	// engine request it makes for a send that took the short road
	// (sentID).
	bsend *engine.Request
	g     *grequest // a generalized request (GrequestStart)
	// repost, for a receive from AnySource under fault tolerance, posts
	// the receive again on er; rearm: it failed with ErrProcFailedPending
	// and stays pending, to be posted again by the next Wait or Test
	// (ft.go).
	repost func(er *engine.Request)
	rearm  bool
	// err is the request's error result, if any (Request.errv).
	err error
	// at is the request's loc when it does not fit Request's compact form
	// (where == whereMore).
	at loc
	// st is the request's status when it does not fit Request's compact
	// fields (stWide).
	st Status
	// finish, for some requests made by newRequest (non-blocking
	// collectives' results, neighborhood receives), runs after the
	// engine's part completes and gives the request's error.
	finish func(st engine.Status) error
	// op is the name of the call that made the request when opName has
	// no code for it (op == opWide).
	op string
	// activeFree: freeing r while it is active is an error (persistent
	// collectives and partitioned requests, where MPI makes it erroneous:
	// their other ranks would wait for a run that never comes).
	activeFree bool
	// parkNow: a wait for r parks at once instead of polling first. A
	// persistent collective completes on a goroutine of this process,
	// whose own waits poll; polling here too only keeps that goroutine
	// from a core (on a real-time thread, for the whole poll).
	parkNow bool
	// plan is a persistent collective that runs the blocking algorithm
	// (coll_persist.go): its Start runs under r.mu (startLocked), and a
	// Wait that claims the Start runs it on the waiting goroutine and
	// completes r without its engine request (completePlan).
	plan *collPlan
	part *partState // a partitioned send or receive (part.go)
	// freed, if set, lets go of what the request holds once it is freed
	// (a persistent collective's meeting point).
	freed func()
	// pub is a persistent collective by publications between goroutine
	// ranks (coll_persist_pub.go) or processes of one node
	// (coll_persist_shm.go), whose Start, Wait and Test run under r.mu
	// and complete it without its engine request when they can.
	pub publisher
}

// more returns r.x, made if r has none. r is not shared yet, or r.mu is
// held.
func (r *Request) more() *reqMore {
	if r.x == nil {
		r.x = new(reqMore)
	}
	return r.x
}

// Request.where: which loc a request has. Every loc the package gives a
// request fits: none (loc{}), or a peer and a tag in int32 with one of
// these names; any other is kept in x.at.
const (
	whereNone uint8 = iota
	whereDest
	whereSource
	whereRoot
	whereMore // in x.at
)

var whereNames = [...]string{whereDest: "dest", whereSource: "source", whereRoot: "root"}

// setAt sets r's loc to l. r is not shared yet, or r.mu is held.
func (r *Request) setAt(l loc) {
	w := whereMore
	switch {
	case l == loc{}:
		r.where, r.peer, r.tag = whereNone, 0, 0
		return
	case !l.hasTag || int(int32(l.peer)) != l.peer || int(int32(l.tag)) != l.tag:
	case l.what == "dest":
		w = whereDest
	case l.what == "source":
		w = whereSource
	case l.what == "root":
		w = whereRoot
	}
	if w == whereMore {
		r.more().at = l
	} else {
		r.peer, r.tag = int32(l.peer), int32(l.tag)
	}
	r.where = w
}

// setOpPeer is setOp(name) and setAt(at(whereNames[w], peer, tag)) in one
// call, without comparing loc names, for the requests made for every
// message: their common cases need no further call (separate calls cost
// about 35 instructions each, twice a message).
func (r *Request) setOpPeer(name string, w uint8, peer, tag int) {
	switch {
	case name == "Isend":
		r.op = opIsend
	case name == "IrecvInto":
		r.op = opIrecvInto
	default:
		r.setOp(name)
	}
	if p, t := int32(peer), int32(tag); int(p) == peer && int(t) == tag {
		r.where, r.peer, r.tag = w, p, t
		return
	}
	r.setWide(w, peer, tag) // not both in int32 (int may be 32 or 64 bits)
}

// setWide is setOpPeer's rare case: a peer or a tag beyond int32.
func (r *Request) setWide(w uint8, peer, tag int) { r.setAt(at(whereNames[w], peer, tag)) }

// at returns r's loc (see setAt).
func (r *Request) at() loc {
	switch r.where {
	case whereNone:
		return loc{}
	case whereMore:
		return r.x.at
	}
	return loc{what: whereNames[r.where], peer: int(r.peer), tag: int(r.tag), hasTag: true}
}

// errv returns r's error result (nil while it has none).
func (r *Request) errv() error {
	if r.x == nil {
		return nil
	}
	return r.x.err
}

// setErr sets r's error result. r is not shared yet, or r.mu is held.
func (r *Request) setErr(err error) {
	if err != nil {
		r.more().err = err
	} else if r.x != nil && r.x.err != nil {
		r.x.err = nil
	}
}

// status returns r's result status (see Request.stBytes).
func (r *Request) status() Status {
	if r.is(fWide) {
		return r.x.st
	}
	if r.is(fSent) {
		return Status{Source: int(r.stSource), Tag: int(r.stTag), elem: int(r.stElem), cancelled: r.is(fCancelled)}
	}
	return Status{Source: int(r.stSource), Tag: int(r.stTag), bytes: int(r.stBytes), size: int(r.stSize),
		elem: int(r.stElem), cancelled: r.is(fCancelled)}
}

// setStatus sets r's result status. r is not shared yet, or r.mu is held.
func (r *Request) setStatus(st Status) {
	if !r.packStatus(st.Source, st.Tag, st.bytes, st.size, st.elem, st.cancelled) {
		r.more().st = st
		r.flags = r.flags&^fSent | fWide
	}
}

// setStatusOf is setStatus(statusOf(*est, elem)) without building the
// Status on the way: it runs for every completed request.
func (r *Request) setStatusOf(est *engine.Status, elem int) {
	if !r.packStatus(est.Source, est.Tag, est.Count, est.Size, elem, est.Cancelled) {
		r.setStatus(statusOf(*est, elem))
	}
}

// packStatus keeps a status in r's compact fields and reports whether it
// fits them (every number in int32); if not, r is left as it was.
func (r *Request) packStatus(source, tag, bytes, size, elem int, cancelled bool) bool {
	if int(int32(source)) != source || int(int32(tag)) != tag || int(int32(elem)) != elem ||
		int(int32(bytes)) != bytes || int(int32(size)) != size {
		return false
	}
	r.set(fWide|fSent, false)
	r.set(fCancelled, cancelled)
	r.stSource, r.stTag, r.stElem = int32(source), int32(tag), int32(elem)
	r.stBytes, r.stSize = int32(bytes), int32(size)
	return true
}

// elem returns the size of one element of r's receive type, 0 for bytes
// (Status.elem).
func (r *Request) elem() int {
	if r.is(fWide) {
		return r.x.st.elem
	}
	return int(r.stElem)
}

// setElem sets r's element size and clears the rest of its status. r is
// not shared yet, or r.mu is held.
func (r *Request) setElem(elem int) {
	if e := int32(elem); int(e) == elem {
		r.flags &^= fWide | fCancelled | fSent
		r.stSource, r.stTag, r.stElem, r.stBytes, r.stSize = 0, 0, e, 0, 0
		return
	}
	r.setStatus(Status{elem: elem})
}

// Request.op: the names of the calls that make requests, as small codes.
// The first ones are fixed; setOp finds the three hottest without a
// lookup, the others in the table (opCode), which adds a name when first
// used. opWide says the name is in x.op (the table is full).
const (
	opNone uint8 = iota
	opIsend
	opIssend
	opIrsend
	opIbsend
	opIrecv
	opIrecvInto
	opWide = 255
)

// opNames holds the names by code and the codes by name. Readers load
// both without a lock; opCode, under mu, publishes longer copies to add
// a name.
var opNames struct {
	mu    sync.Mutex
	list  atomic.Pointer[[]string]
	codes atomic.Pointer[map[string]uint8]
}

func init() {
	names := []string{opNone: "", opIsend: "Isend", opIssend: "Issend", opIrsend: "Irsend",
		opIbsend: "Ibsend", opIrecv: "Irecv", opIrecvInto: "IrecvInto"}
	codes := make(map[string]uint8, len(names))
	for c, name := range names {
		codes[name] = uint8(c)
	}
	opNames.list.Store(&names)
	opNames.codes.Store(&codes)
}

// setOp sets the name of the call that made r. r is not shared yet, or
// r.mu is held.
func (r *Request) setOp(name string) {
	// Comparisons with constants, which compile to a length check and a
	// load or two; a switch over all the names compiles to a search that
	// calls the runtime's string comparison (25 instructions a call, a
	// tenth of a small message's own work).
	if name == "Isend" {
		r.op = opIsend
	} else if name == "IrecvInto" {
		r.op = opIrecvInto
	} else if name == "Irecv" {
		r.op = opIrecv
	} else if r.op = opCode(name); r.op == opWide {
		r.more().op = name
	}
}

// opCode returns name's code in opNames, added if new; opWide once the
// table is full.
func opCode(name string) uint8 {
	if c, ok := (*opNames.codes.Load())[name]; ok {
		return c
	}
	opNames.mu.Lock()
	defer opNames.mu.Unlock()
	codes := *opNames.codes.Load()
	if c, ok := codes[name]; ok { // added meanwhile
		return c
	}
	names := *opNames.list.Load()
	if len(names) >= opWide {
		return opWide
	}
	c := uint8(len(names))
	more := append(names[:len(names):len(names)], name)
	moreCodes := maps.Clone(codes)
	moreCodes[name] = c
	opNames.list.Store(&more)
	opNames.codes.Store(&moreCodes)
	return c
}

// opName returns the name of the call that made r.
func (r *Request) opName() string {
	if r.op == opWide {
		return r.x.op
	}
	return (*opNames.list.Load())[r.op]
}

// persistent reports whether r is a persistent request (SendInit,
// RecvInit and the like).
func (r *Request) persistent() bool { return r.x != nil && r.x.start != nil }

// Waiter is anything the Wait and Test family (WaitAll, WaitAny,
// WaitSome, TestAll, TestAny, TestSome, WaitAllStatus) takes: a *Request,
// a *Pending[T] (Irecv) or a *Future[T] (non-blocking collectives), mixed
// freely. A nil Waiter, or a nil *Request, *Pending or *Future, is a null
// request (MPI_REQUEST_NULL): it is ignored, or has the empty status.
//
// Every function of the family is variadic: pass requests one by one,
// mpi.WaitAny(r1, r2), or a list, mpi.WaitAny(reqs...) with reqs a
// []mpi.Waiter. Indices they return count in the list given.
type Waiter interface {
	request() *Request
}

// requestsOf returns the requests of ws (nil for null ones).
func requestsOf(ws []Waiter) []*Request {
	rs := make([]*Request, len(ws))
	for i, w := range ws {
		if w != nil {
			rs[i] = w.request()
		}
	}
	return rs
}

func (r *Request) request() *Request { return r }

// ownedRequest is a Request with its reqMore and its engine request, in
// one allocation.
type ownedRequest struct {
	r Request
	x reqMore
	e engine.Request
}

// newRequest returns a request for op with an engine request of its own
// ready to fill.
func (c *Comm) newRequest(op string, l loc) *Request {
	o := &ownedRequest{r: Request{c: c, flags: fLive}}
	o.x.e = &o.e
	o.r.x, o.r.er = &o.x, &o.e
	o.r.setOp(op)
	o.r.setAt(l)
	return &o.r
}

// newPooledRequest is newRequest with a recycled engine request, and the
// Request itself from a block (see erFreeList).
// Only requests whose engine request nobody reads after the result is
// handed over may be pooled (not Pending[T], which reads the received
// bytes after the wait; not requests with OnDone).
//
// Its loc is w (whereDest or whereSource), peer and tag. into, if not
// nil, is the zeroed Request to use (a slot of a Requests set), and er, if
// not nil, the slot's own engine request, which it keeps from one use of
// the slot to the next (Requests.slot): none from the free list and none
// given back, so neither takes the list's lock.
func (c *Comm) newPooledRequest(into *Request, er *engine.Request, op string, w uint8, peer, tag int) *Request {
	r := into
	if er != nil {
		er.Reset()
		if er.W == nil {
			er.W = engine.NewWaiter()
		}
		r.set(fLive, true)
	} else {
		r, er = c.p.ers.pair(into)
		r.set(fLive|fPooled, true)
	}
	r.c, r.er = c, er
	r.setOpPeer(op, w, peer, tag)
	return r
}

// release gives a finished non-persistent request's pooled engine request
// back, or into b if not nil (WaitAll gives them back a batch at a time
// under one lock: erBatch). r.mu is held, and r is finished: nothing in r reads
// er again.
func (r *Request) release(b *erBatch) {
	if !r.is(fPooled) || r.er == nil {
		return
	}
	er := r.er
	r.er = nil
	if r.pins != 0 {
		return
	}
	if b != nil {
		b.add(&r.c.p.ers, er)
		return
	}
	r.c.p.ers.put(er)
}

// nullRequest is a request that is already complete with st (ProcNull).
func (c *Comm) nullRequest(op string, st Status) *Request { return c.nullRequestIn(nil, op, st) }

// nullRequestIn is nullRequest in into, if not nil (a zeroed slot of a
// Requests set).
func (c *Comm) nullRequestIn(into *Request, op string, st Status) *Request {
	r := into
	if r == nil {
		r = new(Request)
	}
	r.c, r.flags = c, fFinished|fLive
	r.setOp(op)
	r.setStatus(st)
	return r
}

// emptyStatus is the status of a wait on an inactive request (MPI-3.1
// 3.7.3): source AnySource, tag AnyTag, no bytes, not cancelled.
var emptyStatus = Status{Source: AnySource, Tag: AnyTag}

// EmptyStatus returns the status that Wait and Test report for an
// inactive persistent request, and WaitAny for a list with no active
// request: Source AnySource, Tag AnyTag, Count 0, not cancelled.
func EmptyStatus() Status { return emptyStatus }

// complete turns the engine's status into r's result. r.mu is held.
func (r *Request) complete() {
	x := r.x
	if x != nil && x.g != nil {
		r.completeG()
		return
	}
	est := r.er.StatusRef()
	r.setStatusOf(est, r.elem())
	var err error
	switch {
	case est.Err == nil:
	case r.er.Note != nil: // a typed receive's type (irecvInto, Irecv)
		tname := ""
		if r.is(fSliceOf) {
			tname = "[]"
		}
		err = r.c.recvStatusErr(r.opName(), r.at(), r.er.Note.(*typeInfo), tname, *est)
	default:
		err = r.c.statusErr(r.opName(), r.at(), *est)
	}
	if x != nil && x.conv != nil && !est.Cancelled {
		x.conv.convert(r.c, est.Source, est.Count)
	}
	if err == nil && x != nil && x.finish != nil && !est.Cancelled {
		err = x.finish(*est)
	}
	r.setErr(err)
	r.set(fFinished, true)
	if x != nil && x.start != nil { // persistent
		r.er = nil // inactive until the next Start
	}
}

// statusErr converts an engine status error into an *Error.
func (c *Comm) statusErr(op string, l loc, st engine.Status) error {
	switch {
	case st.Err == nil:
		return nil
	case errors.Is(st.Err, engine.ErrTruncate):
		return c.errorf(op, ErrTruncate, l, "%d-byte message from rank %d (tag %d) does not fit the %d-byte buffer", st.Size, st.Source, st.Tag, st.Count)
	case errors.Is(st.Err, engine.ErrType):
		return c.errorf(op, ErrType, l, "message from rank %d (tag %d) was sent as another type", st.Source, st.Tag)
	case errors.Is(st.Err, ErrRevoked): // ft.go
		e := c.errorf(op, ErrRevoked, l, "").(*Error)
		e.Cause = st.Err
		return e
	case errors.Is(st.Err, ErrProcFailedPending):
		e := c.errorf(op, ErrProcFailedPending, l, "").(*Error)
		e.Cause = st.Err
		return e
	case errors.Is(st.Err, ErrProcFailed):
		e := c.errorf(op, ErrProcFailed, l, "").(*Error)
		e.Cause = st.Err
		return e
	default:
		e := c.errorf(op, ErrOther, l, "").(*Error)
		e.Cause = st.Err
		return e
	}
}

// Wait blocks until r completes and returns its status (MPI_Wait). A
// persistent request becomes inactive and may be started again; waiting
// on an inactive persistent request (never started, or already waited
// for) returns at once with the empty status (EmptyStatus). Waiting again
// on a completed non-persistent request returns the same result.
func (r *Request) Wait() (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Request.Wait", r.comm(), Undefined, Undefined), &err)
	}
	return r.wait()
}

// wait is Wait for the package's own callers (not reported to a Profiler).
func (r *Request) wait() (Status, error) {
	var st Status
	err := r.waitInto(nil, &st)
	return st, err
}

// waitInto is wait that leaves a pooled engine request in b, if b has
// room, for the caller to give back (erBatch.flush), and writes the
// status to st unless st is nil: WaitAll has no use for it, and building
// it cost about 60 instructions a request.
func (r *Request) waitInto(b *erBatch, st *Status) error { return r.waitLocked(b, st, true) }

// waitOwned is waitInto for a request that no other goroutine can reach:
// a slot of a Requests set, which hands out no *Request (so neither
// Cancel, Test nor a second Wait can come from elsewhere) and is used by
// one goroutine at a time. It takes no r.mu: the engine completes r.er
// through its own state word, never through r, and the lock and unlock
// were the two locked instructions of every message that WaitAll of a
// set paid on each side (docs/performance.md, "A set's WaitAll without
// the requests' locks").
func (r *Request) waitOwned(b *erBatch) error { return r.waitLocked(b, nil, false) }

// waitLocked is waitInto, taking r.mu only if locked.
func (r *Request) waitLocked(b *erBatch, st *Status, locked bool) error {
	if r == nil { // MPI_REQUEST_NULL
		if st != nil {
			*st = emptyStatus
		}
		return nil
	}
	r.lockIf(locked)
	if r.is(fFreed) {
		r.unlockIf(locked)
		if st != nil {
			*st = Status{}
		}
		return r.c.handle(r.c.errorf("Wait", ErrRequest, r.at(), "request has been freed"))
	}
	if !r.is(fLive) && r.persistent() {
		r.unlockIf(locked)
		if st != nil {
			*st = emptyStatus
		}
		return nil
	}
	er := r.er
	if er == nil || r.is(fFinished) {
		r.set(fLive, false)
		if st != nil {
			*st = r.status()
		}
		err := r.retire(r.errv())
		r.unlockIf(locked)
		return err
	}
	if x := r.x; x != nil && x.pub != nil && x.pub.watch() {
		r.completePub()
		return r.waitTail(st, locked)
	}
	if x := r.x; x != nil && x.plan != nil && x.plan.claim() {
		// The Start is this Wait's to run: nobody else runs it or waits
		// for its engine request (a Start, Free or Cancel of an active
		// request does nothing to it), so its result goes straight into
		// r, without completing the engine request and reading its
		// status back.
		r.unlockIf(locked)
		err := x.plan.runHere()
		r.lockIf(locked)
		r.completePlan(err)
		return r.waitTail(st, locked)
	}
	if x := r.x; x != nil && x.rearm {
		r.rearmRecv() // ft.go
	}
	// Often done already (a window's receives, waited for after the
	// last): then neither the lock's release nor the pin.
	prog := r.c.progress()
	if x := r.x; x != nil && x.parkNow {
		prog = nil
	}
	for !er.Done() {
		r.pin()
		r.unlockIf(locked)
		er.WaitRefIn(prog, r.c.blocker())
		r.lockIf(locked)
		r.unpin()
		// A Cancel may have reopened a completed eager send meanwhile:
		// then wait for the receiver's answer.
		if r.er != er || r.is(fFinished) {
			break
		}
	}
	if r.er == er && !r.is(fFinished) {
		if x := r.x; x != nil && x.repost != nil {
			if err := r.anyPending(); err != nil { // ft.go
				r.unlockIf(locked)
				if st != nil {
					*st = Status{}
				}
				return r.c.handle(err)
			}
		}
		r.complete()
		r.release(b)
	}
	return r.waitTail(st, locked)
}

// waitTail ends waitLocked once r has completed: r is inactive, its
// status goes to st (if not nil), and its error is returned.
func (r *Request) waitTail(st *Status, locked bool) error {
	r.set(fLive, false)
	if st != nil {
		*st = r.status()
	}
	err := r.retire(r.errv())
	r.unlockIf(locked)
	if err == nil {
		return nil
	}
	return r.c.handle(err)
}

// lockIf locks r.mu if on; unlockIf unlocks it if on.
func (r *Request) lockIf(on bool) {
	if on {
		r.mu.Lock()
	}
}

func (r *Request) unlockIf(on bool) {
	if on {
		r.mu.Unlock()
	}
}

// Test reports whether r has completed, without blocking, and if so its
// status (MPI_Test).
func (r *Request) Test() (_ bool, _ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Request.Test", r.comm(), Undefined, Undefined), &err)
	}
	ok, st, err := r.test()
	if !ok && err == nil {
		r.comm().missed()
	}
	return ok, st, err
}

// missed is what a test or probe on c that found nothing does before it
// returns: on an oversubscribed node it gives the core away
// (progress.Missed), so that a program that tests in a loop leaves it to
// the ranks and goroutines whose work it waits for.
func (c *Comm) missed() {
	if c != nil && c.p != nil && c.p.job != nil {
		c.p.job.Prog.Missed()
	}
}

// test is Test for the package's own callers.
func (r *Request) test() (bool, Status, error) {
	if r == nil { // MPI_REQUEST_NULL
		return true, emptyStatus, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.is(fFreed) {
		return false, Status{}, r.c.handle(r.c.errorf("Test", ErrRequest, r.at(), "request has been freed"))
	}
	if !r.is(fLive) && r.persistent() {
		return true, emptyStatus, nil
	}
	if r.er == nil || r.is(fFinished) {
		r.set(fLive, false)
		return true, r.status(), r.retire(r.errv())
	}
	if x := r.x; x != nil && x.pub != nil {
		if x.pub.ready() {
			r.completePub()
			r.set(fLive, false)
			return true, r.status(), r.c.handle(r.retire(r.errv()))
		}
		// Somebody must see a rank that never publishes (a lost one).
		x.pub.backstopLocked()
	}
	r.rearmRecv() // ft.go
	if !r.arrived() {
		return false, Status{}, nil
	}
	if err := r.anyPending(); err != nil { // ft.go
		return false, Status{}, r.c.handle(err)
	}
	r.complete()
	r.release(nil)
	r.set(fLive, false)
	return true, r.status(), r.c.handle(r.retire(r.errv()))
}

// arrived reports whether r's engine request has completed, collecting
// the rank's mailbox first if it has not: a look at a request that does
// not wait (Test, GetStatus) must see a message its sender left there.
// r.mu is held and r.er is not nil.
func (r *Request) arrived() bool {
	return r.er.Done() || (r.c != nil && r.c.p.collect() && r.er.Done())
}

// done reports whether Wait would return at once.
func (r *Request) done() bool {
	if r == nil {
		return true
	}
	r.mu.Lock()
	d := r.is(fFreed) || !r.is(fLive) || r.er == nil || r.is(fFinished) || r.er.Done() || r.x != nil && r.x.pub != nil && r.x.pub.ready()
	er, c := r.er, r.c
	r.mu.Unlock()
	if d || c == nil || !c.p.collect() {
		return d
	}
	return er.Done() // what was collected may have completed it
}

// active reports whether r has an operation in flight or finished but not
// yet waited for; inactive persistent requests, requests already waited
// for and nil ones are ignored by WaitAny and friends.
func (r *Request) active() bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.is(fFreed) && r.is(fLive)
}

// Cancel asks for r to be cancelled (MPI_Cancel). Cancel does not wait:
// Wait for r (or Test it) and check Status.Cancelled to learn whether it
// worked; exactly one of the two happens: the operation is cancelled and
// has no effect, or it completes as if Cancel had not been called.
//
//   - A receive is cancelled if it has not matched a message yet.
//   - A send is cancelled if its receiver has not matched the message yet:
//     Cancel asks the receiver's rank to remove the message from the
//     messages it holds unmatched, and that rank answers whether it did;
//     the request completes when the answer arrives. This holds for every
//     non-blocking send (Isend, Issend, Irsend, Ibsend, typed Isend) and
//     for started persistent sends, small and large: a small (eager)
//     send, complete as soon as it has left, becomes incomplete again
//     until the answer. A buffered send's room in the attached buffer is
//     released when its message is cancelled.
//
// Cancelling a request that is complete and waited for, inactive, or
// already cancelled does nothing.
func (r *Request) Cancel() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Request.Cancel", r.comm(), Undefined, Undefined), &err)
	}

	if r == nil {
		return (*Comm)(nil).errorf("Cancel", ErrRequest, loc{}, "nil request")
	}
	r.mu.Lock()
	if r.is(fFreed) {
		r.mu.Unlock()
		return r.c.handle(r.c.errorf("Cancel", ErrRequest, r.at(), "request has been freed"))
	}
	er := r.er
	if !r.is(fLive) || r.c == nil || r.c.p == nil {
		r.mu.Unlock()
		return nil
	}
	if g := r.greq(); g != nil {
		complete := g.completed
		r.mu.Unlock()
		if g.cancel == nil {
			return nil
		}
		return r.grequestErr("Cancel", "cancel", func() error { return g.cancel(complete) })
	}
	p := r.c.p
	if er != nil && er.Op == engine.OpRecv {
		// A message its sender left in the rank's mailbox has arrived:
		// it is matched first, and the cancel fails, as it does for a
		// message the sender delivered itself.
		p.collect()
		if r.is(fPooled) {
			// Under r.mu: once r.mu is dropped, a Wait on another
			// goroutine may finish r and recycle er for another receive.
			// (The engine completes a pooled request without calling
			// back into r.)
			if !er.Done() {
				p.Eng.CancelRecv(er)
			}
			r.mu.Unlock()
			return nil
		}
		r.mu.Unlock()
		if !er.Done() {
			p.Eng.CancelRecv(er)
		}
		return nil
	}
	if er == nil || r.is(fFinished) {
		if r.sentID() != 0 && (r.x == nil || r.x.bsend == nil) {
			l := r.at()
			r.more().bsend = r.c.sentRequest(l.peer, l.tag, r.sentID())
		}
		er = nil
		if r.x != nil {
			er = r.x.bsend // a send that completed at once (see bsend)
		}
	}
	if er == nil || er.Op != engine.OpSend {
		r.mu.Unlock()
		return nil
	}
	var out engine.Outbox
	if p.Eng.CancelSend(er, &out) && r.er != er {
		// The buffered send's request now completes with the answer.
		r.er = er
		r.set(fFinished, false)
	}
	r.mu.Unlock()
	p.Exec(&out)
	return nil
}

// Free releases r (MPI_Request_free). An operation in flight goes on to
// completion, but nobody can wait for it any more. Using r afterwards
// returns ErrRequest.
func (r *Request) Free() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Request.Free", r.comm(), Undefined, Undefined), &err)
	}
	if r == nil {
		return (*Comm)(nil).errorf("Free", ErrRequest, loc{}, "nil request")
	}
	r.mu.Lock()
	if r.is(fFreed) {
		r.mu.Unlock()
		return r.c.handle(r.c.errorf("Free", ErrRequest, r.at(), "request has been freed already"))
	}
	if r.x != nil && r.x.activeFree && r.is(fLive) {
		r.mu.Unlock()
		return r.c.handle(r.c.errorf("Free", ErrRequest, r.at(), "the %s request is active: wait for it (or test it until it completes) before freeing it", r.opName()))
	}
	r.set(fFreed, true)
	var release func()
	if r.x != nil {
		release = r.x.freed
	}
	g := r.greq()
	free := g != nil && g.completed && !g.freedFn // else GrequestComplete frees
	if free {
		g.freedFn = true
	}
	r.mu.Unlock()
	if release != nil {
		release()
	}
	if free {
		return r.grequestErr("Free", "free", g.free)
	}
	return nil
}

// Start starts a persistent request made by SendInit, RecvInit and the
// like (MPI_Start). It is an error to start a request that is active.
func (r *Request) Start() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Request.Start", r.comm(), Undefined, Undefined), &err)
	}
	return r.begin()
}

// begin is Start without the profiler hook, for the package's own use.
func (r *Request) begin() error {
	if r == nil {
		return (*Comm)(nil).errorf("Start", ErrRequest, loc{}, "nil request")
	}
	r.mu.Lock()
	if r.is(fFreed) || !r.persistent() {
		r.mu.Unlock()
		return r.c.handle(r.c.errorf("Start", ErrRequest, r.at(), "not a persistent request (or freed)"))
	}
	if r.is(fLive) {
		r.mu.Unlock()
		return r.c.handle(r.c.errorf("Start", ErrRequest, r.at(), "request is already active"))
	}
	r.set(fFinished, false)
	r.setElem(r.elem()) // elem: see Request.stBytes
	r.setErr(nil)
	r.set(fLive, true)
	if pc := r.x.pub; pc != nil {
		err := pc.startLocked(r)
		if err != nil {
			r.set(fLive, false)
		}
		r.mu.Unlock()
		return err
	}
	if pl := r.x.plan; pl != nil {
		err := pl.startLocked(r)
		if err != nil {
			r.set(fLive, false)
		}
		r.mu.Unlock()
		return r.c.handle(err)
	}
	r.mu.Unlock()
	err := r.x.start(r)
	if err != nil {
		r.mu.Lock()
		r.set(fLive, false)
		r.mu.Unlock()
	}
	return err
}

// StartAll starts every request in reqs (MPI_Startall).
func StartAll(reqs ...*Request) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("StartAll", requestsComm(reqs), Undefined, Undefined), &err)
	}
	for _, r := range reqs {
		if err := r.begin(); err != nil {
			return err
		}
	}
	return nil
}
