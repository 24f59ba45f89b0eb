package mpi

import (
	"github.com/mpigo/mpi/internal/device"
	"github.com/mpigo/mpi/internal/engine"
)

// Probes (MPI_Probe, MPI_Iprobe) and matched probes (MPI_Mprobe,
// MPI_Improbe) with the Message they take out of matching.

// probe blocks until a message matching (src, tag) can be received.
func (c *Comm) probe(src, tag int) engine.Status {
	eng := c.p.Eng
	if err := eng.Revoked(c.ctx); err != nil { // ft.go
		return engine.Status{Source: src, Tag: tag, Err: err}
	}
	if st, ok := eng.Iprobe(c.ctx, src, tag, nil); ok {
		return st
	}
	epoch, _ := eng.LostSince(0)
	var bw *device.Parked // this wait as hang diagnosis sees it
	defer func() {
		if bw != nil {
			c.p.Blk.Remove(bw)
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
			bw = c.p.Blk.ParkEnv(w, c.ctx, src, tag)
		} else {
			c.p.Blk.Rewoken(bw, w)
		}
		w.Park()
		engine.PutWaiter(w)
	}
}

// probeLost reports why a blocked probe for src cannot succeed: c was
// revoked, src's process is gone, or, for AnySource, a rank was lost
// since the probe began at epoch.
func (c *Comm) probeLost(src int, epoch uint64) error {
	if err := c.p.Eng.Revoked(c.ctx); err != nil { // ft.go: Revoke wakes blocked probes
		return err
	}
	if err := c.ftUnacked(src); err != nil { // ft.go: as a receive from AnySource
		return err
	}
	if src >= 0 {
		return c.p.Eng.Lost(c.group[src])
	}
	_, err := c.p.Eng.LostSince(epoch)
	return err
}

// probeMissed is probeLost for a non-blocking probe that found nothing:
// why nothing will come, if that is known now (a revoked communicator, a
// failed source, or from AnySource an unacknowledged failure), else nil.
// A healthy engine answers without a lock: loops of Iprobe are common.
func (c *Comm) probeMissed(src int) error {
	eng := c.p.Eng
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
	st, ok := c.p.Eng.Iprobe(c.ctx, src, tag, nil)
	if !ok && st.Err == nil {
		// Nothing yet: a loop of Iprobe would wait for ever for a rank
		// that failed (or, from AnySource under fault tolerance, one whose
		// failure is not acknowledged: ft.go).
		st.Err = c.probeMissed(src)
	}
	if st.Err != nil {
		return false, Status{}, c.handle(c.statusErr("Iprobe", at("source", src, tag), st))
	}
	if !ok {
		c.missed()
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
	eng := c.p.Eng
	epoch, _ := eng.LostSince(0)
	var bw *device.Parked // this wait as hang diagnosis sees it
	if block {
		defer func() {
			if bw != nil {
				c.p.Blk.Remove(bw)
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
			bw = c.p.Blk.ParkEnv(w, c.ctx, src, tag)
		} else {
			c.p.Blk.Rewoken(bw, w)
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
	if !ok && err == nil {
		c.missed()
	}
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
	c.p.Eng.MRecv(em, er, &out)
	c.p.Exec(&out)
}
