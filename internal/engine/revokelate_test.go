package engine

import (
	"errors"
	"testing"

	"github.com/mpigo/mpi/internal/wire"
)

// Late frames after Revoke (issue 40): a communicator revoked because a
// third rank died fails the rendezvous between two live ranks on one side
// first; the other side, not revoked yet, still answers or streams. Its
// frames must be dropped and counted, not taken for protocol errors that
// abort a healthy rank, also once a new communicator got the context
// again (Shrink, Unrevoke), and they must never land in a newer request.

// revokeCase is one late answer: which frame comes late, and whether the
// context is given to a new communicator (Unrevoke) before it arrives.
type revokeCase struct {
	name  string
	kind  wire.Kind // CTS, Fin or Ack for a send of rank 0; Data for a receive of rank 0
	reuse bool
}

func revokeCases() []revokeCase {
	var cs []revokeCase
	for _, k := range []wire.Kind{wire.CTS, wire.Fin, wire.Ack, wire.Data} {
		for _, reuse := range []bool{false, true} {
			name := k.String() + "-after-revoke"
			if reuse {
				name += "-and-reuse"
			}
			cs = append(cs, revokeCase{name, k, reuse})
		}
	}
	return cs
}

func TestLateFramesAfterRevoke(t *testing.T) {
	const ctx = 4
	revoked := errors.New("communicator revoked")
	for _, tc := range revokeCases() {
		t.Run(tc.name, func(t *testing.T) {
			cfg := engCfg{EagerLimit: 0, ChunkSize: 4}
			switch tc.kind {
			case wire.Fin:
				cfg.Direct = true
			case wire.Ack:
				cfg.EagerLimit = 64
			}
			h := newHarness(t, 2, cfg)
			var mine *Request // rank 0's request, failed by Revoke
			var buf []byte    // its buffer, which nothing may touch after
			if tc.kind != wire.Data {
				mine = &Request{Context: ctx, Peer: 1, To: 1, Tag: 3, Buf: pattern(10)}
				if tc.kind == wire.Ack {
					mine.Mode = Synchronous
				}
				h.send(0, mine)
				h.recv(1, &Request{Context: ctx, Peer: 0, Tag: 3, Buf: guarded(10)})
				if err := h.deliver(0, 1); err != nil { // RTS or eager: the answer comes back
					t.Fatal(err)
				}
			} else {
				buf = guarded(10)
				mine = &Request{Context: ctx, Peer: 1, Tag: 3, Buf: buf}
				h.recv(0, mine)
				h.send(1, &Request{Context: ctx, Peer: 0, Self: 1, To: 0, Tag: 3, Buf: pattern(10)})
				h.deliver(1, 0) // RTS: CTS back
				h.deliver(0, 1) // CTS: Data frames come
			}
			late := h.queued(1, 0)
			if len(late) == 0 || late[0].Kind != tc.kind {
				t.Fatalf("in flight to rank 0: %v, want %v", late, tc.kind)
			}
			n := len(late)
			h.engs[0].Revoke(revoked, ctx, ctx+1)
			if !mine.Done() || !errors.Is(mine.Status().Err, revoked) {
				t.Fatalf("request not failed by Revoke: %+v", mine.Status())
			}
			var fresh *Request // a request of the new communicator on the same context
			if tc.reuse {
				h.engs[0].Unrevoke(ctx, ctx+1)
				if tc.kind == wire.Data {
					fresh = &Request{Context: ctx, Peer: 1, Tag: 3, Buf: guarded(10)}
					h.recv(0, fresh)
				} else {
					fresh = &Request{Context: ctx, Peer: 1, To: 1, Tag: 3, Buf: pattern(10), Mode: mine.Mode}
					h.send(0, fresh)
				}
			}
			out0 := len(h.queued(0, 1))
			for len(h.queued(1, 0)) > 0 {
				if err := h.deliver(1, 0); err != nil {
					t.Fatalf("late %v from a live peer: %v", tc.kind, err)
				}
			}
			if got := h.engs[0].Dropped(); got != n {
				t.Errorf("Dropped %d, want the %d late frames", got, n)
			}
			if buf != nil {
				if err := checkGuarded(buf, 0, nil); err != nil {
					t.Errorf("late data written into the failed receive's buffer: %v", err)
				}
			}
			if fresh != nil {
				if fresh.Done() || len(h.queued(0, 1)) != out0 {
					t.Errorf("a late frame reached the new request: done %v, %d frames sent after", fresh.Done(), len(h.queued(0, 1))-out0)
				}
				if tc.kind == wire.Data {
					if err := checkGuarded(fresh.Buf, 0, nil); err != nil {
						t.Errorf("late data written into a new receive: %v", err)
					}
				}
				// The abandoned request got all its answers and is
				// forgotten: on a live context, the same frame again is
				// a protocol error (the rule is precise).
				again := late[len(late)-1]
				if err := h.inject(&again); !errors.Is(err, ErrProtocol) {
					t.Errorf("a repeated %v for a request whose answers all came: %v, want a protocol error", tc.kind, err)
				}
			}
			h.checkOnce(t)
		})
	}
}

