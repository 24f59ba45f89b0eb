package mpi

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mpigo/mpi/internal/coll"
	"github.com/mpigo/mpi/internal/engine"
	"github.com/mpigo/mpi/internal/hint"
)

// Allreduce among goroutine ranks that meet in memory
// (coll.AlgInProcess). Reduce meets the same way (reduceInProcess with a
// root: the result goes to the root's output only).
//
// Run's ranks over the inproc transport are goroutines of one process, so
// an allreduce among them need not send anything. Each rank leaves, in
// its communicator's meeting point (a meet, shared by the members' Comm
// values through the job), where its contribution and its output are,
// with its type signature, and counts itself in. The last to come checks
// the signatures and, for a short vector, combines the contributions in
// rank order and writes the result into every rank's output, then ends
// the others' waits: one hand-over per call instead of a message each
// way, with its matching, for every rank. A longer vector, when every
// rank has a processor (the meetings watch), is combined in shares: each
// rank combines one range of the elements from every contribution and
// writes it into every output, and no rank leaves before every share is
// written (2 ranks: 1 MiB in half the time of messages,
// docs/performance.md "Allreduce in shares"). Without a processor each,
// a longer vector only has its type and length checked there; then the
// ranks run the message algorithm the table chooses for processes
// (ranks taking turns on one processor combined shares slower than the
// messages).
//
// The others wait on a receive posted in their own engine that no message
// matches (meetTag on the collective context): the last to come withdraws
// it (engine.Withdraw). So failures and aborts end the wait as they end
// any receive, hang reports show it as a wait in the collective, and the
// engine stays free of anything but matching. A rank that watches its
// slot (each rank has a processor) posts that receive only when it comes
// to park; while it watches, it looks at its engine's health (an abort)
// instead, so a meeting that ends within the watch costs its engine
// nothing.
//
// Every rank of a communicator takes this road for every vector
// allreduce, whatever its length (the selection table's rule has no size
// limit), so that two ranks that pass different types or lengths meet
// here and learn of it (ErrType, ErrCount) instead of one waiting here
// for messages the other sends.

// meetTag is the tag of the receive a rank waits on in a meet: no message
// carries it.
const meetTag = -1 << 21

// meetAll is the longest vector the last rank to come combines for all;
// longer ones go by messages once checked (docs/performance.md,
// "Goroutine ranks meet in memory"). While the ranks watch (each has a
// processor), vectors longer than meetShare are combined in shares by
// every rank at once instead, whatever their length ("Allreduce in
// shares").
const (
	meetAll   = 32768
	meetShare = 4096
)

// A meet is where the members of one communicator meet in memory.
type meet struct {
	n     int
	key   meetKey // where the job keeps it
	group []int   // the members' world ranks
	// users counts the members' Comm values that hold it (Comm.meetp):
	// the last one freed takes it out of the job (leaveMeet).
	users   atomic.Int32
	arrived atomic.Int32
	slots   []meetSlot
	// Set by the last rank to come, before it ends the others' waits;
	// read by the others until they come again (nobody can be last of the
	// next meeting before they do).
	sigs    []uint64 // each rank's signature at the last meeting
	kinds   []uint64 // and its call's kind (meetSlot.kind)
	lengths bool     // and their vectors had one length
	roads   bool     // and some came by the road of combined values, others not (meetSlot.checkOnly)
	// res and resErr are the combined value of a meeting on the road of
	// combined values and the error of combining (meetCombine).
	res    []byte
	resErr error
	long   bool // the vector goes by messages after the meeting
	shares bool // every rank combines a share of the vector (combineShare)
	root   int  // the rank whose output gets the result; -1: every rank
	// shareDone counts the ranks whose share is written (shareWait).
	shareDone atomic.Int32
}

