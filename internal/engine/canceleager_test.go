package engine

import (
	"errors"
	"testing"
)

// TestCancelEagerSend: an eager send whose request is Cancellable can be
// cancelled after it completed locally, as long as the receiver has not
// matched the message: the CancelReq names the message by the id its
// Eager frame carries, the receiver removes it from its unexpected queue
// and says so, and the send completes again, cancelled or not. Sends that
// are not Cancellable (blocking sends, collectives) carry no id and pay
// nothing.
func TestCancelEagerSend(t *testing.T) {
	cfg := engCfg{EagerLimit: 64, ChunkSize: 16}
	newSend := func(tag int, fill byte) *Request {
		b := pattern(8)
		b[0] = fill
		return &Request{Context: 1, Peer: 1, To: 1, Tag: tag, Buf: b, Cancellable: true}
	}
	cases := []struct {
		name string
		run  func(t *testing.T, h *harness)
	}{
		{"unexpected-cancelled", func(t *testing.T, h *harness) {
			s := newSend(1, 0)
			h.send(0, s)
			h.drain() // unexpected at rank 1
			if !s.Done() {
				t.Fatal("eager send not complete once sent")
			}
			mark := len(h.trace)
			if !h.cancelSend(0, s) {
				t.Fatal("CancelSend refused an unmatched eager send")
			}
			if s.Done() {
				t.Fatal("send complete before the receiver answered")
			}
			if h.cancelSend(0, s) {
				t.Fatal("CancelSend sent a second request")
			}
			h.drain()
			if got := kinds(h, mark); got != "cancel-req cancel-ack" {
				t.Fatalf("cancel frames %q", got)
			}
			if st := s.Status(); !s.Done() || !st.Cancelled || st.Err != nil || st.Source != 1 || st.Tag != 1 {
				t.Fatalf("send: done %v %+v", s.Done(), st)
			}
			r := &Request{Context: 1, Peer: AnySource, Tag: AnyTag, Buf: guarded(8)}
			h.recv(1, r)
			if r.Done() {
				t.Fatal("a receive got the cancelled message")
			}
			h.engs[1].CancelRecv(r)
		}},
		{"in-flight-cancelled", func(t *testing.T, h *harness) {
			s := newSend(1, 0)
			h.send(0, s)
			if !h.cancelSend(0, s) { // the CancelReq follows the Eager frame
				t.Fatal("CancelSend refused")
			}
			h.drain()
			if !s.Done() || !s.Status().Cancelled {
				t.Fatalf("send: %+v", s.Status())
			}
		}},
		{"matched-not-cancelled", func(t *testing.T, h *harness) {
			r := &Request{Context: 1, Peer: 0, Tag: 1, Buf: guarded(8)}
			h.recv(1, r)
			s := newSend(1, 0)
			h.send(0, s)
			h.drain()
			if !h.cancelSend(0, s) {
				t.Fatal("CancelSend refused")
			}
			h.drain()
			if !s.Done() || s.Status() != (Status{}) {
				t.Fatalf("matched send: done %v %+v", s.Done(), s.Status())
			}
			if !r.Done() || checkGuarded(r.Buf, 8, s.Buf) != nil {
				t.Fatalf("receive: %+v", r.Status())
			}
		}},
		{"probed-not-cancelled", func(t *testing.T, h *harness) {
			s := newSend(1, 0)
			h.send(0, s)
			h.drain()
			m, ok := h.engs[1].Improbe(1, AnySource, AnyTag, nil)
			if !ok || !h.cancelSend(0, s) {
				t.Fatal("Improbe or CancelSend failed")
			}
			h.drain()
			if !s.Done() || s.Status().Cancelled {
				t.Fatalf("probed send: %+v", s.Status())
			}
			r := &Request{Buf: guarded(8)}
			h.mrecv(1, m, r)
			if checkGuarded(r.Buf, 8, s.Buf) != nil {
				t.Fatal("probed message damaged")
			}
		}},
		{"the-right-one", func(t *testing.T, h *harness) {
			// Three messages with one envelope; the middle one is
			// cancelled and the others arrive in order.
			var ss []*Request
			for i := range 3 {
				ss = append(ss, newSend(7, byte(100+i)))
				h.send(0, ss[i])
			}
			h.drain()
			if !h.cancelSend(0, ss[1]) {
				t.Fatal("CancelSend refused")
			}
			h.drain()
			if !ss[1].Status().Cancelled || ss[0].Status().Cancelled || ss[2].Status().Cancelled {
				t.Fatal("wrong send cancelled")
			}
			for _, want := range []int{0, 2} {
				r := &Request{Context: 1, Peer: 0, Tag: 7, Buf: guarded(8)}
				h.recv(1, r)
				if !r.Done() || checkGuarded(r.Buf, 8, ss[want].Buf) != nil {
					t.Fatalf("receive got the wrong message (want send %d)", want)
				}
			}
		}},
		{"not-cancellable", func(t *testing.T, h *harness) {
			s := newSend(1, 0)
			s.Cancellable = false
			h.send(0, s)
			if id := h.queued(0, 1)[0].SendID; id != 0 {
				t.Fatalf("a send that is not cancellable carries id %d", id)
			}
			if h.cancelSend(0, s) || !s.Done() || s.Status().Cancelled {
				t.Fatal("a send that is not cancellable was cancelled")
			}
			h.drain()
			h.recv(1, &Request{Context: 1, Peer: 0, Tag: 1, Buf: guarded(8)})
		}},
		{"twice-after-answer", func(t *testing.T, h *harness) {
			s := newSend(1, 0)
			h.send(0, s)
			h.drain()
			h.cancelSend(0, s)
			h.drain()
			if h.cancelSend(0, s) {
				t.Fatal("a cancelled send was cancelled again")
			}
		}},
		{"abort-while-cancelling", func(t *testing.T, h *harness) {
			s := newSend(1, 0)
			h.send(0, s)
			h.drain()
			h.cancelSend(0, s)
			boom := errors.New("job aborted")
			h.engs[0].Abort(boom)
			if !s.Done() || !errors.Is(s.Status().Err, boom) {
				t.Fatalf("send after Abort: done %v %+v", s.Done(), s.Status())
			}
			h.drain() // the late CancelAck is dropped
			h.engs[1].Abort(boom)
			h.engs[1].PostRecv(&Request{Context: 1, Peer: 0, Tag: 1, Buf: guarded(8)}, &Outbox{})
		}},
		{"to-self", func(t *testing.T, h *harness) {
			s := newSend(1, 0)
			s.To, s.Peer = 0, 0
			h.send(0, s)
			h.drain()
			if !h.cancelSend(0, s) {
				t.Fatal("CancelSend refused")
			}
			h.drain()
			if !s.Status().Cancelled {
				t.Fatalf("send to self: %+v", s.Status())
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, 2, cfg)
			tc.run(t, h)
			if tc.name != "abort-while-cancelling" {
				h.checkClean(t)
			}
			h.checkOnce(t)
		})
	}
}