// TestLateFrameOtherPeer: an abandoned id is forgiven only from the peer
// it was talking to; once its context is live again, another peer naming
// it is a protocol error, as from a healthy engine.
func TestLateFrameOtherPeer(t *testing.T) {
	h := newHarness(t, 3, engCfg{EagerLimit: 0, ChunkSize: 4})
	s := &Request{Context: 4, Peer: 1, To: 1, Tag: 3, Buf: pattern(10)}
	h.send(0, s)
	h.engs[0].Revoke(errors.New("revoked"), 4)
	h.engs[0].Unrevoke(4)
	bad := wire.Frame{Header: wire.Header{Kind: wire.CTS, Context: 4, SendID: h.queued(0, 1)[0].SendID, RecvID: 1, Size: 10}, From: 2, To: 0}
	if err := h.inject(&bad); !errors.Is(err, ErrProtocol) {
		t.Errorf("CTS from rank 2 for a send abandoned towards rank 1: %v, want a protocol error", err)
	}
	// Still recognised from rank 1.
	bad.From = 1
	if err := h.inject(&bad); err != nil {
		t.Errorf("CTS from rank 1 for its abandoned send: %v", err)
	}
}

// TestRevokeDropsUnexpected: messages waiting unreceived on a revoked
// context are dropped, so that a receive of a communicator that gets the
// context again (Unrevoke) does not take them: it would answer an RTS
// whose sender gave up and wait for ever for its Data.
func TestRevokeDropsUnexpected(t *testing.T) {
	for _, eager := range []bool{false, true} {
		h := newHarness(t, 2, engCfg{EagerLimit: 8, ChunkSize: 4})
		n := 10
		if eager {
			n = 4
		}
		h.send(0, &Request{Context: 4, Peer: 1, To: 1, Tag: 3, Buf: pattern(n)})
		h.send(0, &Request{Context: 6, Peer: 1, To: 1, Tag: 3, Buf: pattern(n)}) // another communicator's
		h.deliver(0, 1)
		h.deliver(0, 1)
		h.engs[1].Revoke(errors.New("revoked"), 4, 5)
		h.engs[1].Unrevoke(4, 5)
		r := &Request{Context: 4, Peer: 0, Tag: 3, Buf: guarded(10)}
		h.recv(1, r)
		if r.Done() || len(h.queued(1, 0)) != 0 {
			t.Errorf("eager %v: a new receive took a message of the revoked communicator: done %v, answered %v", eager, r.Done(), h.queued(1, 0))
		}
		other := &Request{Context: 6, Peer: 0, Tag: 3, Buf: guarded(10)}
		h.recv(1, other)
		h.drain()
		if !other.Done() || other.Status().Err != nil {
			t.Errorf("eager %v: the other communicator's message was lost: %v %+v", eager, other.Done(), other.Status())
		}
	}
}

// TestRevokeDuringFetch: a single-copy read running when its context is
// revoked fails the receive when it reports back, and never falls back to
// a CTS: the receive would wait on the revoked context for Data that its
// sender, revoked too, never sends.
func TestRevokeDuringFetch(t *testing.T) {
	for _, fail := range []bool{false, true} {
		h, _, r, _ := fetchPair(t, true)
		revoked := errors.New("revoked")
		h.engs[1].Revoke(revoked, 1)
		if r.Done() {
			t.Fatal("Revoke completed a receive whose read is running")
		}
		h.runFetch(0, fail)
		if !r.Done() || !errors.Is(r.Status().Err, revoked) || h.busy() != nil {
			t.Fatalf("read failed %v: receive done %v, status %+v, frames %v", fail, r.Done(), r.Status(), h.busy())
		}
		if p := h.pending(1); p != [4]int{} {
			t.Errorf("read failed %v: rank 1 not clean: %v", fail, p)
		}
	}
}

