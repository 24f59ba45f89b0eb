package mpi

import (
	"fmt"

	"github.com/mpigo/mpi/internal/engine"
)

// The short road of a message out of a rank (docs/internals.md, "The
// walk of one message"). Every blocking send, whatever its mode and
// whatever the shape of its value (a scalar, a slice, a collective's
// buffer), asks the device first (Device.SendShort), which asks the engine's one rule
// (engine.Unanswered: not synchronous, eager-sized, engine not aborted).
// A message that may take the short road goes through its peer's
// eager-send capability (transport.EagerSender, probed once per peer by
// Device.NoteRoutes), without a Frame, or as one eager Frame through the
// router. Either way it is complete once the transport has it, and needs
// no engine Request. Anything else is started as a Request (startSend)
// and waited for.

// shortErr is the error of a send the transport refused on the short road.
func (c *Comm) shortErr(op string, dest, tag int, err error) error {
	return c.errorf(op, ErrProcFailed, at("dest", dest, tag), "%v", err)
}

// isendNow starts a non-blocking send of buf (contiguous, validated, dest
// not ProcNull) by the short road if the engine's rule lets it, and
// returns its request, or nil if the message must go the general way
// (startSend). into, if not nil, is the zeroed Request to return (a
// slot of a Requests set). The message leaves before isendNow returns,
// carrying a send id (engine.EagerID) so that Cancel can still name it to
// the receiver (none from a set, whose sends nobody can cancel:
// sendRequest), and the request is complete at once: it holds no engine
// request, which saves taking one from the rank's free list, the
// engine's Send and the executor, per message. Cancel makes the engine
// request when it needs one (sentRequest).
func (c *Comm) isendNow(into *Request, op string, buf []byte, sig uint64, dest, tag int, mode engine.Mode) *Request {
	p := c.p
	to := c.group[dest]
	var r *Request
	var id uint64
	var err error
	if p.EagerTo != nil && p.EagerTo[to] != nil {
		if !p.Eng.Unanswered(mode, len(buf), to) {
			return nil
		}
		// The Request first, with the message's id: the request (unused
		// if the transport refuses the message) and the id under one
		// lock, the id from a batch reserved beforehand.
		r, id = p.sendRequest(into)
		if p.Counting() {
			p.CountSent(to, len(buf), c.ctx, tag)
		}
		err = p.EagerTo[to].SendEager(to, c.ctx, int32(c.rank), int32(tag), sig, id, buf)
	} else {
		f, ok := p.Eng.EagerFrame(mode, c.ctx, c.rank, to, tag, buf, sig)
		if !ok {
			return nil
		}
		r, id = p.sendRequest(into)
		f.SendID = id
		if p.Counting() {
			p.CountSent(to, len(buf), c.ctx, tag)
		}
		err = p.Tr.Send(f)
	}
	if err != nil {
		// As the executor fails a send whose frame a transport refused:
		// Wait reports it.
		r := c.newRequest(op, at("dest", dest, tag))
		c.fillSend(r.er, dest, tag)
		r.er.Op = engine.OpSend
		r.er.Fail(fmt.Errorf("%w: %w", ErrProcFailed, err))
		return r
	}
	r.c = c
	r.set(fLive|fFinished, true)
	r.setSent(id)
	r.setOpPeer(op, whereDest, dest, tag)
	return r
}

// sendRequest returns the Request and the send id of a send that leaves
// by the short road. A slot of a Requests set (into) needs no id: the set
// hands out no *Request, so nobody can cancel its sends, and the message
// goes without one (no lock for it, and over shm a fast-box cell has 32
// bytes of payload room instead of 24).
func (p *proc) sendRequest(into *Request) (*Request, uint64) {
	if into != nil {
		return into, 0
	}
	return p.ers.sent(p.Eng, into)
}

// sentRequest returns an engine request for the send to dest with tag that
// isendNow sent with id, complete as the engine would have left it, for
// Cancel to reopen (engine.CancelSend).
func (c *Comm) sentRequest(dest, tag int, id uint64) *engine.Request {
	er := new(engine.Request)
	c.fillSend(er, dest, tag)
	c.p.Eng.SentEager(er, id)
	return er
}

// fillSend fills er's envelope for a send to dest with tag.
func (c *Comm) fillSend(er *engine.Request, dest, tag int) {
	er.Context, er.Peer, er.Self, er.To, er.Tag = c.ctx, dest, c.rank, c.group[dest], tag
}
