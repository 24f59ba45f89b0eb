package engine

import (
	"bytes"
	"errors"
	"testing"

	"github.com/mpigo/mpi/internal/wire"
)

// DeliverEager, the transports' short cut for plain eager frames, behaves
// as Deliver does: a posted receive gets the bytes and the status, an
// early message waits in the unexpected queue for its receive (and wakes
// a blocked probe), a wrong type or a short buffer is reported in the
// status, and frames that need more than a copy are refused.
func TestDeliverEager(t *testing.T) {
	payload := []byte("8 bytes!")
	hdr := func(tag int32, sig uint64) wire.Header {
		return wire.Header{Kind: wire.Eager, Context: 3, Src: 1, Tag: tag, Size: int64(len(payload)), Sig: sig}
	}
	for _, tc := range []struct {
		name    string
		posted  bool
		bufLen  int
		sig     uint64
		wantErr error
		want    int
	}{
		{"posted", true, 8, 7, nil, 8},
		{"unexpected", false, 8, 7, nil, 8},
		{"truncated", true, 5, 7, ErrTruncate, 5},
		{"wrong type", true, 8, 9, ErrType, 0},
		{"unexpected truncated", false, 3, 7, ErrTruncate, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := New(0, DefaultConfig(), nil)
			r := &Request{Context: 3, Peer: 1, Tag: 5, Buf: make([]byte, tc.bufLen), Sig: 7}
			var out Outbox
			if tc.posted {
				e.PostRecv(r, &out)
			}
			h := hdr(5, tc.sig)
			if err := e.DeliverEager(&h, 1, payload); err != nil {
				t.Fatal(err)
			}
			if !tc.posted {
				if r.Done() {
					t.Fatal("completed before it was posted")
				}
				e.PostRecv(r, &out)
			}
			if !r.Done() {
				t.Fatal("not completed")
			}
			st := r.Status()
			if !errors.Is(st.Err, tc.wantErr) && st.Err != tc.wantErr {
				t.Fatalf("status error %v, want %v", st.Err, tc.wantErr)
			}
			if st.Count != tc.want || st.Source != 1 || st.Tag != 5 || st.Size != len(payload) {
				t.Fatalf("status %+v", st)
			}
			if !bytes.Equal(r.Buf[:tc.want], payload[:tc.want]) {
				t.Fatalf("buffer %q", r.Buf)
			}
			if out.Len() != 0 {
				t.Fatalf("%d frames to send for a plain eager message", out.Len())
			}
		})
	}
	t.Run("refused", func(t *testing.T) {
		e := New(0, DefaultConfig(), nil)
		for _, h := range []wire.Header{
			{Kind: wire.Eager, Flags: wire.FlagSync, SendID: 4, Size: 8},
			{Kind: wire.RTS, Size: 8},
			{Kind: wire.Eager, Size: 9},
		} {
			if err := e.DeliverEager(&h, 1, payload); !errors.Is(err, ErrProtocol) {
				t.Errorf("%+v: %v, want ErrProtocol", h, err)
			}
		}
	})
}

// PeerEager raises the eager limit towards some peers only: a message of a
// size between the two limits goes eagerly to them and by rendezvous to
// the others.
func TestPeerEager(t *testing.T) {
	cfg := DefaultConfig()
	cfg.EagerLimit = 16
	cfg.PeerEager = []int{0, 0, 64}
	e := New(0, cfg, nil)
	for _, tc := range []struct {
		to   int
		want wire.Kind
	}{{1, wire.RTS}, {2, wire.Eager}} {
		var out Outbox
		r := &Request{Context: 1, To: tc.to, Peer: tc.to, Tag: 1, Buf: make([]byte, 32)}
		e.Send(r, &out)
		if out.Len() != 1 || out.At(0).F.Kind != tc.want {
			t.Errorf("32 bytes to rank %d: %d frames, first %v; want one %v", tc.to, out.Len(), out.At(0).F.Kind, tc.want)
		}
		if got := e.Unanswered(Standard, 32, tc.to); got != (tc.want == wire.Eager) {
			t.Errorf("Unanswered(Standard, 32, %d) = %v", tc.to, got)
		}
	}
}

