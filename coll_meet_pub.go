package mpi

import (
	"math"
	"sync/atomic"

	"github.com/mpigo/mpi/internal/coll"
	"github.com/mpigo/mpi/internal/engine"
)

// Publications: a meeting of a few ranks whose contributions are short.
//
// A meeting with a last rank to come (gather, release) costs a short
// allreduce four cache-line crossings in a row: the last rank takes the
// arrival count, reads each waiter's slot and contribution, writes each
// waiter's result and state, and each waiter reads them. For a
// contribution of at most meetInline bytes, among 2 to meetPubMax ranks
// that watch (each has a processor), every rank instead publishes, on a cache line of its own, its
// signature, its call's kind, its contribution's length and the
// contribution itself, and reads every other rank's publication; if all
// agree, it combines the contributions in rank order itself, so every
// rank computes the same bits, and the meeting costs about one crossing
// each way, at once, as an exchange of messages would, without their
// matching (docs/performance.md, "Short reductions by publication").
//
// Anything else meets with a last rank, without a publication: longer
// vectors (read in place there, so nobody may leave before they are
// read), combined values, Barrier (one count in one word is fewer
// crossings than a line of each rank read by every other). A rank
// waiting for publications that sees a rank arrive there (meet.arrived)
// goes there too, and so does every rank when the publications disagree,
// so that every rank meets there and learns of the mismatch from the
// same records (mismatch), as before.
//
// Every rank counts every meeting (meetSlot.count), published or not, and
// publishes into one of two lines by the parity of its number. It cannot
// start meeting k+2, which overwrites the line of meeting k, before
// meeting k+1 ended: every rank then published meeting k+1 or arrived at
// its last rank, and a rank that reads the publications of meeting k
// does so before either.
//
// A rank that stops watching for the others (no processor of its own, or
// a watch that ran out) posts its meeting wait (postMeetWait), marks
// itself parked and looks once more. A rank that sees every publication,
// or arrives at the last rank's meeting, then looks at the others' marks
// and wakes the parked by withdrawing their waits (wakePub). The mark,
// the publication and the arrival are sequentially consistent stores
// followed by loads of the others', so of a parking rank and the last to
// publish or the first to arrive, at least one sees the other. The mark
// carries the meeting's number, so that a late wake never ends a later
// meeting's wait.

// meetPubMax is the most ranks a meeting publishes for: every rank reads
// every publication.
const meetPubMax = 8

// meetInline is the longest contribution that is published: a
// publication is two cache lines, and one of up to 32 bytes is read from
// the first alone.
const meetInline = 96

// A meetPub is one rank's publication for one meeting, two cache lines.
type meetPub struct {
	seq  atomic.Uint64 // the meeting it is for (meetSlot.count), stored last
	sig  uint64
	kind uint64
	n    int32 // the contribution's bytes
	odd  bool  // output and contribution of different lengths
	_    [3]byte
	// data is the contribution: 8-byte aligned, for the operations'
	// views of it, its first 32 bytes on the line of the rest.
	data [meetInline]byte
}

// Values of the low two bits of meetSlot.pstate.
const (
	pubParked   uint64 = 1 + iota // parked on its meeting wait
	pubWoken                      // a rank withdrew that wait (wakePub)
	pubUnparked                   // it saw the publications itself after marking
)

// A pubCall is what one rank brings to a publication.
type pubCall struct {
	sig, kind uint64
	src, buf  []byte // contribution (at most meetInline bytes) and output
	root      int    // the rank that gets the result; -1: every rank
	// long: the contribution goes by messages, whatever src holds (an
	// encoded value): published as longer than any.
	long bool
}

// pubs reports whether m's meetings of short vectors publish: 2 to
// meetPubMax ranks.
func (m *meet) pubs() bool { return m.n > 1 && m.n <= meetPubMax }

