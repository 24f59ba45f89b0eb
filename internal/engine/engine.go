// Package engine is the matching and protocol core of one rank.
//
// An Engine is plain logic: it takes events (a send posted, a receive
// posted, a frame arrived, a cancel) and answers with effects (frames to
// hand to a transport, requests completed). It performs no I/O, starts no
// goroutines and reads no clocks, so every interleaving of events can be
// replayed deterministically in tests.
//
// Frames the engine wants sent are appended to an Outbox that the caller
// owns; the caller sends them after the engine call returns, when the
// engine's lock is no longer held. Transports that deliver synchronously
// (goroutine ranks) can then call straight into the peer's engine without
// risk of lock-order deadlock.
//
// # Protocols
//
// Messages of at most Config.EagerLimit bytes travel eagerly: the whole
// payload goes in one Eager frame; if no receive is posted, the receiver
// copies it into the unexpected queue. Larger messages use rendezvous: the
// sender announces the message with an RTS frame and keeps its buffer. If the
// transport shares memory with the peer, the RTS carries the buffer itself
// (Region) and the receiver copies straight out of it when it matches, then
// answers Fin (one copy, the sender's memory to the receiver's). If the
// transport can read a peer process's memory (transport.RegionReader), the
// RTS carries the token the transport exported the buffer as (Config.Export)
// and the receiver's engine asks its executor to read the message through
// it (a Fetch effect: the copy runs outside the engine's lock), then
// answers Fin, or CTS if the read failed (Fetched). Otherwise
// the receiver answers CTS with the number of bytes it accepts, and the
// sender streams Data frames that land directly in the posted buffer.
//
// A synchronous send is eager or rendezvous as its size says; eager ones
// carry FlagSync and complete only when the receiver's Ack comes back.
//
// # Matching
//
// A receive matches a message when contexts are equal, the source is equal
// or AnySource, and the tag is equal or AnyTag. Posted receives are searched
// in the order they were posted and unexpected messages in the order they
// arrived, which with in-order transports gives MPI's non-overtaking rule.
package engine

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/mpigo/mpi/internal/memcopy"
	"github.com/mpigo/mpi/internal/wire"
)

// Wildcards for receives and probes.
const (
	AnySource = -1
	AnyTag    = -1
)

// Errors reported in a Status.
var (
	ErrTruncate = errors.New("message truncated")
	ErrType     = errors.New("type mismatch")
	ErrProtocol = errors.New("protocol error")
)

// Config holds the engine's tunables.
type Config struct {
	// EagerLimit is the largest message sent eagerly, in bytes.
	EagerLimit int
	// PeerEager, if not nil, gives the eager limit towards each world
	// rank instead (0: EagerLimit): a transport may favour larger eager
	// messages than another.
	PeerEager []int
	// ChunkSize is the largest Data frame of a rendezvous over a transport
	// that cannot read the sender's memory directly.
	ChunkSize int
	// PeerChunk, if not nil, gives the largest Data frame towards each
	// world rank instead (0: ChunkSize): a transport may carry larger
	// chunks better than another (transport.Chunker).
	PeerChunk []int
	// Export, if set, returns the token by which the peer with world rank
	// peer may read b, a rendezvous send's buffer, in place (a transport
	// between processes that can read a peer's memory: see
	// transport.RegionReader), or false if it cannot. The RTS then
	// carries the token (wire.FlagToken) and the receiver reads the
	// message with one copy. It must not block: the engine may call it
	// with its lock held.
	Export func(peer int, b []byte) (token uint64, ok bool)
}

// DefaultConfig returns the default tunables. The eager limit was chosen
// by measurement: over tcp a 64 KiB message takes 25 us eagerly and 51 us
// by rendezvous (an extra round trip), while between goroutine ranks the
// limit makes little difference (single-copy rendezvous costs about what
// an eager copy does).
func DefaultConfig() Config {
	return Config{EagerLimit: 64 << 10, ChunkSize: 256 << 10}
}

// Item is one effect: a frame to send and, once the transport has accepted
// it (its payload may be reused), a request to complete.
//
// If Fill is not nil, the frame's payload is not in F yet: the executor
// takes a buffer of FillLen bytes, has Fill pack the message bytes
// [FillOff, FillOff+FillLen) into it, sends F with that payload and may
// reuse the buffer once the transport has taken it. This is how messages
// with a non-contiguous layout leave their sender: one bounded chunk at a
// time, packed only when it is about to be sent.
//
// If Fetch is not nil, the item is no frame but a single-copy read for a
// receive (F is empty): the executor runs it, outside the engine's lock,
// and reports the outcome with Fetched.
type Item struct {
	F       wire.Frame
	Done    *Request // complete when F has been handed to the transport
	Fill    Layout
	FillOff int
	FillLen int
	Fetch   *Fetch
}

// Fetch is the effect of a rendezvous whose RTS carried a token
// (wire.FlagToken) matching a receive: copy the message, len(Dst) bytes
// from the start of the region the world rank From exported as Token,
// into Dst, the posted receive buffer; then tell the engine with Fetched,
// which answers the sender. Until then the receive is neither complete
// nor cancellable, and an Abort or FailAll that comes meanwhile takes
// effect when Fetched is called: Dst is written only while the engine
// still holds the receive.
type Fetch struct {
	From  int
	Token uint64
	Dst   []byte

	r      *Request
	id     uint64
	hdr    wire.Header // the RTS: context and send id of the answer
	failed error       // set by Abort or FailAll during the read
}

// Layout is the memory of a message that is not one run of bytes (a
// derived datatype over the user's buffer): a source of message bytes for
// a send and a sink for a receive, addressed by offset in the packed
// message. The engine never asks for the whole message at once: sends are
// packed chunk by chunk as frames leave (Item.Fill), receives unpack each
// arriving payload at its offset, straight into the user's memory.
type Layout interface {
	// Len returns the number of message bytes the layout holds.
	Len() int
	// Pack copies message bytes [off, off+len(dst)) into dst.
	Pack(dst []byte, off int)
	// Unpack stores src as message bytes [off, off+len(src)).
	Unpack(src []byte, off int)
}

// Outbox collects the frames an engine call wants sent. The zero value is
// ready; keep it on the stack so the hot path does not allocate.
type Outbox struct {
	small [2]Item
	n     int
	more  []Item
}

func (o *Outbox) add() *Item {
	if o.n < len(o.small) {
		o.n++
		it := &o.small[o.n-1]
		*it = Item{}
		return it
	}
	o.more = append(o.more, Item{})
	return &o.more[len(o.more)-1]
}