// A meetSlot is one rank's part of a meet, on cache lines of its own.
type meetSlot struct {
	// pub is what the rank published for its last two meetings, by the
	// parity of their number (publish); each on cache lines of its own.
	pub [2]meetPub
	// pstate says that the rank parked waiting for the others'
	// publications (pubParked) or was woken (pubWoken), with the number of
	// the meeting above its low two bits; any other meeting's number says
	// neither. Written only when the rank parks, so that the others' look
	// at it (wakePub) finds it in their caches; on a line of its own.
	pstate atomic.Uint64
	// pers are the rank's requests of a persistent collective by
	// publications (pubColl), by the parity of its Starts: written once,
	// at Init, and read by a rank that completes the request of one
	// absent from its Wait (pubColl.start).
	pers [2]*engine.Request
	_    [40]byte

	src, buf []byte // contribution and output, valid while the rank is in the call
	sig      uint64
	kind     uint64 // 0: Allreduce or Barrier; reduceKind+root: a reduce to root; allgatherKind
	// state says how the last rank to come lets this rank go: by the slot
	// (meetReleased) while the rank watches it, by its wait (Withdraw)
	// once it parked (meetParked). One compare-and-swap on each side
	// decides, so the wait is ended exactly once, by one of the two. Next
	// to what the last rank reads anyway.
	state atomic.Uint32
	// res is where the last rank leaves a short result for this rank
	// (up to meetRes bytes: meet.combine), on the line of state, so that
	// one crossing carries both; the rank copies it into buf itself.
	res  [meetRes]byte
	p    *proc
	wait engine.Request
	// checkOnly says the rank reduces by the road of combined values
	// (meetCombine): src is its encoded value, not a vector.
	checkOnly bool
	// posted says that wait is in the rank's engine for this meeting
	// (gather posts it at once unless the rank will watch; meetWait
	// posts it before parking). Only the rank touches it.
	posted bool
	// bySlot and parked count the meetings this rank was let go by its
	// slot, or that ended at the publications without its parking
	// (publish), and those it parked in; shared the allreduces it
	// combined a share of. Only the rank writes them (tests read them).
	bySlot, parked, shared int
	// count is the number of the rank's last meeting (publish).
	count uint64
	_     [64]byte // to 832 bytes, whole cache lines (TestMeetSlotLines)
}

// meetRes is the longest result the last rank leaves in a waiter's slot
// (meetSlot.res) instead of its output: what fits beside state on one
// cache line.
const meetRes = 56

// Values of meetSlot.state.
const (
	meetWatching uint32 = iota // the rank watches its slot (or will)
	meetParked                 // it waits on its engine request: the last rank withdraws it
	meetReleased               // the last rank let it go by its slot: it withdraws its own wait
	meetAgreed                 // meetReleased, and the meeting agreed: nothing more to read (release)
)

// meetKey names a communicator of a job: disjoint communicators (the
// parts of a Split) may share a context id, never a first member.
type meetKey struct {
	ctx   uint32
	first int
	// pin is 0 for the communicator's own meeting point, and the pinned
	// tag base + 1 for a persistent collective's (Comm.ownMeet).
	pin int
}

// meets is a job's meeting points (job.meets).
type meets struct {
	mu sync.Mutex
	m  map[meetKey]*meet
}

// inProcess reports whether c's ranks are goroutines of this process that
// may meet in memory: Run's ranks over inproc, one node, no fault
// tolerance (a meet cannot shrink). Not the view a non-blocking
// collective runs on (pinned): it may be in flight while a blocking
// collective of the same communicator meets, and a meet holds one call at
// a time; every rank's view of it uses messages. A persistent collective's
// view meets at a point of its own (ownMeet): its Starts run one at a
// time, and no other call meets there.
func (c *Comm) inProcess() bool {
	p := c.p
	return p.job.inproc && !p.job.ft && !p.multiNode && p.reprs == nil && c.inter == nil && c.shadow != nil && (c.pinned == 0 || c.ownMeet) && !c.ext
}

