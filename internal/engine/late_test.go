package engine

import (
	"errors"
	"testing"

	"github.com/mpigo/mpi/internal/wire"
)

// TestLateFrames: answers that arrive after their request was failed (the
// engine aborted, or the answering peer declared lost) are dropped and
// counted, not protocol errors: in a job going down, a peer that has not
// heard yet still answers an RTS with a CTS or Fin, and its Data keeps
// coming. The same frames from a peer that is alive, to an engine that is
// alive, stay protocol errors.
func TestLateFrames(t *testing.T) {
	boom := errors.New("job aborted")
	for _, tc := range []struct {
		name   string
		direct bool // Fin instead of CTS
		data   bool // the receive side: Data for a failed receive
		fail   func(e *Engine)
	}{
		{"cts-after-abort", false, false, func(e *Engine) { e.Abort(boom) }},
		{"fin-after-abort", true, false, func(e *Engine) { e.Abort(boom) }},
		{"data-after-abort", false, true, func(e *Engine) { e.Abort(boom) }},
		{"cts-after-failall", false, false, func(e *Engine) { e.FailAll(1, boom) }},
		{"fin-after-failall", true, false, func(e *Engine) { e.FailAll(1, boom) }},
		{"data-after-failall", false, true, func(e *Engine) { e.FailAll(1, boom) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, 2, engCfg{EagerLimit: 0, ChunkSize: 4, Direct: tc.direct})
			s := &Request{Context: 1, Peer: 1, To: 1, Tag: 3, Buf: pattern(10)}
			r := &Request{Context: 1, Peer: 0, Tag: 3, Buf: guarded(10)}
			if !tc.data {
				h.send(0, s)
				h.recv(1, r)
				if err := h.deliver(0, 1); err != nil { // RTS: CTS or Fin back
					t.Fatal(err)
				}
				tc.fail(h.engs[0])
				if !s.Done() || !errors.Is(s.Status().Err, boom) {
					t.Fatalf("send not failed: %+v", s.Status())
				}
				if err := h.deliver(1, 0); err != nil {
					t.Fatalf("late answer: %v", err)
				}
			} else {
				// Rank 1 sends to rank 0, which fails mid-stream.
				s.To, s.Peer, s.Self = 0, 0, 1
				r.Peer = 1
				h.send(1, s)
				h.recv(0, r)
				h.deliver(1, 0) // RTS: CTS back
				h.deliver(0, 1) // CTS: Data frames come
				tc.fail(h.engs[0])
				if !r.Done() || !errors.Is(r.Status().Err, boom) {
					t.Fatalf("receive not failed: %+v", r.Status())
				}
				for len(h.queued(1, 0)) > 0 {
					if err := h.deliver(1, 0); err != nil {
						t.Fatalf("late data: %v", err)
					}
				}
			}
			if h.engs[0].Dropped() == 0 {
				t.Error("no late frame counted")
			}
			h.checkOnce(t)
			// Another peer's unknown answer is still an error, unless the
			// engine is dead.
			if h.engs[0].Err() == nil {
				bad := wire.Frame{Header: wire.Header{Kind: wire.Fin, SendID: 99}, From: 0, To: 0}
				if err := h.inject(&bad); !errors.Is(err, ErrProtocol) {
					t.Errorf("Fin from a live peer for an unknown send: %v", err)
				}
			}
		})
	}
}