// Add appends an empty item and returns it, for callers that build an
// Outbox themselves.
func (o *Outbox) Add() *Item { return o.add() }

// Len returns the number of items.
func (o *Outbox) Len() int { return o.n + len(o.more) }

// At returns item i.
func (o *Outbox) At(i int) *Item {
	if i < o.n {
		return &o.small[i]
	}
	return &o.more[i-o.n]
}

// Reset empties the outbox.
func (o *Outbox) Reset() {
	for i := 0; i < o.n; i++ {
		o.small[i] = Item{}
	}
	o.n = 0
	o.more = o.more[:0]
}

// inbound is a message that arrived before its receive: an eager copy or a
// rendezvous announcement.
type inbound struct {
	hdr    wire.Header
	from   int         // world rank of the sender
	data   []byte      // eager payload (owned copy)
	box    *[]byte     // pooled storage of data
	region []byte      // RTS: the sender's buffer, if readable in place
	source wire.Packer // RTS: the sender's layout, if readable in place
	next   *inbound
}

// Message is an unexpected message taken out of matching by Mprobe; only
// MRecv may receive it.
type Message struct{ m *inbound }

// Status returns the message's status as a receive would report it.
func (m *Message) Status() Status {
	return Status{Source: int(m.m.hdr.Src), Tag: int(m.m.hdr.Tag), Size: int(m.m.hdr.Size), Sig: m.m.hdr.Sig}
}

// Engine is the matching engine of one rank. All methods are safe for
// concurrent use.
type Engine struct {
	// Read by the owner on every operation, and by the peers that deliver
	// into this engine, without the lock; written once (rank, cfg,
	// direct) or rarely (Abort, FailAll, Revoke). They share no cache
	// line with what changes under mu, which other cores write on every
	// message: the owner's next send read them after a peer had delivered
	// here, and with them on mu's line that read was a miss
	// (docs/performance.md, "Goroutine ranks that spin").
	rank   int // world rank: the From of frames this engine emits
	cfg    Config
	direct func(peer int) bool

	aborted atomic.Bool
	// anyLost is set once FailAll has named a peer: from then on every
	// send looks the destination up in lost, under mu.
	anyLost    atomic.Bool
	revokedAny atomic.Bool // some context is revoked, or ftLost

	_ [64]byte // cache-line padding: see above

	mu sync.Mutex

	postedHead, postedTail *Request
	unexpHead, unexpTail   *inbound

	nextID uint64
	// eagerSeq numbers cancellable eager sends (their ids have eagerID
	// set, so they never collide with nextID's).
	eagerSeq atomic.Uint64
	sends    map[uint64]*Request // sends waiting for CTS, Fin, Ack or CancelAck
	recvs    map[uint64]*Request // rendezvous receives waiting for Data
	fetches  map[uint64]*Fetch   // rendezvous receives being read in place (Fetch)
	// draining holds the receives failed while a transport was still
	// reading Data into their buffers (Request.placing): each completes
	// with its failure when the last such frame is delivered, so that no
	// byte lands in a buffer its owner has been given back.
	draining map[uint64]drainingRecv

	probes []*Waiter // blocked probes, woken by the next unexpected arrival

	lost      map[int]error // world ranks FailAll was told are gone
	lastLost  error         // the latest of them
	lostEpoch uint64        // FailAll calls so far

	dead error // set by Abort: every operation fails with it

	revoked map[uint32]error // contexts revoked (ft.go), under mu
	ftLost  bool             // FailPeer was called: sends to lost peers fail (ft.go)

	dropped int // late protocol frames dropped (see late)

	// abandoned remembers the requests Revoke failed while their peer
	// still owed answers (ft.go, abandon), by id; abandonRing holds the
	// same ids in the order abandoned, and bounds how many are
	// remembered (maxAbandoned).
	abandoned   map[uint64]abandonedReq
	abandonRing []uint64
	abandonNext int

	// matched counts messages matched to a receive or taken by a probe:
	// the engine's own measure of progress, for hang diagnosis (a rank
	// whose receives complete without ever blocking is not hung).
	matched uint64
	// chunks counts the Data frames of rendezvous that reached a receive:
	// the progress of a long message (2 GiB of a non-contiguous type
	// unpacked for 25 s), which hang diagnosis must not take for a hang.
	chunks uint64

	local localPools // free queue entries and buffers, under mu
}

// New returns the engine of the rank with world rank rank. direct reports
// whether the transport to a peer lets the receiver read the sender's memory
// in place (nil: never).
func New(rank int, cfg Config, direct func(peer int) bool) *Engine {
	if cfg.EagerLimit < 0 {
		cfg.EagerLimit = 0
	}
	if cfg.ChunkSize <= 0 {
		cfg.ChunkSize = DefaultConfig().ChunkSize
	}
	if direct == nil {
		direct = func(int) bool { return false }
	}
	return &Engine{rank: rank, cfg: cfg, direct: direct,
		sends: make(map[uint64]*Request), recvs: make(map[uint64]*Request), fetches: make(map[uint64]*Fetch)}
}

// Matched returns how many messages the engine has matched to receives
// (or handed to Mprobe) so far. Hang diagnosis reads it as progress.
func (e *Engine) Matched() uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.matched
}

// Chunks returns how many Data frames of large messages have reached
// their receives so far. Hang diagnosis reads it as progress too: one
// message may take longer than the hang threshold.
func (e *Engine) Chunks() uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.chunks
}

// Rank returns the engine's world rank.
func (e *Engine) Rank() int { return e.rank }

// Config returns the engine's tunables.
func (e *Engine) Config() Config { return e.cfg }

