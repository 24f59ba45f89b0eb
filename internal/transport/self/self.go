// Package self is the transport a rank uses to send to itself.
package self

import (
	"fmt"

	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/wire"
)

// Transport loops frames back to its own handler.
type Transport struct {
	rank int
	h    transport.Handler
}

// New returns the self transport of world rank rank, delivering to h.
func New(rank int, h transport.Handler) *Transport { return &Transport{rank: rank, h: h} }

// Send delivers f to the rank's own handler before it returns.
func (t *Transport) Send(f wire.Frame) error {
	if f.To != t.rank {
		return fmt.Errorf("self: frame for rank %d sent on rank %d's self transport", f.To, t.rank)
	}
	t.h(f)
	return nil
}

// DirectRead reports true: the sender is the receiver.
func (t *Transport) DirectRead(int) bool { return true }

// Name returns "self".
func (t *Transport) Name() string { return "self" }
