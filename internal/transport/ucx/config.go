// Package ucx carries frames between processes over UCX (Unified
// Communication X): InfiniBand and RoCE verbs where the node has them, and
// its tcp, shared-memory and cma transports elsewhere. docs/fabric.md is
// the users' page.
//
// The transport needs the UCX library, so it is built only with cgo and
// the build tag mpigo_ucx (go build -tags mpigo_ucx); without them this
// package has the same names, and New and Available say how to build it.
// The default build of the module stays pure Go.
//
// Each rank has one UCP context and one worker. A rank publishes its
// worker's address through the job's boot store (the launcher's store,
// which the job's secret protects) and makes an endpoint to a peer from
// the peer's address the first time it sends to it or hears from it.
// Every frame is one tagged message, the 64-byte wire header followed by
// its payload, whose tag is the sender's rank; UCX sends it eagerly or, if
// large, by its own rendezvous over registered memory (zero copy over
// RDMA devices). The receiving side probes for any tag, receives each
// message into a buffer of the size the probe gave, and delivers the
// frames of each peer in the order they were probed, so frames from one
// rank arrive in order.
//
// Progress: a job's waits poll the worker (transport.Polled), and the
// transport's own goroutine naps meanwhile (fabric.Loop); otherwise it
// polls the worker for a short spin after the last event, then arms the
// worker's event file descriptor and sleeps in poll(2) until the worker
// has work, so an idle rank burns no core.
//
// Failure: endpoints use UCX's peer error handling; its callback (C code,
// which never calls into Go) marks the peer failed, and the transport
// reports it once through Config.OnPeerError and fails the sends and
// receives pending with it.
package ucx

import (
	"errors"

	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/wire"
)

// Config describes one endpoint.
type Config struct {
	Rank, Size int
	// Addrs returns the worker address a peer published (Transport.Address
	// of the peer's endpoint). It is called once per peer, when the first
	// frame goes to or comes from it.
	Addrs func(peer int) ([]byte, error)
	// Handler receives every arriving frame, on the goroutine that polled
	// it. The frame borrows its payload.
	Handler transport.Handler
	// OnPeerError, if set, is called once per peer whose endpoint fails.
	OnPeerError func(peer int, err error)
	// Spin is how long the transport's goroutine polls the worker after
	// the last event before it sleeps on the worker's event descriptor;
	// 0 means the default (50 µs), negative means sleep at once.
	Spin int64
	// NoGather sends every frame alone: no small frame waits for the
	// next progress to go with others (fabric.Gather).
	NoGather bool
}

// ErrNotBuilt is the error of New and Available in a build without cgo and
// the mpigo_ucx tag.
var ErrNotBuilt = errors.New("ucx: not in this build: build with cgo and -tags mpigo_ucx (apt-get install libucx-dev), see docs/fabric.md")

// ChunkSize is the Data frame size of the engine's rendezvous over UCX
// (transport.Chunker): one frame carries up to 64 MiB, which UCX sends by
// its own rendezvous in place, so a chunk costs one message instead of
// one per 256 KiB.
const ChunkSize = 64 << 20

var _ = wire.HeaderSize
