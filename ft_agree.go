package mpi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/mpigo/mpi/internal/engine"
)

// The fault-tolerant agreement behind Agree and Shrink.
//
// Every call on a communicator is one instance, named by the
// communicator's context, a hash of its members and a sequence number
// (the calls are collective, so every member numbers them alike). The
// coordinator of an instance is the first member, in group order, that a
// rank does not know to have failed. Each member sends its proposal (its
// value and the failures it knows of) to its coordinator; the
// coordinator, once it has the proposal of every member it does not know
// failed, combines them, decides, and sends the decision to each. When a
// member learns that its coordinator failed it sends its proposal to the
// next one; a coordinator that takes over first asks every member for its
// state (collect), and if any member already holds a decision of an
// earlier coordinator it adopts that one, so no two live ranks decide
// differently. Decisions are kept, so that a member that asks late is
// answered even after the others have returned. The decided failures
// become known failures on every rank that decides (Shrink leaves them
// out).

// agreeID names one agreement instance.
type agreeID struct {
	key ftKey
	seq uint64
}

// ftKeep is how many decided instances of a communicator a rank keeps
// to answer late members.
const ftKeep = 8

// agreement is one instance, as a rank sees it. Only the controller
// touches it, except done and the results after done is closed.
type agreement struct {
	id      agreeID
	group   []int // members' world ranks; nil until this rank enters
	entered bool
	val     []byte
	combine func(acc, in []byte) ([]byte, error)

	props     map[int]ftProp // proposals received (as coordinator)
	sentTo    int            // the coordinator our proposal went to (-1: none)
	collected bool           // we collected as a coordinator that took over

	decided bool
	dval    []byte
	dfailed []int
	err     error
	done    chan struct{} // closed once decided (or abandoned)
	closed  bool
}

type ftProp struct {
	val     []byte
	failed  []int
	decided bool
}

// andBytes is the combination of Agree: a bitwise AND.
func andBytes(acc, in []byte) ([]byte, error) {
	if len(acc) != len(in) {
		return nil, fmt.Errorf("agreement values of %d and %d bytes", len(acc), len(in))
	}
	for i := range acc {
		acc[i] &= in[i]
	}
	return acc, nil
}

// ctxCombine is agreeCombine for agreements (context ids).
func ctxCombine(acc, in []byte) ([]byte, error) { return agreeCombine(acc, in, true) }

// encodeAgree encodes a proposal or decision.
func encodeAgree(id agreeID, decided bool, val []byte, failed []int) []byte {
	b := make([]byte, 0, 25+4+len(val)+4+4*len(failed))
	b = binary.LittleEndian.AppendUint32(b, id.key.ctx)
	b = binary.LittleEndian.AppendUint64(b, id.key.gh)
	b = binary.LittleEndian.AppendUint64(b, id.seq)
	var fl byte
	if decided {
		fl = 1
	}
	b = append(b, fl)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(val)))
	b = append(b, val...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(failed)))
	for _, r := range failed {
		b = binary.LittleEndian.AppendUint32(b, uint32(r))
	}
	return b
}

// decodeAgree decodes a message of encodeAgree (or a collect, which has
// the id only); ok is false for malformed bytes.
func decodeAgree(b []byte, size int) (id agreeID, p ftProp, ok bool) {
	if len(b) < 20 {
		return id, p, false
	}
	id.key.ctx = binary.LittleEndian.Uint32(b)
	id.key.gh = binary.LittleEndian.Uint64(b[4:])
	id.seq = binary.LittleEndian.Uint64(b[12:])
	b = b[20:]
	if len(b) == 0 {
		return id, p, true
	}
	if len(b) < 5 {
		return id, p, false
	}
	p.decided = b[0] == 1
	n := int(binary.LittleEndian.Uint32(b[1:]))
	b = b[5:]
	if n > len(b) {
		return id, p, false
	}
	p.val = slices.Clone(b[:n])
	b = b[n:]
	if len(b) < 4 {
		return id, p, false
	}
	nf := int(binary.LittleEndian.Uint32(b))
	b = b[4:]
	if nf > size || len(b) != 4*nf {
		return id, p, false
	}
	for i := 0; i < nf; i++ {
		r := int(binary.LittleEndian.Uint32(b[4*i:]))
		if r >= size {
			return id, p, false
		}
		p.failed = append(p.failed, r)
	}
	return id, p, true
}