// Send starts the send r. Frames to transmit are appended to out; r
// completes when the last of them is handed to the transport, or later when
// the peer answers.
func (e *Engine) Send(r *Request, out *Outbox) {
	r.Op = OpSend
	if e.aborted.Load() {
		r.complete(Status{Source: r.Peer, Tag: r.Tag, Err: e.Err()})
		return
	}
	if e.revokedAny.Load() {
		if err := e.sendBlocked(r.Context, r.To); err != nil { // ft.go
			r.complete(Status{Source: r.Peer, Tag: r.Tag, Err: err})
			return
		}
	}
	n := r.size()
	eager := n <= e.eagerLimit(r.To)
	if e.anyLost.Load() {
		// Nothing reaches a rank that is gone, and no answer would come
		// from it: a rendezvous or synchronous send would wait forever.
		e.mu.Lock()
		err := e.lost[r.To]
		e.mu.Unlock()
		if err != nil {
			r.complete(Status{Source: r.Peer, Tag: r.Tag, Err: err})
			return
		}
	}
	if !eager || r.Mode == Synchronous {
		// The peer will answer: register r so the answer finds it.
		e.mu.Lock()
		if e.dead != nil || e.revokedLocked(r.Context) != nil {
			err := e.dead
			if err == nil {
				err = e.revokedLocked(r.Context)
			}
			e.mu.Unlock()
			r.complete(Status{Source: r.Peer, Tag: r.Tag, Err: err})
			return
		}
		if err := e.lost[r.To]; err != nil {
			e.mu.Unlock()
			r.complete(Status{Source: r.Peer, Tag: r.Tag, Err: err})
			return
		}
		e.nextID++
		r.id = e.nextID
		e.sends[r.id] = r
		e.mu.Unlock()
	}
	it := out.add()
	f := &it.F
	f.From, f.To = e.rank, r.To
	f.Context, f.Src, f.Tag, f.Size, f.Sig, f.SendID = r.Context, int32(r.Self), int32(r.Tag), int64(n), r.Sig, r.id
	if r.Mode == Synchronous {
		f.Flags = wire.FlagSync
	}
	if eager {
		f.Kind = wire.Eager
		if r.Cancellable && r.Mode != Synchronous {
			// Named, so that CancelSend can ask the receiver for it.
			r.id = e.EagerID()
			f.SendID = r.id
		}
		if r.Layout != nil {
			it.Fill, it.FillLen = r.Layout, n
		} else {
			f.Payload = r.Buf
		}
		if r.Mode != Synchronous {
			it.Done = r
		}
		return
	}
	f.Kind = wire.RTS
	if e.direct(r.To) {
		if r.Layout == nil {
			f.Region = r.Buf
		} else {
			f.Source = r.Layout
		}
	} else if e.cfg.Export != nil && r.Layout == nil && n > 0 {
		if tok, ok := e.cfg.Export(r.To, r.Buf[:n]); ok {
			f.Flags |= wire.FlagToken
			f.Token = tok
		}
	}
}

// Unanswered is the one rule of the short road: a send in mode of n bytes
// to world rank to goes eagerly and needs no answer (not synchronous,
// small enough for the peer's eager limit, and the engine is not
// aborted), so that it is complete once a transport has taken it and
// needs no Request. Every sender asks this, whatever road it then takes.
// The frames it lets through are the ones wire.Header.Unanswered
// recognises on arrival (transports' short roads, DeliverEager).
func (e *Engine) Unanswered(mode Mode, n, to int) bool {
	return mode != Synchronous && n <= e.eagerLimit(to) && e.Healthy()
}

// EagerFrame returns the frame of a send of buf in mode that Unanswered
// allows, so that a blocking send can hand it to the transport without a
// Request: once the transport has taken it, the send is complete. It
// reports false if the message must go through Send.
func (e *Engine) EagerFrame(mode Mode, ctx uint32, self, to, tag int, buf []byte, sig uint64) (wire.Frame, bool) {
	if !e.Unanswered(mode, len(buf), to) {
		return wire.Frame{}, false
	}
	return wire.Frame{Header: wire.Header{Kind: wire.Eager, Context: ctx, Src: int32(self), Tag: int32(tag), Size: int64(len(buf)), Sig: sig},
		From: e.rank, To: to, Payload: buf}, true
}

// EagerID returns a fresh id for a cancellable eager send that takes the
// short road (Unanswered) without a Request: the sender puts it in the
// message's frame, so that the message can still be cancelled later
// (SentEager, CancelSend). Ids never repeat within an engine.
func (e *Engine) EagerID() uint64 { return eagerID | e.eagerSeq.Add(1) }

// EagerIDs reserves n fresh ids at once, as EagerID would hand them out
// one by one, and returns the first: first, first+1, ..., first+n-1. A
// caller that sends many messages takes them a batch at a time, which
// spares an atomic increment per message.
func (e *Engine) EagerIDs(n uint64) uint64 { return eagerID | (e.eagerSeq.Add(n) - n + 1) }

// SentEager makes r the request of a cancellable eager send that already
// left by the short road with id (from EagerID): r is complete, as Send
// would have left it once the transport took the frame, so that
// CancelSend may reopen it. The caller has filled r's Context, Peer,
// Self, To and Tag. A non-blocking send that completes at once needs no
// Request until, if ever, it is cancelled: only then is one made.
func (e *Engine) SentEager(r *Request, id uint64) {
	r.Op, r.id = OpSend, id
	r.complete(Status{})
}

// SetPeerEager sets the eager limit towards world rank peer to n bytes
// (Config.PeerEager), for a route whose cost became known only once it
// was connected. It does nothing if the engine has no per-peer limits.
// Call it before anything is sent to peer: senders read the limit
// without the engine's lock.
func (e *Engine) SetPeerEager(peer, n int) {
	if peer >= 0 && peer < len(e.cfg.PeerEager) {
		e.cfg.PeerEager[peer] = n
	}
}

// eagerLimit is the largest eager message to world rank to.
func (e *Engine) eagerLimit(to int) int {
	if to >= 0 && to < len(e.cfg.PeerEager) && e.cfg.PeerEager[to] > 0 {
		return e.cfg.PeerEager[to]
	}
	return e.cfg.EagerLimit
}

// chunkSize is the largest Data frame towards world rank to.
func (e *Engine) chunkSize(to int) int {
	if to >= 0 && to < len(e.cfg.PeerChunk) && e.cfg.PeerChunk[to] > 0 {
		return e.cfg.PeerChunk[to]
	}
	return e.cfg.ChunkSize
}

// matches reports whether receive (or probe) envelope (ctx, src, tag) matches h.
func matches(ctx uint32, src, tag int, h *wire.Header) bool {
	return h.Context == ctx && (src == AnySource || int(h.Src) == src) && (tag == AnyTag || int(h.Tag) == tag)
}

// PostRecv starts the receive r: it takes the first matching unexpected
// message, or queues r until one arrives.
func (e *Engine) PostRecv(r *Request, out *Outbox) { e.postRecv(r, out) }

// TryPostRecv is PostRecv for a caller that would rather not clear an
// Outbox (a few hundred bytes) for the rare receive that needs one: it
// does what PostRecv does and reports true, unless r matches an
// unexpected message that must be answered (a synchronous eager message,
// or an RTS). Then it reports false and leaves r and the engine as they
// were: the caller calls PostRecv with an Outbox.
func (e *Engine) TryPostRecv(r *Request) bool { return e.postRecv(r, nil) }

