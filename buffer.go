package mpi

// MPI-4.1's buffers for buffered sends beyond the process's one
// (MPI_Buffer_attach): a communicator's own, and a session's, which the
// communicators made from the session's groups use. A Bsend takes its
// room from the communicator's buffer if one is attached, else from its
// session's, else from the rank's.

import (
	"github.com/mpigo/mpi/internal/engine"
)

// bsendBuffer is the buffer a buffered send on c takes its room from.
func (c *Comm) bsendBuffer() *engine.BsendBuffer {
	if b := c.buf.Load(); b != nil && b.Attached() {
		return b
	}
	if c.sess != nil && c.sess.buf.Attached() {
		return &c.sess.buf
	}
	return &c.p.bsend
}

// AttachBuffer gives c a buffer of its own for buffered sends
// (MPI_Comm_attach_buffer): Bsends on c take their room from it instead
// of the rank's (BufferAttach). One buffer at a time.
func (c *Comm) AttachBuffer(buf []byte) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.AttachBuffer", c, Undefined, Undefined), &err)
	}
	if err := c.check("AttachBuffer"); err != nil {
		return err
	}
	c.buf.CompareAndSwap(nil, &engine.BsendBuffer{})
	if err := c.buf.Load().Attach(buf); err != nil {
		return c.fail("AttachBuffer", ErrBuffer, loc{}, "%v", err)
	}
	return nil
}

// AttachBufferAutomatic gives c an automatic buffer for buffered sends
// (MPI_Comm_attach_buffer with MPI-4.1's MPI_BUFFER_AUTOMATIC): each Bsend
// on c gets room of its own size, so none fails for lack of space.
// DetachBuffer then returns nil.
func (c *Comm) AttachBufferAutomatic() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.AttachBufferAutomatic", c, Undefined, Undefined), &err)
	}
	if err := c.check("AttachBufferAutomatic"); err != nil {
		return err
	}
	c.buf.CompareAndSwap(nil, &engine.BsendBuffer{})
	if err := c.buf.Load().AttachAuto(); err != nil {
		return c.fail("AttachBufferAutomatic", ErrBuffer, loc{}, "%v", err)
	}
	return nil
}

// DetachBuffer waits until every buffered send from c's buffer has left
// it, then detaches it and returns it (MPI_Comm_detach_buffer); an
// automatic buffer (AttachBufferAutomatic) returns nil.
func (c *Comm) DetachBuffer() (_ []byte, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.DetachBuffer", c, Undefined, Undefined), &err)
	}
	if err := c.check("DetachBuffer"); err != nil {
		return nil, err
	}
	b := c.buf.Load()
	if b == nil {
		return nil, c.fail("DetachBuffer", ErrBuffer, loc{}, "no buffer is attached to the communicator")
	}
	mem, err := b.Detach()
	if err != nil {
		return nil, c.fail("DetachBuffer", ErrBuffer, loc{}, "%v", err)
	}
	return mem, nil
}

// FlushBuffer waits until every buffered send from c's buffer has left
// it; the buffer stays attached (MPI_Comm_flush_buffer). Without a buffer
// it returns at once.
func (c *Comm) FlushBuffer() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.FlushBuffer", c, Undefined, Undefined), &err)
	}
	if err := c.check("FlushBuffer"); err != nil {
		return err
	}
	if b := c.buf.Load(); b != nil {
		b.Flush()
	}
	return nil
}

// IflushBuffer starts FlushBuffer and returns at once
// (MPI_Comm_iflush_buffer): the request completes when the buffer's
// sends have left it.
func (c *Comm) IflushBuffer() (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.IflushBuffer", c, Undefined, Undefined), &err)
	}
	if err := c.check("IflushBuffer"); err != nil {
		return nil, err
	}
	b := c.buf.Load()
	return c.iflush(b)
}

// BufferFlush waits until every buffered send from the rank's buffer
// (BufferAttach) has left it (MPI_Buffer_flush); c only names the rank.
func (c *Comm) BufferFlush() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.BufferFlush", c, Undefined, Undefined), &err)
	}
	if err := c.check("BufferFlush"); err != nil {
		return err
	}
	c.p.bsend.Flush()
	return nil
}

// BufferIflush starts BufferFlush and returns at once
// (MPI_Buffer_iflush).
func (c *Comm) BufferIflush() (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.BufferIflush", c, Undefined, Undefined), &err)
	}
	if err := c.check("BufferIflush"); err != nil {
		return nil, err
	}
	return c.iflush(&c.p.bsend)
}

// iflush returns a request that completes once b's sends have left it
// (at once for nil), as a generalized request completed by a goroutine.
func (c *Comm) iflush(b *engine.BsendBuffer) (*Request, error) {
	r, err := c.GrequestStart(func(st *Status) error { return nil }, func() error { return nil }, func(bool) error { return nil })
	if err != nil {
		return nil, err
	}
	go func() {
		if b != nil {
			b.Flush()
		}
		r.GrequestComplete()
	}()
	return r, nil
}

