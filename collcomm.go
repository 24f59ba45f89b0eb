package mpi

import (
	"github.com/mpigo/mpi/internal/coll"
	"github.com/mpigo/mpi/internal/engine"
)

// collComm adapts a communicator's collective shadow to coll.Comm.
type collComm struct{ c *Comm }

func (cc collComm) Rank() int { return cc.c.rank }
func (cc collComm) Size() int { return len(cc.c.group) }

func (cc collComm) Send(buf []byte, dst, tag int) error {
	s := getSlot()
	cc.c.startSend(&s.er, buf, 0, dst, tag, engine.Standard)
	st := s.er.Wait()
	putSlot(s)
	return cc.err("collective send", at("dest", dst, tag), st)
}

func (cc collComm) Recv(buf []byte, src, tag int) (int, error) {
	s := getSlot()
	cc.c.startRecv(&s.er, buf, nil, 0, src, tag)
	st := s.er.Wait()
	putSlot(s)
	return st.Count, cc.err("collective receive", at("source", src, tag), st)
}

func allocBytes(n int) []byte { return make([]byte, n) }

func (cc collComm) RecvAlloc(src, tag int) ([]byte, error) {
	s := getSlot()
	cc.c.startRecv(&s.er, nil, allocBytes, 0, src, tag)
	st := s.er.Wait()
	b := s.er.Buffer()
	putSlot(s)
	if b == nil {
		b = []byte{}
	}
	return b[:st.Count], cc.err("collective receive", at("source", src, tag), st)
}

func (cc collComm) Isend(buf []byte, dst, tag int) (coll.Request, error) {
	er := new(engine.Request)
	cc.c.startSend(er, buf, 0, dst, tag, engine.Standard)
	return collReq{cc, er, at("dest", dst, tag)}, nil
}

func (cc collComm) Irecv(buf []byte, src, tag int) (coll.Request, error) {
	er := new(engine.Request)
	cc.c.startRecv(er, buf, nil, 0, src, tag)
	return collReq{cc, er, at("source", src, tag)}, nil
}

func (cc collComm) err(op string, l loc, st engine.Status) error {
	if st.Err == nil {
		return nil
	}
	return cc.c.statusErr(op, l, st)
}

type collReq struct {
	cc collComm
	er *engine.Request
	l  loc
}

func (r collReq) Wait() (int, error) {
	st := r.er.Wait()
	return st.Count, r.cc.err("collective", r.l, st)
}