// meet returns c's meeting point, made on first use.
func (c *Comm) meet() *meet {
	if m := c.meetp.Load(); m != nil {
		return m
	}
	j := c.p.job
	k := meetKey{ctx: c.shadow.ctx, first: c.group[0]}
	if c.ownMeet {
		k.pin = c.pinned
	}
	j.meets.mu.Lock()
	if j.meets.m == nil {
		j.meets.m = map[meetKey]*meet{}
	}
	m := j.meets.m[k]
	if m == nil || !slices.Equal(m.group, c.group) {
		// New, or the context of a communicator that some member has not
		// freed taken again (a freed one's meet is gone: leaveMeet).
		n := len(c.group)
		m = &meet{n: n, key: k, group: c.group, slots: make([]meetSlot, n), sigs: make([]uint64, n), kinds: make([]uint64, n)}
		j.meets.m[k] = m
	}
	m.users.Add(1)
	j.meets.mu.Unlock()
	if !c.meetp.CompareAndSwap(nil, m) {
		// Another goroutine of this rank looked it up meanwhile (two
		// collectives at once on one communicator are erroneous, but
		// not a reason to keep a meet for ever).
		c.leave(m)
		return c.meetp.Load()
	}
	return m
}

// leaveMeet lets go of c's meeting point, if c looked one up: c is freed.
func (c *Comm) leaveMeet() {
	if m := c.meetp.Swap(nil); m != nil {
		c.leave(m)
	}
}

// leave drops one user of m; the last takes m out of the job's meets, so
// that a job that makes and frees many communicators keeps the meeting
// points of the live ones only.
func (c *Comm) leave(m *meet) {
	j := c.p.job
	j.meets.mu.Lock()
	if m.users.Add(-1) == 0 && j.meets.m[m.key] == m {
		delete(j.meets.m, m.key)
	}
	j.meets.mu.Unlock()
}

// reduceInProcess is allreduceVec (root < 0) or reduceVec in a meet: src
// (nil: buf holds this rank's contribution) combined with op across c
// into every rank's buf, or root's (the others' bufs are scratch then);
// scratch, as long as buf, is this rank's; esz is the element size. It
// reports whether it did the call. The last rank to come combines a
// vector of up to meetShare bytes for all; a longer one, while the ranks
// watch, every rank combines a share of after the meeting, and waits for
// the others' shares (shareWait). Otherwise the last rank combines one of
// up to meetAll bytes, and a longer one is only checked here (all ranks
// agree on its type and length), then the caller runs a message
// algorithm. A mismatch of types or lengths is left in cc, for cc.done to
// report.
func (c *Comm) reduceInProcess(cc *collCall, src, buf, scratch []byte, esz int, op coll.VecOp, root int) (bool, error) {
	if src == nil {
		src = buf
	}
	m := c.meet()
	me := c.rank
	if m.pubs() && len(src) <= meetInline && c.p.job.Prog.Spins() {
		// Publications only while the ranks watch: ranks that park
		// would each be woken once more than by the last rank.
		pc := pubCall{sig: cc.sig, kind: meetKind(root), src: src, buf: buf, root: root}
		if c.publish(m, &pc, op, scratch) {
			return true, nil
		}
	} else {
		m.slots[me].count++
	}
	s := m.enter(c, cc, src, buf, root, false)
	defer func() { s.src, s.buf = nil, nil }()
	last := m.gather(c, me)
	if last {
		ok := m.check()
		// Shares only while the ranks watch, so that each has a processor
		// and they combine at once (taking turns, it measured slower
		// than messages).
		m.shares = ok && len(buf) > meetShare && m.n > 1 && esz > 0 && shareUnit%esz == 0 && c.p.job.Prog.Spins()
		m.long = ok && !m.shares && len(buf) > meetAll
		m.shareDone.Store(0) // nobody counts the last call's any more
		one := ok && !m.shares && !m.long
		m.root = root
		if one {
			m.combine(op, scratch, me)
		}
		m.release(me, one, nil)
	} else if agreed, err := c.meetWait(s); err != nil {
		return true, err
	} else if agreed {
		m.takeShort(s, buf, root, me)
		return true, nil
	}
	if bad, err := m.mismatch(cc, me); bad {
		return true, err
	}
	if !m.shares {
		if !m.long && !last {
			m.takeShort(s, buf, root, me) // combined by the last rank
		}
		return !m.long, nil
	}
	m.combineShare(me, op, scratch)
	s.shared++
	// Nobody leaves before every share is in every output, and every
	// contribution read: a count, not a second meeting, since every rank
	// that passed the meeting combines its share without waiting for
	// anything.
	if m.shareDone.Add(1) < int32(m.n) {
		return true, c.shareWait(m)
	}
	return true, nil
}

