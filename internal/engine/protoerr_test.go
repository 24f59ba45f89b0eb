package engine

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mpigo/mpi/internal/wire"
)

// deliverSafely delivers f to e and turns a panic into an error.
func deliverSafely(e *Engine, f *wire.Frame, out *Outbox) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return e.Deliver(f, out)
}

// TestProtocolErrors: frames that refer to no send or receive of the
// engine, or that contradict themselves, are reported as ErrProtocol
// (the runtime then aborts the job) without panicking, without answers,
// and without disturbing the engine's state.
func TestProtocolErrors(t *testing.T) {
	frames := []struct {
		name string
		f    wire.Frame
	}{
		{"cts-unknown-send", wire.Frame{Header: wire.Header{Kind: wire.CTS, SendID: 99, RecvID: 1, Size: 4}}},
		{"cts-send-zero", wire.Frame{Header: wire.Header{Kind: wire.CTS, SendID: 0, Size: 4}}},
		{"data-unknown-recv", wire.Frame{Header: wire.Header{Kind: wire.Data, RecvID: 99, Size: 4}, Payload: []byte{1, 2, 3, 4}}},
		{"data-recv-zero", wire.Frame{Header: wire.Header{Kind: wire.Data, Size: 4}, Payload: []byte{1, 2, 3, 4}}},
		{"fin-unknown-send", wire.Frame{Header: wire.Header{Kind: wire.Fin, SendID: 99}}},
		{"ack-unknown-send", wire.Frame{Header: wire.Header{Kind: wire.Ack, SendID: 99}}},
		{"eager-payload-over-size", wire.Frame{Header: wire.Header{Kind: wire.Eager, Context: 1, Size: 2}, Payload: []byte{1, 2, 3}}},
		{"eager-negative-size", wire.Frame{Header: wire.Header{Kind: wire.Eager, Context: 1, Size: -1}}},
		{"rts-payload-over-size", wire.Frame{Header: wire.Header{Kind: wire.RTS, Context: 1, Size: 2}, Payload: []byte{1, 2, 3}}},
		// A region shorter than the message it stands for, matching the
		// posted receive: the receive would read past the region's end.
		{"rts-region-under-size", wire.Frame{Header: wire.Header{Kind: wire.RTS, Context: 1, Tag: 7, Size: 6}, Region: make([]byte, 3)}},
		{"rts-region-over-size", wire.Frame{Header: wire.Header{Kind: wire.RTS, Context: 1, Tag: 7, Size: 2}, Region: make([]byte, 3)}},
		{"kind-zero", wire.Frame{Header: wire.Header{Kind: 0}}},
		{"kind-past-last", wire.Frame{Header: wire.Header{Kind: wire.CancelAck + 1}}},
		{"kind-200", wire.Frame{Header: wire.Header{Kind: 200}}},
	}
	for _, tc := range frames {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, 2, engCfg{EagerLimit: 8, ChunkSize: 4})
			// State the bad frame must leave alone: a posted receive on
			// context 1, a send waiting for CTS (id 1), a receive waiting
			// for Data (id 2).
			posted := &Request{Context: 1, Peer: 0, Tag: 7, Buf: guarded(8)}
			h.recv(1, posted)
			waiting := &Request{Context: 2, Peer: 0, To: 0, Tag: 1, Buf: pattern(20)}
			h.send(1, waiting)
			streaming := &Request{Context: 2, Peer: 0, Tag: 1, Buf: guarded(20)}
			h.recv(1, streaming)
			h.send(0, &Request{Context: 2, Peer: 1, To: 1, Tag: 1, Buf: pattern(20)})
			h.deliver(0, 1) // RTS: CTS back, receive 2 waits for Data
			before := h.pending(1)
			if before != [4]int{1, 0, 1, 1} {
				t.Fatalf("setup: pending %v", before)
			}
			f := tc.f
			f.From, f.To = 0, 1
			var out Outbox
			err := deliverSafely(h.engs[1], &f, &out)
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("Deliver: %v, want ErrProtocol", err)
			}
			if out.Len() != 0 {
				t.Errorf("Deliver answered a bad frame with %d frames", out.Len())
			}
			if got := h.pending(1); got != before {
				t.Errorf("pending %v after the bad frame, was %v", got, before)
			}
			if posted.Done() || waiting.Done() || streaming.Done() || checkGuarded(posted.Buf, 0, nil) != nil {
				t.Error("the bad frame touched a request")
			}
		})
	}
}

