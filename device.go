package mpi

import (
	"fmt"

	"github.com/mpigo/mpi/internal/engine"
	"github.com/mpigo/mpi/internal/transport"
)

// The road of a message out of a rank (docs/internals.md, "The walk of one
// message"). Every blocking send, whatever its
// mode and whatever the shape of its value (a scalar, a slice, a
// collective's buffer), asks sendNow first, and sendNow asks the engine's
// one rule (engine.Unanswered: not synchronous, eager-sized, engine not
// aborted). A message that may take the short road goes:
//
//  1. through its peer's eager-send capability (transport.EagerSender,
//     probed once per peer in noteRoutes), without a Frame; else
//  2. as one eager Frame through the router.
//
// Either way it is complete once the transport has it, and needs no
// engine Request. Anything else is started as a Request (startSend) and
// waited for. The root package never names a concrete transport here: it
// knows capabilities.

// noteRoutes probes, once, each peer's transport for the capabilities the
// roads of a message use: the short road of small messages (p.eagerTo)
// and the single copy of large ones between processes (p.regionTo).
func (p *proc) noteRoutes() {
	for peer := range p.job.size {
		tr := p.tr.For(peer)
		if t, ok := tr.(transport.EagerSender); ok && t != nil {
			if p.eagerTo == nil {
				p.eagerTo = make([]transport.EagerSender, p.job.size)
			}
			p.eagerTo[peer] = t
		}
		if t, ok := tr.(transport.RegionReader); ok && t != nil {
			if p.regionTo == nil {
				p.regionTo = make([]transport.RegionReader, p.job.size)
			}
			p.regionTo[peer] = t
		}
	}
}

// engineConfig returns cfg completed with what p's routes offer: the
// chunk size of rendezvous Data frames towards peers whose transport
// prefers its own (engine.Config.PeerChunk, transport.Chunker), and the
// export of rendezvous buffers for a single copy (engine.Config.Export)
// where a peer's transport can read them. noteRoutes must have run.
func (p *proc) engineConfig(cfg engine.Config) engine.Config {
	for peer := range p.job.size {
		if t, ok := p.tr.For(peer).(transport.Chunker); ok && t != nil {
			if cfg.PeerChunk == nil {
				cfg.PeerChunk = make([]int, p.job.size)
			}
			cfg.PeerChunk[peer] = t.ChunkSize()
		}
	}
	if p.regionTo != nil {
		cfg.Export = func(peer int, b []byte) (uint64, bool) {
			if t := p.regionTo[peer]; t != nil {
				return t.ExportRegion(peer, b)
			}
			return 0, false
		}
	}
	return cfg
}

// peerEager returns the eager limits towards the peers whose transport has
// a short road with room (see Config.ShmEagerLimit; EagerRoom 0, as
// between goroutine ranks, keeps EagerLimit), or nil to use EagerLimit for
// every peer. noteRoutes must have run.
func (p *proc) peerEager(cfg Config, oversubscribed bool) []int {
	limit := cfg.ShmEagerLimit
	if limit == 0 {
		if cfg.EagerLimit != engine.DefaultConfig().EagerLimit || oversubscribed {
			return nil
		}
		for _, t := range p.eagerTo {
			if t != nil && t.EagerRoom() > 0 {
				limit = min(t.EagerRoom(), 512<<10)
				p.autoEager = true
				break
			}
		}
	}
	if limit <= 0 || limit == cfg.EagerLimit {
		return nil
	}
	l := make([]int, len(p.eagerTo))
	for peer, t := range p.eagerTo {
		if t != nil && t.EagerRoom() > 0 { // not goroutine ranks (inproc: 0)
			l[peer] = limit
		}
	}
	return l
}

// singleCopyEager is the automatic eager limit towards a peer that reads
// this rank's buffers in place (transport.RegionReader.Exports): larger
// messages go by rendezvous, which copies them once, where an eager
// message through the rings is copied twice. Measured over shm with
// `mpigo bench bw` and `latency` (docs/performance.md, "Mid-sized
// messages over shm"): eager wins at 32 KiB, the single copy from 64 KiB
// on (at 256 KiB, 15 GB/s against 5.7).
const singleCopyEager = 32 << 10

// lowerEager lowers the automatic eager limits (peerEager) towards the
// peers that turned out, once connected, to read this rank's buffers in
// place. The job calls it once its transports are connected, before the
// rank runs.
func (p *proc) lowerEager() {
	if !p.autoEager {
		return
	}
	for peer, t := range p.regionTo {
		if t != nil && t.Exports(peer) && p.eagerTo != nil && p.eagerTo[peer] != nil {
			p.eng.SetPeerEager(peer, singleCopyEager)
		}
	}
}

// sendNow sends buf to dest in mode by the short road if the engine's rule
// lets it, and reports whether it did; err is then the transport's error
// as an *Error of call op (not yet given to c's error handler). dest is
// not ProcNull.
func (c *Comm) sendNow(op string, buf []byte, sig uint64, dest, tag int, mode engine.Mode) (handled bool, err error) {
	p := c.p
	to := c.group[dest]
	if p.eagerTo != nil && p.eagerTo[to] != nil {
		if !p.eng.Unanswered(mode, len(buf), to) {
			return false, nil
		}
		if p.counting() {
			p.countSent(to, len(buf), c.ctx, tag)
		}
		err = p.eagerTo[to].SendEager(to, c.ctx, int32(c.rank), int32(tag), sig, 0, buf)
	} else {
		f, ok := p.eng.EagerFrame(mode, c.ctx, c.rank, to, tag, buf, sig)
		if !ok {
			return false, nil
		}
		if p.counting() {
			p.countSent(to, len(buf), c.ctx, tag)
		}
		err = p.tr.Send(f)
	}
	if err != nil {
		return true, c.errorf(op, ErrProcFailed, at("dest", dest, tag), "%v", err)
	}
	return true, nil
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
	if p.eagerTo != nil && p.eagerTo[to] != nil {
		if !p.eng.Unanswered(mode, len(buf), to) {
			return nil
		}
		// The Request first, with the message's id: the request (unused
		// if the transport refuses the message) and the id under one
		// lock, the id from a batch reserved beforehand.
		r, id = p.sendRequest(into)
		if p.counting() {
			p.countSent(to, len(buf), c.ctx, tag)
		}
		err = p.eagerTo[to].SendEager(to, c.ctx, int32(c.rank), int32(tag), sig, id, buf)
	} else {
		f, ok := p.eng.EagerFrame(mode, c.ctx, c.rank, to, tag, buf, sig)
		if !ok {
			return nil
		}
		r, id = p.sendRequest(into)
		f.SendID = id
		if p.counting() {
			p.countSent(to, len(buf), c.ctx, tag)
		}
		err = p.tr.Send(f)
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
	return p.ers.sent(p.eng, into)
}

// sentRequest returns an engine request for the send to dest with tag that
// isendNow sent with id, complete as the engine would have left it, for
// Cancel to reopen (engine.CancelSend).
func (c *Comm) sentRequest(dest, tag int, id uint64) *engine.Request {
	er := new(engine.Request)
	c.fillSend(er, dest, tag)
	c.p.eng.SentEager(er, id)
	return er
}

// fillSend fills er's envelope for a send to dest with tag.
func (c *Comm) fillSend(er *engine.Request, dest, tag int) {
	er.Context, er.Peer, er.Self, er.To, er.Tag = c.ctx, dest, c.rank, c.group[dest], tag
}
