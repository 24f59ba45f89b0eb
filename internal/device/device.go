// Package device is one rank's runtime below MPI's objects: the engine of
// the rank with the transports that reach its peers, the capabilities of
// each peer's transport (probed once), the executor of the engine's
// effects, the reply sender of deliveries made on a transport's own
// goroutine, the traffic counters, the wait of every blocking call and
// the hang watcher over the waits that park (waits.go, watch.go), and the
// job's lifecycle below MPI's objects (job.go, cores.go). It knows no
// communicator and no
// request of the public API; package mpi builds a Device per rank, fills
// it with the routes made here (routes.go, the only file of the module
// that names concrete transports), and turns what it returns into the
// API's errors and requests.
//
// # The walk of one message
//
// A blocking send of a small message asks the engine's one rule
// (engine.Unanswered: not synchronous, eager-sized, engine not aborted).
// If it may take the short road, SendShort gives it to the peer's
// eager-send capability (transport.EagerSender: a fast-box cell over shm,
// the receiver's mailbox between goroutine ranks) without a frame, or as
// one eager frame through the router; it is then complete. Anything else
// is an engine request: the engine fills an Outbox with frames and reads,
// and Exec hands the frames to the transports and runs the reads (Fetch,
// the single copy of a large message, out of the engine's lock).
//
// On the receiving side a transport calls one of the handlers the routes
// install: Deliver (self and inproc frames, delivered on the sender's
// goroutine: answers are sent at once), DeliverEager and EagerRun (plain
// eager messages that need no answer), or DeliverQueued (tcp readers and
// the shm poller, on their own goroutines): their answers go out directly
// when the transport takes them without waiting (transport.TrySender),
// else through the reply queue, whose goroutine sends them in order. A
// reader never blocks in a write: two ranks' readers each waiting for the
// other would hang with both socket buffers full. The queue is bounded
// with back-pressure on the reader (replies.go).
//
// # Goroutines
//
// The device starts these goroutines; the transports start their own
// (internal/transport/tcp: an accept loop and a reader per connection;
// shm: a poller per process), which call the handlers above. A goroutine
// that blocks on a peer ends when the peer is lost or the job closes.
// ARCHITECTURE.md's goroutine table lists the library's others.
//
//	goroutine                     file        locks it takes                     blocks on
//	reply sender, per rank with   replies.go  reply queue (only to take items),  transport writes (a full socket
//	  a tcp or shm transport                  engine lock (Exec), transport's    buffer, a full ring), its wake
//	                                                                             channel
//	mailbox sweeper, per job      job.go      mailbox locks                      a ticker; job close
//	hang watcher, per process     watch.go    each rank's wait registry          a ticker; job close
//	wait reaper of a failed job   waits.go    each rank's wait registry          a ticker, until every rank
//	                                                                             returned (a minute at most)
//	rank waiter after a report    job.go      none                               the ranks' goroutines, for
//	                                                                             the grace given
//
// Transport goroutines that deliver (tcp readers, the shm poller) may
// block only on the reply queue's bound, never longer than replyStall at
// a time, and never in a write.
package device

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mpigo/mpi/internal/engine"
	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/wire"
)

// Device is the runtime of one rank. Package mpi embeds it in its proc,
// so the fields the hot paths read (Eng, Tr, EagerTo) cost what a field
// of proc costs.
type Device struct {
	Rank int // world rank
	Size int // ranks in the job

	Eng *engine.Engine
	Tr  *transport.Router
	// Mail is the rank's mailbox, where its senders leave small messages
	// while it watches (between goroutine ranks), or nil.
	Mail transport.Mailbox
	// EagerTo is, for each world rank whose transport has a short road
	// for small messages (transport.EagerSender), that road (else nil);
	// nil if no peer has one. Set once by NoteRoutes.
	EagerTo []transport.EagerSender
	// RegionTo is, for each world rank whose transport can read a peer
	// process's memory (transport.RegionReader), that transport (else
	// nil); nil if none can. Set once by NoteRoutes.
	RegionTo []transport.RegionReader
	// SegmentsBeside names, for a peer of this node reached over the
	// fabric though it shares memory with this rank
	// (MPIGO_FABRIC_LOCAL=1), the shared-memory transport whose
	// segments it maps (else nil): windows of shared memory
	// (MPI_Win_allocate_shared) need them whatever road messages take.
	// Nil unless set by Routes.
	SegmentsBeside func(peer int) transport.Segments
	// autoEager tells that PeerEager chose the eager limits towards the
	// peers with a short road itself, so that LowerEager may lower them
	// once the routes are connected.
	autoEager bool
	// movers are the distinct transports of the routes that count what
	// they move on their own (transport.Mover), for Activity. Set once by
	// NoteRoutes.
	movers []transport.Mover

	q *replies // reply sender for tcp and shm deliveries

	// Prog is how the rank's waits make its transports progress before
	// they park: the job's progress, or the rank's own policy over it
	// (progress.Rank) when the rank has a mailbox (Mail), which it then
	// opens.
	Prog engine.Progress
	// Blk is what hang diagnosis knows of the rank's parked waits
	// (waits.go).
	Blk Waits

	// Stats are the rank's traffic counters; Obs, if not nil, sees every
	// message too (the timeline of --trace).
	Stats Stats
	Obs   Observer

	Hooks Hooks
}

