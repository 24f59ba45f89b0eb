package mpi

import (
	"github.com/mpigo/mpi/internal/engine"
)

// This file is the public low-level point-to-point layer: buffers of bytes
// with a count and a Datatype, as in the MPI standard (chapter 3). Both it
// and the typed layer (p2p_typed.go) call the shared core in p2p_core.go;
// probes and matched messages are in p2p_probe.go.

// BsendOverhead is the space each buffered send takes in the attached
// buffer on top of its data (MPI_BSEND_OVERHEAD).
const BsendOverhead = engine.BsendOverhead

// BufferAttach gives the calling rank a buffer for buffered sends
// (MPI_Buffer_attach). Each Bsend takes its data size plus BsendOverhead
// from it until the message has left.
func (c *Comm) BufferAttach(buf []byte) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.BufferAttach", c, Undefined, Undefined), &err)
	}
	if err := c.check("BufferAttach"); err != nil {
		return err
	}
	if err := c.p.bsend.Attach(buf); err != nil {
		return c.fail("BufferAttach", ErrBuffer, loc{}, "%v", err)
	}
	return nil
}

// BufferAttachAutomatic attaches an automatic buffer for the rank's
// buffered sends (MPI_Buffer_attach with MPI-4.1's
// MPI_BUFFER_AUTOMATIC): each Bsend gets room of its own size, so none
// fails for lack of buffer space. BufferDetach then returns nil.
func (c *Comm) BufferAttachAutomatic() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.BufferAttachAutomatic", c, Undefined, Undefined), &err)
	}
	if err := c.check("BufferAttachAutomatic"); err != nil {
		return err
	}
	if err := c.p.bsend.AttachAuto(); err != nil {
		return c.fail("BufferAttachAutomatic", ErrBuffer, loc{}, "%v", err)
	}
	return nil
}

// BufferDetach waits until every buffered send has left the attached
// buffer, then detaches it and returns it (MPI_Buffer_detach); an
// automatic buffer (BufferAttachAutomatic) returns nil.
func (c *Comm) BufferDetach() (_ []byte, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.BufferDetach", c, Undefined, Undefined), &err)
	}
	if err := c.check("BufferDetach"); err != nil {
		return nil, err
	}
	b, err := c.p.bsend.Detach()
	if err != nil {
		return nil, c.fail("BufferDetach", ErrBuffer, loc{}, "%v", err)
	}
	return b, nil
}

// lowSend validates and performs a blocking low-level send.
func (c *Comm) lowSend(op string, buf []byte, count int, dt *Datatype, dest, tag int, mode engine.Mode) error {
	if err := c.checkDest(op, dest, tag); err != nil {
		return err
	}
	m, err := c.checkBuf(op, at("dest", dest, tag), buf, count, dt)
	if err != nil {
		return err
	}
	return c.sendMsg(op, m, dt.sig, dest, tag, mode)
}

// Send sends count elements of dt from buf to rank dest with tag, and
// returns when buf may be reused (MPI_Send). Small messages are copied out
// at once; large ones wait for the receiver.
func (c *Comm) Send(buf []byte, count int, dt *Datatype, dest, tag int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Send", c, dest, tag), &err)
	}
	return c.lowSend("Send", buf, count, dt, dest, tag, engine.Standard)
}

// Ssend is a synchronous send: it returns only once the receiver has
// matched the message (MPI_Ssend).
func (c *Comm) Ssend(buf []byte, count int, dt *Datatype, dest, tag int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Ssend", c, dest, tag), &err)
	}
	return c.lowSend("Ssend", buf, count, dt, dest, tag, engine.Synchronous)
}

// Rsend is a ready send: the matching receive must already be posted
// (MPI_Rsend). mpigo does not rely on that; it behaves like Send.
func (c *Comm) Rsend(buf []byte, count int, dt *Datatype, dest, tag int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Rsend", c, dest, tag), &err)
	}
	return c.lowSend("Rsend", buf, count, dt, dest, tag, engine.Ready)
}

// Bsend is a buffered send: the data is copied into the buffer attached
// with BufferAttach and Bsend returns at once (MPI_Bsend). It fails with
// ErrBuffer if the attached buffer has no room.
func (c *Comm) Bsend(buf []byte, count int, dt *Datatype, dest, tag int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Bsend", c, dest, tag), &err)
	}
	if err := c.checkDest("Bsend", dest, tag); err != nil {
		return err
	}
	m, err := c.checkBuf("Bsend", at("dest", dest, tag), buf, count, dt)
	if err != nil {
		return err
	}
	_, err = c.bsendMsg("Bsend", m, dt.sig, dest, tag, false)
	return err
}

