// Package transport defines how frames move between ranks. A transport
// moves bytes; it knows nothing of MPI matching or protocols.
//
// The required interface is one method. Extra powers are optional
// interfaces that the runtime discovers by type assertion:
// DirectReader (the peer can read a frame's Region in place), RegionReader
// (single copy between processes: a buffer exported as a token that the
// peer's side reads; RegionStarter, reads of several messages under way
// at once), EagerSender (a short road for small messages that
// need no answer), TrySender (a send that never waits), Chunker (its own
// size of a rendezvous's Data frames) and Polled (the transport delivers
// only when polled; a job's waits poll it). Mailbox is the receiving side
// of inproc's boxes, which a rank collects itself while it watches. The runtime
// probes them once per peer when it sets the routes.
package transport

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/mpigo/mpi/internal/wire"
)

// Handler receives the frames that arrive for an endpoint. The frame
// borrows its payload: it is valid only until the handler returns.
type Handler func(f wire.Frame)

// Transport sends frames to peers.
type Transport interface {
	// Send hands f to the transport for delivery to the endpoint f.To and
	// returns when f.Payload may be reused. Frames from one goroutine to one
	// peer arrive in the order they were sent. Frames travel by value so
	// that the caller's memory does not escape through the interface call.
	Send(f wire.Frame) error
}

// DirectReader is implemented by transports whose peers share the
// sender's address space, so a receiver may copy straight out of a frame's
// Region.
type DirectReader interface {
	DirectRead(peer int) bool
}

// RegionReader is implemented by transports that can copy a message
// straight out of a peer's memory though the peer is another process (by
// cross-memory attach, say): the single-copy road of large messages.
//
// The sender's side exports its buffer as a token, which the engine
// carries in the RTS (wire.FlagToken, wire.Header.Token) without looking
// into it; the receiver's side of the same transport reads the message
// through the token into the posted receive buffer, and the engine answers
// Fin. Which process a token's memory belongs to is the transport's
// knowledge of the peer, never something a frame says: a token names
// memory of the peer that sent it, and only that.
//
// Reads run outside the engine's lock, as an effect the executor runs
// (engine.Fetch); a read that fails makes the receive fall back to CTS
// and Data frames.
type RegionReader interface {
	// ExportRegion returns the token by which peer may read b in place,
	// or false if peer cannot read this rank's memory. b stays unchanged
	// until the peer has read it (it answers Fin).
	ExportRegion(peer int, b []byte) (token uint64, ok bool)
	// ReadRegion copies len(dst) bytes at offset off of the region that
	// peer exported as token into dst.
	ReadRegion(peer int, token uint64, off int, dst []byte) error
	// Exports reports whether peer can read this rank's memory in place,
	// so that ExportRegion succeeds for it. It is known once the
	// transport is connected to its peers; before, it reports false.
	Exports(peer int) bool
}

// RegionStarter is implemented by RegionReaders that can have the reads
// of several messages under way at once. StartRegion starts the copy
// ReadRegion makes and returns without waiting for it; done is told its
// outcome once, later, on a goroutine of the transport's, with no lock
// of the transport held (or before StartRegion returns, if there was
// nothing to read). An error means that the read did not start and done
// is not called. The executor of engine effects prefers it to ReadRegion:
// the receiver of a window of large messages then asks for all of them
// together, and the peer sends one after another without waiting for
// each request.
type RegionStarter interface {
	StartRegion(peer int, token uint64, off int, dst []byte, done func(error)) error
}

// EagerSender is implemented by transports with a short road for an eager
// message that needs no answer: SendEager sends it from its parts, without
// a Frame, and returns when payload may be reused. Whether a message may
// take it is the engine's rule (engine.Unanswered), not the transport's;
// a transport whose short road cannot take the message at hand (too
// large for it) sends it the general way itself. sendID, if not 0, is
// the frame's SendID (engine.EagerID: a non-blocking send that may still
// be cancelled), which the receiver must keep with the message.
type EagerSender interface {
	SendEager(to int, ctx uint32, src, tag int32, sig, sendID uint64, payload []byte) error
	// EagerRoom is the largest message the short road carries well: the
	// runtime may raise the eager limit towards the transport's peers to
	// it (Config.ShmEagerLimit).
	EagerRoom() int
}

// TrySender is implemented by transports that can send a frame without
// waiting when there is room for it now. TrySend either sends f whole and
// reports true, or sends nothing and reports false (no room at once,
// another goroutine sending to the same peer, the peer gone): the caller
// then sends it the ordinary way, from a goroutine that may wait. It lets
// a rank answer a frame on the goroutine that delivered it, which must
// never wait for a peer (the peer's deliverer might be waiting for it).
type TrySender interface {
	TrySend(f wire.Frame) bool
}

// Chunker is implemented by transports that carry the Data frames of a
// rendezvous best in chunks of another size than the engine's default
// (engine.Config.ChunkSize): tcp takes larger ones, which cost fewer
// system calls and wake-ups per byte.
type Chunker interface {
	ChunkSize() int
}

