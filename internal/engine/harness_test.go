package engine

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/mpigo/mpi/internal/wire"
)

// This file is the deterministic test network the engine tests run on. A
// harness holds N engines (world ranks 0..N-1) and one FIFO queue of frames
// per ordered pair of ranks. Nothing moves until the test says so: an engine
// call puts frames in an Outbox, the harness "sends" them (queues them and
// completes the items' requests, as the runtime does), and the test chooses
// which link's head frame is delivered next. There are no goroutines, no
// clocks and no randomness, so every failure replays exactly.

// engCfg configures one rank of a harness.
type engCfg struct {
	EagerLimit, ChunkSize int
	// PeerChunk is Config.PeerChunk.
	PeerChunk []int
	// Direct says that this rank's sends may pass their buffer in place
	// (wire.Frame.Region) to every peer; DirectTo, if set, decides per peer.
	Direct   bool
	DirectTo func(peer int) bool
	// Export says that this rank's rendezvous sends export their buffer
	// as a token (Config.Export) to every other rank, as a transport
	// between processes with single copy does.
	Export bool
}

func (c engCfg) config() Config {
	return Config{EagerLimit: c.EagerLimit, ChunkSize: c.ChunkSize, PeerChunk: c.PeerChunk}
}

func (c engCfg) directFunc() func(int) bool {
	if c.DirectTo != nil {
		return c.DirectTo
	}
	d := c.Direct
	return func(int) bool { return d }
}

// harness is a network of engines with per-link FIFO queues.
type harness struct {
	t     testing.TB
	cfgs  []engCfg
	engs  []*Engine
	links [][][]wire.Frame // links[from][to]: frames in flight, oldest first
	trace []string         // every frame delivered, for failure messages

	// completions counts how often each request the harness started has
	// completed: more than once is an engine bug.
	completions map[*Request]int

	// regions are the buffers ranks exported (Config.Export), by token;
	// a token names its owner too, as a transport knows whose it is.
	regions map[uint64]region
	// fetches are the reads engines asked for (Item.Fetch), oldest first.
	// flush runs them at once unless holdFetches is set; then the test
	// runs them with runFetch.
	fetches     []heldFetch
	holdFetches bool

	recvs int // receives posted, to alternate PostRecv and TryPostRecv
}

type region struct {
	owner int
	b     []byte
}

type heldFetch struct {
	at int // the rank that asked
	f  *Fetch
}

// newHarness returns n engines. cfgs gives each rank's configuration; if it
// has a single element, every rank uses it.
func newHarness(t testing.TB, n int, cfgs ...engCfg) *harness {
	t.Helper()
	if len(cfgs) != 1 && len(cfgs) != n {
		t.Fatalf("newHarness: %d configurations for %d ranks", len(cfgs), n)
	}
	h := &harness{t: t, completions: map[*Request]int{}, regions: map[uint64]region{}}
	for r := range n {
		c := cfgs[0]
		if len(cfgs) == n {
			c = cfgs[r]
		}
		h.cfgs = append(h.cfgs, c)
		ec := c.config()
		if c.Export {
			ec.Export = func(peer int, b []byte) (uint64, bool) {
				if peer == r {
					// Never to itself, as in the runtime: a rank's own
					// route (the self transport) reads in place and
					// exports nothing (proc.engineConfig).
					return 0, false
				}
				tok := uint64(len(h.regions)+1)<<8 | 0x5a // not an index anyone could guess by accident
				h.regions[tok] = region{owner: r, b: b}
				return tok, true
			}
		}
		h.engs = append(h.engs, New(r, ec, c.directFunc()))
		h.links = append(h.links, make([][]wire.Frame, n))
	}
	return h
}

// track makes the harness count r's completions from this start on (if r
// has no OnDone of its own).
func (h *harness) track(r *Request) {
	if r.OnDone == nil {
		r.OnDone = func(r *Request) { h.completions[r]++ }
		h.completions[r] = 0
	}
}