// isend validates and starts a low-level non-blocking send, in into if
// not nil (a zeroed slot of a Requests set; the request returned may still
// be another one).
func (c *Comm) isend(into *Request, op string, buf []byte, count int, dt *Datatype, dest, tag int, mode engine.Mode) (*Request, error) {
	if err := c.checkDest(op, dest, tag); err != nil {
		return nil, err
	}
	m, err := c.checkBuf(op, at("dest", dest, tag), buf, count, dt)
	if err != nil {
		return nil, err
	}
	if dest == ProcNull {
		return c.nullRequestIn(into, op, Status{}), nil
	}
	if m.lay == nil {
		if r := c.isendNow(into, op, m.b, dt.sig, dest, tag, mode); r != nil {
			return r, nil
		}
	}
	r := c.newPooledRequest(into, nil, op, whereDest, dest, tag)
	r.er.Layout = m.lay
	r.er.Cancellable = true
	c.startSend(r.er, m.b, dt.sig, dest, tag, mode)
	return r, nil
}

// Isend starts a send and returns at once (MPI_Isend). buf must not be
// modified until the request completes.
func (c *Comm) Isend(buf []byte, count int, dt *Datatype, dest, tag int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Isend", c, dest, tag), &err)
	}
	return c.isendStd(buf, count, dt, dest, tag)
}

// isendStd is Isend without the profiler hook, for the package's own use.
func (c *Comm) isendStd(buf []byte, count int, dt *Datatype, dest, tag int) (*Request, error) {
	return c.isend(nil, "Isend", buf, count, dt, dest, tag, engine.Standard)
}

// Issend starts a synchronous send (MPI_Issend): the request completes once
// the receiver has matched the message.
func (c *Comm) Issend(buf []byte, count int, dt *Datatype, dest, tag int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Issend", c, dest, tag), &err)
	}
	return c.isend(nil, "Issend", buf, count, dt, dest, tag, engine.Synchronous)
}

// Irsend starts a ready send (MPI_Irsend).
func (c *Comm) Irsend(buf []byte, count int, dt *Datatype, dest, tag int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Irsend", c, dest, tag), &err)
	}
	return c.isend(nil, "Irsend", buf, count, dt, dest, tag, engine.Ready)
}

// Ibsend starts a buffered send (MPI_Ibsend); the request is complete as
// soon as the data is in the attached buffer, which is before Ibsend
// returns. Cancel may still withdraw the message while its receiver has
// not matched it.
func (c *Comm) Ibsend(buf []byte, count int, dt *Datatype, dest, tag int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Ibsend", c, dest, tag), &err)
	}

	if err := c.checkDest("Ibsend", dest, tag); err != nil {
		return nil, err
	}
	m, err := c.checkBuf("Ibsend", at("dest", dest, tag), buf, count, dt)
	if err != nil {
		return nil, err
	}
	er, err := c.bsendMsg("Ibsend", m, dt.sig, dest, tag, true)
	if err != nil {
		return nil, err
	}
	r := c.nullRequest("Ibsend", Status{})
	r.setAt(at("dest", dest, tag))
	r.more().bsend = er
	return r, nil
}

// lowRecvBuf validates a low-level receive and returns its memory.
func (c *Comm) lowRecvBuf(op string, buf []byte, count int, dt *Datatype, src, tag int) (msg, error) {
	if err := c.checkSource(op, src, tag); err != nil {
		return msg{}, err
	}
	return c.checkBuf(op, at("source", src, tag), buf, count, dt)
}

// Recv receives a message from rank src (or AnySource) with tag (or AnyTag)
// into buf, which has room for count elements of dt (MPI_Recv). A longer
// message fills the buffer and fails with ErrTruncate.
func (c *Comm) Recv(buf []byte, count int, dt *Datatype, src, tag int) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Recv", c, src, tag), &err)
	}
	m, err := c.lowRecvBuf("Recv", buf, count, dt, src, tag)
	if err != nil {
		return Status{}, err
	}
	st, err := c.recvMsg("Recv", m, dt.sig, dt.size, src, tag)
	if c.p.reprs != nil {
		c.lowConv(buf, dt.t).convert(c, st.Source, st.bytes)
	}
	return st, err
}