// shareWait waits until every rank of m has written its share. The others
// are computing theirs, so the wait is short: it watches, and lets other
// goroutines run now and then (a rank that shares this processor). It
// gives up if the rank's engine learns of a failure or an abort, which
// may have stopped a rank before its share.
func (c *Comm) shareWait(m *meet) error {
	for i := 1; m.shareDone.Load() < int32(m.n); i++ {
		hint.Pause()
		if i&1023 == 0 {
			if !c.p.Eng.Healthy() {
				cause := c.p.Eng.Err()
				if cause == nil {
					cause = fmt.Errorf("%w: a rank failed while the ranks combined their shares", ErrProcFailed)
				}
				return fmt.Errorf("allreduce in memory: %w", cause)
			}
			runtime.Gosched()
		}
	}
	return nil
}

// shareUnit is the granularity of the shares of combineShare, in bytes: a
// cache line, so that no two ranks write one line.
const shareUnit = 64

// combineShare combines rank me's share of every rank's contribution, in
// rank order, into acc (this rank's scratch) and writes it into every
// rank's output. Shares are disjoint, so a rank whose output is its
// contribution (in place) has that share read before it is written, by
// the one rank that touches it. Every rank calls it after the meeting,
// before shareWait.
func (m *meet) combineShare(me int, op coll.VecOp, acc []byte) {
	n := len(m.slots[0].src)
	units := (n + shareUnit - 1) / shareUnit
	lo := me * units / m.n * shareUnit
	hi := min((me+1)*units/m.n*shareUnit, n)
	if lo >= hi {
		return
	}
	a := acc[:hi-lo]
	copy(a, m.slots[0].src[lo:hi])
	for i := 1; i < m.n; i++ {
		op(a, m.slots[i].src[lo:hi])
	}
	m.output(a, lo)
}

// reduceKind, plus the root, is the kind of a reduce's meeting
// (meetSlot.kind); allgatherKind is an allgather's (allgatherInProcess).
const (
	reduceKind    = 1 << 32
	allgatherKind = 1
)

// classErr is an error an algorithm found that has a class of its own,
// which the call reports (collErr) instead of ErrOther.
type classErr struct {
	class error
	msg   string
}

func (e *classErr) Error() string { return e.msg }
func (e *classErr) Unwrap() error { return e.class }

// kindName names the call of a meeting's kind, for errors.
func kindName(k uint64) string {
	switch {
	case k >= reduceKind:
		return fmt.Sprintf("a reduce to root %d", k-reduceKind)
	case k == allgatherKind:
		return "an allgather"
	}
	return "an allreduce"
}

// own records c's rank's proc in s, its rank's slot, the first time:
// other ranks read it to wake the rank (release, wakePub) at any time
// after it first parks, so it is never written again.
func (s *meetSlot) own(c *Comm) {
	if s.p == nil {
		s.p = c.p
	}
}

// meetKind is the kind of a reduction's meeting to root (root < 0: an
// allreduce).
func meetKind(root int) uint64 {
	if root >= 0 {
		return reduceKind + uint64(root)
	}
	return 0
}

// enter fills c's rank's slot of m for a reduction (root < 0: an
// allreduce) with its contribution, output, cc's signature and its road
// (checkOnly: combined values), and returns it.
func (m *meet) enter(c *Comm, cc *collCall, src, buf []byte, root int, checkOnly bool) *meetSlot {
	s := &m.slots[c.rank]
	s.kind = meetKind(root)
	s.src, s.buf, s.sig, s.checkOnly = src, buf, cc.sig, checkOnly
	s.own(c)
	return s
}