// flush "sends" the frames an engine call left in out, as the runtime's exec
// does: each frame is queued on its link (its payload copied, because a
// frame only borrows its payload; Region is kept, it is the sender's memory
// by design), and then the item's request is completed. Every frame is
// checked: it must come from the engine that emitted it, it must survive
// the wire encoding (be a frame the tcp transport could carry), and it must
// not borrow the buffer of a request completed by an earlier item: the
// owner may reuse that buffer as soon as its request completes.
func (h *harness) flush(from int, out *Outbox) {
	h.t.Helper()
	var released [][]byte
	var fetches []heldFetch
	for i := 0; i < out.Len(); i++ {
		it := out.At(i)
		f := it.F
		if it.Fetch != nil {
			ft := it.Fetch
			if f.Kind != 0 || it.Done != nil || it.Fill != nil || ft.From < 0 || ft.From >= len(h.engs) || ft.From == from {
				h.t.Fatalf("engine %d: fetch item %d from %d is also a frame or names no peer: %+v", from, i, ft.From, it)
			}
			fetches = append(fetches, heldFetch{at: from, f: ft})
			continue
		}
		if it.Fill != nil {
			// A chunk packed as it leaves: bounded, and only then.
			if f.Payload != nil || it.FillLen < 0 || it.FillOff < 0 || it.FillOff+it.FillLen > it.Fill.Len() {
				h.t.Fatalf("engine %d: %v frame %d fills [%d,+%d) of a %d-byte layout (payload %d bytes)", from, f.Kind, i, it.FillOff, it.FillLen, it.Fill.Len(), len(f.Payload))
			}
			if limit := max(h.cfgs[from].EagerLimit, h.engs[from].cfg.ChunkSize); it.FillLen > limit {
				h.t.Fatalf("engine %d: %v frame %d packs %d bytes at once (limit %d)", from, f.Kind, i, it.FillLen, limit)
			}
			f.Payload = make([]byte, it.FillLen)
			it.Fill.Pack(f.Payload, it.FillOff)
		}
		h.checkFrame(from, &f)
		for _, b := range released {
			if overlaps(f.Payload, b) {
				h.t.Fatalf("engine %d: %v frame %d borrows the buffer of a request completed by an earlier frame", from, f.Kind, i)
			}
		}
		f.Payload = bytes.Clone(f.Payload)
		h.links[f.From][f.To] = append(h.links[f.From][f.To], f)
		if it.Done != nil {
			it.Done.Complete(Status{})
			released = append(released, it.Done.Buf)
		}
	}
	out.Reset()
	h.fetches = append(h.fetches, fetches...)
	for !h.holdFetches && len(h.fetches) > 0 {
		h.runFetch(0, false)
	}
}

// runFetch runs the i-th held read as the executor does: it copies the
// region the token names (failing if the token is not one the sender
// exported, or fail is set), then reports to the engine with Fetched.
func (h *harness) runFetch(i int, fail bool) error {
	h.t.Helper()
	hf := h.fetches[i]
	h.fetches = append(h.fetches[:i:i], h.fetches[i+1:]...)
	f := hf.f
	var err error
	reg, ok := h.regions[f.Token]
	switch {
	case fail:
		err = fmt.Errorf("read refused")
	case !ok || reg.owner != f.From:
		err = fmt.Errorf("token %#x is not a region of rank %d", f.Token, f.From)
	case len(f.Dst) > len(reg.b):
		err = fmt.Errorf("read of %d bytes from a %d-byte region", len(f.Dst), len(reg.b))
	default:
		copy(f.Dst, reg.b)
	}
	h.trace = append(h.trace, fmt.Sprintf("%d<-%d fetch", hf.at, f.From))
	var out Outbox
	h.engs[hf.at].Fetched(f, err, &out)
	h.flush(hf.at, &out)
	return err
}

// overlaps reports whether a and b share memory.
func overlaps(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	a0, b0 := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
	return a0 < b0+uintptr(len(b)) && b0 < a0+uintptr(len(a))
}

