package engine

import (
	"errors"
	"testing"

	"github.com/mpigo/mpi/internal/wire"
)

func TestCancelRecv(t *testing.T) {
	h := newHarness(t, 2, engCfg{EagerLimit: 8, ChunkSize: 4})
	e := h.engs[1]
	// Posted and unmatched: cancelled.
	r := &Request{Context: 1, Peer: 0, Tag: 1, Buf: guarded(4)}
	h.recv(1, r)
	if !e.CancelRecv(r) {
		t.Fatal("CancelRecv refused a posted receive")
	}
	if st := r.Status(); !r.Done() || !st.Cancelled || st.Err != nil || st.Source != 0 || st.Tag != 1 {
		t.Fatalf("cancelled receive: done %v %+v", r.Done(), st)
	}
	if e.CancelRecv(r) {
		t.Fatal("CancelRecv cancelled a receive twice")
	}
	if e.CancelRecv(&Request{}) {
		t.Fatal("CancelRecv cancelled a receive never posted")
	}
	// The cancelled receive does not take a later message.
	h.send(0, &Request{Context: 1, Peer: 1, To: 1, Tag: 1, Buf: pattern(4)})
	h.drain()
	if got := h.pending(1); got != [4]int{0, 1, 0, 0} {
		t.Fatalf("pending %v: the message did not stay unexpected", got)
	}
	// Matched at once (eager): too late.
	r = &Request{Context: 1, Peer: 0, Tag: 1, Buf: guarded(4)}
	h.recv(1, r)
	if !r.Done() || e.CancelRecv(r) || r.Status().Cancelled {
		t.Fatal("CancelRecv cancelled a completed receive")
	}
	// Matched a rendezvous whose data is still coming: too late, and the
	// receive completes normally.
	r = &Request{Context: 1, Peer: 0, Tag: 1, Buf: guarded(20)}
	h.recv(1, r)
	h.send(0, &Request{Context: 1, Peer: 1, To: 1, Tag: 1, Buf: pattern(20)})
	h.deliver(0, 1) // RTS: matched, CTS sent
	if r.Done() || e.CancelRecv(r) {
		t.Fatal("CancelRecv cancelled a receive in the middle of its rendezvous")
	}
	h.drain()
	if !r.Done() || r.Status().Cancelled || checkGuarded(r.Buf, 20, pattern(20)) != nil {
		t.Fatalf("receive after refused cancel: %+v", r.Status())
	}
	// The middle one of three posted receives.
	var rs []*Request
	for i := range 3 {
		rs = append(rs, &Request{Context: 1, Peer: 0, Tag: 10 + i, Buf: guarded(4)})
		h.recv(1, rs[i])
	}
	if !e.CancelRecv(rs[1]) {
		t.Fatal("CancelRecv refused the middle receive")
	}
	for _, i := range []int{2, 0} {
		h.send(0, &Request{Context: 1, Peer: 1, To: 1, Tag: 10 + i, Buf: pattern(4)})
		h.drain()
		if !rs[i].Done() || rs[i].Status().Cancelled {
			t.Fatalf("receive %d did not match after its neighbour was cancelled", i)
		}
	}
	h.checkClean(t)
}

