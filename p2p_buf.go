package mpi

import (
	"sync"

	"github.com/mpigo/mpi/internal/engine"
)

// This file is the low-level point-to-point layer: buffers of bytes with a
// count and a Datatype, as in the MPI standard (chapter 3). The typed layer
// (p2p_typed.go) turns Go values into bytes and calls the same internals.

// slot is a pooled engine request for blocking calls, with room for a
// small value so that scalars need no allocation.
type slot struct {
	er     engine.Request
	out    engine.Outbox // empty between uses (startSlotRecv)
	inline [8]uint64
	c      *Comm // when used as a collective's request
	at     loc
	call   *collCall // a typed collective's receive: check the signature
	src    int
}

var slotPool = sync.Pool{New: func() any {
	s := new(slot)
	s.er.W = engine.NewWaiter()
	return s
}}

func getSlot() *slot { return slotPool.Get().(*slot) }

func putSlot(s *slot) {
	s.er.Reset()
	s.inline = [8]uint64{}
	// s.at is left as it is: whoever uses it sets it, and clearing the
	// 40-byte loc went through a stack copy that stalled on store
	// forwarding (docs/performance.md, "Why the code is as it is").
	s.c, s.call = nil, nil
	slotPool.Put(s)
}

// fine reports, without a call, that c is usable and that peer and tag
// are a rank of c and a tag: the common case of checkDest and
// checkSource, which the non-blocking calls' hot paths test first, inline
// (a call of either cost about 35 instructions a message).
func (c *Comm) fine(peer, tag int) bool {
	return c != nil && c.p != nil && !c.freed.Load() && uint(peer) < uint(len(c.group)) && uint(tag) <= TagUB
}

// checkDest validates a send's destination and tag.
func (c *Comm) checkDest(op string, dest, tag int) error {
	if err := c.check(op); err != nil {
		return err
	}
	if dest != ProcNull && (dest < 0 || dest >= len(c.group)) {
		return c.fail(op, ErrRank, at("dest", dest, tag), "rank %d does not exist (size %d)", dest, len(c.group))
	}
	if tag < 0 || tag > TagUB {
		return c.fail(op, ErrTag, at("dest", dest, tag), "tags run from 0 to %d", TagUB)
	}
	return nil
}

// checkSource validates a receive's or probe's source and tag.
func (c *Comm) checkSource(op string, src, tag int) error {
	if err := c.check(op); err != nil {
		return err
	}
	if src != ProcNull && src != AnySource && (src < 0 || src >= len(c.group)) {
		return c.fail(op, ErrRank, at("source", src, tag), "rank %d does not exist (size %d)", src, len(c.group))
	}
	if tag != AnyTag && (tag < 0 || tag > TagUB) {
		return c.fail(op, ErrTag, at("source", src, tag), "tags run from 0 to %d, or AnyTag", TagUB)
	}
	return nil
}

// msg is the memory of a low-level message: count elements of a datatype
// in a buffer, either one run of bytes (b) or, for a non-contiguous
// datatype, a layout the engine packs from or unpacks into chunk by chunk.
type msg struct {
	b   []byte
	lay engine.Layout
}

// bytes returns the message as one run of bytes, packing a layout into a
// new buffer.
func (m msg) bytes() []byte {
	if m.lay == nil {
		return m.b
	}
	b := make([]byte, m.lay.Len())
	m.lay.Pack(b, 0)
	return b
}

// checkBuf returns the memory of count elements of dt in buf.
func (c *Comm) checkBuf(op string, l loc, buf []byte, count int, dt *Datatype) (msg, error) {
	if s := dt.checkComm(); s != "" {
		return msg{}, c.fail(op, ErrType, l, "%s", s)
	}
	n, err := c.elemBytes(op, l, count, dt)
	if err != nil {
		return msg{}, err
	}
	if isBottom(buf) {
		lay, bad := resolveBottom(dt, count)
		if bad != "" {
			return msg{}, c.fail(op, ErrBuffer, l, "%s", bad)
		}
		return msg{lay: lay}, nil
	}
	if dt.t.Contiguous() {
		if n > len(buf) {
			return msg{}, c.fail(op, ErrBuffer, l, "%d elements of %s need %d bytes, the buffer has %d", count, dt.name, n, len(buf))
		}
		return msg{b: buf[:n]}, nil
	}
	if s, class := dt.fits(count, len(buf)); class != nil {
		return msg{}, c.fail(op, class, l, "%s", s)
	}
	return msg{lay: &layout{t: dt.t, buf: buf, n: n}}, nil
}