// Irecv starts a receive and returns at once (MPI_Irecv). buf must not be
// used until the request completes.
func (c *Comm) Irecv(buf []byte, count int, dt *Datatype, src, tag int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Irecv", c, src, tag), &err)
	}
	return c.irecv(nil, nil, buf, count, dt, src, tag)
}

// irecv is Irecv without the profiler hook, for the package's own use, in
// into if not nil (a zeroed slot of a Requests set; the request returned
// may still be another one).
func (c *Comm) irecv(into *Request, ier *engine.Request, buf []byte, count int, dt *Datatype, src, tag int) (*Request, error) {
	return c.irecvElem(into, ier, "Irecv", buf, count, dt, src, tag, 0)
}

// irecvElem is irecv for the call named op, whose Status counts elements
// of elem bytes, or of dt if elem is 0 (a View's receive counts the view's
// elements, not whole instances of its datatype).
func (c *Comm) irecvElem(into *Request, ier *engine.Request, op string, buf []byte, count int, dt *Datatype, src, tag, elem int) (*Request, error) {
	m, err := c.lowRecvBuf(op, buf, count, dt, src, tag)
	if err != nil {
		return nil, err
	}
	if src == ProcNull {
		return c.nullRequestIn(into, op, procNullStatus), nil
	}
	var r *Request
	if c.ftReposts(src) { // ft.go: it may be posted again
		r = c.newRequest(op, at("source", src, tag))
		r.x.repost = func(er *engine.Request) {
			er.Layout = m.lay
			c.startRecv(er, m.b, nil, dt.sig, src, tag)
		}
	} else {
		r = c.newPooledRequest(into, ier, op, whereSource, src, tag)
	}
	if elem == 0 {
		elem = dt.size // dt is valid now: lowRecvBuf checked it
	}
	r.setElem(elem)
	if cv := c.lowConv(buf, dt.t); cv != nil {
		r.more().conv = cv
	}
	r.er.Layout = m.lay
	c.startRecv(r.er, m.b, nil, dt.sig, src, tag)
	return r, nil
}

// sendInit makes a persistent send request.
func (c *Comm) sendInit(op string, buf []byte, count int, dt *Datatype, dest, tag int, mode engine.Mode, buffered bool) (*Request, error) {
	if err := c.checkDest(op, dest, tag); err != nil {
		return nil, err
	}
	m, err := c.checkBuf(op, at("dest", dest, tag), buf, count, dt)
	if err != nil {
		return nil, err
	}
	sig := dt.sig
	r := &Request{c: c, flags: fFinished, x: &reqMore{}}
	r.setOp(op)
	r.setAt(at("dest", dest, tag))
	r.x.start = func(r *Request) error {
		if dest == ProcNull {
			r.mu.Lock()
			r.er = nil
			r.set(fFinished, true)
			r.mu.Unlock()
			return nil
		}
		if buffered {
			er, err := c.bsendMsg(op, m, sig, dest, tag, true)
			r.mu.Lock()
			r.er, r.x.err, r.x.bsend = nil, err, er
			r.set(fFinished, true)
			r.mu.Unlock()
			return err
		}
		er := r.activate()
		er.Layout = m.lay
		er.Cancellable = true
		c.startSend(er, m.b, sig, dest, tag, mode)
		return nil
	}
	return r, nil
}

// activate makes r's engine request ready for a new operation.
func (r *Request) activate() *engine.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	x := r.more()
	if x.e == nil {
		x.e = new(engine.Request)
	}
	x.e.Reset()
	r.er = x.e
	return r.er
}

// SendInit makes a persistent standard send (MPI_Send_init): each Start
// sends the current contents of buf.
func (c *Comm) SendInit(buf []byte, count int, dt *Datatype, dest, tag int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.SendInit", c, dest, tag), &err)
	}
	return c.sendInit("SendInit", buf, count, dt, dest, tag, engine.Standard, false)
}

// SsendInit makes a persistent synchronous send (MPI_Ssend_init).
func (c *Comm) SsendInit(buf []byte, count int, dt *Datatype, dest, tag int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.SsendInit", c, dest, tag), &err)
	}
	return c.sendInit("SsendInit", buf, count, dt, dest, tag, engine.Synchronous, false)
}