// AttachBuffer gives the session a buffer for buffered sends
// (MPI_Session_attach_buffer): communicators made from the session's
// groups take their Bsends' room from it, unless they have their own.
func (s *Session) AttachBuffer(buf []byte) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Session.AttachBuffer", nil, Undefined, Undefined), &err)
	}
	if err := s.check("Session.AttachBuffer"); err != nil {
		return err
	}
	if err := s.buf.Attach(buf); err != nil {
		return s.fail("Session.AttachBuffer", ErrBuffer, "%v", err)
	}
	return nil
}

// AttachBufferAutomatic gives the session an automatic buffer for
// buffered sends (MPI_Session_attach_buffer with MPI_BUFFER_AUTOMATIC):
// each Bsend on the session's communicators without a buffer of their
// own gets room of its own size. DetachBuffer then returns nil.
func (s *Session) AttachBufferAutomatic() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Session.AttachBufferAutomatic", nil, Undefined, Undefined), &err)
	}
	if err := s.check("Session.AttachBufferAutomatic"); err != nil {
		return err
	}
	if err := s.buf.AttachAuto(); err != nil {
		return s.fail("Session.AttachBufferAutomatic", ErrBuffer, "%v", err)
	}
	return nil
}

// DetachBuffer waits until every buffered send from the session's buffer
// has left it, then detaches it and returns it
// (MPI_Session_detach_buffer); an automatic buffer returns nil.
func (s *Session) DetachBuffer() (_ []byte, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Session.DetachBuffer", nil, Undefined, Undefined), &err)
	}
	if err := s.check("Session.DetachBuffer"); err != nil {
		return nil, err
	}
	mem, err := s.buf.Detach()
	if err != nil {
		return nil, s.fail("Session.DetachBuffer", ErrBuffer, "%v", err)
	}
	return mem, nil
}

// FlushBuffer waits until every buffered send from the session's buffer
// has left it (MPI_Session_flush_buffer).
func (s *Session) FlushBuffer() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Session.FlushBuffer", nil, Undefined, Undefined), &err)
	}
	if err := s.check("Session.FlushBuffer"); err != nil {
		return err
	}
	s.buf.Flush()
	return nil
}

// IflushBuffer starts FlushBuffer and returns at once
// (MPI_Session_iflush_buffer).
func (s *Session) IflushBuffer() (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Session.IflushBuffer", nil, Undefined, Undefined), &err)
	}
	if err := s.check("Session.IflushBuffer"); err != nil {
		return nil, err
	}
	return s.p.world.iflush(&s.buf)
}

// The process's buffer (MPI_Buffer_attach) in the Sessions model: a
// program that never calls Init has no world to name its rank with, so
// the session does. These act on the same buffer as Comm.BufferAttach
// and its kin on any communicator of the rank: the one every Bsend takes
// its room from when neither its communicator nor its session has a
// buffer of its own. It outlives the session that attached it.

// BufferAttach gives the session's rank its buffer for buffered sends
// (MPI_Buffer_attach without MPI_Init, MPI-4.1): the process's buffer,
// as Comm.BufferAttach attaches it; not the session's own
// (AttachBuffer).
func (s *Session) BufferAttach(buf []byte) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Session.BufferAttach", nil, Undefined, Undefined), &err)
	}
	const op = "Session.BufferAttach"
	if err := s.check(op); err != nil {
		return err
	}
	if err := s.p.bsend.Attach(buf); err != nil {
		return s.fail(op, ErrBuffer, "%v", err)
	}
	return nil
}

// BufferAttachAutomatic attaches an automatic buffer as the session's
// rank's buffer for buffered sends (MPI_Buffer_attach with
// MPI_BUFFER_AUTOMATIC without MPI_Init). BufferDetach then returns nil.
func (s *Session) BufferAttachAutomatic() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Session.BufferAttachAutomatic", nil, Undefined, Undefined), &err)
	}
	const op = "Session.BufferAttachAutomatic"
	if err := s.check(op); err != nil {
		return err
	}
	if err := s.p.bsend.AttachAuto(); err != nil {
		return s.fail(op, ErrBuffer, "%v", err)
	}
	return nil
}

// BufferDetach waits until every buffered send has left the rank's
// buffer, then detaches it and returns it (MPI_Buffer_detach without
// MPI_Init); an automatic buffer returns nil.
func (s *Session) BufferDetach() (_ []byte, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Session.BufferDetach", nil, Undefined, Undefined), &err)
	}
	const op = "Session.BufferDetach"
	if err := s.check(op); err != nil {
		return nil, err
	}
	b, err := s.p.bsend.Detach()
	if err != nil {
		return nil, s.fail(op, ErrBuffer, "%v", err)
	}
	return b, nil
}

// BufferFlush waits until every buffered send from the rank's buffer has
// left it (MPI_Buffer_flush without MPI_Init).
func (s *Session) BufferFlush() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Session.BufferFlush", nil, Undefined, Undefined), &err)
	}
	if err := s.check("Session.BufferFlush"); err != nil {
		return err
	}
	s.p.bsend.Flush()
	return nil
}

// BufferIflush starts BufferFlush and returns at once (MPI_Buffer_iflush
// without MPI_Init).
func (s *Session) BufferIflush() (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Session.BufferIflush", nil, Undefined, Undefined), &err)
	}
	if err := s.check("Session.BufferIflush"); err != nil {
		return nil, err
	}
	return s.p.world.iflush(&s.p.bsend)
}
