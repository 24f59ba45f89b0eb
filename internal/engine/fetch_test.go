package engine

import (
	"bytes"
	"errors"
	"testing"

	"github.com/mpigo/mpi/internal/wire"
)

// The single-copy road between processes: rank 0 exports its buffer as a
// token (Config.Export), the RTS carries it, and rank 1's engine asks its
// executor to read the message (Item.Fetch) instead of copying under its
// lock; Fetched settles the receive.

// fetchPair returns a harness whose rank 0 exports and whose reads are
// held, and a 300-byte send from 0 to 1 started on it with its RTS
// delivered to a receive posted first (posted) or after (unexpected).
func fetchPair(t *testing.T, posted bool) (h *harness, s, r *Request, src []byte) {
	t.Helper()
	h = newHarness(t, 2, engCfg{EagerLimit: 8, ChunkSize: 64, Export: true}, engCfg{EagerLimit: 8, ChunkSize: 64})
	h.holdFetches = true
	src = pattern(300)
	s = &Request{Context: 1, Peer: 1, To: 1, Tag: 3, Buf: src}
	r = &Request{Context: 1, Peer: 0, Tag: 3, Buf: guarded(300)}
	if posted {
		h.recv(1, r)
	}
	h.send(0, s)
	q := h.queued(0, 1)
	if len(q) != 1 || q[0].Kind != wire.RTS || q[0].Flags&wire.FlagToken == 0 || q[0].Region != nil {
		t.Fatalf("send of an exporting rank queued %+v, want one RTS with a token", q)
	}
	if err := h.deliver(0, 1); err != nil {
		t.Fatal(err)
	}
	if !posted {
		h.recv(1, r)
	}
	if len(h.fetches) != 1 || r.Done() || h.busy() != nil {
		t.Fatalf("matched RTS: %d reads asked, receive done %v, frames in flight %v; want one read and nothing else", len(h.fetches), r.Done(), h.busy())
	}
	if f := h.fetches[0].f; f.From != 0 || len(f.Dst) != 300 || &f.Dst[0] != &r.Buf[0] {
		t.Fatalf("read asked from %d into %d bytes (in the receive buffer: %v)", f.From, len(f.Dst), &f.Dst[0] == &r.Buf[0])
	}
	if p := h.pending(1); p != [4]int{0, 0, 0, 1} {
		t.Fatalf("rank 1 during the read: pending %v, want one receive in progress", p)
	}
	return h, s, r, src
}

// TestFetchDone: a read that succeeds completes the receive and answers
// Fin, which completes the send; no Data crosses.
func TestFetchDone(t *testing.T) {
	for _, posted := range []bool{true, false} {
		h, s, r, src := fetchPair(t, posted)
		mark := len(h.trace)
		if err := h.runFetch(0, false); err != nil {
			t.Fatal(err)
		}
		if !r.Done() || r.Status().Err != nil || r.Status().Count != 300 {
			t.Fatalf("receive after the read: done %v, status %+v", r.Done(), r.Status())
		}
		if err := checkGuarded(r.Buf, 300, src); err != nil {
			t.Fatal(err)
		}
		h.drain()
		if got := kinds(h, mark); got != "fetch fin" {
			t.Errorf("after the read: %q, want %q", got, "fetch fin")
		}
		if !s.Done() || s.Status().Err != nil {
			t.Errorf("send not complete after Fin: %v %+v", s.Done(), s.Status())
		}
		h.checkClean(t)
	}
}

// TestFetchFails: a read that fails falls back to CTS and Data frames,
// and the message still arrives whole.
func TestFetchFails(t *testing.T) {
	for _, posted := range []bool{true, false} {
		h, s, r, src := fetchPair(t, posted)
		mark := len(h.trace)
		if err := h.runFetch(0, true); err == nil {
			t.Fatal("read did not fail")
		}
		if r.Done() {
			t.Fatal("receive complete though its read failed")
		}
		h.drain()
		if got := kinds(h, mark); got != "fetch cts data data data data data" {
			t.Errorf("after the failed read: %q", got)
		}
		if !r.Done() || !s.Done() || r.Status().Err != nil {
			t.Fatalf("fallback: receive %v %+v, send %v", r.Done(), r.Status(), s.Done())
		}
		if err := checkGuarded(r.Buf, 300, src); err != nil {
			t.Fatal(err)
		}
		h.checkClean(t)
	}
}