// RsendInit makes a persistent ready send (MPI_Rsend_init).
func (c *Comm) RsendInit(buf []byte, count int, dt *Datatype, dest, tag int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.RsendInit", c, dest, tag), &err)
	}
	return c.sendInit("RsendInit", buf, count, dt, dest, tag, engine.Ready, false)
}

// BsendInit makes a persistent buffered send (MPI_Bsend_init).
func (c *Comm) BsendInit(buf []byte, count int, dt *Datatype, dest, tag int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.BsendInit", c, dest, tag), &err)
	}
	return c.sendInit("BsendInit", buf, count, dt, dest, tag, engine.Standard, true)
}

// RecvInit makes a persistent receive (MPI_Recv_init): each Start posts a
// receive into buf.
func (c *Comm) RecvInit(buf []byte, count int, dt *Datatype, src, tag int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.RecvInit", c, src, tag), &err)
	}
	m, err := c.lowRecvBuf("RecvInit", buf, count, dt, src, tag)
	if err != nil {
		return nil, err
	}
	sig := dt.sig
	r := &Request{c: c, flags: fFinished, x: &reqMore{conv: c.lowConv(buf, dt.t)}}
	r.setOp("RecvInit")
	r.setElem(dt.size)
	r.setAt(at("source", src, tag))
	r.x.start = func(r *Request) error {
		if src == ProcNull {
			r.mu.Lock()
			r.er = nil
			r.set(fFinished, true)
			r.setStatus(procNullStatus)
			r.mu.Unlock()
			return nil
		}
		er := r.activate()
		er.Layout = m.lay
		c.startRecv(er, m.b, nil, sig, src, tag)
		return nil
	}
	if c.ftReposts(src) { // ft.go: a failure may post it again
		r.x.repost = func(er *engine.Request) {
			er.Layout = m.lay
			c.startRecv(er, m.b, nil, sig, src, tag)
		}
	}
	return r, nil
}

// Sendrecv sends one message and receives another at the same time, so two
// ranks can exchange data without deadlock (MPI_Sendrecv).
func (c *Comm) Sendrecv(sendbuf []byte, sendcount int, sendtype *Datatype, dest, sendtag int,
	recvbuf []byte, recvcount int, recvtype *Datatype, src, recvtag int) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Sendrecv", c, dest, sendtag), &err)
	}
	send := func() error {
		return c.lowSend("Sendrecv", sendbuf, sendcount, sendtype, dest, sendtag, engine.Standard)
	}
	if c.ftReposts(src) {
		rr, err := c.irecv(nil, nil, recvbuf, recvcount, recvtype, src, recvtag)
		return sendrecvGeneral(rr, err, send)
	}
	m, err := c.lowRecvBuf("Sendrecv", recvbuf, recvcount, recvtype, src, recvtag)
	if err != nil {
		return Status{}, err
	}
	st, err := c.recvMsgAfter("Sendrecv", m, recvtype.sig, nil, "", recvtype.size, src, recvtag, send)
	if c.p.reprs != nil {
		c.lowConv(recvbuf, recvtype.t).convert(c, st.Source, st.bytes)
	}
	return st, err
}

// SendrecvReplace sends the contents of buf and receives into the same
// buffer (MPI_Sendrecv_replace).
func (c *Comm) SendrecvReplace(buf []byte, count int, dt *Datatype, dest, sendtag, src, recvtag int) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.SendrecvReplace", c, dest, sendtag), &err)
	}
	m, err := c.lowRecvBuf("SendrecvReplace", buf, count, dt, src, recvtag)
	if err != nil {
		return Status{}, err
	}
	// The outgoing data must be copied out before the incoming lands.
	tmp := append([]byte(nil), m.bytes()...)
	rr, err := c.irecv(nil, nil, buf, count, dt, src, recvtag)
	if err != nil {
		return Status{}, err
	}
	if err := c.checkDest("SendrecvReplace", dest, sendtag); err != nil {
		rr.Cancel()
		rr.wait()
		return Status{}, err
	}
	if err := c.send("SendrecvReplace", tmp, dt.sig, dest, sendtag, engine.Standard); err != nil {
		rr.Cancel()
		rr.wait()
		return Status{}, err
	}
	return rr.wait()
}
