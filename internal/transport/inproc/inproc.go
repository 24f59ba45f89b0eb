// Package inproc connects ranks that are goroutines of one process. Sending
// a frame calls the destination's handler directly on the sender's
// goroutine: nothing is copied or queued by the transport, and a receiver
// may copy a large message straight out of the sender's buffer (Region), so
// every message costs exactly one copy when its receive is posted.
package inproc

import (
	"fmt"
	"sync/atomic"

	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/wire"
)

// Fabric links the endpoints of one group of goroutine ranks.
type Fabric struct {
	handlers []atomic.Pointer[transport.Handler]
}

// NewFabric returns a fabric for n endpoints, ranks 0..n-1.
func NewFabric(n int) *Fabric {
	return &Fabric{handlers: make([]atomic.Pointer[transport.Handler], n)}
}

// Attach registers the handler of endpoint rank and returns a transport
// that sends from it.
func (fb *Fabric) Attach(rank int, h transport.Handler) *Transport {
	fb.handlers[rank].Store(&h)
	return &Transport{fb: fb, rank: rank}
}

// Detach removes the handler of endpoint rank: later frames to it fail.
func (fb *Fabric) Detach(rank int) { fb.handlers[rank].Store(nil) }

// Transport is one endpoint's sending side.
type Transport struct {
	fb   *Fabric
	rank int
}

// Send delivers f to its destination's handler before it returns.
func (t *Transport) Send(f wire.Frame) error {
	if f.To < 0 || f.To >= len(t.fb.handlers) {
		return fmt.Errorf("inproc: no rank %d", f.To)
	}
	h := t.fb.handlers[f.To].Load()
	if h == nil {
		return fmt.Errorf("inproc: rank %d has exited", f.To)
	}
	(*h)(f)
	return nil
}

// SendEager sends an eager message that needs no answer
// (transport.EagerSender): the frame is built once, here, and handed to
// the destination's handler, instead of being returned by the engine and
// passed on by value through the router and Send.
func (t *Transport) SendEager(to int, ctx uint32, src, tag int32, sig, sendID uint64, payload []byte) error {
	if to < 0 || to >= len(t.fb.handlers) {
		return fmt.Errorf("inproc: no rank %d", to)
	}
	h := t.fb.handlers[to].Load()
	if h == nil {
		return fmt.Errorf("inproc: rank %d has exited", to)
	}
	(*h)(wire.Frame{Header: wire.Header{Kind: wire.Eager, Context: ctx, Src: src, Tag: tag,
		Size: int64(len(payload)), SendID: sendID, Sig: sig}, From: t.rank, To: to, Payload: payload})
	return nil
}

// EagerRoom returns 0: the short road leaves the eager limit as it is
// (every size is one call and one copy between goroutines).
func (t *Transport) EagerRoom() int { return 0 }

// DirectRead reports true: peers share the address space.
func (t *Transport) DirectRead(int) bool { return true }

// Name returns "inproc".
func (t *Transport) Name() string { return "inproc" }