// TestFetchAbortRace: an Abort while the executor reads does not complete
// the receive (its buffer is being written); it fails when the read
// reports back, whatever the read's outcome, and nothing more is sent.
func TestFetchAbortRace(t *testing.T) {
	for _, fail := range []bool{false, true} {
		h, _, r, _ := fetchPair(t, true)
		abort := errors.New("job aborted")
		h.engs[1].Abort(abort)
		if r.Done() {
			t.Fatal("Abort completed a receive whose read is running")
		}
		h.runFetch(0, fail)
		if !r.Done() || !errors.Is(r.Status().Err, abort) {
			t.Fatalf("receive after the read: done %v, status %+v; want the abort", r.Done(), r.Status())
		}
		if ks := h.busy(); ks != nil {
			t.Fatalf("aborted engine sent frames: %v", ks)
		}
		if p := h.pending(1); p != [4]int{} {
			t.Fatalf("rank 1 not clean: %v", p)
		}
		h.checkOnce(t)
	}
}

// TestFetchPeerLost: losing the sender while the read runs (FailAll, or
// FailPeer in a job that survives failures) fails the receive when the
// read reports back, with the failure named first; a read that failed
// because the sender is gone must not fall back to CTS and wait for Data
// that will never come.
func TestFetchPeerLost(t *testing.T) {
	for _, tc := range []struct {
		name string
		lose func(e *Engine, peer int, err error)
	}{
		{"FailAll", func(e *Engine, peer int, err error) { e.FailAll(peer, err) }},
		{"FailPeer", func(e *Engine, peer int, err error) {
			e.FailPeer(peer, err, err, func(uint32) bool { return true })
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _, r, _ := fetchPair(t, false)
			lost := errors.New("rank 0 died")
			tc.lose(h.engs[1], 0, lost)
			tc.lose(h.engs[1], 0, errors.New("again"))
			if r.Done() {
				t.Fatalf("%s completed a receive whose read is running", tc.name)
			}
			h.runFetch(0, true)
			if !r.Done() || !errors.Is(r.Status().Err, lost) || h.busy() != nil {
				t.Fatalf("receive after the read: done %v, status %+v, frames %v", r.Done(), r.Status(), h.busy())
			}
			h.checkOnce(t)
		})
	}
}

// TestFetchCancelRace: a receive whose read runs has matched; CancelRecv
// refuses it, and the read completes it normally.
func TestFetchCancelRace(t *testing.T) {
	h, s, r, src := fetchPair(t, true)
	if h.engs[1].CancelRecv(r) {
		t.Fatal("CancelRecv withdrew a matched receive while its read ran")
	}
	h.runFetch(0, false)
	h.drain()
	if !r.Done() || r.Status().Cancelled || !s.Done() || !bytes.Equal(r.Buf, src) {
		t.Fatalf("receive %v %+v, send %v", r.Done(), r.Status(), s.Done())
	}
	h.checkClean(t)
}

// TestFetchReportedTwice: a second report of the same read changes
// nothing (the executor reports once; this guards the engine anyway).
func TestFetchReportedTwice(t *testing.T) {
	h, _, r, _ := fetchPair(t, true)
	f := h.fetches[0].f
	h.runFetch(0, false)
	var out Outbox
	h.engs[1].Fetched(f, errors.New("late"), &out)
	if out.Len() != 0 || !r.Done() || r.Status().Err != nil {
		t.Fatalf("second report: %d frames, receive %+v", out.Len(), r.Status())
	}
	h.drain()
	h.checkClean(t)
}

// TestFetchLayoutStreams: a receive into a derived layout does not read
// in place: it answers CTS, and the token is ignored.
func TestFetchLayoutStreams(t *testing.T) {
	h := newHarness(t, 2, engCfg{EagerLimit: 8, ChunkSize: 64, Export: true})
	src := pattern(100)
	lay := &stridedLayout{buf: make([]byte, 200), n: 100}
	r := &Request{Context: 1, Peer: 0, Tag: 3, Layout: lay}
	h.recv(1, r)
	h.send(0, &Request{Context: 1, Peer: 1, To: 1, Tag: 3, Buf: src})
	h.drain()
	if len(h.fetches) != 0 || !r.Done() {
		t.Fatalf("layout receive: %d reads, done %v", len(h.fetches), r.Done())
	}
	if got := kinds(h, 0); got != "rts cts data data" {
		t.Errorf("frames: %q, want %q", got, "rts cts data data")
	}
	for i := 0; i < 100; i++ {
		if lay.buf[2*i] != src[i] {
			t.Fatalf("byte %d: %d, want %d", i, lay.buf[2*i], src[i])
		}
	}
	h.checkClean(t)
}

// stridedLayout stores message byte i at buf[2i].
type stridedLayout struct {
	buf []byte
	n   int
}

func (l *stridedLayout) Len() int { return l.n }
func (l *stridedLayout) Pack(dst []byte, off int) {
	for i := range dst {
		dst[i] = l.buf[2*(off+i)]
	}
}
func (l *stridedLayout) Unpack(src []byte, off int) {
	for i, b := range src {
		l.buf[2*(off+i)] = b
	}
}