// postRecv is PostRecv, and with a nil out TryPostRecv.
func (e *Engine) postRecv(r *Request, out *Outbox) bool {
	r.Op = OpRecv
	e.mu.Lock()
	if e.dead != nil {
		e.mu.Unlock()
		r.complete(Status{Source: r.Peer, Tag: r.Tag, Err: e.dead})
		return true
	}
	if err := e.revokedLocked(r.Context); err != nil { // ft.go
		e.mu.Unlock()
		r.complete(Status{Source: r.Peer, Tag: r.Tag, Err: err})
		return true
	}
	var prev *inbound
	for m := e.unexpHead; m != nil; prev, m = m, m.next {
		if matches(r.Context, r.Peer, r.Tag, &m.hdr) {
			if out == nil && (m.hdr.Kind != wire.Eager || m.hdr.Flags&wire.FlagSync != 0) {
				e.mu.Unlock()
				return false // consume would answer it
			}
			e.unlinkUnexp(prev, m)
			e.consume(r, m, out)
			e.mu.Unlock()
			return true
		}
	}
	if r.FromWorld > 0 {
		// Nothing more will come from a rank that is gone.
		if err := e.lost[r.FromWorld-1]; err != nil {
			e.mu.Unlock()
			r.complete(Status{Source: r.Peer, Tag: r.Tag, Err: err})
			return true
		}
	}
	r.next = nil
	if e.postedTail == nil {
		e.postedHead = r
	} else {
		e.postedTail.next = r
	}
	e.postedTail = r
	e.mu.Unlock()
	return true
}

func (e *Engine) unlinkUnexp(prev, m *inbound) {
	e.matched++
	if prev == nil {
		e.unexpHead = m.next
	} else {
		prev.next = m.next
	}
	if e.unexpTail == m {
		e.unexpTail = prev
	}
	m.next = nil
}

// takePosted removes and returns the first posted receive matching h.
func (e *Engine) takePosted(h *wire.Header) *Request {
	var prev *Request
	for r := e.postedHead; r != nil; prev, r = r, r.next {
		if matches(r.Context, r.Peer, r.Tag, h) {
			if prev == nil {
				e.postedHead = r.next
			} else {
				prev.next = r.next
			}
			if e.postedTail == r {
				e.postedTail = prev
			}
			r.next = nil
			e.matched++
			return r
		}
	}
	return nil
}

// The typed layer tells a plain value from a slice of them, which MPI's
// type signatures do not (one float64 and a slice of one float64 are the
// same MPI signature, and a low-level send or receive of Float64 matches
// both): a typed message of one value carries its type's signature XOR
// ScalarSig, a typed slice its element's XOR SliceSig, and a typed
// receive expects the same. SigsMatch accepts the form-marked signatures
// against the plain one (low-level calls, RecvInto), so the two layers
// still interoperate, and refuses a scalar against a slice. The keys are
// arbitrary odd constants: two different types whose signatures differ by
// exactly one of them would be taken for each other, a chance of 2^-63.
const (
	ScalarSig uint64 = 0x5c3a_9e17_d4b2_6f81
	SliceSig  uint64 = 0xa7e1_42c9_3b8d_f065
)

// SigsMatch reports whether a receive expecting signature want accepts a
// message carrying got, both non-zero and different: one is the other
// marked with ScalarSig or SliceSig.
func SigsMatch(want, got uint64) bool {
	d := want ^ got
	return d == ScalarSig || d == SliceSig
}

// accept sizes r's buffer for a message of size bytes, writes the status
// skeleton into r (in place: returning it cost a copy that the processor
// could not forward from the stores that built it), and returns how many
// bytes will be stored. e.mu is held.
func accept(r *Request, h *wire.Header) int {
	st := &r.status
	*st = Status{Source: int(h.Src), Tag: int(h.Tag), Size: int(h.Size), Sig: h.Sig}
	if r.Sig != h.Sig && r.Sig != 0 && h.Sig != 0 && !SigsMatch(r.Sig, h.Sig) {
		st.Err = ErrType
		return 0
	}
	size := int(h.Size)
	if r.Buf == nil && r.Alloc != nil && r.Layout == nil {
		r.Buf = r.Alloc(size)
	}
	n := size
	if c := r.size(); n > c {
		n = c
		st.Err = ErrTruncate
	}
	st.Count = n
	return n
}

// consume delivers the unexpected message m to the receive r. e.mu is held.
func (e *Engine) consume(r *Request, m *inbound, out *Outbox) {
	n := accept(r, &m.hdr)
	r.from = m.from
	switch m.hdr.Kind {
	case wire.Eager:
		r.store(m.data[:n], 0)
		if m.hdr.Flags&wire.FlagSync != 0 {
			e.reply(out, wire.Ack, m, 0, 0)
		}
		e.freeInbound(m)
		r.finish()
	case wire.RTS:
		e.startRendezvous(r, m.from, &m.hdr, m.region, m.source, n, out)
		e.freeInbound(m)
	}
}

// startRendezvous answers an RTS that matched r. e.mu is held.
// r's status has been set by accept.
func (e *Engine) startRendezvous(r *Request, from int, h *wire.Header, region []byte, source wire.Packer, n int, out *Outbox) {
	if region == nil && source == nil && n > 0 {
		// The payload is still the sender's: one that is gone (its RTS
		// waited in the unexpected queue, or was read from its
		// connection after the loss was known) will send no Data and
		// answer no read, so the receive fails now, never waits.
		if err := e.lost[from]; err != nil {
			r.Fail(err)
			return
		}
	}
	// A message in another process's memory is read into a contiguous
	// receive buffer in one copy, by the executor (see Fetch); a derived
	// receive layout takes the streamed path instead.
	if region == nil && source == nil && h.Flags&wire.FlagToken != 0 && n > 0 && r.Layout == nil {
		e.nextID++
		r.id = e.nextID
		f := &Fetch{From: from, Token: h.Token, Dst: r.Buf[:n:n], r: r, id: r.id, hdr: *h}
		e.fetches[r.id] = f
		out.add().Fetch = f
		return
	}
	if region != nil || source != nil {
		if region != nil {
			r.store(region[:n], 0)
		} else if source != nil {
			e.pipe(r, source, n)
		}
		it := out.add()
		it.F = wire.Frame{Header: wire.Header{Kind: wire.Fin, Context: h.Context, SendID: h.SendID, Size: int64(n)}, From: e.rank, To: from}
		r.finish()
		return
	}
	e.nextID++
	r.id = e.nextID
	e.clearToSend(r, from, h, n, out)
}