// publish publishes rank c.rank's part of a reduction's meeting of m,
// for a contribution of at most meetInline bytes, and reports whether
// that was the whole call: every rank published the same kind of call
// with the same signature and length; this rank then holds its result,
// which op combined into scratch (the rank's own, as long as buf). Else
// the meeting goes on with a last rank to come (gather), which also
// reports a failure that ended the wait here. op and scratch are not in
// pc: the call of op would let every slice in pc escape to the heap.
func (c *Comm) publish(m *meet, pc *pubCall, op coll.VecOp, scratch []byte) bool {
	k, ok := c.pubAgree(m, pc, len(pc.buf) != len(pc.src))
	if !ok {
		return false
	}
	if pc.root >= 0 && pc.root != c.rank {
		return true
	}
	l0 := &m.slots[0].pub[k&1]
	n := int(l0.n)
	a := scratch[:n]
	copy(a, l0.data[:n])
	for i := 1; i < m.n; i++ {
		op(a, m.slots[i].pub[k&1].data[:n])
	}
	copy(pc.buf, a)
	return true
}

// pubAgree publishes rank c.rank's part of a meeting of m (odd: its
// output is not as long as its contribution, which a reduction must not
// have), waits for every rank's, and reports whether they agree: every
// rank published the same kind of call with the same signature and
// length. It returns the meeting's number, whose parity says which
// publication lines hold it.
func (c *Comm) pubAgree(m *meet, pc *pubCall, odd bool) (uint64, bool) {
	s, k := c.pubPost(m, pc, odd)
	if m.published(k) {
		s.bySlot++
	} else if !c.pubWait(m, s, k) {
		return k, false
	}
	// Every rank published: the last to publish may find others parked.
	m.wakePub(c.rank)
	return k, m.agree(k)
}

// pubPost counts rank c.rank's next meeting of m and publishes its part
// there: its data only if it has at most meetInline bytes, else its
// length alone. It returns the rank's slot and the meeting's number.
func (c *Comm) pubPost(m *meet, pc *pubCall, odd bool) (*meetSlot, uint64) {
	s := &m.slots[c.rank]
	s.count++
	k := s.count
	s.own(c)
	l := &s.pub[k&1]
	n := int32(min(len(pc.src), math.MaxInt32))
	if pc.long {
		n = math.MaxInt32
	}
	l.sig, l.kind, l.n, l.odd = pc.sig, pc.kind, n, odd
	if n <= meetInline {
		copy(l.data[:], pc.src)
	}
	l.seq.Store(k)
	return s, k
}

// agree reports whether every rank's publication of meeting k, which all
// made, says the same kind of call, signature and length.
func (m *meet) agree(k uint64) bool {
	l0 := &m.slots[0].pub[k&1]
	for i := range m.n {
		li := &m.slots[i].pub[k&1]
		if li.sig != l0.sig || li.kind != l0.kind || li.n != l0.n || li.odd {
			return false // the meeting with a last rank reports it
		}
	}
	return true
}