func (h *harness) checkFrame(from int, f *wire.Frame) {
	h.t.Helper()
	if f.From != from || f.To < 0 || f.To >= len(h.engs) {
		h.t.Fatalf("engine %d emitted %v frame from %d to %d", from, f.Kind, f.From, f.To)
	}
	var b [wire.HeaderSize]byte
	f.Header.Marshal(b[:], len(f.Payload))
	got, n, err := wire.Unmarshal(b[:])
	if err != nil || got != f.Header || n != len(f.Payload) {
		h.t.Fatalf("engine %d emitted a frame the wire cannot carry: %+v with %d bytes: %v", from, f.Header, len(f.Payload), err)
	}
	if f.Region != nil && (f.Kind != wire.RTS || !h.engs[from].direct(f.To)) {
		h.t.Fatalf("engine %d emitted a Region in a %v frame to %d", from, f.Kind, f.To)
	}
	if f.Source != nil && (f.Kind != wire.RTS || !h.engs[from].direct(f.To) || f.Region != nil) {
		h.t.Fatalf("engine %d emitted a Source in a %v frame to %d", from, f.Kind, f.To)
	}
	if f.Flags&wire.FlagToken != 0 {
		reg, ok := h.regions[f.Token]
		if f.Kind != wire.RTS || !h.cfgs[from].Export || !ok || reg.owner != from || int64(len(reg.b)) != f.Size || f.Region != nil || f.Source != nil {
			h.t.Fatalf("engine %d emitted token %#x in a %v frame to %d (size %d)", from, f.Token, f.Kind, f.To, f.Size)
		}
	}
}

// send starts r on rank from.
func (h *harness) send(from int, r *Request) {
	h.t.Helper()
	h.track(r)
	var out Outbox
	h.engs[from].Send(r, &out)
	h.flush(from, &out)
}

// recv posts r on rank at: every other receive through TryPostRecv
// first, as the root package's non-blocking receives do, so that every
// test and the fuzzer run both.
func (h *harness) recv(at int, r *Request) {
	h.t.Helper()
	h.track(r)
	h.recvs++
	if h.recvs%2 == 0 && h.engs[at].TryPostRecv(r) {
		return
	}
	var out Outbox
	h.engs[at].PostRecv(r, &out)
	h.flush(at, &out)
}

// mrecv receives the probed message m into r on rank at.
func (h *harness) mrecv(at int, m *Message, r *Request) {
	h.t.Helper()
	h.track(r)
	var out Outbox
	h.engs[at].MRecv(m, r, &out)
	h.flush(at, &out)
}

// cancelSend asks rank from to cancel its send r.
func (h *harness) cancelSend(from int, r *Request) bool {
	h.t.Helper()
	var out Outbox
	ok := h.engs[from].CancelSend(r, &out)
	if !ok && out.Len() != 0 {
		h.t.Fatalf("CancelSend refused but emitted %d frames", out.Len())
	}
	h.flush(from, &out)
	return ok
}

// queued returns the frames in flight on link from->to.
func (h *harness) queued(from, to int) []wire.Frame { return h.links[from][to] }

// deliver delivers the oldest frame in flight on link from->to.
func (h *harness) deliver(from, to int) error {
	h.t.Helper()
	q := h.links[from][to]
	if len(q) == 0 {
		h.t.Fatalf("nothing in flight on %d->%d", from, to)
	}
	f := q[0]
	h.links[from][to] = q[1:]
	return h.inject(&f)
}

// inject delivers f to rank f.To as if it had arrived, bypassing the queues.
func (h *harness) inject(f *wire.Frame) error {
	h.t.Helper()
	h.trace = append(h.trace, fmt.Sprintf("%d->%d %v", f.From, f.To, f.Kind))
	var out Outbox
	err := h.engs[f.To].Deliver(f, &out)
	h.flush(f.To, &out)
	return err
}

// busy returns the links with frames in flight, in a fixed order.
func (h *harness) busy() [][2]int {
	var ks [][2]int
	for a := range h.links {
		for b := range h.links[a] {
			if len(h.links[a][b]) > 0 {
				ks = append(ks, [2]int{a, b})
			}
		}
	}
	return ks
}

