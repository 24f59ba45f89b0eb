package mpi

import (
	"errors"

	"github.com/mpigo/mpi/internal/coll"
	"github.com/mpigo/mpi/internal/engine"
)

// collComm adapts a communicator's collective shadow to coll.Comm.
type collComm struct{ c *Comm }

func (cc collComm) Rank() int { return cc.c.rank }
func (cc collComm) Size() int { return len(cc.c.group) }

// A collective's send asks the device for the short road first
// (Device.SendShort, p2p_short.go), as a blocking Send does: one call.

// sendErr is the error of a collective's send that the transport refused
// on the short road, or nil.
func (cc collComm) sendErr(dst, tag int, err error) error {
	if err == nil {
		return nil
	}
	return cc.c.shortErr("collective send", dst, tag, err)
}

// doneReq is a request that was complete when it was made.
type doneReq struct{}

func (doneReq) Wait() (int, error) { return 0, nil }

func (cc collComm) Send(buf []byte, dst, tag int) error {
	c := cc.c
	if ok, err := c.p.SendShort(engine.Standard, c.ctx, c.rank, c.group[dst], tag, 0, buf); ok {
		return cc.sendErr(dst, tag, err)
	}
	s := getSlot()
	cc.c.startSend(&s.er, buf, 0, dst, tag, engine.Standard)
	st := cc.c.p.Wait(&s.er)
	putSlot(s)
	return cc.err("collective send", at("dest", dst, tag), st)
}

func (cc collComm) Recv(buf []byte, src, tag int) (int, error) {
	s := getSlot()
	cc.c.startSlotRecv(s, buf, nil, 0, src, tag)
	st := cc.c.p.WaitRef(&s.er)
	n := st.Count
	var err error
	if st.Err != nil {
		err = cc.c.statusErr("collective receive", at("source", src, tag), *st)
	}
	putSlot(s)
	return n, err
}

func allocBytes(n int) []byte { return make([]byte, n) }

func (cc collComm) RecvAlloc(src, tag int) ([]byte, error) {
	s := getSlot()
	cc.c.startSlotRecv(s, nil, allocBytes, 0, src, tag)
	st := cc.c.p.Wait(&s.er)
	b := s.er.Buffer()
	putSlot(s)
	if b == nil {
		b = []byte{}
	}
	return b[:st.Count], cc.err("collective receive", at("source", src, tag), st)
}

// Isend and Irecv return a pooled slot as the request; its Wait puts it
// back, so collectives allocate no requests. An eager Isend is sent at
// once and returns doneReq.
func (cc collComm) Isend(buf []byte, dst, tag int) (coll.Request, error) {
	c := cc.c
	if ok, err := c.p.SendShort(engine.Standard, c.ctx, c.rank, c.group[dst], tag, 0, buf); ok {
		if err != nil {
			return nil, cc.sendErr(dst, tag, err)
		}
		return doneReq{}, nil
	}
	s := getSlot()
	s.c, s.at = cc.c, at("dest", dst, tag)
	cc.c.startSend(&s.er, buf, 0, dst, tag, engine.Standard)
	return s, nil
}

func (cc collComm) Irecv(buf []byte, src, tag int) (coll.Request, error) {
	s := getSlot()
	s.c, s.at = cc.c, at("source", src, tag)
	cc.c.startSlotRecv(s, buf, nil, 0, src, tag)
	return s, nil
}

// Wait makes a slot a coll.Request: it waits, then returns the slot to
// the pool. It must be called exactly once.
func (s *slot) Wait() (int, error) {
	st := s.c.p.Wait(&s.er)
	c, l := s.c, s.at
	if cc := s.call; cc != nil && st.Sig != cc.sig && cc.saw(st.Sig, s.src) {
		st.Count = len(s.er.Buf)
		if errors.Is(st.Err, engine.ErrTruncate) {
			st.Err = nil
		}
	}
	putSlot(s)
	if st.Err != nil {
		return st.Count, c.statusErr("collective", l, st)
	}
	return st.Count, nil
}

func (cc collComm) err(op string, l loc, st engine.Status) error {
	if st.Err == nil {
		return nil
	}
	return cc.c.statusErr(op, l, st)
}