// startSend fills er for a send of buf to dest and starts it.
func (c *Comm) startSend(er *engine.Request, buf []byte, sig uint64, dest, tag int, mode engine.Mode) {
	c.fillSend(er, dest, tag)
	er.Buf, er.Sig, er.Mode = buf, sig, mode
	var out engine.Outbox
	c.p.eng.Send(er, &out)
	c.p.exec(&out)
}

// startRecv fills er for a receive from src and starts it.
//
// It clears no Outbox unless the receive matches a message that must be
// answered (engine.TryPostRecv): clearing one cost about 50 instructions
// on every non-blocking receive.
func (c *Comm) startRecv(er *engine.Request, buf []byte, alloc func(int) []byte, sig uint64, src, tag int) {
	if c.fillRecv(er, buf, alloc, sig, src, tag) && !c.p.eng.TryPostRecv(er) {
		c.postAnswered(er)
	}
}

// postAnswered is PostRecv of er, filled, with an Outbox for the answer.
func (c *Comm) postAnswered(er *engine.Request) {
	var out engine.Outbox
	c.p.eng.PostRecv(er, &out)
	c.p.exec(&out)
}

// startSlotRecv is startRecv for a pooled slot, with the slot's outbox:
// a fresh Outbox is a few hundred bytes to zero on every receive, though
// it is almost always left empty.
func (c *Comm) startSlotRecv(s *slot, buf []byte, alloc func(int) []byte, sig uint64, src, tag int) {
	c.postRecv(&s.er, &s.out, buf, alloc, sig, src, tag)
	s.out.Reset()
}

func (c *Comm) postRecv(er *engine.Request, out *engine.Outbox, buf []byte, alloc func(int) []byte, sig uint64, src, tag int) {
	if c.fillRecv(er, buf, alloc, sig, src, tag) {
		c.p.eng.PostRecv(er, out)
		c.p.exec(out)
	}
}

// fillRecv fills er for a receive from src with tag and reports whether
// it is to be posted (not if fault tolerance failed it already).
func (c *Comm) fillRecv(er *engine.Request, buf []byte, alloc func(int) []byte, sig uint64, src, tag int) bool {
	er.Context, er.Peer, er.Tag = c.ctx, src, tag
	if src >= 0 {
		er.FromWorld = c.group[src] + 1
	}
	er.Buf, er.Alloc, er.Sig = buf, alloc, sig
	return src != AnySource || c.p.ft == nil || !c.ftAnyPending(er) // ft.go
}

// sendMsg is a blocking send of m (validated) in mode.
func (c *Comm) sendMsg(op string, m msg, sig uint64, dest, tag int, mode engine.Mode) error {
	if m.lay == nil {
		return c.send(op, m.b, sig, dest, tag, mode)
	}
	if dest == ProcNull {
		return nil
	}
	s := getSlot()
	s.er.Layout = m.lay
	c.startSend(&s.er, nil, sig, dest, tag, mode)
	st := c.p.waitReq(&s.er)
	var err error
	if st.Err != nil {
		err = c.handle(c.statusErr(op, at("dest", dest, tag), st))
	}
	putSlot(s)
	return err
}

// send is a blocking send of buf (validated) in mode.
func (c *Comm) send(op string, buf []byte, sig uint64, dest, tag int, mode engine.Mode) error {
	if dest == ProcNull {
		return nil
	}
	if ok, err := c.sendNow(op, buf, sig, dest, tag, mode); ok {
		return c.handle(err)
	}
	s := getSlot()
	c.startSend(&s.er, buf, sig, dest, tag, mode)
	st := c.p.waitReq(&s.er)
	var err error
	if st.Err != nil {
		err = c.handle(c.statusErr(op, at("dest", dest, tag), st))
	}
	putSlot(s)
	return err
}

// bsend copies buf into the attached buffer and sends it from there.
func (c *Comm) bsend(op string, buf []byte, sig uint64, dest, tag int) error {
	_, err := c.bsendMsg(op, msg{b: buf}, sig, dest, tag, false)
	return err
}