// Polled is implemented by transports that deliver only when somebody
// polls them (shared memory). They poll themselves on a goroutine of
// their own; a job's waits also poll them for a while before they park
// (internal/progress), so that a reply is seen on the goroutine that
// waits for it without a wake-up.
type Polled interface {
	// Poll delivers what has arrived and reports whether anything did.
	Poll() bool
	// MarkWait says that a goroutine of the process polls in a wait: the
	// transport's own goroutine may nap meanwhile. It is called at the
	// start of a wait and now and then while it lasts, so it must be
	// cheap.
	MarkWait()
	// EndWait says that the waiting goroutine stops polling to park: the
	// transport's own goroutine must deliver in its place from now on.
	EndWait()
}

// Mailbox is the receiving side of a transport whose senders may leave
// small messages in the receiver's memory while the receiver watches,
// instead of delivering them on their own goroutines (inproc's boxes).
// The rank that owns it opens it when it starts to poll in its waits,
// collects on every poll, test and probe, and closes it before any of
// its goroutines parks: a closed mailbox holds no message for long, since
// a sender that finds it closed delivers what it left there itself.
type Mailbox interface {
	// Open lets senders leave messages until Close.
	Open()
	// IsOpen reports whether the mailbox is open.
	IsOpen() bool
	// Collect delivers what senders left and reports whether they had
	// left anything.
	Collect() bool
	// Close makes senders deliver on their own goroutines again, and
	// delivers what they left: nothing sent before Close waits in the
	// mailbox once it returns.
	Close()
	// Sweep closes the mailbox if something has waited in it since the
	// last Sweep with nobody collecting, and reports whether it did: a
	// job calls it every few milliseconds as a safety net.
	Sweep() bool
}

// Router sends each frame over the transport chosen for its destination.
// Its first peers are the world ranks of the job, fixed when it is made;
// AddPeers appends peers of other jobs (dynamic processes: a spawn, a
// port's connection), which the hot path never looks at: a frame to a
// world rank costs what it did before.
type Router struct {
	byPeer []Transport

	addMu sync.Mutex
	extra atomic.Pointer[[]Transport] // peers len(byPeer).., in order
}

// AddPeers appends the peers reached through ts and returns the index of
// the first: peer first+i is ts[i]. Indices are never reused.
func (r *Router) AddPeers(ts []Transport) (first int) {
	r.addMu.Lock()
	defer r.addMu.Unlock()
	var old []Transport
	if p := r.extra.Load(); p != nil {
		old = *p
	}
	grown := append(append(make([]Transport, 0, len(old)+len(ts)), old...), ts...)
	r.extra.Store(&grown)
	return len(r.byPeer) + len(old)
}

// Peers returns the number of peers, world ranks and added ones.
func (r *Router) Peers() int {
	n := len(r.byPeer)
	if p := r.extra.Load(); p != nil {
		n += len(*p)
	}
	return n
}

// added returns added peer's transport, or nil.
func (r *Router) added(peer int) Transport {
	p := r.extra.Load()
	if p == nil || peer < len(r.byPeer) {
		return nil
	}
	if i := peer - len(r.byPeer); i < len(*p) {
		return (*p)[i]
	}
	return nil
}

// NewRouter returns a router for n peers; route(peer) chooses the transport.
func NewRouter(n int, route func(peer int) Transport) *Router {
	r := &Router{byPeer: make([]Transport, n)}
	for p := range r.byPeer {
		r.byPeer[p] = route(p)
	}
	return r
}

// For returns the transport chosen for peer (nil if there is none).
func (r *Router) For(peer int) Transport {
	if peer < 0 || peer >= len(r.byPeer) {
		return r.added(peer)
	}
	return r.byPeer[peer]
}

// Send sends f over the transport for f.To.
func (r *Router) Send(f wire.Frame) error {
	if f.To < 0 || f.To >= len(r.byPeer) || r.byPeer[f.To] == nil {
		if t := r.added(f.To); t != nil {
			return t.Send(f)
		}
		return fmt.Errorf("transport: no route to rank %d", f.To)
	}
	return r.byPeer[f.To].Send(f)
}

// PeerLoser is implemented by transports whose waits on a peer may not
// end by themselves when the peer's process dies (a provider that reports
// nothing, as libfabric's shm): the runtime tells them when the job
// learns of the loss, from another transport or the launcher, and what
// waits on the peer there ends with an error marked ErrPeerLost.
type PeerLoser interface {
	LosePeer(peer int, err error)
}

// Mover is implemented by transports that move data on their own, past
// the frames the engine sees: the pieces of a read of a peer's memory (a
// single copy of a large message) that completed, counted. Hang
// diagnosis counts them as progress: a receive that waits on one read of
// gigabytes is not stuck while the pieces keep coming.
type Mover interface {
	Moved() uint64
}

// LosePeer tells the transport to peer, if it is a PeerLoser, that the
// peer is gone.
func (r *Router) LosePeer(peer int, err error) {
	if r == nil {
		return // a process whose routes are not made yet
	}
	if l, ok := r.For(peer).(PeerLoser); ok {
		l.LosePeer(peer, err)
	}
}

// DirectRead reports whether the transport to peer supports DirectReader.
func (r *Router) DirectRead(peer int) bool {
	t := r.For(peer)
	if t == nil {
		return false
	}
	d, ok := t.(DirectReader)
	return ok && d.DirectRead(peer)
}

// Name returns a short name for the transport to peer, for diagnostics.
func (r *Router) Name(peer int) string {
	t := r.For(peer)
	if t == nil {
		return "none"
	}
	if n, ok := t.(interface{ Name() string }); ok {
		return n.Name()
	}
	return fmt.Sprintf("%T", t)
}
