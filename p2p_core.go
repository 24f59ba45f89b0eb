package mpi

import (
	"sync"

	"github.com/mpigo/mpi/internal/engine"
)

// The point-to-point core that the public low-level calls (p2p_buf.go)
// and the typed layer (p2p_typed.go) share: pooled slots for blocking
// calls, argument checks, and the start, send and receive steps that fill
// an engine request and hand it to the device.

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
	if s := c.typeProblem(dt); s != "" {
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
	c.p.Eng.Send(er, &out)
	c.p.Exec(&out)
}

// startRecv fills er for a receive from src and starts it.
//
// It clears no Outbox unless the receive matches a message that must be
// answered (engine.TryPostRecv): clearing one cost about 50 instructions
// on every non-blocking receive.
func (c *Comm) startRecv(er *engine.Request, buf []byte, alloc func(int) []byte, sig uint64, src, tag int) {
	if c.fillRecv(er, buf, alloc, sig, src, tag) && !c.p.Eng.TryPostRecv(er) {
		c.postAnswered(er)
	}
}

// postAnswered is PostRecv of er, filled, with an Outbox for the answer.
func (c *Comm) postAnswered(er *engine.Request) {
	var out engine.Outbox
	c.p.Eng.PostRecv(er, &out)
	c.p.Exec(&out)
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
		c.p.Eng.PostRecv(er, out)
		c.p.Exec(out)
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
	st := c.p.Wait(&s.er)
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
	// The short road if the engine's rule lets it (p2p_short.go).
	if ok, err := c.p.SendShort(mode, c.ctx, c.rank, c.group[dest], tag, sig, buf); ok {
		if err != nil {
			return c.handle(c.shortErr(op, dest, tag, err))
		}
		return nil
	}
	s := getSlot()
	c.startSend(&s.er, buf, sig, dest, tag, mode)
	st := c.p.Wait(&s.er)
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
	data, release, err := c.bsendBuffer().Alloc(n)
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
	est := c.p.WaitRef(&s.er)
	st := Status{Source: est.Source, Tag: est.Tag, bytes: est.Count, size: est.Size, elem: elem, cancelled: est.Cancelled}
	var err error
	if est.Err != nil {
		if t != nil {
			err = c.handle(blockingErr(c.recvStatusErr(op, at("source", src, tag), t, tname, *est)))
		} else {
			err = c.handle(blockingErr(c.statusErr(op, at("source", src, tag), *est)))
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
	st, err := r.wait()
	return st, blockingErr(err)
}

// cancelSlotRecv withdraws the receive posted in s, or waits for the
// message that matched it meanwhile, and gives s back. A message already
// in the mailbox is matched first, as Request.Cancel does.
func (c *Comm) cancelSlotRecv(s *slot) {
	c.p.collect()
	if !s.er.Done() {
		c.p.Eng.CancelRecv(&s.er)
	}
	c.p.WaitRef(&s.er)
	putSlot(s)
}
