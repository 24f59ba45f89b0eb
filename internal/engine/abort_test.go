package engine

import (
	"errors"
	"testing"

	"github.com/mpigo/mpi/internal/wire"
)

// TestAbort: every pending operation of an aborted engine fails with the
// abort error — posted receives, sends waiting for CTS, Fin or Ack,
// receives waiting for rendezvous Data, sends waiting for a CancelAck — and
// every later Send and PostRecv completes at once with it.
func TestAbort(t *testing.T) {
	h := newHarness(t, 2, engCfg{EagerLimit: 8, ChunkSize: 4})
	h2 := newHarness(t, 2, engCfg{EagerLimit: 8, ChunkSize: 4, Direct: true})
	boom := errors.New("boom")

	posted := &Request{Context: 1, Peer: 0, Tag: 1, Buf: guarded(4)}
	h.recv(1, posted)
	anySrc := &Request{Context: 1, Peer: AnySource, Tag: 7, Buf: guarded(4)}
	h.recv(1, anySrc)
	waitCTS := &Request{Context: 1, Peer: 1, To: 1, Tag: 2, Buf: pattern(100)}
	h.send(0, waitCTS) // rendezvous, never matched
	h.drain()
	waitAck := &Request{Mode: Synchronous, Context: 1, Peer: 1, To: 1, Tag: 3, Buf: pattern(4)}
	h.send(0, waitAck) // eager sync, never matched
	h.drain()
	waitCancel := &Request{Context: 1, Peer: 1, To: 1, Tag: 4, Buf: pattern(100)}
	h.send(0, waitCancel)
	h.cancelSend(0, waitCancel) // CancelReq still in flight
	streaming := &Request{Context: 1, Peer: 0, Tag: 2, Buf: guarded(100)}
	h.recv(1, streaming) // matches the RTS: CTS in flight, Data never sent
	waitFin := &Request{Context: 1, Peer: 1, To: 1, Tag: 2, Buf: pattern(100)}
	h2.send(0, waitFin) // direct rendezvous, never matched

	if p := h.pending(1); p != [4]int{2, 1, 0, 1} {
		t.Fatalf("receiver pending before Abort: %v", p)
	}
	if p := h.pending(0); p != [4]int{0, 0, 3, 0} {
		t.Fatalf("sender pending before Abort: %v", p)
	}
	for _, e := range []*Engine{h.engs[0], h.engs[1], h2.engs[0]} {
		e.Abort(boom)
		e.Abort(errors.New("second abort")) // the first error stays
	}
	for name, r := range map[string]*Request{"posted": posted, "any-source": anySrc, "wait-cts": waitCTS, "wait-ack": waitAck,
		"wait-cancel-ack": waitCancel, "streaming": streaming, "wait-fin": waitFin} {
		if !r.Done() || !errors.Is(r.Status().Err, boom) {
			t.Errorf("%s: done %v, %+v", name, r.Done(), r.Status())
		}
	}
	if checkGuarded(posted.Buf, 0, nil) != nil || checkGuarded(streaming.Buf, 0, nil) != nil {
		t.Error("a failed receive's buffer was written")
	}
	for r := range 2 {
		if p := h.pending(r); p[0]+p[2]+p[3] != 0 {
			t.Errorf("engine %d still has operations in flight after Abort: %v", r, p)
		}
	}
	if !errors.Is(h.engs[1].Err(), boom) || h2.engs[1].Err() != nil {
		t.Error("Err() does not report the abort")
	}

	// Later operations fail at once, whatever their protocol.
	for _, s := range []*Request{
		{Context: 1, Peer: 1, To: 1, Tag: 1, Buf: pattern(4)},
		{Mode: Synchronous, Context: 1, Peer: 1, To: 1, Tag: 1, Buf: pattern(4)},
		{Context: 1, Peer: 1, To: 1, Tag: 1, Buf: pattern(100)},
	} {
		var out Outbox
		h.engs[0].Send(s, &out)
		if out.Len() != 0 || !s.Done() || !errors.Is(s.Status().Err, boom) {
			t.Errorf("Send after Abort: %d frames, done %v %+v", out.Len(), s.Done(), s.Status())
		}
	}
	late := &Request{Context: 1, Peer: 0, Tag: 1, Buf: guarded(4)}
	var out Outbox
	h.engs[1].PostRecv(late, &out)
	if out.Len() != 0 || !late.Done() || !errors.Is(late.Status().Err, boom) {
		t.Errorf("PostRecv after Abort: done %v %+v", late.Done(), late.Status())
	}
	if _, ok := h.engs[0].EagerFrame(Standard, 1, 0, 1, 1, []byte{1}, 0); ok {
		t.Error("EagerFrame after Abort")
	}
	h.checkOnce(t)
}

// TestAbortMRecv: a message taken by Improbe before the abort and received
// with MRecv after it must fail like every other operation after Abort.
// For a streamed rendezvous the engine instead answers CTS to the aborted
// peer and registers the receive, which then never completes.
func TestAbortMRecv(t *testing.T) {
	for _, p := range protos {
		t.Run(p.name, func(t *testing.T) {
			h := newHarness(t, 2, p.cfg())
			h.send(0, &Request{Mode: p.mode, Context: 1, Peer: 1, To: 1, Tag: 1, Buf: pattern(p.size())})
			h.drain()
			m, ok := h.engs[1].Improbe(1, AnySource, AnyTag, nil)
			if !ok || m == nil {
				t.Fatal("Improbe found nothing")
			}
			boom := errors.New("boom")
			h.engs[0].Abort(boom)
			h.engs[1].Abort(boom)
			r := &Request{Buf: guarded(p.size())}
			var out Outbox
			h.engs[1].MRecv(m, r, &out)
			if !r.Done() || !errors.Is(r.Status().Err, boom) {
				t.Errorf("MRecv after Abort: done %v, %+v (%d frames to send; pending %v)", r.Done(), r.Status(), out.Len(), h.pending(1))
			}
		})
	}
}

