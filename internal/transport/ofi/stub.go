//go:build !(cgo && mpigo_ofi)

package ofi

import "github.com/mpigo/mpi/internal/wire"

// Built reports whether this build has the libfabric transport.
const Built = false

// Transport is the libfabric endpoint of a rank; this build has none.
type Transport struct{}

// New fails: this build has no libfabric transport.
func New(cfg Config) (*Transport, error) { return nil, ErrNotBuilt }

// Available fails: this build has no libfabric transport.
func Available() (string, error) { return "", ErrNotBuilt }

// Send fails: this build has no libfabric transport.
func (t *Transport) Send(f wire.Frame) error { return ErrNotBuilt }

// Address returns nothing: this build has no libfabric transport.
func (t *Transport) Address() []byte { return nil }

// Name returns "ofi".
func (t *Transport) Name() string { return "ofi" }

// Provider returns "": this build has no libfabric transport.
func (t *Transport) Provider() string { return "" }

// Close does nothing.
func (t *Transport) Close() error { return nil }

// Ready does nothing.
func (t *Transport) Ready() {}

// Poll does nothing.
func (t *Transport) Poll() bool { return false }

// MarkWait does nothing.
func (t *Transport) MarkWait() {}

// EndWait does nothing.
func (t *Transport) EndWait() {}

// ChunkSize implements transport.Chunker.
func (t *Transport) ChunkSize() int { return ChunkSize }
