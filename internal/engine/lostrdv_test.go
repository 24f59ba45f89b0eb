package engine

import (
	"errors"
	"testing"

	"github.com/mpigo/mpi/internal/wire"
)

// TestRendezvousFromLostPeer: a rendezvous message whose sender is gone
// fails the receive that matches it, whenever the match comes after the
// loss is known: its RTS waited in the unexpected queue, or it was read
// from the connection after the loss (a late frame matching an AnySource
// receive the loss did not fail). Before the fix the receive answered CTS
// (or asked for a single-copy read) to the dead rank and waited for ever:
// TestRunFTRendezvous hung one run in twenty under load, a survivor stuck
// in an Allreduce's receive from the killed rank while the others waited
// for it in Agree.
func TestRendezvousFromLostPeer(t *testing.T) {
	lose := map[string]func(e *Engine, peer int, err error){
		"FailAll": func(e *Engine, peer int, err error) { e.FailAll(peer, err) },
		"FailPeer": func(e *Engine, peer int, err error) {
			e.FailPeer(peer, err, err, func(uint32) bool { return false })
		},
	}
	for _, how := range []string{"FailAll", "FailPeer"} {
		for _, tc := range []struct {
			name   string
			export bool // the sender exports its buffer: a read, not a CTS
			late   bool // the RTS arrives after the loss
			any    bool // the receive is AnySource
		}{
			{name: "unexpected"},
			{name: "unexpected-any", any: true},
			{name: "unexpected-export", export: true},
			{name: "late-any", late: true, any: true},
			{name: "late-any-export", late: true, any: true, export: true},
		} {
			if tc.late && how == "FailAll" {
				continue // FailAll fails every posted AnySource receive
			}
			t.Run(how+"/"+tc.name, func(t *testing.T) {
				h := newHarness(t, 2, engCfg{EagerLimit: 8, ChunkSize: 64, Export: tc.export}, engCfg{EagerLimit: 8, ChunkSize: 64})
				h.holdFetches = true
				r := &Request{Context: 1, Peer: 0, FromWorld: 1, Tag: 3, Buf: guarded(300)}
				if tc.any {
					r = &Request{Context: 1, Peer: AnySource, Tag: AnyTag, Buf: guarded(300)}
				}
				h.send(0, &Request{Context: 1, Peer: 1, To: 1, Tag: 3, Buf: pattern(300)})
				q := h.queued(0, 1)
				if len(q) != 1 || q[0].Kind != wire.RTS {
					t.Fatalf("in flight: %+v, want one RTS", q)
				}
				gone := errors.New("rank 0 died")
				if tc.late {
					h.recv(1, r)
					lose[how](h.engs[1], 0, gone)
					if r.Done() {
						t.Fatalf("the loss failed an AnySource receive of another communicator: %+v", r.Status())
					}
					if err := h.deliver(0, 1); err != nil {
						t.Fatal(err)
					}
				} else {
					if err := h.deliver(0, 1); err != nil {
						t.Fatal(err)
					}
					lose[how](h.engs[1], 0, gone)
					h.recv(1, r)
				}
				if !r.Done() || !errors.Is(r.Status().Err, gone) {
					t.Fatalf("receive matched to the lost sender's RTS: done %v, status %+v; want the loss", r.Done(), r.Status())
				}
				if len(h.fetches) != 0 || len(h.queued(1, 0)) != 0 {
					t.Fatalf("answered a lost sender: %d reads, frames %+v", len(h.fetches), h.queued(1, 0))
				}
				if p := h.pending(1); p != [4]int{} {
					t.Fatalf("rank 1 keeps %v (posted, unexpected, sends, receives)", p)
				}
				h.checkOnce(t)
			})
		}
	}
}