// meetCombine is a reduction by the road of combined values (a value
// that is not plain, or an operation of the caller's own: reduceBytes)
// among ranks whose vector reductions meet in memory: it meets too. The
// last rank to come checks every rank's signature, as for vectors, and
// folds the contributions (b, this rank's encoded value) in rank order
// with f; every rank (root alone, for a reduce) takes a copy of the
// result. One meeting replaces the messages of the algorithm, and a rank
// on this road and one on the vector road (another type, or a predefined
// operation against a function) learn of it, where before they waited
// for each other until the hang report. A disagreement recorded in cc (a
// signature) is reported by cc.done, whatever the error returned.
func (c *Comm) meetCombine(cc *collCall, b []byte, f coll.Combine, root int) ([]byte, error) {
	m := c.meet()
	me := c.rank
	m.slots[me].count++ // no publication (publish)
	s := m.enter(c, cc, b, nil, root, true)
	defer func() { s.src = nil }()
	if m.gather(c, me) {
		ok := m.check()
		m.shares, m.long, m.root = false, false, root
		m.res, m.resErr = nil, nil
		if ok {
			acc := bytes.Clone(m.slots[0].src)
			var err error
			for i := 1; i < m.n && err == nil; i++ {
				acc, err = f(acc, m.slots[i].src, true)
			}
			m.res, m.resErr = acc, err
		}
		m.release(me, false, nil)
	} else if _, err := c.meetWait(s); err != nil {
		return nil, err
	}
	if bad, err := m.mismatch(cc, me); bad {
		if err == nil {
			err = errors.New("meeting in memory: the ranks disagree")
		}
		return nil, err
	}
	// The result stays in the meet until the next meeting's last rank,
	// who comes after every rank has taken its copy here.
	if m.resErr != nil {
		return nil, fmt.Errorf("combining in memory: %w", m.resErr)
	}
	if root >= 0 && me != root {
		return nil, nil
	}
	return bytes.Clone(m.res), nil
}

// barrierSig is what a Barrier leaves in a meet for its signature: no
// type's signature, so that a rank in Barrier and one in an allreduce
// that meet learn that their calls differ.
const barrierSig = 0x4d6565744261726e // "MeetBarn"

// barrierInProcess is Barrier in a meet: every rank counts itself in, and
// the last to come lets them all go.
func (c *Comm) barrierInProcess() error {
	m := c.meet()
	me := c.rank
	// No publication (publish): counting rank by rank in one word takes
	// fewer crossings of cache lines than a line of each rank's read by
	// every other (Barrier of 2 ranks: 0.09 against 0.14 us).
	m.slots[me].count++
	s := &m.slots[me]
	s.src, s.buf, s.sig, s.kind, s.checkOnly = nil, nil, barrierSig, 0, false
	s.own(c)
	if m.gather(c, me) {
		// All alike means all in Barrier: the last rank to come is.
		ok := m.check()
		m.long = false
		m.release(me, ok, nil)
	} else if agreed, err := c.meetWait(s); err != nil {
		return err
	} else if agreed {
		return nil
	}
	for i, sg := range m.sigs {
		if sg != barrierSig {
			return c.errorf("Barrier", ErrOther, loc{}, "rank %d is in another collective on this communicator (mismatched collectives: this rank is in Barrier)", i)
		}
	}
	return nil
}

// gather counts rank me in, its slot filled, and reports whether it came
// last. A rank that does not come last has posted its wait first, so that
// the last one finds it to end.
func (m *meet) gather(c *Comm, me int) bool {
	if m.n == 1 {
		return true
	}
	// Last, with every other rank waiting already: no wait of its own to
	// post and withdraw (about 300 instructions and four locked ones). A
	// rank whose engine saw an abort, a lost peer or a revocation takes
	// the long way, where its own wait tells it so.
	healthy := c.p.Eng.Healthy()
	if healthy && m.arrived.CompareAndSwap(int32(m.n-1), int32(m.n)) {
		return true
	}
	s := &m.slots[me]
	if healthy && c.p.job.Prog.Spins() {
		// It will watch its slot: its wait is posted only if it comes to
		// park (meetWait), so a meeting that ends while it watches costs
		// its engine nothing. While it watches, it looks at its engine's
		// health for what a posted wait would have told it.
		s.posted = false
		s.state.Store(meetWatching)
		last := m.arrived.Add(1) == int32(m.n)
		m.wakePub(me)
		return last
	}
	c.postMeetWait(s)
	s.state.Store(meetWatching)
	last := m.arrived.Add(1) == int32(m.n)
	m.wakePub(me)
	if !last {
		return false
	}
	// Last: its own wait is not needed.
	w := &s.wait
	if c.p.Eng.Withdraw(w, engine.Status{}) {
		return true
	}
	// The engine failed the wait before (an abort): let the others go
	// with that error, and report it too.
	m.release(me, false, w.Status().Err)
	return false
}

