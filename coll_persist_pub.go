package mpi

import (
	"github.com/mpigo/mpi/internal/coll"
	"github.com/mpigo/mpi/internal/engine"
)

// Persistent collectives of goroutine ranks by publication.
//
// Between 2 and meetPubMax goroutine ranks of one process (the ranks
// that meet in memory, Comm.inProcess), a persistent Allreduce or
// Reduce of at most meetInline bytes of plain data, a Bcast of as many,
// and a Barrier are decided at Init: the meeting point (the request's
// own, Comm.ownMeet), what each rank publishes, where its result goes
// and the operation that combines. A Start then copies the rank's
// contribution into its publication line for the Start's number (the
// lines of meet publications: two by parity, meetPub) and publishes that
// number; it sends nothing, makes no goroutine and arms no timer. The
// request is complete once every rank has published the same number, and
// each rank then combines (or copies) the publications into its own
// output itself, in rank order, as the blocking call's publications do
// (publish): no rank writes another's memory.
//
// Who sees that every rank has published, and completes the rank's
// request? The rank itself, whenever it looks (Wait, Test, WaitAny and
// the rest check the publications before anything else), unless it is
// about to park on the engine request: then the rank whose Start sees
// every publication completes it (pubColl.start). The number a rank
// publishes carries, in its low two bits, whether it is present (it will
// look itself: from its Start on) or absent (parked or about to: its
// Wait, after watching in vain, and a wait on several requests before it
// parks, pubColl.backstopLocked): the last rank reads it with the
// number, on the line it reads anyway, so a meeting of ranks that watch
// costs one crossing of a cache line each way, as the blocking call's
// publications, and a Start followed by its Wait writes that line once.
// A rank marks itself absent before it looks at the publications once
// more on its way to parking, and the last rank publishes before it
// looks at the marks: sequentially consistent stores, then loads of the
// other's, so at least one of them sees the other. Both may complete the
// request: engine.Request.CompleteOnce lets the first. Each rank has a
// request for each parity of its Starts (meetSlot.pers), so that a late
// completion of Start k never completes Start k+1: a rank completes
// another's request of Start k only within its own Start k, and the
// other reuses that request at its Start k+2, after every rank published
// k+1.
//
// No order of Starts and waits can hang: a Start never waits for
// anything, so the Starts of several requests may come in any order on
// different ranks, and a request is completed by the last Start whatever
// its rank does meanwhile.
//
// Nobody overwrites a publication still to be read: a rank publishes
// Start k+2 on the line of Start k only after its Start k+1 completed,
// which needs every rank's publication of k+1, which every rank makes
// only after its Start k completed, and a rank reads the publications
// of k when its request for k completes (pubColl.finish), before it
// returns from that Wait or Test.
//
// Init folds the choice of this road into the descriptor it agrees on
// (pubRoad), so that ranks that would take different roads (another
// operation on one rank) fail Init instead of waiting for each other.
// A job that failed ends the parked waits through its wait reaper, as
// for any request no engine holds; a Start after the failure reports it.
// Fault-tolerant jobs never meet in memory (Comm.inProcess).

// Values of the low two bits of a persistent collective's publication
// (meetPub.seq): whether the rank is absent (parked, or about to) or
// present (it looks for the others' publications itself).
const (
	pubAbsent  uint64 = 1
	pubPresent uint64 = 2
)

// pubRoad is what Init folds into its descriptor when the request goes by
// publications.
const pubRoad = 0x5075625075626c69 // "PubPubli"

// A pubColl is what a persistent collective by publications keeps from
// Init to Free.
type pubColl struct {
	v  *Comm // the request's pinned view
	m  *meet // its meeting point
	me int
	// send is what the rank publishes at each Start (nil: nothing).
	send []byte
	// recv is where the rank's result goes (nil: it gets none).
	recv []byte
	// op combines every rank's publication, in rank order, into acc,
	// then recv (a reduction); nil: recv gets rank from's publication (a
	// broadcast).
	op   coll.VecOp
	acc  []byte
	from int
	k    uint64            // the number of the Start in flight
	ers  [2]engine.Request // the requests of the Starts, by parity
}