// TryPostRecv posts a receive as PostRecv does, except that it declines,
// changing nothing, a receive whose unexpected match must be answered (a
// synchronous eager message, an RTS); PostRecv then takes that match and
// answers it.
func TestTryPostRecv(t *testing.T) {
	payload := []byte("8 bytes!")
	frame := func(kind wire.Kind, flags uint8, tag int32) wire.Frame {
		f := wire.Frame{Header: wire.Header{Kind: kind, Flags: flags, Context: 3, Src: 1, Tag: tag, Size: int64(len(payload)), SendID: 11}, From: 1, To: 0}
		if kind == wire.Eager {
			f.Payload = payload
		}
		return f
	}
	recv := func() *Request { return &Request{Context: 3, Peer: 1, Tag: 5, Buf: make([]byte, 8)} }
	t.Run("posted", func(t *testing.T) {
		e := New(0, DefaultConfig(), nil)
		r := recv()
		if !e.TryPostRecv(r) || r.Done() {
			t.Fatalf("with nothing unexpected: posted false or done %v", r.Done())
		}
		f := frame(wire.Eager, 0, 5)
		if err := e.DeliverEager(&f.Header, 1, payload); err != nil {
			t.Fatal(err)
		}
		if !r.Done() || !bytes.Equal(r.Buf, payload) {
			t.Fatalf("done %v, buffer %q", r.Done(), r.Buf)
		}
	})
	t.Run("plain eager", func(t *testing.T) {
		e := New(0, DefaultConfig(), nil)
		f := frame(wire.Eager, 0, 5)
		if err := e.DeliverEager(&f.Header, 1, payload); err != nil {
			t.Fatal(err)
		}
		r := recv()
		if !e.TryPostRecv(r) || !r.Done() || !bytes.Equal(r.Buf, payload) {
			t.Fatalf("done %v, buffer %q", r.Done(), r.Buf)
		}
	})
	for _, tc := range []struct {
		name   string
		f      wire.Frame
		answer wire.Kind
	}{
		{"synchronous eager", frame(wire.Eager, wire.FlagSync, 5), wire.Ack},
		{"rts", frame(wire.RTS, 0, 5), wire.CTS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := New(0, DefaultConfig(), nil)
			// A plain eager message of another tag ahead of it stays too.
			other := frame(wire.Eager, 0, 6)
			for _, f := range []*wire.Frame{&other, &tc.f} {
				var out Outbox
				if err := e.Deliver(f, &out); err != nil || out.Len() != 0 {
					t.Fatalf("deliver %v: %v, %d frames to send", f.Kind, err, out.Len())
				}
			}
			r := recv()
			if e.TryPostRecv(r) {
				t.Fatal("TryPostRecv took a message that needs an answer")
			}
			if r.Done() || e.postedHead != nil {
				t.Fatalf("declined receive: done %v, posted %v", r.Done(), e.postedHead != nil)
			}
			var out Outbox
			e.PostRecv(r, &out)
			if out.Len() != 1 || out.At(0).F.Kind != tc.answer || out.At(0).F.SendID != 11 {
				t.Fatalf("PostRecv after TryPostRecv: %d frames, want one %v", out.Len(), tc.answer)
			}
			if r6 := (&Request{Context: 3, Peer: 1, Tag: 6, Buf: make([]byte, 8)}); !e.TryPostRecv(r6) || !r6.Done() {
				t.Fatal("the message of tag 6 was lost")
			}
		})
	}
}

// TestDeliverEagerRun: a run of frames delivered under one lock behaves as
// the same frames delivered one by one: posted receives get their
// messages in order, the rest wait in the unexpected queue in order, runs
// longer than eagerRun are delivered whole, and a frame that is not a
// plain eager one stops the run there, with the frames before it
// delivered.
func TestDeliverEagerRun(t *testing.T) {
	const n = 2*eagerRun + 5
	e := New(0, DefaultConfig(), nil)
	var out Outbox
	hs := make([]wire.Header, n)
	ps := make([][]byte, n)
	for i := range n {
		ps[i] = []byte{byte(i), byte(i >> 8), 'x'}
		hs[i] = wire.Header{Kind: wire.Eager, Context: 3, Src: 1, Tag: int32(i % 2), Size: 3}
	}
	// Receives for the first 10 frames of tag 0 are posted; everything
	// else arrives first.
	var early []*Request
	for range 10 {
		r := &Request{Context: 3, Peer: 1, Tag: 0, Buf: make([]byte, 3)}
		e.PostRecv(r, &out)
		early = append(early, r)
	}
	bad := n - 3
	hs[bad].Flags = wire.FlagSync
	got, err := e.DeliverEagerRun(1, hs, ps)
	if got != bad || !errors.Is(err, ErrProtocol) {
		t.Fatalf("delivered %d, %v; want %d and ErrProtocol", got, err, bad)
	}
	for k, r := range early {
		if !r.Done() || !bytes.Equal(r.Buf, ps[2*k]) {
			t.Fatalf("posted receive %d: done %v, %q, want %q", k, r.Done(), r.Buf, ps[2*k])
		}
	}
	// The rest come out of the unexpected queue in their order: tag 0
	// from frame 20 on, then tag 1 from frame 1.
	for _, tag := range []int{0, 1} {
		from := tag
		if tag == 0 {
			from = 20
		}
		for i := from; i < bad; i += 2 {
			r := &Request{Context: 3, Peer: 1, Tag: tag, Buf: make([]byte, 3)}
			e.PostRecv(r, &out)
			if !r.Done() || !bytes.Equal(r.Buf, ps[i]) {
				t.Fatalf("frame %d: done %v, %q, want %q", i, r.Done(), r.Buf, ps[i])
			}
		}
	}
	// Nothing from the failed frame on was delivered.
	r := &Request{Context: 3, Peer: 1, Tag: AnyTag, Buf: make([]byte, 3)}
	e.PostRecv(r, &out)
	if r.Done() {
		t.Fatalf("a receive matched %q after the run", r.Buf)
	}
	if out.Len() != 0 {
		t.Fatalf("%d frames to send for plain eager messages", out.Len())
	}
}