// postMeetWait posts s's wait in c's rank's engine: a receive of no
// message, never matched, never answered, which the last rank to come
// withdraws, and which failures and aborts end as any receive.
func (c *Comm) postMeetWait(s *meetSlot) {
	w := &s.wait
	if w.W == nil {
		// Its own Waiter, kept across meetings (Reset keeps it): a pooled
		// one per wait was an allocation whenever the pool had been
		// emptied (TestCollectivesAllocateNothing, under qemu).
		w.W = engine.NewWaiter()
	}
	w.Reset()
	w.Context, w.Peer, w.Tag = c.shadow.ctx, engine.AnySource, meetTag
	if !c.p.Eng.TryPostRecv(w) {
		c.shadow.postAnswered(w)
	}
	s.posted = true
}

// release ends the waits of every rank but me (with err, if not nil), for
// the next meeting to begin; what the meeting decided is written. agreed
// says that every rank passed the same and nothing more is to be done: a
// short vector combined, or all in Barrier. A rank still watching its slot
// is let go by the slot alone, which also carries agreed: it withdraws its
// own wait and, agreed, reads nothing else of the meeting, so the
// hand-over costs it one cache line instead of its engine's lock, queue
// and request and the meeting's records (meetWait). A parked one, or any
// with an error to hear, has its wait withdrawn here.
func (m *meet) release(me int, agreed bool, err error) {
	m.arrived.Store(0)
	let := meetReleased
	if agreed {
		let = meetAgreed
	}
	for i := range m.slots {
		if i == me {
			continue
		}
		s := &m.slots[i]
		if err == nil && s.state.CompareAndSwap(meetWatching, let) {
			continue
		}
		// Not withdrawn: a failure or an abort ended the wait first, and
		// the rank reports that.
		s.p.Eng.Withdraw(&s.wait, engine.Status{Source: me, Tag: meetTag, Err: err})
	}
}

// meetWait waits for the last rank to come; it returns the error that
// ended the wait instead, if one did, and whether the last rank said the
// meeting agreed (release). It watches its slot first, when meetings
// watch (Config.Spin), then parks on its wait, which failures, aborts and
// hang reports see as any receive's.
func (c *Comm) meetWait(s *meetSlot) (agreed bool, err error) {
	p := c.p
	if !s.posted {
		// Not posted (gather): watch the slot and the engine's health,
		// then post the wait before parking on it. A release that comes
		// meanwhile finds the slot still watching and takes it.
		p.job.Prog.WatchFor(func() bool { return s.state.Load() >= meetReleased || !p.Eng.Healthy() })
		if st := s.state.Load(); st >= meetReleased {
			s.bySlot++
			return st == meetAgreed, nil
		}
		c.postMeetWait(s)
	} else {
		p.job.Prog.WatchFor(func() bool { return s.state.Load() >= meetReleased || s.wait.Done() })
	}
	var st *engine.Status
	if s.state.CompareAndSwap(meetWatching, meetParked) {
		// The last rank withdraws the wait, or a failure ends it.
		s.parked++
		st = p.WaitRef(&s.wait)
	} else if s.wait.Done() || !p.Eng.Withdraw(&s.wait, engine.Status{Tag: meetTag}) {
		// Released by the slot, but something ended the wait first (a
		// failure or an abort): report that.
		st = p.WaitRef(&s.wait)
	} else {
		s.bySlot++
		return s.state.Load() == meetAgreed, nil
	}
	if st.Err != nil {
		// Wrapped as the algorithms' errors are: the call's error keeps
		// the class and names the call (collErr).
		return false, fmt.Errorf("meeting in memory: %w", c.shadow.statusErr("collective wait", loc{}, *st))
	}
	return false, nil
}