// TestMRecvRevoked: a message probed before its context was revoked is
// not received after: its RTS would start a rendezvous no Revoke ends.
func TestMRecvRevoked(t *testing.T) {
	h := newHarness(t, 2, engCfg{EagerLimit: 0, ChunkSize: 4})
	h.send(0, &Request{Context: 4, Peer: 1, To: 1, Tag: 3, Buf: pattern(10)})
	h.deliver(0, 1)
	m, ok := h.engs[1].Improbe(4, 0, 3, nil)
	if !ok {
		t.Fatal("nothing probed")
	}
	revoked := errors.New("revoked")
	h.engs[1].Revoke(revoked, 4)
	r := &Request{Context: 4, Peer: 0, Tag: 3, Buf: guarded(10)}
	h.mrecv(1, m, r)
	if !r.Done() || !errors.Is(r.Status().Err, revoked) || len(h.queued(1, 0)) != 0 {
		t.Fatalf("MRecv on a revoked context: done %v, %+v, answered %v", r.Done(), r.Status(), h.queued(1, 0))
	}
	if p := h.pending(1); p != [4]int{} {
		t.Errorf("rank 1 not clean: %v", p)
	}
}

// TestAbandonedBounded: the engine remembers at most maxAbandoned
// abandoned requests; an answer for one it forgot is still dropped while
// its context stays revoked.
func TestAbandonedBounded(t *testing.T) {
	h := newHarness(t, 2, engCfg{EagerLimit: 0, ChunkSize: 4})
	e := h.engs[0]
	var first uint64
	for i := range maxAbandoned + 10 {
		var out Outbox
		s := &Request{Context: 4, Peer: 1, To: 1, Tag: 3, Buf: pattern(10)}
		e.Unrevoke(4)
		e.Send(s, &out)
		if i == 0 {
			first = out.At(0).F.SendID
		}
		e.Revoke(errors.New("revoked"), 4)
	}
	if n := len(e.abandoned); n > maxAbandoned || len(e.abandonRing) > maxAbandoned {
		t.Fatalf("%d abandoned requests remembered (ring %d), want at most %d", n, len(e.abandonRing), maxAbandoned)
	}
	if _, ok := e.abandoned[first]; ok {
		t.Fatal("the oldest abandoned request is still remembered")
	}
	cts := wire.Frame{Header: wire.Header{Kind: wire.CTS, Context: 4, SendID: first, RecvID: 1, Size: 10}, From: 1, To: 0}
	if err := h.inject(&cts); err != nil {
		t.Errorf("CTS for a forgotten abandoned send on a revoked context: %v", err)
	}
}

// TestRevokeDuringPlacement: a receive revoked (or whose peer is lost)
// while a transport is reading a Data payload straight into its buffer
// (DataDest) completes only once that frame is delivered, or once the
// peer's connection ended: its owner must not get the buffer back while
// a reader still writes into it (the data race TestFTRendezvousKill/tcp
// found under the race detector).
func TestRevokeDuringPlacement(t *testing.T) {
	for _, how := range []string{"delivered", "peer-lost", "abort"} {
		t.Run(how, func(t *testing.T) {
			h := newHarness(t, 2, engCfg{EagerLimit: 0, ChunkSize: 4})
			r := &Request{Context: 4, Peer: 1, Tag: 3, Buf: guarded(10)}
			h.recv(0, r)
			h.send(1, &Request{Context: 4, Peer: 0, Self: 1, To: 0, Tag: 3, Buf: pattern(10)})
			h.deliver(1, 0) // RTS: CTS back
			h.deliver(0, 1) // CTS: Data frames come
			data := h.queued(1, 0)
			if len(data) == 0 || data[0].Kind != wire.Data {
				t.Fatalf("in flight to rank 0: %v, want Data", data)
			}
			first := data[0]
			dst := h.engs[0].DataDest(&first.Header, 1, len(first.Payload))
			if len(dst) != len(first.Payload) {
				t.Fatalf("DataDest gave %d bytes, want %d", len(dst), len(first.Payload))
			}
			revoked := errors.New("revoked")
			h.engs[0].Revoke(revoked, 4)
			if r.Done() {
				t.Fatal("Revoke completed a receive whose Data is being read into its buffer")
			}
			var want error
			switch how {
			case "delivered":
				copy(dst, first.Payload) // the transport's read ends
				first.Payload = dst
				h.links[1][0] = h.links[1][0][1:]
				if err := h.inject(&first); err != nil {
					t.Fatal(err)
				}
				want = revoked
			case "peer-lost":
				want = errors.New("rank 1 died")
				h.engs[0].FailAll(1, want)
			case "abort":
				want = errors.New("job aborted")
				h.engs[0].Abort(want)
			}
			if !r.Done() || !errors.Is(r.Status().Err, want) {
				t.Fatalf("receive done %v, status %+v, want failed with %v", r.Done(), r.Status(), want)
			}
			if len(h.engs[0].draining) != 0 {
				t.Errorf("%d receives still draining", len(h.engs[0].draining))
			}
		})
	}
}