// bsendMsg packs m into the attached buffer and sends it from there. It
// returns the engine's request of that send (nil for ProcNull), which
// Cancel may still withdraw.
func (c *Comm) bsendMsg(op string, m msg, sig uint64, dest, tag int, cancellable bool) (*engine.Request, error) {
	if dest == ProcNull {
		return nil, nil
	}
	n := len(m.b)
	if m.lay != nil {
		n = m.lay.Len()
	}
	data, release, err := c.p.bsend.Alloc(n)
	if err != nil {
		return nil, c.fail(op, ErrBuffer, at("dest", dest, tag), "%v (%d bytes + %d overhead)", err, n, BsendOverhead)
	}
	if m.lay != nil {
		m.lay.Pack(data, 0)
	} else {
		copy(data, m.b)
	}
	er := &engine.Request{OnDone: func(*engine.Request) { release() }, Cancellable: cancellable}
	c.startSend(er, data, sig, dest, tag, engine.Standard)
	return er, nil
}

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

// BufferDetach waits until every buffered send has left the attached
// buffer, then detaches it and returns it (MPI_Buffer_detach).
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

// recvMsg is a blocking receive into m.
func (c *Comm) recvMsg(op string, m msg, sig uint64, elem, src, tag int) (Status, error) {
	return c.recvMsgT(op, m, sig, nil, "", elem, src, tag)
}

// recvMsgT is recvMsg for a typed receive of t (tname: see
// recvStatusErr); t is nil for an untyped one.
func (c *Comm) recvMsgT(op string, m msg, sig uint64, t *typeInfo, tname string, elem, src, tag int) (Status, error) {
	return c.recvMsgAfter(op, m, sig, t, tname, elem, src, tag, nil)
}

// recvMsgAfter is recvMsgT that runs send, if not nil, once the receive is
// posted and before it waits for it: Sendrecv's blocking send. The
// receive needs no Request of its own (a Sendrecv in a loop allocates
// nothing). If send fails, the receive is cancelled (or, if a message
// matched it meanwhile, completed) and send's error returned.
func (c *Comm) recvMsgAfter(op string, m msg, sig uint64, t *typeInfo, tname string, elem, src, tag int, send func() error) (Status, error) {
	if src == ProcNull {
		if send != nil {
			if err := send(); err != nil {
				return Status{}, err
			}
		}
		return procNullStatus, nil
	}
	s := getSlot()
	s.er.Layout = m.lay
	c.startSlotRecv(s, m.b, nil, sig, src, tag)
	if send != nil {
		if err := send(); err != nil {
			c.cancelSlotRecv(s)
			return Status{}, err
		}
	}
	est := c.p.waitRef(&s.er)
	st := Status{Source: est.Source, Tag: est.Tag, bytes: est.Count, size: est.Size, elem: elem, cancelled: est.Cancelled}
	var err error
	if est.Err != nil {
		if t != nil {
			err = c.handle(c.recvStatusErr(op, at("source", src, tag), t, tname, *est))
		} else {
			err = c.handle(c.statusErr(op, at("source", src, tag), *est))
		}
	}
	putSlot(s)
	return st, err
}

// sendrecvGeneral is a Sendrecv whose receive is the general request r
// (posted with error err): under fault tolerance an AnySource receive is
// one, which a failure may post again (ft.go). It sends, cancels r if the
// send fails, and waits for r.
func sendrecvGeneral(r *Request, err error, send func() error) (Status, error) {
	if err != nil {
		return Status{}, err
	}
	if err := send(); err != nil {
		r.Cancel()
		r.wait()
		return Status{}, err
	}
	return r.wait()
}