// get returns the instance id, making a placeholder for one this rank has
// not entered yet.
func (f *ftProc) get(id agreeID) *agreement {
	a := f.agrees[id]
	if a == nil {
		a = &agreement{id: id, sentTo: -1, props: map[int]ftProp{}, done: make(chan struct{})}
		f.agrees[id] = a
	}
	return a
}

// enter makes e, the entry of a local call, the state of its instance,
// taking over what arrived before the call.
func (f *ftProc) enter(e *agreement) {
	e.sentTo = -1
	e.props = map[int]ftProp{}
	if a := f.agrees[e.id]; a != nil {
		for r, p := range a.props {
			e.props[r] = p
		}
		if a.decided {
			e.decided, e.dval, e.dfailed = true, a.dval, a.dfailed
		}
	}
	f.agrees[e.id] = e
	e.props[f.p.Rank] = ftProp{val: e.val}
	if e.decided {
		e.closed = true
		close(e.done)
		return
	}
	f.open[e.id] = e
	f.step(e)
}

// onAgree handles a proposal, decision or collect from another rank.
func (f *ftProc) onAgree(m ftMsg) {
	id, p, ok := decodeAgree(m.b, f.p.job.size)
	if !ok {
		return
	}
	a := f.get(id)
	switch m.tag {
	case ftPropose:
		if !a.decided {
			a.props[m.from] = p
		}
		if a.decided {
			f.send(m.from, ftDecide, encodeAgree(id, true, a.dval, a.dfailed))
		} else if p.decided {
			f.decide(a, p.val, p.failed)
		}
	case ftDecide:
		if !a.decided {
			f.decide(a, p.val, p.failed)
		}
	case ftCollect:
		switch {
		case a.decided:
			f.send(m.from, ftDecide, encodeAgree(id, true, a.dval, a.dfailed))
		case a.entered:
			a.sentTo = m.from
			f.send(m.from, ftPropose, encodeAgree(id, false, a.val, f.failedIn(a.group)))
		}
	}
	f.step(a)
}

// stepAll moves every undecided instance on (failures may have changed
// coordinators).
func (f *ftProc) stepAll() {
	for _, a := range f.open {
		f.step(a)
	}
}

// live returns the members of a not known failed.
func (f *ftProc) live(a *agreement) []int {
	var l []int
	for _, r := range a.group {
		if !f.known(r) {
			l = append(l, r)
		}
	}
	return l
}

// step acts on instance a: propose to the coordinator, or decide as one.
func (f *ftProc) step(a *agreement) {
	if !a.entered || a.decided {
		return
	}
	live := f.live(a)
	if len(live) == 0 {
		return
	}
	coord := live[0]
	if coord != f.p.Rank {
		if a.sentTo != coord {
			a.sentTo = coord
			f.send(coord, ftPropose, encodeAgree(a.id, false, a.val, f.failedIn(a.group)))
		}
		return
	}
	if !a.collected && coord != a.group[0] {
		// We take over from a failed coordinator: members that already
		// proposed (or decided) answered it, not us.
		a.collected = true
		for _, r := range live[1:] {
			f.send(r, ftCollect, encodeAgree(a.id, false, nil, nil)[:20])
		}
	}
	for _, p := range a.props {
		if p.decided {
			f.decide(a, p.val, p.failed)
			return
		}
	}
	for _, r := range live {
		if _, ok := a.props[r]; !ok {
			return
		}
	}
	val := slices.Clone(a.val)
	failed := map[int]bool{}
	for _, r := range f.failedIn(a.group) {
		failed[r] = true
	}
	for _, r := range live {
		p := a.props[r]
		if r != f.p.Rank {
			v, err := a.combine(val, slices.Clone(p.val))
			if err != nil {
				continue // a malformed proposal counts for nothing
			}
			val = v
		}
		for _, x := range p.failed {
			failed[x] = true
		}
	}
	var fl []int
	for _, r := range a.group {
		if failed[r] {
			fl = append(fl, r)
		}
	}
	f.decide(a, val, fl)
}