// drain delivers frames, lowest link first, until none are in flight. A
// delivery error fails the test.
func (h *harness) drain() {
	h.t.Helper()
	for {
		ks := h.busy()
		if len(ks) == 0 {
			return
		}
		if err := h.deliver(ks[0][0], ks[0][1]); err != nil {
			h.t.Fatalf("deliver: %v\ntrace: %s", err, h.traceString())
		}
	}
}

func (h *harness) traceString() string { return strings.Join(h.trace, ", ") }

// kinds returns the kinds of the frames delivered since trace entry from,
// e.g. "rts cts data".
func kinds(h *harness, from int) string {
	var ks []string
	for _, tr := range h.trace[from:] {
		ks = append(ks, tr[strings.LastIndexByte(tr, ' ')+1:])
	}
	return strings.Join(ks, " ")
}

// pending returns rank r's Pending counts as one array.
func (h *harness) pending(r int) [4]int {
	p, u, s, v := h.engs[r].Pending()
	return [4]int{p, u, s, v}
}

// checkClean fails the test unless every engine is idle (nothing posted,
// unexpected or in the middle of a protocol), no frame is in flight, and
// no request completed twice.
func (h *harness) checkClean(t testing.TB) {
	t.Helper()
	for r := range h.engs {
		if p := h.pending(r); p != [4]int{} {
			t.Errorf("engine %d not clean: %d posted, %d unexpected, %d sends, %d receives in flight", r, p[0], p[1], p[2], p[3])
		}
	}
	if ks := h.busy(); len(ks) != 0 {
		t.Errorf("frames still in flight on %v", ks)
	}
	h.checkOnce(t)
}

func (h *harness) checkOnce(t testing.TB) {
	t.Helper()
	for r, n := range h.completions {
		if n > 1 {
			t.Errorf("request (op %d, tag %d) completed %d times", r.Op, r.Tag, n)
		}
	}
}

// pattern returns n bytes that differ from each other and from guard.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + 3)
		if b[i] == guard {
			b[i] = 1
		}
	}
	return b
}

// guard fills the unused part of receive buffers, to catch writes past them.
const guard = 0xEE

// guarded returns a receive buffer of length n whose capacity extends 32
// bytes beyond it; everything, including the guard zone, holds guard bytes.
func guarded(n int) []byte {
	b := bytes.Repeat([]byte{guard}, n+32)
	return b[:n]
}

// checkGuarded reports whether b[:count] equals want[:count] and every byte
// from count to cap(b) is still a guard byte.
func checkGuarded(b []byte, count int, want []byte) error {
	full := b[:cap(b)]
	if !bytes.Equal(full[:count], want[:count]) {
		return fmt.Errorf("the first %d bytes differ from the message", count)
	}
	for i := count; i < len(full); i++ {
		if full[i] != guard {
			return fmt.Errorf("byte %d of a %d-byte buffer (cap %d) was written", i, len(b), cap(b))
		}
	}
	return nil
}

// TestHarnessFlush checks the harness itself: payloads are copied when a
// frame is queued, Regions are kept, and an item's request completes when
// its frame is "sent".
func TestHarnessFlush(t *testing.T) {
	h := newHarness(t, 2, engCfg{EagerLimit: 8, ChunkSize: 4})
	buf := []byte{1, 2, 3}
	r := &Request{Context: 1, Peer: 1, To: 1, Tag: 1, Buf: buf}
	h.send(0, r)
	if !r.Done() {
		t.Fatal("eager standard send not complete once its frame was sent")
	}
	buf[0] = 9
	if q := h.queued(0, 1); len(q) != 1 || q[0].Payload[0] != 1 {
		t.Fatalf("queued frame shares the sender's payload: %+v", q)
	}
	big := pattern(20)
	h2 := newHarness(t, 2, engCfg{EagerLimit: 8, ChunkSize: 4, Direct: true})
	h2.send(0, &Request{Context: 1, Peer: 1, To: 1, Tag: 1, Buf: big})
	if q := h2.queued(0, 1); len(q) != 1 || q[0].Kind != wire.RTS || &q[0].Region[0] != &big[0] {
		t.Fatal("RTS Region not passed in place")
	}
}
