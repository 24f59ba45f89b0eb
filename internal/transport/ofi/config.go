// Package ofi carries frames between processes over libfabric (OFI): HPE
// Slingshot (cxi), AWS EFA, Omni-Path and, on any machine, its tcp and shm
// providers. docs/fabric.md is the users' page.
//
// The transport needs libfabric, so it is built only with cgo and the
// build tag mpigo_ofi (go build -tags mpigo_ofi); without them this
// package has the same names, and New and Available say how to build it.
// The default build of the module stays pure Go.
//
// Each rank opens one reliable-datagram endpoint (FI_EP_RDM) of the
// provider libfabric chooses (FI_PROVIDER overrides it), with one
// completion queue and an address vector. A rank publishes its
// endpoint's name through the job's boot store and inserts a peer's name
// into its address vector the first time it sends to the peer or hears
// from it.
//
// Every frame travels as tagged messages whose tag is the sender's rank.
// A message starts with a 16-byte prefix: its kind, the sender's sequence
// number of the frame and, for rendezvous, an id. A frame that fits the
// provider's inject size (4 KiB where the provider grants it) is injected
// (fi_tinject): no buffer, no registration, no completion. A larger one
// that fits in a receive buffer (64 KiB) goes in one message, copied into
// a buffer of the send slab (registered once), so its send returns at
// once. A larger one goes by rendezvous where the
// provider has remote reads (FI_RMA): the sender registers the payload in
// place and sends its address and key (RTS); the receiver reads it with
// fi_read into a buffer of its own and answers FIN, which releases the
// sender. Without remote reads the payload follows its header in
// 64 KiB pieces. With remote reads the transport is also a
// transport.RegionReader, the road of the engine's large messages: the
// sender's buffer is registered in place under a token that the engine's
// RTS carries (with the region's address and key, in the same message),
// and the receiver reads it with fi_read straight into the posted
// receive buffer, then tells the sender it is done with it. The receiver keeps a pool of posted receive buffers and
// delivers each peer's frames in the order of their sequence numbers.
//
// Progress: a job's waits poll the completion queue (transport.Polled),
// and the transport's own goroutine naps meanwhile (fabric.Loop);
// otherwise it polls the queue for a short spin after the last event,
// then sleeps on the queue's file descriptor (fi_trywait) where the
// provider has one, or in 1 ms naps where it has none.
//
// Failure: an operation with a peer that ends in error (a send, a read,
// the keep-alive a sender waiting for FIN sends every 100 ms) marks the
// peer failed; the transport reports it once through Config.OnPeerError
// and fails the sends waiting on it.
package ofi

import (
	"errors"

	"github.com/mpigo/mpi/internal/transport"
)

// Config describes one endpoint.
type Config struct {
	Rank, Size int
	// Addrs returns the endpoint name a peer published (Transport.Address
	// of the peer's endpoint). It is called once per peer, when the first
	// frame goes to or comes from it.
	Addrs func(peer int) ([]byte, error)
	// Handler receives every arriving frame, on the goroutine that polled
	// it. The frame borrows its payload.
	Handler transport.Handler
	// OnPeerError, if set, is called once per peer that fails.
	OnPeerError func(peer int, err error)
	// Spin is how long the transport's goroutine polls after the last
	// event before it sleeps; 0 means the default (50 µs), negative means
	// sleep at once.
	Spin int64
	// NoGather sends every frame alone: no small frame waits for the
	// next step to go with others (fabric.Gather).
	NoGather bool
	// NoRMA sends large frames in pieces even where the provider has
	// remote reads: for tests of the path of providers without them.
	NoRMA bool
	// Provider, if set, names the provider to open ("shm", "tcp;ofi_rxm"),
	// as FI_PROVIDER does, among those FI_PROVIDER lets libfabric offer:
	// for tests, which use several providers in one process (libfabric
	// reads FI_PROVIDER once, at its first call).
	Provider string
	// LocalMR registers every buffer of a send, receive or read for
	// local access even where the provider does not ask for it (the
	// FI_MR_LOCAL mode of verbs, EFA and others, which the transport
	// follows whenever the provider sets it): for tests of that path.
	LocalMR bool
	// Atomics asks the provider for atomic operations (FI_ATOMIC) as
	// well as remote reads and writes, for windows that apply
	// accumulates on integers with them (MPIGO_FABRIC_ATOMICS=1). Only
	// the provider libfabric chose is asked; one that refuses serves the
	// windows without them.
	Atomics bool
	// ShmName, if set, names the endpoint of the shm provider: the file
	// it makes in /dev/shm. The provider's own name is the process ID's,
	// which a later process with the same ID cannot take while the file
	// of a killed one is left (fi_enable fails, "Device or resource
	// busy"); the device gives the job's name (mpigo-<job>-<rank>-ofi),
	// which the launcher removes with the job's other files. Other
	// providers ignore it.
	ShmName string
}

// ErrNotBuilt is the error of New and Available in a build without cgo and
// the mpigo_ofi tag.
var ErrNotBuilt = errors.New("ofi: not in this build: build with cgo and -tags mpigo_ofi (apt-get install libfabric-dev), see docs/fabric.md")

// ChunkSize is the Data frame size of the engine's rendezvous over
// libfabric (transport.Chunker): a frame of up to 64 MiB is read in place
// by one rendezvous of the transport's own.
const ChunkSize = 64 << 20