// TestAbortAfterBadCTS: a CTS that asks for more bytes than the send has is
// a protocol error (the runtime then aborts the job). The send must still
// be failed by that Abort, or its owner waits forever: Deliver must not
// forget the send before it has validated the CTS.
func TestAbortAfterBadCTS(t *testing.T) {
	h := newHarness(t, 2, engCfg{EagerLimit: 8, ChunkSize: 4})
	s := &Request{Context: 1, Peer: 1, To: 1, Tag: 1, Buf: pattern(20)}
	h.send(0, s)
	id := h.queued(0, 1)[0].SendID
	bad := wire.Frame{Header: wire.Header{Kind: wire.CTS, Context: 1, SendID: id, RecvID: 1, Size: 21}, From: 1, To: 0}
	if err := h.inject(&bad); !errors.Is(err, ErrProtocol) {
		t.Fatalf("oversized CTS: %v", err)
	}
	boom := errors.New("job aborted after a protocol error")
	h.engs[0].Abort(boom)
	if !s.Done() || !errors.Is(s.Status().Err, boom) {
		t.Errorf("send after a bad CTS and Abort: done %v %+v (sender pending %v)", s.Done(), s.Status(), h.pending(0))
	}
}

// TestFailAll: a dead peer fails what depends on it and nothing else: sends
// to it waiting for an answer, rendezvous receives streaming from it,
// receives posted for it, and AnySource receives (which might have been
// waiting for it, as in MPI's fault-tolerance proposal); receives from and
// sends to other ranks stay.
func TestFailAll(t *testing.T) {
	h := newHarness(t, 3, engCfg{EagerLimit: 8, ChunkSize: 4})
	fromDead := &Request{Context: 1, Peer: 1, FromWorld: 2, Tag: 1, Buf: guarded(4)}
	fromLive := &Request{Context: 1, Peer: 0, FromWorld: 1, Tag: 1, Buf: guarded(4)}
	anySrc := &Request{Context: 1, Peer: AnySource, Tag: 1, Buf: guarded(4)}
	for _, r := range []*Request{fromDead, fromLive, anySrc} {
		h.recv(2, r)
	}
	toDead := &Request{Context: 1, Peer: 1, To: 1, Tag: 1, Buf: pattern(100)} // rendezvous, waiting
	h.send(2, toDead)
	syncToDead := &Request{Mode: Synchronous, Context: 1, Peer: 1, To: 1, Tag: 1, Buf: pattern(4)}
	h.send(2, syncToDead)
	toLive := &Request{Context: 1, Peer: 0, To: 0, Tag: 1, Buf: pattern(100)}
	h.send(2, toLive)
	streamFromDead := &Request{Context: 1, Peer: 1, Tag: 9, Buf: guarded(50)}
	h.recv(2, streamFromDead)
	h.send(1, &Request{Context: 1, Peer: 2, Self: 1, To: 2, Tag: 9, Buf: pattern(50)})
	h.deliver(1, 2) // RTS matched: CTS in flight, rank 2 waits for Data
	if p := h.pending(2); p != [4]int{3, 0, 3, 1} {
		t.Fatalf("pending before FailAll: %v", p)
	}
	boom := errors.New("rank 1 died")
	h.engs[2].FailAll(1, boom)
	for name, r := range map[string]*Request{"from-dead": fromDead, "any-source": anySrc, "to-dead": toDead, "sync-to-dead": syncToDead, "stream-from-dead": streamFromDead} {
		if !r.Done() || !errors.Is(r.Status().Err, boom) {
			t.Errorf("%s: done %v %+v", name, r.Done(), r.Status())
		}
	}
	for name, r := range map[string]*Request{"from-live": fromLive, "to-live": toLive} {
		if r.Done() {
			t.Errorf("%s failed with the dead rank: %+v", name, r.Status())
		}
	}
	if p := h.pending(2); p != [4]int{1, 0, 1, 0} {
		t.Errorf("pending after FailAll: %v", p)
	}
	// Sends to the dead rank started after FailAll fail at once, in every
	// mode and size (a rendezvous or synchronous one would otherwise wait
	// for an answer that cannot come); sends to a live rank still go.
	if h.engs[2].Unanswered(Standard, 4, 1) {
		t.Error("Unanswered allows the short road to a dead rank")
	}
	for _, tc := range []struct {
		name string
		r    *Request
	}{
		{"eager-after", &Request{Context: 1, Peer: 1, To: 1, Tag: 2, Buf: pattern(4)}},
		{"rendezvous-after", &Request{Context: 1, Peer: 1, To: 1, Tag: 2, Buf: pattern(100)}},
		{"sync-after", &Request{Mode: Synchronous, Context: 1, Peer: 1, To: 1, Tag: 2, Buf: pattern(4)}},
	} {
		h.send(2, tc.r)
		if !tc.r.Done() || !errors.Is(tc.r.Status().Err, boom) {
			t.Errorf("%s: done %v %+v", tc.name, tc.r.Done(), tc.r.Status())
		}
	}
	liveAfter := &Request{Context: 1, Peer: 0, To: 0, Tag: 2, Buf: pattern(100)}
	h.send(2, liveAfter)
	if liveAfter.Done() {
		t.Errorf("a send to a live rank after FailAll failed: %+v", liveAfter.Status())
	}
	h.checkOnce(t)
}
