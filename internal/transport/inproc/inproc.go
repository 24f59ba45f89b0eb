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
	return &Transport{fb: fb}
}

// Detach removes the handler of endpoint rank: later frames to it fail.
func (fb *Fabric) Detach(rank int) { fb.handlers[rank].Store(nil) }

// Transport is one endpoint's sending side.
type Transport struct{ fb *Fabric }

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

// DirectRead reports true: peers share the address space.
func (t *Transport) DirectRead(int) bool { return true }

// Name returns "inproc".
func (t *Transport) Name() string { return "inproc" }