// allgatherInProcess is an allgather of plain data in a meet, while the
// ranks watch (each has a processor) and there are 2 to meetPubMax of
// them: src, this rank's block, goes to block c.rank of every rank's out
// (each block as long as src). Every rank publishes its block, and when
// all agree copies the others' blocks from their publications: one
// crossing each way, as for a short allreduce, instead of the
// algorithm's messages. It reports whether it did the call.
//
// A block longer than meetInline, or any with long set (an encoded value,
// src unused), goes by the message algorithm: its rank publishes only its
// length, without waiting for the others', so that a long allgather costs
// one store more than before. A rank with a short block that finds a long
// one published goes by messages too, where the messages' signatures
// report the mismatch of lengths to every rank. When short blocks
// disagree (another type, another length) or a rank is in another
// collective, every rank goes on to the meeting with a last rank, which
// reports the mismatch to every rank alike: a rank of another signature
// is left in cc, for cc.done to report.
func (c *Comm) allgatherInProcess(cc *collCall, src, out []byte, long bool) (bool, error) {
	m := c.meet()
	if !m.pubs() || !c.p.job.Prog.Spins() {
		return false, nil
	}
	me := c.rank
	pc := pubCall{sig: cc.sig, kind: allgatherKind, src: src, root: -1}
	n := len(src)
	if long || n > meetInline {
		pc.long = long
		// Nobody reads this publication's data, nor waits for it to be
		// read: the line is free again once every rank has published
		// the next meeting, which the messages of this one come before.
		// A rank parked for the publications (one with a short block:
		// a mismatch) is woken to look again, whether or not this one
		// was the last: the marks of parked ranks are on lines seldom
		// written, where the others' publications would each cost a
		// crossing to look at.
		c.pubPost(m, &pc, false)
		m.wakePub(me)
		return false, nil
	}
	s, k := c.pubPost(m, &pc, false)
	waited := true
	if m.published(k) {
		s.bySlot++
	} else {
		waited = c.pubWait(m, s, k)
	}
	if waited {
		m.wakePub(me)
		for i := range m.n {
			if m.slots[i].pub[k&1].n > meetInline {
				return false, nil // by messages, as that rank
			}
		}
		if m.agree(k) {
			for i := range m.n {
				if i != me {
					copy(out[i*n:], m.slots[i].pub[k&1].data[:n])
				}
			}
			return true, nil
		}
	}
	// The meeting with a last rank: every rank that published comes here
	// too, having seen the same disagreement, or having seen a rank come
	// here (a reduction of a long vector, Barrier), or a failure.
	s = m.enter(c, cc, src, src, -1, false)
	s.kind = allgatherKind
	defer func() { s.src, s.buf = nil, nil }()
	if m.gather(c, me) {
		ok := m.check()
		m.shares, m.long, m.root = false, false, -1
		m.release(me, false, nil)
		if ok {
			return false, nil // every rank is in this allgather: by messages
		}
	} else if _, err := c.meetWait(s); err != nil {
		return true, err
	}
	if bad, err := m.mismatch(cc, me); bad {
		return true, err
	}
	return false, nil
}

// published reports whether every rank of m has published meeting k.
func (m *meet) published(k uint64) bool {
	for i := range m.slots {
		if m.slots[i].pub[k&1].seq.Load() != k {
			return false
		}
	}
	return true
}

// wakePub ends the wait of every rank but me parked for the publications
// of me's current meeting. A rank calls it once every rank published, or
// once it arrived at the last rank's meeting.
func (m *meet) wakePub(me int) {
	if !m.pubs() {
		return
	}
	parked := m.slots[me].count<<2 | pubParked
	for i := range m.slots {
		s := &m.slots[i]
		if i != me && s.pstate.Load() == parked && s.pstate.CompareAndSwap(parked, parked-pubParked+pubWoken) {
			s.p.Eng.Withdraw(&s.wait, engine.Status{Source: me, Tag: meetTag})
		}
	}
}

// pubWait waits until every rank of m has published meeting k, s being
// this rank's slot, and reports whether they did; it reports false as
// soon as a rank arrives at the last rank's meeting instead. It watches
// while the meetings watch (Config.Spin), then parks on its meeting wait,
// which failures, aborts and hang reports see as any receive's. A failure
// or an abort that ends the wait makes it report false: the meeting with
// a last rank then reports it.
func (c *Comm) pubWait(m *meet, s *meetSlot, k uint64) bool {
	p := c.p
	over := func() bool { return m.published(k) || m.arrived.Load() != 0 }
	for {
		if p.job.Prog.WatchFor(func() bool { return over() || !p.Eng.Healthy() }) && over() {
			s.bySlot++
			return m.published(k)
		}
		c.postMeetWait(s)
		s.pstate.Store(k<<2 | pubParked)
		if over() {
			if s.pstate.CompareAndSwap(k<<2|pubParked, k<<2|pubUnparked) {
				// Nobody woke it: its wait is its own to withdraw,
				// unless a failure ended it first.
				if p.Eng.Withdraw(&s.wait, engine.Status{Tag: meetTag}) {
					s.bySlot++
					return m.published(k)
				}
			}
			// Else woken meanwhile: the waker withdraws the wait.
		}
		s.parked++
		if st := p.WaitRef(&s.wait); st.Err != nil {
			return false
		}
		if over() {
			return m.published(k)
		}
	}
}