// clearToSend answers the RTS h from from, which matched r (whose id is
// set), with a CTS for n bytes, and waits for the Data. e.mu is held.
func (e *Engine) clearToSend(r *Request, from int, h *wire.Header, n int, out *Outbox) {
	it := out.add()
	it.F = wire.Frame{Header: wire.Header{Kind: wire.CTS, Context: h.Context, SendID: h.SendID, RecvID: r.id, Size: int64(n)}, From: e.rank, To: from}
	if n == 0 {
		r.finish()
		return
	}
	r.want, r.got = n, 0
	e.recvs[r.id] = r
}

// Fetched reports the outcome of the read f (an Item's Fetch): err is nil
// if all of f.Dst was copied. The receive then completes and the sender
// is told Fin; if the read failed, the engine falls back to the streamed
// rendezvous (CTS and Data frames). If the engine was aborted, or f.From
// was lost, while the read ran, the receive fails with that error instead
// and nothing is sent. Frames to send are appended to out.
func (e *Engine) Fetched(f *Fetch, err error, out *Outbox) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.fetches[f.id] != f {
		return // reported twice: the first report settled it
	}
	delete(e.fetches, f.id)
	r := f.r
	n := len(f.Dst)
	switch {
	case f.failed != nil:
		r.Fail(f.failed)
	case err == nil:
		it := out.add()
		it.F = wire.Frame{Header: wire.Header{Kind: wire.Fin, Context: f.hdr.Context, SendID: f.hdr.SendID, Size: int64(n)}, From: e.rank, To: f.From}
		r.finish()
	default:
		e.clearToSend(r, f.From, &f.hdr, n, out)
	}
}

// DirectCopier is a Layout that may copy a sender's layout read in place
// straight into its memory, without packing in between. CopyFrom copies
// the first n message bytes of src and reports true, or reports false
// (having copied nothing) if it cannot, and the engine then pipes the
// bytes through a buffer.
type DirectCopier interface {
	CopyFrom(src wire.Packer, n int) bool
}

// pipeChunk is how much of a message pipe moves at a time between two
// layouts: small enough to stay in cache between packing and unpacking.
const pipeChunk = 64 << 10

// pipe copies the first n bytes of a sender's layout read in place into
// r: straight into a contiguous buffer (one copy), or through a chunk of
// pipeChunk bytes into another layout. e.mu is held.
func (e *Engine) pipe(r *Request, source wire.Packer, n int) {
	if r.Layout == nil {
		source.Pack(r.Buf[:n], 0)
		return
	}
	if d, ok := r.Layout.(DirectCopier); ok && d.CopyFrom(source, n) {
		return
	}
	box, buf := e.getBuf(min(n, pipeChunk))
	for off := 0; off < n; off += len(buf) {
		b := buf[:min(len(buf), n-off)]
		source.Pack(b, off)
		r.Layout.Unpack(b, off)
	}
	e.putBuf(box)
}

func (e *Engine) reply(out *Outbox, k wire.Kind, m *inbound, flags uint8, size int64) {
	it := out.add()
	it.F = wire.Frame{Header: wire.Header{Kind: k, Flags: flags, Context: m.hdr.Context, SendID: m.hdr.SendID, Size: size}, From: e.rank, To: m.from}
}

// DeliverEager is Deliver for an eager frame that needs no answer (no
// FlagSync), given by its parts: transports with a fast path for small
// messages call it without building a Frame or an Outbox. payload is
// borrowed until it returns.
func (e *Engine) DeliverEager(h *wire.Header, from int, payload []byte) error {
	if !h.Unanswered(len(payload)) {
		return notPlainEager(h, from, len(payload))
	}
	e.mu.Lock()
	r := e.eagerLocked(h, from, payload)
	e.mu.Unlock()
	if r != nil {
		r.finish()
	}
	return nil
}

// eagerRun is how many frames DeliverEagerRun delivers under one lock.
const eagerRun = 16

// DeliverEagerRun is DeliverEager for a run of frames from one sender, in
// their order: hs[i] with the payload ps[i], eagerRun of them under one
// lock. The receives they match complete once the lock is released. It
// returns how many frames it delivered: all, unless frame n is not a
// plain eager one, which it reports as DeliverEager would, having
// delivered the frames before it.
func (e *Engine) DeliverEagerRun(from int, hs []wire.Header, ps [][]byte) (int, error) {
	n := min(len(hs), len(ps))
	var bad error
	for i := range n {
		if !hs[i].Unanswered(len(ps[i])) {
			n, bad = i, notPlainEager(&hs[i], from, len(ps[i]))
			break
		}
	}
	var done [eagerRun]*Request
	for at := 0; at < n; at += eagerRun {
		k := 0
		e.mu.Lock()
		for i := at; i < min(n, at+eagerRun); i++ {
			if r := e.eagerLocked(&hs[i], from, ps[i]); r != nil {
				done[k] = r
				k++
			}
		}
		e.mu.Unlock()
		for _, r := range done[:k] {
			r.finish()
		}
	}
	return n, bad
}

// eagerLocked delivers a plain eager frame: into the first posted receive
// it matches, which it returns for the caller to finish once e.mu is
// released, or onto the unexpected queue (nil). e.mu is held.
func (e *Engine) eagerLocked(h *wire.Header, from int, payload []byte) *Request {
	if r := e.takePosted(h); r != nil {
		n := accept(r, h)
		r.from = from
		r.store(payload[:n], 0)
		return r
	}
	m := e.newInbound()
	m.hdr, m.from = *h, from
	m.box, m.data = e.getBuf(len(payload))
	memcopy.Copy(m.data, payload)
	e.queueUnexpected(m)
	return nil
}

// notPlainEager is DeliverEager's error for a frame that needs more than
// a copy.
func notPlainEager(h *wire.Header, from, n int) error {
	return fmt.Errorf("%w: %v frame from %d (flags %#x, %d bytes for a %d-byte message) is not a plain eager one",
		ErrProtocol, h.Kind, from, h.Flags, n, h.Size)
}

// queueUnexpected appends m to the unexpected queue and wakes the blocked
// probes. e.mu is held.
func (e *Engine) queueUnexpected(m *inbound) {
	if e.unexpTail == nil {
		e.unexpHead = m
	} else {
		e.unexpTail.next = m
	}
	e.unexpTail = m
	for _, w := range e.probes {
		w.Wake()
	}
	e.probes = e.probes[:0]
}

// Deliver processes a frame that arrived from a peer. f borrows its payload:
// the engine copies what it keeps.
func (e *Engine) Deliver(f *wire.Frame, out *Outbox) error {
	if f.Kind == wire.Eager && f.Flags&wire.FlagSync == 0 && int64(len(f.Payload)) == f.Size {
		// The common case needs neither out nor the lock past matching.
		return e.DeliverEager(&f.Header, f.From, f.Payload)
	}
	// Not deferred: with this many returns the compiler cannot open-code
	// a defer, and the deferred call cost ~140 instructions a message.
	e.mu.Lock()
	err := e.deliver(f, out)
	e.mu.Unlock()
	return err
}