// cancelSlotRecv withdraws the receive posted in s, or waits for the
// message that matched it meanwhile, and gives s back. A message already
// in the mailbox is matched first, as Request.Cancel does.
func (c *Comm) cancelSlotRecv(s *slot) {
	c.p.collect()
	if !s.er.Done() {
		c.p.eng.CancelRecv(&s.er)
	}
	c.p.waitRef(&s.er)
	putSlot(s)
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

// probe blocks until a message matching (src, tag) can be received.
func (c *Comm) probe(src, tag int) engine.Status {
	eng := c.p.eng
	if err := eng.Revoked(c.ctx); err != nil { // ft.go
		return engine.Status{Source: src, Tag: tag, Err: err}
	}
	if st, ok := eng.Iprobe(c.ctx, src, tag, nil); ok {
		return st
	}
	epoch, _ := eng.LostSince(0)
	var bw *blockedWait // this wait as hang diagnosis sees it
	defer func() {
		if bw != nil {
			c.p.blk.remove(bw)
		}
	}()
	for {
		w := engine.GetWaiter()
		c.p.collect()
		st, ok := eng.Iprobe(c.ctx, src, tag, w)
		if ok {
			engine.PutWaiter(w)
			return st
		}
		if err := c.probeLost(src, epoch); err != nil {
			// w stays registered with the engine: it is not reused.
			return engine.Status{Source: src, Tag: tag, Err: err}
		}
		if bw == nil {
			bw = c.p.blk.parkEnv(w, c.ctx, src, tag)
		} else {
			c.p.blk.woken(bw, w)
		}
		w.Park()
		engine.PutWaiter(w)
	}
}

// probeLost reports why a blocked probe for src cannot succeed: c was
// revoked, src's process is gone, or, for AnySource, a rank was lost
// since the probe began at epoch.
func (c *Comm) probeLost(src int, epoch uint64) error {
	if err := c.p.eng.Revoked(c.ctx); err != nil { // ft.go: Revoke wakes blocked probes
		return err
	}
	if err := c.ftUnacked(src); err != nil { // ft.go: as a receive from AnySource
		return err
	}
	if src >= 0 {
		return c.p.eng.Lost(c.group[src])
	}
	_, err := c.p.eng.LostSince(epoch)
	return err
}

// probeMissed is probeLost for a non-blocking probe that found nothing:
// why nothing will come, if that is known now (a revoked communicator, a
// failed source, or from AnySource an unacknowledged failure), else nil.
// A healthy engine answers without a lock: loops of Iprobe are common.
func (c *Comm) probeMissed(src int) error {
	eng := c.p.eng
	if eng.Healthy() {
		return nil
	}
	if err := eng.Revoked(c.ctx); err != nil {
		return err
	}
	if src >= 0 {
		return eng.Lost(c.group[src])
	}
	return c.ftUnacked(src)
}

// Probe waits until a message from src with tag can be received and returns
// its status without receiving it (MPI_Probe). Status.Bytes is its size.
func (c *Comm) Probe(src, tag int) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Probe", c, src, tag), &err)
	}
	return c.probeCall(src, tag)
}

// probeCall is Probe without the profiler hook, for the package's own use.
func (c *Comm) probeCall(src, tag int) (Status, error) {
	if err := c.checkSource("Probe", src, tag); err != nil {
		return Status{}, err
	}
	if src == ProcNull {
		return procNullStatus, nil
	}
	st := c.probe(src, tag)
	if st.Err != nil {
		return Status{}, c.handle(c.statusErr("Probe", at("source", src, tag), st))
	}
	return statusOf(st, 0), nil
}

// Iprobe reports whether a message from src with tag can be received now,
// and its status, without receiving it (MPI_Iprobe).
func (c *Comm) Iprobe(src, tag int) (_ bool, _ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Iprobe", c, src, tag), &err)
	}
	if err := c.checkSource("Iprobe", src, tag); err != nil {
		return false, Status{}, err
	}
	if src == ProcNull {
		return true, procNullStatus, nil
	}
	c.p.collect()
	st, ok := c.p.eng.Iprobe(c.ctx, src, tag, nil)
	if !ok && st.Err == nil {
		// Nothing yet: a loop of Iprobe would wait for ever for a rank
		// that failed (or, from AnySource under fault tolerance, one whose
		// failure is not acknowledged: ft.go).
		st.Err = c.probeMissed(src)
	}
	if st.Err != nil {
		return false, Status{}, c.handle(c.statusErr("Iprobe", at("source", src, tag), st))
	}
	return ok, statusOf(st, 0), nil
}

// Message is a message taken out of matching by Mprobe or Improbe
// (MPI_Message). Only a receive on this Message can get it, which makes
// "probe for the size, then receive" safe when several goroutines receive
// from the same communicator.
type Message struct {
	c    *Comm
	m    *engine.Message // nil for a message from ProcNull
	at   loc             // its source and tag, for error messages
	used bool
}

