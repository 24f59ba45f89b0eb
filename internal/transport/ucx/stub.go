//go:build !(cgo && mpigo_ucx)

package ucx

import "github.com/mpigo/mpi/internal/wire"

// Built reports whether this build has the UCX transport.
const Built = false

// Transport is the UCX endpoint of a rank; this build has none.
type Transport struct{}

// New fails: this build has no UCX transport.
func New(cfg Config) (*Transport, error) { return nil, ErrNotBuilt }

// Available fails: this build has no UCX transport.
func Available() (string, error) { return "", ErrNotBuilt }

// Send fails: this build has no UCX transport.
func (t *Transport) Send(f wire.Frame) error { return ErrNotBuilt }

// Address returns nothing: this build has no UCX transport.
func (t *Transport) Address() []byte { return nil }

// Name returns "ucx".
func (t *Transport) Name() string { return "ucx" }

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