// decide records the decision of a; a coordinator passes it on to every
// live member.
func (f *ftProc) decide(a *agreement, val []byte, failed []int) {
	if a.decided {
		return
	}
	a.decided, a.dval, a.dfailed = true, val, failed
	a.props = nil
	delete(f.open, a.id)
	// A live member is at most one instance behind the others (an
	// instance needs every live member's proposal), so old decisions can
	// go.
	if a.id.seq > ftKeep {
		delete(f.agrees, agreeID{key: a.id.key, seq: a.id.seq - ftKeep})
	}
	for _, r := range failed {
		f.noteFailed(r, errors.New("the survivors agreed that it failed"))
	}
	if a.entered {
		if live := f.live(a); len(live) > 0 && live[0] == f.p.Rank {
			b := encodeAgree(a.id, true, val, failed)
			for _, r := range live[1:] {
				f.send(r, ftDecide, b)
			}
		}
	}
	if !a.closed {
		a.closed = true
		close(a.done)
	}
}

// abandon ends a wait on a with err.
func (a *agreement) abandon(err error) {
	if !a.closed {
		a.err = err
		a.closed = true
		close(a.done)
	}
}

// ftAgree runs one agreement on c over val with combine and returns the
// decided value and failed members (world ranks).
func (c *Comm) ftAgree(val []byte, combine func(acc, in []byte) ([]byte, error)) ([]byte, []int, error) {
	e, err := c.ftAgreeStart(val, combine)
	if err != nil {
		return nil, nil, err
	}
	return c.ftAgreeWait(e)
}

// ftAgreeStart enters this rank in the next agreement on c, on the
// caller's goroutine: the calls are numbered in the order a rank makes
// them, as collectives are, so Iagree takes its number here.
func (c *Comm) ftAgreeStart(val []byte, combine func(acc, in []byte) ([]byte, error)) (*agreement, error) {
	f := c.p.ft
	key := ftKey{ctx: c.ctx, gh: groupHash(c.group)}
	e := &agreement{group: c.group, val: val, combine: combine, entered: true, done: make(chan struct{})}
	f.mu.Lock()
	if f.dead != nil {
		f.mu.Unlock()
		return nil, f.dead
	}
	f.seqs[key]++
	e.id = agreeID{key: key, seq: f.seqs[key]}
	f.enters = append(f.enters, e)
	f.mu.Unlock()
	f.poke()
	return e, nil
}

// ftAgreeWait waits for the decision of the agreement e.
func (c *Comm) ftAgreeWait(e *agreement) ([]byte, []int, error) {
	select {
	case <-e.done:
	case <-c.p.ft.stop:
		return nil, nil, errors.New("the job ended during the agreement")
	}
	if e.err != nil {
		return nil, nil, e.err
	}
	return e.dval, e.dfailed, nil
}

// Agree is a fault-tolerant agreement (MPIX_Comm_agree): every live member
// of c gets the bitwise AND of the flags of the members that did not fail,
// even if members fail during the call, and even on a revoked
// communicator. Every live member must call it. It returns the agreed
// value; the error is ErrProcFailed (with the value still valid) if the
// members agree that some member failed whose failure this rank has not
// acknowledged with AckFailed. It needs fault tolerance (mpigo run --ft,
// MPIGO_FT=1 or Config.FT).
func (c *Comm) Agree(flag int) (_ int, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Agree", c, Undefined, Undefined), &err)
	}
	if err := c.ftCheck("Agree"); err != nil {
		return flag, err
	}
	val := binary.LittleEndian.AppendUint64(nil, uint64(flag))
	dval, failed, err := c.ftAgree(val, andBytes)
	v, err := c.agreeResult("Agree", flag, dval, failed, err)
	return v, c.handle(err)
}