func (c *Comm) mprobe(op string, src, tag int, block bool) (*Message, Status, bool, error) {
	if err := c.checkSource(op, src, tag); err != nil {
		return nil, Status{}, false, err
	}
	if src == ProcNull {
		return &Message{c: c, at: at("source", ProcNull, AnyTag)}, procNullStatus, true, nil
	}
	eng := c.p.eng
	epoch, _ := eng.LostSince(0)
	var bw *blockedWait // this wait as hang diagnosis sees it
	if block {
		defer func() {
			if bw != nil {
				c.p.blk.remove(bw)
			}
		}()
	}
	for {
		var w *engine.Waiter
		if block {
			w = engine.GetWaiter()
		}
		c.p.collect()
		m, ok := eng.Improbe(c.ctx, src, tag, w)
		if ok || !block {
			if w != nil {
				engine.PutWaiter(w)
			}
			if ok && m == nil {
				return nil, Status{}, false, c.handle(c.statusErr(op, at("source", src, tag), engine.Status{Err: eng.Err()}))
			}
			if !ok {
				if err := c.probeMissed(src); err != nil { // as Iprobe
					return nil, Status{}, false, c.handle(c.statusErr(op, at("source", src, tag), engine.Status{Source: src, Tag: tag, Err: err}))
				}
				return nil, Status{}, false, nil
			}
			st := m.Status()
			st.Count = st.Size
			return &Message{c: c, m: m, at: at("source", st.Source, st.Tag)}, statusOf(st, 0), true, nil
		}
		if err := c.probeLost(src, epoch); err != nil {
			return nil, Status{}, false, c.handle(c.statusErr(op, at("source", src, tag), engine.Status{Source: src, Tag: tag, Err: err}))
		}
		if bw == nil {
			bw = c.p.blk.parkEnv(w, c.ctx, src, tag)
		} else {
			c.p.blk.woken(bw, w)
		}
		w.Park()
		engine.PutWaiter(w)
	}
}

// Mprobe waits for a message from src with tag and takes it out of
// matching: no other receive or probe will see it. Receive it with
// Message.Recv or mpi.Mrecv (MPI_Mprobe).
func (c *Comm) Mprobe(src, tag int) (_ *Message, _ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Mprobe", c, src, tag), &err)
	}
	return c.mprobeCall(src, tag)
}

// mprobeCall is Mprobe without the profiler hook, for the package's own use.
func (c *Comm) mprobeCall(src, tag int) (*Message, Status, error) {
	m, st, _, err := c.mprobe("Mprobe", src, tag, true)
	return m, st, err
}

// Improbe is the non-blocking Mprobe: if no message matches it returns
// (false, nil, ...) (MPI_Improbe).
func (c *Comm) Improbe(src, tag int) (_ bool, _ *Message, _ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Improbe", c, src, tag), &err)
	}
	m, st, ok, err := c.mprobe("Improbe", src, tag, false)
	return ok, m, st, err
}

// take marks m used and returns its engine message.
func (m *Message) take(op string) (*engine.Message, error) {
	if m == nil {
		return nil, (*Comm)(nil).errorf(op, ErrRequest, loc{}, "nil message")
	}
	if m.used {
		return nil, m.c.handle(m.c.errorf(op, ErrRequest, m.at, "message has been received already"))
	}
	m.used = true
	return m.m, nil
}

// Recv receives the message into buf, which has room for count elements of
// dt (MPI_Mrecv).
func (m *Message) Recv(buf []byte, count int, dt *Datatype) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Message.Recv", m.comm(), Undefined, Undefined), &err)
	}
	r, err := m.irecv(buf, count, dt)
	if err != nil {
		return Status{}, err
	}
	return r.wait()
}

// Irecv starts receiving the message into buf (MPI_Imrecv).
func (m *Message) Irecv(buf []byte, count int, dt *Datatype) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Message.Irecv", m.comm(), Undefined, Undefined), &err)
	}
	return m.irecv(buf, count, dt)
}

// irecv is Irecv without the profiler hook, for the package's own use.
func (m *Message) irecv(buf []byte, count int, dt *Datatype) (*Request, error) {
	em, err := m.take("Mrecv")
	if err != nil {
		return nil, err
	}
	c := m.c
	mm, err := c.checkBuf("Mrecv", m.at, buf, count, dt)
	if err != nil {
		return nil, err
	}
	if em == nil {
		return c.nullRequest("Mrecv", procNullStatus), nil
	}
	r := c.newRequest("Mrecv", m.at)
	r.setElem(dt.size)
	r.x.conv = c.lowConv(buf, dt.t)
	r.er.Layout = mm.lay
	c.startMRecv(em, r.er, mm.b, nil, dt.sig)
	return r, nil
}

// startMRecv receives the matched message em into er.
func (c *Comm) startMRecv(em *engine.Message, er *engine.Request, buf []byte, alloc func(int) []byte, sig uint64) {
	er.Context, er.Buf, er.Alloc, er.Sig = c.ctx, buf, alloc, sig
	var out engine.Outbox
	c.p.eng.MRecv(em, er, &out)
	c.p.exec(&out)
}