// TestCancelSend: a send still waiting for its peer can be cancelled while
// the receiver has not matched it; after the match the cancel fails and the
// send completes normally; eager standard sends cannot be cancelled.
func TestCancelSend(t *testing.T) {
	for _, p := range protos {
		t.Run(p.name, func(t *testing.T) {
			size := p.size()
			newSend := func() *Request {
				return &Request{Mode: p.mode, Context: 1, Peer: 1, To: 1, Tag: 1, Buf: pattern(size)}
			}
			if !p.waits() {
				h := newHarness(t, 2, p.cfg())
				s := newSend()
				h.send(0, s)
				if !s.Done() || h.cancelSend(0, s) || s.Status().Cancelled {
					t.Fatal("an eager standard send was cancelled")
				}
				return
			}

			// Unmatched, arrived: cancelled, withdrawn from the receiver.
			h := newHarness(t, 2, p.cfg())
			s := newSend()
			h.send(0, s)
			h.drain()
			mark := len(h.trace)
			if !h.cancelSend(0, s) {
				t.Fatal("CancelSend refused an unmatched send")
			}
			if h.cancelSend(0, s) {
				t.Fatal("CancelSend sent a second request")
			}
			if s.Done() {
				t.Fatal("send complete before the receiver answered the cancel")
			}
			h.drain()
			if got := kinds(h, mark); got != "cancel-req cancel-ack" {
				t.Fatalf("cancel frames %q", got)
			}
			if st := s.Status(); !s.Done() || !st.Cancelled || st.Err != nil {
				t.Fatalf("send: done %v %+v", s.Done(), st)
			}
			if _, ok := h.engs[1].Iprobe(1, AnySource, AnyTag, nil); ok {
				t.Fatal("cancelled message still visible at the receiver")
			}
			r := &Request{Context: 1, Peer: AnySource, Tag: AnyTag, Buf: guarded(size)}
			h.recv(1, r)
			if r.Done() {
				t.Fatal("a receive got the cancelled message")
			}
			h.engs[1].CancelRecv(r)
			h.checkClean(t)

			// Unmatched, not yet arrived: the cancel request follows it.
			h = newHarness(t, 2, p.cfg())
			s = newSend()
			h.send(0, s)
			if !h.cancelSend(0, s) {
				t.Fatal("CancelSend refused a send in flight")
			}
			h.drain()
			if !s.Status().Cancelled {
				t.Fatalf("send in flight not cancelled: %+v", s.Status())
			}
			h.checkClean(t)

			// Matched before the cancel request arrived: not cancelled.
			h = newHarness(t, 2, p.cfg())
			s = newSend()
			r = &Request{Context: 1, Peer: 0, Tag: 1, Buf: guarded(size)}
			h.send(0, s)
			h.deliver(0, 1) // unexpected
			h.recv(1, r)    // matched: Ack, Fin or CTS on its way
			if s.Done() {
				t.Fatal("send complete before the receiver's answer arrived")
			}
			if !h.cancelSend(0, s) {
				t.Fatal("CancelSend refused a send waiting for its answer")
			}
			h.drain()
			if !s.Done() || s.Status() != (Status{}) || !r.Done() || checkGuarded(r.Buf, size, pattern(size)) != nil {
				t.Fatalf("matched send: done %v %+v; receive done %v %+v", s.Done(), s.Status(), r.Done(), r.Status())
			}
			h.checkClean(t)

			// Taken by Improbe: matched as far as cancelling goes.
			h = newHarness(t, 2, p.cfg())
			s = newSend()
			h.send(0, s)
			h.drain()
			m, ok := h.engs[1].Improbe(1, AnySource, AnyTag, nil)
			if !ok || !h.cancelSend(0, s) {
				t.Fatal("Improbe or CancelSend failed")
			}
			h.drain()
			if s.Status().Cancelled {
				t.Fatal("a probed message was cancelled")
			}
			r = &Request{Buf: guarded(size)}
			h.mrecv(1, m, r)
			h.drain()
			if !s.Done() || s.Status() != (Status{}) || checkGuarded(r.Buf, size, pattern(size)) != nil {
				t.Fatalf("probed send: done %v %+v", s.Done(), s.Status())
			}
			h.checkClean(t)

			// Complete: nothing to cancel.
			if h.cancelSend(0, s) {
				t.Fatal("CancelSend accepted a completed send")
			}
		})
	}
}

// TestCancelAckLate: a CancelAck that says "not cancelled", or that comes
// for a send that completed meanwhile, changes nothing.
func TestCancelAckLate(t *testing.T) {
	h := newHarness(t, 2, engCfg{EagerLimit: 8, ChunkSize: 4})
	s := &Request{Context: 1, Peer: 1, To: 1, Tag: 1, Buf: pattern(20)}
	h.send(0, s)
	f := h.queued(0, 1)[0]
	for _, flags := range []uint8{0, wire.FlagCancelled} { // for an unknown send
		ack := f
		ack.Kind, ack.Flags, ack.SendID, ack.From, ack.To = wire.CancelAck, flags, f.SendID+100, 1, 0
		if err := h.inject(&ack); err != nil {
			t.Fatalf("late CancelAck: %v", err)
		}
	}
	ack := f
	ack.Kind, ack.Flags, ack.From, ack.To = wire.CancelAck, 0, 1, 0
	if err := h.inject(&ack); err != nil || s.Done() {
		t.Fatalf("negative CancelAck: %v, send done %v", err, s.Done())
	}
	if got := h.pending(0); got != [4]int{0, 0, 1, 0} {
		t.Fatalf("sender pending %v", got)
	}
}

// Withdraw ends a posted receive with the status it is given, once, and
// not one that a failure or an abort ended first.
func TestWithdraw(t *testing.T) {
	h := newHarness(t, 2, engCfg{EagerLimit: 8, ChunkSize: 4})
	e := h.engs[1]
	r := &Request{Context: 3, Peer: AnySource, Tag: -100}
	h.recv(1, r)
	if r.Done() {
		t.Fatal("the wait completed when posted")
	}
	if !e.Withdraw(r, Status{Source: 0, Tag: 7, Count: 5}) {
		t.Fatal("Withdraw refused a posted receive")
	}
	if st := r.Status(); !r.Done() || st.Source != 0 || st.Tag != 7 || st.Count != 5 || st.Err != nil || st.Cancelled {
		t.Fatalf("withdrawn: done %v %+v", r.Done(), st)
	}
	if e.Withdraw(r, Status{}) {
		t.Fatal("Withdraw ended a receive twice")
	}
	// An abort ends the wait first: Withdraw then leaves it alone.
	r = &Request{Context: 3, Peer: AnySource, Tag: -100}
	h.recv(1, r)
	e.Abort(errors.New("gone"))
	if !r.Done() || r.Status().Err == nil {
		t.Fatalf("abort left the wait: done %v %+v", r.Done(), r.Status())
	}
	if e.Withdraw(r, Status{Source: 0}) || r.Status().Err == nil {
		t.Fatal("Withdraw overwrote the abort's status")
	}
}