// check records every rank's signature and reports whether all ranks
// passed the same, with vectors of one length. The last rank to come
// calls it.
func (m *meet) check() bool {
	ok := true
	m.lengths = true
	m.roads = false
	for i := range m.slots {
		s := &m.slots[i]
		m.sigs[i], m.kinds[i] = s.sig, s.kind
		if s.sig != m.sigs[0] || s.kind != m.kinds[0] {
			ok = false
		}
		if s.checkOnly != m.slots[0].checkOnly {
			ok, m.roads = false, true
		}
		if !s.checkOnly && !m.slots[0].checkOnly && (len(s.src) != len(m.slots[0].src) || len(s.buf) != len(s.src)) {
			// (Encoded values differ in length: only vectors must not.)
			ok, m.lengths = false, false
		}
	}
	return ok
}

// mismatch reports whether the last meeting found that the ranks
// disagree. A rank of another signature is recorded in cc
// (collCall.saw), as a message carrying it would have been; unequal
// lengths under equal signatures (which signatures that include the count
// rule out) are an error of their own.
func (m *meet) mismatch(cc *collCall, me int) (bool, error) {
	seen := false // a rank of another signature recorded in cc
	for i, sg := range m.sigs {
		if sg == barrierSig { // before any type mismatch
			return true, fmt.Errorf("meeting in memory: rank %d is in Barrier (mismatched collectives)", i)
		}
		if k := m.kinds[i]; k != m.kinds[me] {
			what := fmt.Sprintf("this rank is in %s, rank %d in %s", kindName(m.kinds[me]), i, kindName(k))
			if k >= reduceKind && m.kinds[me] >= reduceKind {
				return true, &classErr{ErrRoot, "meeting in memory: " + what + " (the ranks passed different roots; every rank must pass the same root: run with --check, or MPIGO_CHECK=1, to see every rank's call)"}
			}
			return true, fmt.Errorf("meeting in memory: %s (mismatched collectives)", what)
		}
		if !seen && i != me && sg != m.sigs[me] {
			seen = cc.saw(sg, i)
		}
	}
	if seen {
		return true, nil
	}
	if m.roads {
		return true, &classErr{ErrOp, "meeting in memory: some ranks passed a predefined operation and others a function of their own (every rank must pass the same operation)"}
	}
	if !m.lengths {
		return true, fmt.Errorf("meeting in memory: %w: the ranks passed vectors of different lengths", ErrCount)
	}
	return false, nil
}

// combine combines every rank's contribution in rank order into acc
// and writes the result into every rank's output. The last rank to come
// calls it, with its own scratch.
func (m *meet) combine(op coll.VecOp, acc []byte, me int) {
	a := acc[:len(m.slots[0].src)]
	copy(a, m.slots[0].src)
	for i := 1; i < m.n; i++ {
		op(a, m.slots[i].src)
	}
	if len(a) > meetRes {
		m.output(a, 0)
		return
	}
	// Short: into the waiters' slots, beside the state the release
	// writes next (takeShort), and into this rank's own output.
	for i := range m.slots {
		switch {
		case m.root >= 0 && i != m.root:
		case i == me:
			copy(m.slots[i].buf, a)
		default:
			copy(m.slots[i].res[:], a)
		}
	}
}

// takeShort copies the short result the last rank left in s (combine)
// into buf, this rank's output, if it gets one (root < 0, or it is the
// root), when the last rank combined for all.
func (m *meet) takeShort(s *meetSlot, buf []byte, root, me int) {
	if len(buf) <= meetRes && (root < 0 || root == me) {
		copy(buf, s.res[:len(buf)])
	}
}

// output writes the combined bytes a, from byte off of the vector on,
// into every rank's output, or only the root's.
func (m *meet) output(a []byte, off int) {
	if m.root >= 0 {
		copy(m.slots[m.root].buf[off:], a)
		return
	}
	for i := range m.slots {
		copy(m.slots[i].buf[off:], a)
	}
}