// agreeResult turns an agreement's outcome into Agree's result; the
// error is not passed through c's error handler yet.
func (c *Comm) agreeResult(op string, flag int, dval []byte, failed []int, err error) (int, error) {
	if err != nil {
		return flag, c.errorf(op, ErrProcFailed, loc{}, "%v", err)
	}
	v := int(binary.LittleEndian.Uint64(dval))
	acked := c.ackedFailed()
	for _, r := range failed {
		if !slices.Contains(acked, r) {
			return v, c.errorf(op, ErrProcFailed, loc{}, "rank %d failed (acknowledge it with AckFailed; the agreed value %#x is valid)", c.rankOf(r), v)
		}
	}
	return v, nil
}

// Iagree is the non-blocking Agree (MPIX_Comm_iagree): it starts the
// agreement and returns at once; the Future's Wait returns the agreed
// value, and ErrProcFailed as Agree does, with the agreed value still
// returned beside it. Every live member must start its agreements on c
// (Agree, Iagree, Shrink) in the same order. It needs fault tolerance.
func (c *Comm) Iagree(flag int) (_ *Future[int], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Iagree", c, Undefined, Undefined), &err)
	}
	if err := c.ftCheck("Iagree"); err != nil {
		return nil, err
	}
	e, err := c.ftAgreeStart(binary.LittleEndian.AppendUint64(nil, uint64(flag)), andBytes)
	if err != nil {
		return nil, c.fail("Iagree", ErrProcFailed, loc{}, "%v", err)
	}
	f := &Future[int]{keepOnErr: true}
	r := c.newRequest("Iagree", loc{})
	var berr error
	r.x.finish = func(engine.Status) error { return berr }
	er := r.er
	go func() {
		dval, failed, err := c.ftAgreeWait(e)
		f.v, berr = c.agreeResult("Iagree", flag, dval, failed, err)
		er.CompleteOnce(engine.Status{Source: -1, Tag: -1}) // unless a failed job ended the wait first (endWaits)
	}()
	f.req = r
	return f, nil
}

// ftHookShrink, if set (by tests), is called in Shrink after the members
// agreed on the new communicator and before this rank makes it.
var ftHookShrink func(p *proc)

// Shrink returns a new communicator of the members of c that did not fail
// (MPIX_Comm_shrink), in the order they have in c. The members agree on
// who failed, so every survivor gets the same communicator, even if more
// ranks fail during the call; c may be revoked. Every live member must
// call it. It needs fault tolerance (mpigo run --ft, MPIGO_FT=1 or
// Config.FT).
func (c *Comm) Shrink() (_ *Comm, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Shrink", c, Undefined, Undefined), &err)
	}
	if err := c.ftCheck("Shrink"); err != nil {
		return nil, err
	}
	_, failed, err := c.ftAgree([]byte{}, andBytes)
	if err != nil {
		return nil, c.fail("Shrink", ErrProcFailed, loc{}, "%v", err)
	}
	var survivors []int
	for _, r := range c.group {
		if !slices.Contains(failed, r) {
			survivors = append(survivors, r)
		}
	}
	me := slices.Index(survivors, c.p.Rank)
	if me < 0 {
		return nil, c.fail("Shrink", ErrProcFailed, loc{}, "the other ranks declared this rank failed (it was stopped or unreachable longer than the heartbeat timeout)")
	}
	id, err := c.p.agreeContext(func(buf []byte) ([]byte, error) {
		v, _, err := c.ftAgree(buf, ctxCombine)
		return v, err
	})
	if err != nil {
		return nil, c.ctxFail("Shrink", err)
	}
	if ftHookShrink != nil {
		ftHookShrink(c.p)
	}
	nc := newComm(c.p, id*2, me, survivors, c.name+".shrink")
	nc.errh.Store(c.errh.Load())
	return nc, nil
}