// deliver is Deliver under e.mu.
func (e *Engine) deliver(f *wire.Frame, out *Outbox) error {
	switch f.Kind {
	case wire.Eager, wire.RTS:
		if int64(len(f.Payload)) > f.Size || (f.Kind == wire.Eager && int64(len(f.Payload)) != f.Size) {
			return fmt.Errorf("%w: %v frame from %d carries %d bytes for a %d-byte message", ErrProtocol, f.Kind, f.From, len(f.Payload), f.Size)
		}
		if f.Kind == wire.RTS && f.Region != nil && int64(len(f.Region)) != f.Size {
			// A region is the sender's whole message: a receive copies
			// up to Size bytes straight out of it.
			return fmt.Errorf("%w: RTS from %d attaches a %d-byte region to a %d-byte message", ErrProtocol, f.From, len(f.Region), f.Size)
		}
		if r := e.takePosted(&f.Header); r != nil {
			n := accept(r, &f.Header)
			r.from = f.From
			if f.Kind == wire.Eager {
				r.store(f.Payload[:n], 0)
				if f.Flags&wire.FlagSync != 0 {
					it := out.add()
					it.F = wire.Frame{Header: wire.Header{Kind: wire.Ack, Context: f.Context, SendID: f.SendID}, From: e.rank, To: f.From}
				}
				r.finish()
			} else {
				e.startRendezvous(r, f.From, &f.Header, f.Region, f.Source, n, out)
			}
			return nil
		}
		m := e.newInbound()
		m.hdr, m.from, m.region, m.source = f.Header, f.From, f.Region, f.Source
		if f.Kind == wire.Eager {
			m.box, m.data = e.getBuf(len(f.Payload))
			memcopy.Copy(m.data, f.Payload)
		}
		e.queueUnexpected(m)
	case wire.CTS:
		r := e.sends[f.SendID]
		if r == nil {
			if e.late(f, f.SendID, true) {
				return nil
			}
			return fmt.Errorf("%w: CTS for unknown send %d from %d", ErrProtocol, f.SendID, f.From)
		}
		n := int(f.Size)
		if n < 0 || n > r.size() {
			return fmt.Errorf("%w: CTS from %d asks %d bytes of a %d-byte send", ErrProtocol, f.From, n, r.size())
		}
		delete(e.sends, f.SendID)
		if n == 0 {
			r.complete(Status{})
			return nil
		}
		chunk := e.chunkSize(f.From)
		for off := 0; off < n; off += chunk {
			end := min(off+chunk, n)
			it := out.add()
			it.F = wire.Frame{Header: wire.Header{Kind: wire.Data, Context: r.Context, Src: int32(r.Self), Tag: int32(r.Tag),
				Size: int64(n), Offset: int64(off), SendID: r.id, RecvID: f.RecvID}, From: e.rank, To: f.From}
			if r.Layout != nil {
				it.Fill, it.FillOff, it.FillLen = r.Layout, off, end-off
			} else {
				it.F.Payload = r.Buf[off:end]
			}
			if end == n {
				it.Done = r
			}
		}
	case wire.Data:
		r := e.recvs[f.RecvID]
		if r == nil {
			e.drained(f)
			if e.late(f, f.RecvID, false) {
				return nil
			}
			return fmt.Errorf("%w: data for unknown receive %d from %d", ErrProtocol, f.RecvID, f.From)
		}
		off := int(f.Offset)
		if off+len(f.Payload) > r.want {
			return fmt.Errorf("%w: data from %d overruns the receive (%d+%d > %d)", ErrProtocol, f.From, off, len(f.Payload), r.want)
		}
		if r.Layout != nil {
			r.Layout.Unpack(f.Payload, off)
		} else if placedIn(r, f) {
			r.placing-- // read in place already
		} else if len(f.Payload) > 0 {
			memcopy.Copy(r.Buf[off:], f.Payload)
		}
		r.got += len(f.Payload)
		e.chunks++
		if r.got >= r.want {
			delete(e.recvs, f.RecvID)
			r.complete(r.status)
		}
	case wire.Fin, wire.Ack:
		r := e.sends[f.SendID]
		if r == nil {
			if e.late(f, f.SendID, true) {
				return nil
			}
			return fmt.Errorf("%w: %v for unknown send %d from %d", ErrProtocol, f.Kind, f.SendID, f.From)
		}
		delete(e.sends, f.SendID)
		r.complete(Status{})
	case wire.CancelReq:
		flags := uint8(0)
		var prev *inbound
		for m := e.unexpHead; m != nil; prev, m = m, m.next {
			if m.from == f.From && m.hdr.SendID == f.SendID && m.hdr.SendID != 0 {
				e.unlinkUnexp(prev, m)
				e.freeInbound(m)
				flags = wire.FlagCancelled
				break
			}
		}
		it := out.add()
		it.F = wire.Frame{Header: wire.Header{Kind: wire.CancelAck, Flags: flags, Context: f.Context, SendID: f.SendID}, From: e.rank, To: f.From}
	case wire.CancelAck:
		r := e.sends[f.SendID]
		if r != nil && f.SendID&eagerID != 0 {
			// An eager send reopened by CancelSend: this is its answer.
			delete(e.sends, f.SendID)
			if f.Flags&wire.FlagCancelled != 0 {
				r.complete(Status{Source: r.Peer, Tag: r.Tag, Cancelled: true})
			} else {
				r.complete(Status{})
			}
			return nil
		}
		if r == nil || f.Flags&wire.FlagCancelled == 0 {
			// Too late: the send matched and completes (or completed) normally.
			return nil
		}
		delete(e.sends, f.SendID)
		r.complete(Status{Source: r.Peer, Tag: r.Tag, Cancelled: true})
	default:
		return fmt.Errorf("%w: unexpected %v frame from %d", ErrProtocol, f.Kind, f.From)
	}
	return nil
}

// late reports whether f, an answer naming id, a send (send) or a
// receive of this engine that it does not know, is a late frame for a
// request that was failed, not a bogus one: the engine was aborted (the
// job is going down; the peer answered before it learned so), f's sender
// was declared lost (FailAll, FailPeer), or Revoke failed the request
// while f's sender, alive, still owed it answers (abandoned, ft.go). Such
// a frame is dropped and counted (Dropped), not a protocol error: the
// request it was meant for has already completed with the failure, and
// ids never repeat within an engine, so it cannot belong to a later
// request. e.mu is held.
func (e *Engine) late(f *wire.Frame, id uint64, send bool) bool {
	if e.dead == nil && e.lost[f.From] == nil && !e.wasAbandoned(f, id, send) {
		return false
	}
	e.dropped++
	return true
}

