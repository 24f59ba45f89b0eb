package mpi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/mpigo/mpi/internal/engine"
	"github.com/mpigo/mpi/internal/ft"
)

// The fault-tolerant agreement behind Agree and Shrink is the protocol of
// internal/ft (its package doc explains it): here a call enters the
// machine (ftAgreeStart) and waits for its decision (ftAgreeWait).

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

// ftAgree runs one agreement on c over val with combine and returns the
// decided value and failed members (world ranks).
func (c *Comm) ftAgree(val []byte, combine ft.Combine) ([]byte, []int, error) {
	e, err := c.ftAgreeStart(val, combine)
	if err != nil {
		return nil, nil, err
	}
	return c.ftAgreeWait(e)
}

// ftAgreeStart enters this rank in the next agreement on c, on the
// caller's goroutine: the calls are numbered in the order a rank makes
// them, as collectives are, so Iagree takes its number here.
func (c *Comm) ftAgreeStart(val []byte, combine ft.Combine) (*agreeWait, error) {
	f := c.p.ft
	key := ft.Key{Ctx: c.ctx, Group: ft.GroupHash(c.group)}
	w := &agreeWait{done: make(chan struct{})}
	var err error
	f.step(ftQueued, nil, func(m *ft.Machine, out *ft.Out) {
		var id ft.AgreeID
		if id, err = m.Enter(key, c.group, val, combine, out); err == nil {
			f.waits[id] = w
		}
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// ftAgreeWait waits for the decision of the agreement w.
func (c *Comm) ftAgreeWait(w *agreeWait) ([]byte, []int, error) {
	select {
	case <-w.done:
	case <-c.p.ft.stop:
		return nil, nil, errors.New("the job ended during the agreement")
	}
	if w.err != nil {
		return nil, nil, w.err
	}
	return w.val, w.failed, nil
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
