// Package inproc connects ranks that are goroutines of one process. Sending
// a frame calls the destination's handler directly on the sender's
// goroutine: nothing is copied or queued by the transport, and a receiver
// may copy a large message straight out of the sender's buffer (Region), so
// every message costs exactly one copy when its receive is posted.
package inproc

import (
	"fmt"
	"sync/atomic"

	"github.com/mpigo/mpi/internal/hint"
	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/wire"
)

// Fabric links the endpoints of one group of goroutine ranks.
type Fabric struct {
	handlers []atomic.Pointer[endpoint]
}

// endpoint is how frames reach one rank.
type endpoint struct {
	h     transport.Handler
	eager EagerFunc // nil: eager messages go to h as frames
	inbox *Inbox    // with eager: where senders leave messages while it is open
}

// EagerFunc receives an eager message that needs no answer from its
// parts (the short road: engine.DeliverEager's arguments), on the
// sender's goroutine. payload is borrowed until it returns. The header
// travels by value: through a pointer it would escape to the heap, one
// allocation per message.
type EagerFunc func(h wire.Header, from int, payload []byte)

// NewFabric returns a fabric for n endpoints, ranks 0..n-1.
func NewFabric(n int) *Fabric {
	return &Fabric{handlers: make([]atomic.Pointer[endpoint], n)}
}

// Attach registers the handler of endpoint rank and returns a transport
// that sends from it.
func (fb *Fabric) Attach(rank int, h transport.Handler) *Transport {
	return fb.AttachEager(rank, h, nil)
}

// AttachEager is Attach with a receiver for the short road (SendEager):
// eager messages that need no answer reach eager without a Frame.
func (fb *Fabric) AttachEager(rank int, h transport.Handler, eager EagerFunc) *Transport {
	ep := &endpoint{h: h, eager: eager}
	if eager != nil {
		ep.inbox = &Inbox{boxes: make([]atomic.Pointer[box], len(fb.handlers)), deliver: eager}
	}
	fb.handlers[rank].Store(ep)
	return &Transport{fb: fb, rank: rank, inbox: ep.inbox}
}

// Detach removes the handler of endpoint rank: later frames to it fail.
func (fb *Fabric) Detach(rank int) { fb.handlers[rank].Store(nil) }

// Transport is one endpoint's sending side.
type Transport struct {
	fb    *Fabric
	rank  int    // the endpoint's own
	inbox *Inbox // the endpoint's own (AttachEager), or nil
}

// Send delivers f to its destination's handler before it returns.
func (t *Transport) Send(f wire.Frame) error {
	if f.To < 0 || f.To >= len(t.fb.handlers) {
		return fmt.Errorf("inproc: no rank %d", f.To)
	}
	ep := t.fb.handlers[f.To].Load()
	if ep == nil {
		return fmt.Errorf("inproc: rank %d has exited", f.To)
	}
	if ep.inbox != nil {
		ep.inbox.flushFrom(t.rank)
	}
	ep.h(f)
	return nil
}

// SendEager implements transport.EagerSender: the message reaches the
// destination's EagerFunc (or, without one, its handler as a frame)
// before SendEager returns, with no Frame to build and copy on the way.
func (t *Transport) SendEager(to int, ctx uint32, src, tag int32, sig, sendID uint64, payload []byte) error {
	if to < 0 || to >= len(t.fb.handlers) {
		return fmt.Errorf("inproc: no rank %d", to)
	}
	ep := t.fb.handlers[to].Load()
	if ep == nil {
		return fmt.Errorf("inproc: rank %d has exited", to)
	}
	if ib := ep.inbox; ib != nil {
		if len(payload) <= boxMax && ib.open.Load() {
			b := ib.boxFrom(t.rank)
			for try := 0; ; try++ {
				if b.put(ctx, src, tag, sig, sendID, payload) {
					if !ib.open.Load() { // closed meanwhile: it may not collect
						ib.flushFrom(t.rank)
					}
					return nil
				}
				// Full. Its receiver watches (the inbox is open) and
				// makes room at its next look, so wait a little for
				// that: emptying the box here instead would match every
				// message in it in the receiver's engine while the
				// receiver posts there (docs/performance.md, "A sender
				// that runs ahead"). A receiver that does not collect
				// costs this wait once per box full.
				if try == boxFullPolls || !ib.open.Load() {
					break
				}
				if try == 0 && ib.onFull != nil {
					ib.onFull() // tests: the receiver's look, at this moment
				}
				hint.Pause()
			}
		}
		ib.flushFrom(t.rank)
	}
	h := wire.Header{Kind: wire.Eager, Context: ctx, Src: src, Tag: tag, Size: int64(len(payload)), Sig: sig, SendID: sendID}
	if ep.eager == nil {
		ep.h(wire.Frame{Header: h, From: t.rank, To: to, Payload: payload})
		return nil
	}
	ep.eager(h, t.rank, payload)
	return nil
}

// Mailbox returns the endpoint's own inbox, or nil if it was attached
// without a receiver for the short road.
func (t *Transport) Mailbox() transport.Mailbox {
	if t.inbox == nil {
		return nil
	}
	return t.inbox
}

// EagerRoom implements transport.EagerSender. It is 0: the short road
// between goroutine ranks is a call, fit for any message the eager limit
// lets through, and gives no reason to raise that limit.
func (t *Transport) EagerRoom() int { return 0 }

// DirectRead reports true: peers share the address space.
func (t *Transport) DirectRead(int) bool { return true }

// Name returns "inproc".
func (t *Transport) Name() string { return "inproc" }