// SizeOf returns r.Size() under the engine's lock, for a goroutine that
// describes a request another may be matching (the hang report): a
// receive's buffer may be allocated at its match.
func (e *Engine) SizeOf(r *Request) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return r.size()
}

// Dropped returns the number of late frames dropped (see Deliver): answers
// that arrived for requests already failed by Abort, FailAll, FailPeer or
// Revoke.
func (e *Engine) Dropped() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.dropped
}

// DataDest returns where the n-byte payload of the Data frame with header
// h from the world rank from belongs: the part of the posted receive buffer it
// fills. A byte-stream transport reads the payload straight into it and
// then delivers the frame, whose copy the engine then skips. It returns
// nil if the frame does not belong to a receive in progress (the frame is
// then read and delivered as usual, and Deliver reports the error).
func (e *Engine) DataDest(h *wire.Header, from, n int) []byte {
	if h.Kind != wire.Data {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	r := e.recvs[h.RecvID]
	if r == nil || r.from != from || r.Layout != nil {
		return nil
	}
	off := int(h.Offset)
	if off < 0 || n < 0 || off+n > r.want {
		return nil
	}
	r.placing++ // until the frame is delivered (deliver, drained)
	return r.Buf[off : off+n : off+n]
}

// placedIn reports whether the payload of the Data frame f was read
// straight into r's buffer (DataDest).
func placedIn(r *Request, f *wire.Frame) bool {
	off := int(f.Offset)
	return len(f.Payload) > 0 && off >= 0 && off < len(r.Buf) && &r.Buf[off] == &f.Payload[0]
}

// failRecv fails the rendezvous receive r with id id, already out of
// e.recvs, with err: now, or once the Data frames a transport is reading
// into its buffer have been delivered (draining). e.mu is held.
func (e *Engine) failRecv(id uint64, r *Request, err error) {
	if r.placing == 0 {
		r.Fail(err)
		return
	}
	if e.draining == nil {
		e.draining = map[uint64]drainingRecv{}
	}
	e.draining[id] = drainingRecv{r, err}
}

// drainingRecv is a receive failed with err while Data was still being
// read into its buffer.
type drainingRecv struct {
	r   *Request
	err error
}

// drained takes note that the Data frame f, for a receive that is no
// longer in e.recvs, was delivered, and completes the receive if it was
// the last one being read into its buffer. e.mu is held.
func (e *Engine) drained(f *wire.Frame) {
	d, ok := e.draining[f.RecvID]
	if !ok || d.r.from != f.From || !placedIn(d.r, f) {
		return
	}
	if d.r.placing--; d.r.placing == 0 {
		delete(e.draining, f.RecvID)
		d.r.Fail(d.err)
	}
}

// failDraining fails at once the draining receives from world rank peer
// (every one if peer < 0): their transport's reads have ended with the
// peer or the engine. e.mu is held.
func (e *Engine) failDraining(peer int, err error) {
	for id, d := range e.draining {
		if peer < 0 || d.r.from == peer {
			delete(e.draining, id)
			d.r.Fail(err)
		}
	}
}

// Iprobe reports whether a message matching (ctx, src, tag) is waiting to be
// received, without receiving it. If none is and w is not nil, w is woken at
// the next arrival of any unexpected message, so that a blocking probe can
// park and then probe again.
func (e *Engine) Iprobe(ctx uint32, src, tag int, w *Waiter) (Status, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dead != nil {
		return Status{Err: e.dead}, true
	}
	for m := e.unexpHead; m != nil; m = m.next {
		if matches(ctx, src, tag, &m.hdr) {
			return Status{Source: int(m.hdr.Src), Tag: int(m.hdr.Tag), Size: int(m.hdr.Size), Count: int(m.hdr.Size), Sig: m.hdr.Sig}, true
		}
	}
	if w != nil {
		e.probes = append(e.probes, w)
	}
	return Status{}, false
}

// Improbe is Iprobe that also takes the matched message out of matching, so
// no other receive or probe can see it; receive it with MRecv.
func (e *Engine) Improbe(ctx uint32, src, tag int, w *Waiter) (*Message, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dead != nil {
		return nil, true
	}
	var prev *inbound
	for m := e.unexpHead; m != nil; prev, m = m, m.next {
		if matches(ctx, src, tag, &m.hdr) {
			e.unlinkUnexp(prev, m)
			return &Message{m: m}, true
		}
	}
	if w != nil {
		e.probes = append(e.probes, w)
	}
	return nil, false
}

// MRecv receives the message m (from Improbe) into r. m must not be used again.
func (e *Engine) MRecv(m *Message, r *Request, out *Outbox) {
	r.Op = OpRecv
	e.mu.Lock()
	err := e.dead
	if err == nil {
		// A message probed before its communicator was revoked: an
		// RTS answered now would start a rendezvous that no Revoke
		// ends (it has run already) and the sender abandoned.
		err = e.revokedLocked(m.m.hdr.Context)
	}
	if err != nil {
		e.freeInbound(m.m)
		e.mu.Unlock()
		m.m = nil
		r.Fail(err)
		return
	}
	e.consume(r, m.m, out)
	e.mu.Unlock()
	m.m = nil
}

// CancelRecv withdraws the posted receive r if it has not matched yet, and
// completes it as cancelled. It reports whether it did.
func (e *Engine) CancelRecv(r *Request) bool {
	return e.Withdraw(r, Status{Source: r.Peer, Tag: r.Tag, Cancelled: true})
}

// Withdraw takes the posted receive r out of the queue if it has not
// matched yet, and completes it with st. It reports whether it did: not if
// a message, a failure or an abort completed r first. A wait that no
// message ends (a rank waiting for the others to meet it in memory) posts
// such a receive, so that failures and aborts end it as they end any
// receive, and hang reports see it; whoever ends the wait withdraws it.
func (e *Engine) Withdraw(r *Request, st Status) bool {
	e.mu.Lock()
	var prev *Request
	for q := e.postedHead; q != nil; prev, q = q, q.next {
		if q == r {
			if prev == nil {
				e.postedHead = q.next
			} else {
				prev.next = q.next
			}
			if e.postedTail == q {
				e.postedTail = prev
			}
			q.next = nil
			r.complete(st)
			e.mu.Unlock()
			return true
		}
	}
	e.mu.Unlock()
	return false
}

// eagerID marks the ids of cancellable eager sends (Request.Cancellable).
const eagerID = 1 << 63

// CancelSend asks the receiver to withdraw the send r if it has not
// matched it yet, and reports whether it sent the request (a CancelReq
// frame). The receiver looks for the message among its unexpected ones,
// removes it if it is there, and answers with a CancelAck saying whether
// it did; r then completes cancelled (Status.Cancelled) or normally.
//
// Sends still waiting for their peer (rendezvous and synchronous sends)
// can be cancelled until they complete. So can an eager send whose
// request was Cancellable, even though it completed when its frame left:
// the message may still sit in the receiver's unexpected queue, named by
// the id its frame carries. CancelSend then reopens r (it is no longer
// Done, and its OnDone, which already ran, is dropped) until the
// CancelAck arrives. A send that completed with an error, was cancelled
// already or has no id (not cancellable) is refused.
func (e *Engine) CancelSend(r *Request, out *Outbox) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r.id == 0 || r.cancel || e.dead != nil {
		return false
	}
	if r.id&eagerID != 0 {
		if !r.Done() || r.status.Err != nil || r.status.Cancelled {
			return false
		}
		r.OnDone = nil
		r.status = Status{}
		r.state.Store(0)
		e.sends[r.id] = r
	} else if e.sends[r.id] != r {
		return false
	}
	r.cancel = true
	it := out.add()
	it.F = wire.Frame{Header: wire.Header{Kind: wire.CancelReq, Context: r.Context, SendID: r.id}, From: e.rank, To: r.To}
	return true
}