// pubSpec is what an Init form gives collInit when its arguments allow
// publications: the rank's contribution, output, operation and source
// (pubColl's fields).
type pubSpec struct {
	send, recv []byte
	op         coll.VecOp
	from       int
}

// pubFits reports whether a persistent collective of c whose publication
// is n bytes may go by publications.
func (c *Comm) pubFits(n int) bool {
	return n <= meetInline && len(c.group) > 0 && len(c.group) <= meetPubMax && c.inProcess() || c.shmFits(n)
}

// A publisher is the part of a persistent collective by publications that
// the request's calls use: between goroutine ranks (pubColl) or processes
// of one node (shmColl, coll_persist_shm.go).
type publisher interface {
	// startLocked publishes the rank's contribution, r.mu held.
	startLocked(r *Request) error
	// ready reports whether every rank has published the Start in flight.
	ready() bool
	// watch is a Wait's look before it parks, r.mu held: true if every
	// rank has published, else the engine request will be completed.
	watch() bool
	// backstopLocked makes sure somebody completes the engine request
	// of the Start in flight, for a wait on several requests about to
	// park (r.mu held).
	backstopLocked()
	// finish gives the completed Start its result.
	finish(engine.Status) error
}

// reducePub is the pubSpec of a reduction of send to root (root < 0: to
// every rank) with op, into recv (root's only), if c's ranks publish.
func (c *Comm) reducePub(send, recv []byte, op coll.VecOp, root int) *pubSpec {
	if op == nil || !c.pubFits(len(send)) || (root < 0 || root == c.rank) && len(recv) != len(send) {
		return nil
	}
	if root >= 0 && root != c.rank {
		recv = nil
	}
	return &pubSpec{send: send, recv: recv, op: op, from: -1}
}

// bcastPub is the pubSpec of a broadcast of buf from root, if c's ranks
// publish.
func (c *Comm) bcastPub(buf []byte, root int) *pubSpec {
	if !c.pubFits(len(buf)) || root < 0 || root >= len(c.group) {
		return nil
	}
	if c.rank == root {
		return &pubSpec{send: buf, from: -1}
	}
	return &pubSpec{recv: buf, from: root}
}

// newPubColl makes the pubColl of spec on the pinned view v, which meets
// at a point of its own.
func newPubColl(v *Comm, spec *pubSpec) *pubColl {
	pc := &pubColl{v: v, m: v.meet(), me: v.rank, send: spec.send, recv: spec.recv, op: spec.op, from: spec.from}
	if pc.op != nil && pc.recv != nil {
		// 8-byte aligned, for the operations' views of it.
		pc.acc = AsBytes(make([]uint64, (len(pc.recv)+7)/8))[:len(pc.recv)]
	}
	s := &pc.m.slots[pc.me]
	s.own(v)
	for i := range pc.ers {
		pc.ers[i].W = engine.NewWaiter()
		s.pers[i] = &pc.ers[i]
	}
	return pc
}

// pubDone is the status of a completed Start.
var pubDone = engine.Status{Source: -1, Tag: -1}

// startLocked is the request's Start, r.mu held: publish, present, and
// if every rank has published, complete the request of every other rank
// that is absent.
func (pc *pubColl) startLocked(r *Request) error {
	p := pc.v.p
	if !p.Eng.Healthy() {
		// The job failed: its wait reaper may have ended the last
		// Start's wait before a rank completed it.
		return r.c.fail("Start", ErrOther, loc{}, "%s: %v", pc.v.Name(), p.Eng.Err())
	}
	m := pc.m
	s := &m.slots[pc.me]
	s.count++
	k := s.count
	l := &s.pub[k&1]
	copy(l.data[:], pc.send)
	l.seq.Store(k<<2 | pubPresent)
	// The engine request of this Start, made ready after the
	// publication, which the others wait for: nobody completes it before
	// the rank marks itself absent, after this Start, and the last
	// completion of the one of Start k-2 came within its own Start
	// k-2 (pubColl).
	er := &pc.ers[k&1]
	er.Reset()
	// As a meeting's wait (postMeetWait), for hang reports.
	er.Context, er.Peer, er.Tag = pc.v.shadow.ctx, engine.AnySource, meetTag
	r.er = er
	pc.k = k
	// Every rank published? Then complete the absent ones' requests. Not
	// this rank's: its Wait and Test, and Request.done (WaitAny, WaitSome
	// and TestAll look there first), see that every rank published
	// (ready), and saved a locked instruction behind the publication's
	// store, whose line the others are reading.
	var absent uint32
	for i := range m.slots {
		q := m.slots[i].pub[k&1].seq.Load()
		if q>>2 != k {
			return nil
		}
		if q&3 == pubAbsent && i != pc.me {
			absent |= 1 << i
		}
	}
	for i := range m.slots {
		if absent&(1<<i) != 0 {
			m.slots[i].pers[k&1].CompleteOnce(pubDone)
		}
	}
	return nil
}