// Hooks are what the layer above does for the device.
type Hooks struct {
	// ProcFailed is the error class of a message a transport could not
	// deliver (package mpi's ErrProcFailed); the transport's error is
	// wrapped in it.
	ProcFailed error
	// Internal is told of a protocol error: the job fails.
	Internal func(err error)
	// PeerFailed is told that a transport lost a peer (a negative peer is
	// a stranger or a bad handshake, refused while the job goes on).
	PeerFailed func(peer int, err error)
	// FailPeer is told that a protocol reply could not reach peer: it is
	// gone (fault tolerance notes it; otherwise its requests fail).
	FailPeer func(peer int, err error)
	// AddCloser registers what to close when the job ends; closers run
	// in reverse order of registration.
	AddCloser func(func() error)
}

// Observer sees the messages of a rank as they are counted.
type Observer interface {
	Sent(to, n int, ctx uint32, tag int)
	Arrived(from, n int, ctx uint32, tag int)
}

// Stats are a rank's traffic counters (MPI_T performance variables of
// package mpi). Nothing is counted while On is 0.
type Stats struct {
	Mu sync.Mutex // serialises starts, stops and the allocation below
	// On counts the started handles of traffic counters; the slices,
	// indexed by world rank, are made before On first becomes positive
	// and never change.
	On                                       atomic.Int32
	SentBytes, SentMsgs, RecvBytes, RecvMsgs []atomic.Uint64
	// WaitOn counts the started handles of the wait timer; WaitNs is the
	// time spent waiting.
	WaitOn atomic.Int32
	WaitNs atomic.Uint64
}

// Counting reports whether messages are being counted or traced.
func (d *Device) Counting() bool { return d.Stats.On.Load() != 0 || d.Obs != nil }

// CountSent records a message of n bytes to world rank to, on context
// ctx with tag. Callers test Counting first.
func (d *Device) CountSent(to, n int, ctx uint32, tag int) {
	if d.Obs != nil {
		d.Obs.Sent(to, n, ctx, tag)
	}
	s := &d.Stats
	if to >= 0 && to < len(s.SentMsgs) {
		s.SentMsgs[to].Add(1)
		s.SentBytes[to].Add(uint64(n))
	}
}

// CountRecv records a message of n bytes that arrived from world rank
// from, on context ctx with tag.
func (d *Device) CountRecv(from, n int, ctx uint32, tag int) {
	if d.Obs != nil {
		d.Obs.Arrived(from, n, ctx, tag)
	}
	s := &d.Stats
	if from >= 0 && from < len(s.RecvMsgs) {
		s.RecvMsgs[from].Add(1)
		s.RecvBytes[from].Add(uint64(n))
	}
}

// countFrame counts a frame that arrived, if it starts a message.
func (d *Device) countFrame(h *wire.Header, from int) {
	if h.Kind == wire.Eager || h.Kind == wire.RTS {
		d.CountRecv(from, int(h.Size), h.Context, int(h.Tag))
	}
}

// countOut counts the messages that the frames in out start.
func (d *Device) countOut(out *engine.Outbox) {
	for i, n := 0, out.Len(); i < n; i++ {
		if it := out.At(i); it.Fetch == nil && (it.F.Kind == wire.Eager || it.F.Kind == wire.RTS) {
			d.CountSent(it.F.To, int(it.F.Size), it.F.Context, int(it.F.Tag))
		}
	}
}