// Pending returns the number of posted receives, unexpected messages, and
// sends and receives in the middle of a protocol. Tests use it to check that
// the engine is left clean.
func (e *Engine) Pending() (posted, unexpected, sends, recvs int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for r := e.postedHead; r != nil; r = r.next {
		posted++
	}
	for m := e.unexpHead; m != nil; m = m.next {
		unexpected++
	}
	return posted, unexpected, len(e.sends), len(e.recvs) + len(e.fetches)
}

// Abort fails every pending operation with err and makes every later one
// fail with it too; blocked probes are woken. The job is going down.
func (e *Engine) Abort(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dead != nil {
		return
	}
	e.dead = err
	e.aborted.Store(true)
	for r := e.postedHead; r != nil; {
		next := r.next
		r.next = nil
		r.Fail(err)
		r = next
	}
	e.postedHead, e.postedTail = nil, nil
	for id, r := range e.sends {
		delete(e.sends, id)
		r.Fail(err)
	}
	for id, r := range e.recvs {
		delete(e.recvs, id)
		r.Fail(err)
	}
	e.failDraining(-1, err)
	for _, f := range e.fetches {
		// The executor is writing into the receive buffer: the receive
		// fails when it reports back (Fetched), not before.
		f.failed = err
	}
	for _, w := range e.probes {
		w.Wake()
	}
	e.probes = nil
}

// Lost reports why world rank peer is gone, if FailAll was told so.
func (e *Engine) Lost(peer int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lost[peer]
}

// LostSince returns the latest failure FailAll recorded if there has been
// one since epoch, and the current epoch. A probe for AnySource that was
// blocked when a rank was lost gives up with it, as posted AnySource
// receives do.
func (e *Engine) LostSince(epoch uint64) (uint64, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.lostEpoch != epoch {
		return e.lostEpoch, e.lastLost
	}
	return e.lostEpoch, nil
}

// Healthy reports, without the lock, that e has not been aborted, told of
// a lost peer or had a context revoked: the state in which the short
// roads (EagerOK) and a meeting in memory without a wait of one's own
// (the root package's meet.gather) need no failure to be looked for.
func (e *Engine) Healthy() bool {
	return !e.aborted.Load() && !e.anyLost.Load() && !e.revokedAny.Load()
}

// Err returns the error the engine was aborted with, or nil.
func (e *Engine) Err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.dead
}

// FailAll completes every request that waits on the peer with world rank
// peer with err (the peer died or its connection broke): sends to it,
// receives in the middle of a protocol with it, and posted receives whose
// source is that rank or AnySource (which might have been waiting for it;
// MPI's fault-tolerance proposal fails them too).
func (e *Engine) FailAll(peer int, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.lost == nil {
		e.lost = map[int]error{}
	}
	e.lost[peer], e.lastLost = err, err
	e.lostEpoch++
	e.anyLost.Store(true)
	e.failPeerRequests(peer, err)
	// Posted receives that can only be satisfied by the dead rank.
	var prev *Request
	for r := e.postedHead; r != nil; {
		next := r.next
		if r.FromWorld == peer+1 || (r.FromWorld == 0 && r.Peer == AnySource) {
			e.unlinkPosted(prev, r)
			r.Fail(err)
		} else {
			prev = r
		}
		r = next
	}
}

// failPeerRequests does what losing the peer with world rank peer does
// to requests in the middle of a protocol, for FailAll and FailPeer
// alike: blocked probes look again (one waiting for the dead rank gives
// up), sends to it and receives streaming from it fail with err, and a
// receive whose single-copy read from it runs fails with err when the
// read reports back (Fetched), never falling back to a CTS the peer will
// not answer. Posted receives are the caller's: the two differ there.
// e.mu is held.
func (e *Engine) failPeerRequests(peer int, err error) {
	for _, w := range e.probes {
		w.Wake()
	}
	e.probes = e.probes[:0]
	for id, r := range e.sends {
		if r.To == peer {
			delete(e.sends, id)
			r.Fail(err)
		}
	}
	for id, r := range e.recvs {
		if r.from == peer {
			delete(e.recvs, id)
			r.Fail(err)
		}
	}
	// The peer's connection ended before the payloads being read into
	// these receives' buffers could arrive: nothing writes them any more.
	e.failDraining(peer, err)
	for _, f := range e.fetches {
		if f.From == peer && f.failed == nil {
			f.failed = err // see Abort
		}
	}
}

// QueueLens returns how many receives are posted and how many messages
// wait in the unexpected queue with context ctx, or in every context if
// all is set. It walks both queues under the engine's lock: it is meant
// for tools (MPI_T performance variables), not for the hot path.
func (e *Engine) QueueLens(ctx uint32, all bool) (posted, unexpected int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for r := e.postedHead; r != nil; r = r.next {
		if all || r.Context == ctx {
			posted++
		}
	}
	for m := e.unexpHead; m != nil; m = m.next {
		if all || m.hdr.Context == ctx {
			unexpected++
		}
	}
	return posted, unexpected
}