// start is startLocked for a caller that does not hold r.mu.
func (pc *pubColl) start(r *Request) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return pc.startLocked(r)
}

// ready reports whether every rank has published the Start in flight:
// its result is in (completePub).
func (pc *pubColl) ready() bool { return pc.published(pc.k) }

// published reports whether every rank of pc's meet has published Start k.
func (pc *pubColl) published(k uint64) bool {
	for i := range pc.m.slots {
		if pc.m.slots[i].pub[k&1].seq.Load()>>2 != k {
			return false
		}
	}
	return true
}

// watch is the request's Wait before it waits on its engine request, r.mu
// held: it reports whether every rank has published, at once or after it
// watched for the publications while meetings watch (Config.Spin). If
// not, it leaves the rank marked absent, for the last rank to publish to
// complete the engine request, on which the Wait then polls and parks. A
// rank that sees every publication completes the Start without the
// engine request (completePub), which the last rank may have completed
// too if the rank was marked absent for a while (backstopLocked): nobody
// waits on it, and the next Start of its parity resets it (pubColl).
func (pc *pubColl) watch() bool {
	k := pc.k
	if pc.published(k) {
		return true
	}
	s := &pc.m.slots[pc.me]
	p := pc.v.p
	if p.job.Prog.WatchFor(func() bool { return pc.published(k) || !p.Eng.Healthy() }) && pc.published(k) {
		s.bySlot++
		return true
	}
	s.pub[k&1].seq.Store(k<<2 | pubAbsent)
	if pc.published(k) {
		s.bySlot++
		return true
	}
	s.parked++
	return false
}

// completePub completes r, a persistent collective by publications whose
// Start every rank has published, without its engine request: r.complete
// for it. r.mu is held.
func (r *Request) completePub() {
	r.setStatusOf(&pubDone, r.elem())
	r.setErr(r.x.pub.finish(pubDone))
	r.set(fFinished, true)
	r.er = nil // inactive until the next Start
}

// finish gives a completed Start its result: the publications of Start
// pc.k combined in rank order into recv, or rank from's copied there.
func (pc *pubColl) finish(engine.Status) error {
	if pc.recv == nil {
		return nil
	}
	m, par := pc.m, pc.k&1
	n := len(pc.recv)
	if pc.op == nil {
		copy(pc.recv, m.slots[pc.from].pub[par].data[:n])
		return nil
	}
	a := pc.acc
	copy(a, m.slots[0].pub[par].data[:n])
	for i := 1; i < m.n; i++ {
		pc.op(a, m.slots[i].pub[par].data[:n])
	}
	copy(pc.recv, a)
	return nil
}

// backstopLocked marks the rank absent for the Start in flight, r.mu
// held, for a wait on several requests about to park on its engine
// request (or a Test, which a wait may follow): the last rank to publish
// then completes that request (startLocked). If every rank has published
// meanwhile, it completes the request itself: of it and the last rank,
// at least one sees the other (watch).
func (pc *pubColl) backstopLocked() {
	k := pc.k
	l := &pc.m.slots[pc.me].pub[k&1].seq
	if l.Load() != k<<2|pubAbsent {
		l.Store(k<<2 | pubAbsent)
	}
	if pc.published(k) {
		pc.ers[k&1].CompleteOnce(pubDone)
	}
}