// TestProtocolErrorsInProtocol: frames for a protocol in progress that do
// not fit it.
func TestProtocolErrorsInProtocol(t *testing.T) {
	setup := func(t *testing.T) (*harness, *Request, *Request, []wire.Frame) {
		h := newHarness(t, 2, engCfg{EagerLimit: 8, ChunkSize: 8})
		r := &Request{Context: 1, Peer: 0, Tag: 1, Buf: guarded(20)}
		s := &Request{Context: 1, Peer: 1, To: 1, Tag: 1, Buf: pattern(20)}
		h.recv(1, r)
		h.send(0, s)
		h.deliver(0, 1) // RTS
		h.deliver(1, 0) // CTS: Data in flight
		q := h.queued(0, 1)
		h.links[0][1] = nil
		return h, r, s, q
	}
	t.Run("data-overrun", func(t *testing.T) {
		h, r, _, q := setup(t)
		f := q[2] // 4 bytes at 16
		f.Payload = pattern(5)
		if err := deliverSafely(h.engs[1], &f, &Outbox{}); !errors.Is(err, ErrProtocol) {
			t.Fatalf("overrun: %v", err)
		}
		if r.Done() || checkGuarded(r.Buf, 0, nil) != nil || h.pending(1) != [4]int{0, 0, 0, 1} {
			t.Fatal("an overrunning Data frame changed the receive")
		}
		// The genuine frames still complete it.
		for _, f := range q {
			if err := h.inject(&f); err != nil {
				t.Fatal(err)
			}
		}
		if !r.Done() || checkGuarded(r.Buf, 20, pattern(20)) != nil {
			t.Fatal("receive did not complete")
		}
		h.drain()
		h.checkClean(t)
	})
	t.Run("data-after-completion", func(t *testing.T) {
		h, r, _, q := setup(t)
		for _, f := range q {
			h.inject(&f)
		}
		if !r.Done() {
			t.Fatal("receive not complete")
		}
		if err := deliverSafely(h.engs[1], &q[0], &Outbox{}); !errors.Is(err, ErrProtocol) {
			t.Fatalf("Data for a completed receive: %v", err)
		}
		h.checkClean(t)
	})
	t.Run("second-cts", func(t *testing.T) {
		h, _, s, q := setup(t)
		cts := wire.Frame{Header: wire.Header{Kind: wire.CTS, Context: 1, SendID: q[0].SendID, RecvID: q[0].RecvID, Size: 20}, From: 1, To: 0}
		if err := deliverSafely(h.engs[0], &cts, &Outbox{}); !errors.Is(err, ErrProtocol) {
			t.Fatalf("second CTS: %v", err)
		}
		if !s.Done() {
			t.Fatal("send not complete")
		}
	})
}

// TestProtocolErrorShortEager: an Eager frame must carry exactly Size
// bytes. The wire format only rejects payloads longer than Size, so a frame
// whose payload is shorter reaches Deliver (from a faulty or foreign peer);
// the engine accepts it and the receive reports Count = Size although only
// the payload's bytes were written: the rest of the "message" is whatever
// the buffer held before.
func TestProtocolErrorShortEager(t *testing.T) {
	for _, late := range []bool{false, true} {
		h := newHarness(t, 2, engCfg{EagerLimit: 8, ChunkSize: 4})
		r := &Request{Context: 1, Peer: 0, Tag: 1, Buf: guarded(10)}
		if !late {
			h.recv(1, r)
		}
		f := wire.Frame{Header: wire.Header{Kind: wire.Eager, Context: 1, Tag: 1, Size: 10}, From: 0, To: 1, Payload: []byte{1, 2}}
		err := deliverSafely(h.engs[1], &f, &Outbox{})
		if late {
			h.recv(1, r)
		}
		if !errors.Is(err, ErrProtocol) {
			t.Errorf("late %v: Deliver: %v, want ErrProtocol (receive done %v, %+v)", late, err, r.Done(), r.Status())
		}
	}
}