// NoteRoutes probes, once, each peer's transport for the capabilities the
// roads of a message use: the short road of small messages (EagerTo) and
// the single copy of large ones between processes (RegionTo).
func (d *Device) NoteRoutes() {
	for peer := range d.Size {
		tr := d.Tr.For(peer)
		if t, ok := tr.(transport.Mover); ok && t != nil && !slices.Contains(d.movers, t) {
			d.movers = append(d.movers, t)
		}
		if t, ok := tr.(transport.EagerSender); ok && t != nil {
			if d.EagerTo == nil {
				d.EagerTo = make([]transport.EagerSender, d.Size)
			}
			d.EagerTo[peer] = t
		}
		if t, ok := tr.(transport.RegionReader); ok && t != nil {
			if d.RegionTo == nil {
				d.RegionTo = make([]transport.RegionReader, d.Size)
			}
			d.RegionTo[peer] = t
		}
	}
}

// EngineConfig returns cfg completed with what the routes offer: the
// chunk size of rendezvous Data frames towards peers whose transport
// prefers its own (engine.Config.PeerChunk, transport.Chunker), and the
// export of rendezvous buffers for a single copy (engine.Config.Export)
// where a peer's transport can read them. NoteRoutes must have run.
func (d *Device) EngineConfig(cfg engine.Config) engine.Config {
	for peer := range d.Size {
		if t, ok := d.Tr.For(peer).(transport.Chunker); ok && t != nil {
			if cfg.PeerChunk == nil {
				cfg.PeerChunk = make([]int, d.Size)
			}
			cfg.PeerChunk[peer] = t.ChunkSize()
		}
	}
	if d.RegionTo != nil {
		cfg.Export = func(peer int, b []byte) (uint64, bool) {
			if peer >= len(d.RegionTo) {
				return 0, false // a peer of another job (AddPeers)
			}
			if t := d.RegionTo[peer]; t != nil {
				return t.ExportRegion(peer, b)
			}
			return 0, false
		}
	}
	return cfg
}

// PeerEager returns the eager limits towards the peers whose transport has
// a short road with room, or nil to use the engine's eager limit for every
// peer. limit is the limit the user asked for those peers (0: choose;
// EagerRoom 0, as between goroutine ranks, keeps the engine's),
// eagerLimit the engine's limit, and custom tells that the user set it.
// NoteRoutes must have run.
func (d *Device) PeerEager(limit, eagerLimit int, custom, oversubscribed bool) []int {
	if limit == 0 {
		if custom || oversubscribed {
			return nil
		}
		for _, t := range d.EagerTo {
			if t != nil && t.EagerRoom() > 0 {
				limit = min(t.EagerRoom(), 512<<10)
				d.autoEager = true
				break
			}
		}
	}
	if limit <= 0 || limit == eagerLimit {
		return nil
	}
	l := make([]int, len(d.EagerTo))
	for peer, t := range d.EagerTo {
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

// LowerEager lowers the automatic eager limits (PeerEager) towards the
// peers that turned out, once connected, to read this rank's buffers in
// place. The job calls it once its transports are connected, before the
// rank runs.
func (d *Device) LowerEager() {
	if !d.autoEager {
		return
	}
	for peer, t := range d.RegionTo {
		if t != nil && t.Exports(peer) && d.EagerTo != nil && d.EagerTo[peer] != nil {
			d.Eng.SetPeerEager(peer, singleCopyEager)
		}
	}
}

// SendShort sends buf from communicator rank rank to world rank to, on
// context ctx with tag and type signature sig, by the short road if the
// engine's rule lets a message of mode take it, and reports whether it
// did; err is then the transport's error.
func (d *Device) SendShort(mode engine.Mode, ctx uint32, rank, to, tag int, sig uint64, buf []byte) (handled bool, err error) {
	if to < len(d.EagerTo) && d.EagerTo[to] != nil {
		if !d.Eng.Unanswered(mode, len(buf), to) {
			return false, nil
		}
		if d.Counting() {
			d.CountSent(to, len(buf), ctx, tag)
		}
		err = d.EagerTo[to].SendEager(to, ctx, int32(rank), int32(tag), sig, 0, buf)
	} else {
		f, ok := d.Eng.EagerFrame(mode, ctx, rank, to, tag, buf, sig)
		if !ok {
			return false, nil
		}
		if d.Counting() {
			d.CountSent(to, len(buf), ctx, tag)
		}
		err = d.Tr.Send(f)
	}
	return true, err
}