// freed lets go of the meeting point once the request is freed. A Start
// of another rank may still read this rank's publications: the meet
// stays while a member holds it.
func (pc *pubColl) freed() { pc.v.leaveMeet() }

// pubRequest makes the request of a persistent collective op by
// publications, on tag base tag.
func (c *Comm) pubRequest(op string, tag int, spec *pubSpec) *Request {
	v := c.pinnedView(tag)
	v.ownMeet = true
	pc := newPubColl(v, spec)
	r := c.persistentColl(op, pc.start, pc.finish)
	// Not parkNow: a Wait that found no result after watch polls its
	// engine request (completed by the last rank to publish) before it
	// parks, as a meeting's wait does.
	r.x.pub = pc
	r.x.freed = pc.freed
	return r
}

// barrierPub is the pubSpec of a Barrier of c, if c's ranks publish:
// nothing to publish, nothing to get.
func (c *Comm) barrierPub() *pubSpec {
	if !c.pubFits(0) {
		return nil
	}
	return &pubSpec{from: -1}
}

// typedReducePub returns the pub of a typed reduction of v to root
// (root < 0: to every rank) with op, into out: plain elements and a
// predefined operation, the vector road of the blocking call.
func typedReducePub[E any](c *Comm, v, out []E, op Op[E], root int) func() *pubSpec {
	return func() *pubSpec {
		t := typeOf[E]()
		if op.vec == nil || t.shape != shapePlain || c.mixed() {
			return nil
		}
		return c.reducePub(unsafeBytes(v, t.size), unsafeBytes(out, t.size), vecOf(t, op), root)
	}
}

// lowReducePub returns the pub of a low-level reduction (root < 0: an
// Allreduce): contiguous elements (or padded ones, whole extents) and a
// commutative operation, the vector road of the blocking call.
func (c *Comm) lowReducePub(name string, sendbuf, recvbuf []byte, count int, dt *Datatype, op *ReduceOp, root int) func() *pubSpec {
	return func() *pubSpec {
		if op == nil || !op.commutative || c.mixed() {
			return nil
		}
		n, err := c.lowBufs(name, false, root, sendbuf, recvbuf, count, dt)
		if err != nil || n < 0 {
			return nil
		}
		f, err := op.vec(dt)
		if err != nil {
			return nil
		}
		var in []byte
		if isInPlace(sendbuf) && (root < 0 || root == c.rank) {
			in = recvbuf[:n]
		} else {
			in = sendbuf[:n]
		}
		var out []byte
		if root < 0 || root == c.rank {
			out = recvbuf[:n]
		}
		return c.reducePub(in, out, f, root)
	}
}

// lowBufs checks the buffers of a low-level Init whose elements are
// whole blocks (dt.block() > 0) as the blocking call checks them at each
// Start, and returns their length in bytes; -1 for another datatype,
// whose buffers the blocking call checks (and stages). A Bcast's buffer
// is recvbuf (bcast; sendbuf unused); root < 0 for an Allreduce.
func (c *Comm) lowBufs(name string, bcast bool, root int, sendbuf, recvbuf []byte, count int, dt *Datatype) (int, error) {
	if dt == nil || count < 0 || dt.block() <= 0 {
		return -1, nil
	}
	n, ok := countBytes(count, dt.block())
	if !ok {
		return -1, c.argErr(name, ErrCount, "%d elements of %s overflow an int", count, dt.name)
	}
	if isBottom(recvbuf) || !bcast && isBottom(sendbuf) {
		return -1, nil
	}
	switch {
	case bcast:
		return n, c.need(name, "buf", recvbuf, n)
	case root < 0 || root == c.rank:
		if err := c.need(name, "recvbuf", recvbuf, n); err != nil {
			return n, err
		}
		_, err := c.input(name, sendbuf, recvbuf, n)
		return n, err
	}
	return n, c.need(name, "sendbuf", sendbuf, n)
}
