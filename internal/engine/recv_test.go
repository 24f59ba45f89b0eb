package engine

import (
	"bytes"
	"errors"
	"testing"

	"github.com/mpigo/mpi/internal/wire"
)

// oneMessage sends size bytes of pattern from rank 0 to the receive r on
// rank 1 with protocol p, the receive posted before the send or after the
// message arrived, and runs the protocol to its end. It returns the send.
func oneMessage(t *testing.T, h *harness, p proto, size int, sig uint64, r *Request, late bool) *Request {
	t.Helper()
	s := &Request{Mode: p.mode, Context: 1, Peer: 1, Self: 0, To: 1, Tag: 2, Buf: pattern(size), Sig: sig}
	r.Context, r.Peer, r.Tag = 1, 0, 2
	if !late {
		h.recv(1, r)
	}
	h.send(0, s)
	h.drain()
	if late {
		h.recv(1, r)
		h.drain()
	}
	if !r.Done() {
		t.Fatalf("receive not complete; trace: %s", h.traceString())
	}
	return s
}

// TestTruncate: a 100-byte message into a 60-byte buffer fills the buffer,
// writes nothing past it, reports ErrTruncate with Count 60 and Size 100;
// the sender completes normally and both engines are left clean.
func TestTruncate(t *testing.T) {
	for _, p := range protos {
		for _, late := range []bool{false, true} {
			name := p.name + "/posted"
			if late {
				name = p.name + "/unexpected"
			}
			t.Run(name, func(t *testing.T) {
				h := newHarness(t, 2, p.cfg())
				r := &Request{Buf: guarded(60)}
				s := oneMessage(t, h, p, 100, 0, r, late)
				st := r.Status()
				if !errors.Is(st.Err, ErrTruncate) || st.Count != 60 || st.Size != 100 || st.Source != 0 || st.Tag != 2 {
					t.Fatalf("status %+v", st)
				}
				if err := checkGuarded(r.Buf, 60, pattern(100)); err != nil {
					t.Fatal(err)
				}
				if !s.Done() || s.Status() != (Status{}) {
					t.Fatalf("send: done %v, %+v", s.Done(), s.Status())
				}
				h.checkClean(t)
			})
		}
	}
}

// TestTypeSignature: a receive whose signature differs from the send's
// (both non-zero) fails with ErrType, leaves its buffer untouched and lets
// the protocol finish; 0 on either side matches anything.
func TestTypeSignature(t *testing.T) {
	tests := []struct {
		send, recv uint64
		err        error
	}{
		{5, 6, ErrType},
		{6, 5, ErrType},
		{5, 5, nil},
		{0, 5, nil},
		{5, 0, nil},
		{0, 0, nil},
	}
	for _, p := range protos {
		for _, tc := range tests {
			for _, late := range []bool{false, true} {
				h := newHarness(t, 2, p.cfg())
				size := p.size()
				r := &Request{Buf: guarded(size), Sig: tc.recv}
				s := oneMessage(t, h, p, size, tc.send, r, late)
				st := r.Status()
				if !errors.Is(st.Err, tc.err) || (tc.err == nil) != (st.Err == nil) || st.Sig != tc.send || st.Size != size {
					t.Fatalf("%s send %d recv %d late %v: status %+v", p.name, tc.send, tc.recv, late, st)
				}
				count := size
				if tc.err != nil {
					count = 0
				}
				if st.Count != count {
					t.Fatalf("%s send %d recv %d late %v: count %d", p.name, tc.send, tc.recv, late, st.Count)
				}
				if err := checkGuarded(r.Buf, count, pattern(size)); err != nil {
					t.Fatalf("%s send %d recv %d late %v: %v", p.name, tc.send, tc.recv, late, err)
				}
				if !s.Done() || s.Status() != (Status{}) {
					t.Fatalf("%s send %d recv %d late %v: send done %v %+v", p.name, tc.send, tc.recv, late, s.Done(), s.Status())
				}
				h.checkClean(t)
			}
		}
	}
}

// TestAllocOnMatch: a receive with no buffer and an Alloc function gets a
// buffer of exactly the message's size, allocated once, for every protocol.
func TestAllocOnMatch(t *testing.T) {
	for _, p := range protos {
		for _, size := range []int{0, 1, p.size(), 1000} {
			if p.rndv && size <= testEagerLow || !p.rndv && size > testEagerHigh {
				continue
			}
			for _, late := range []bool{false, true} {
				h := newHarness(t, 2, p.cfg())
				var calls []int
				r := &Request{Alloc: func(n int) []byte {
					calls = append(calls, n)
					return make([]byte, n)
				}}
				s := oneMessage(t, h, p, size, 0, r, late)
				st := r.Status()
				if len(calls) != 1 || calls[0] != size || len(r.Buffer()) != size || st.Err != nil || st.Count != size {
					t.Fatalf("%s size %d late %v: Alloc calls %v, buffer %d bytes, %+v", p.name, size, late, calls, len(r.Buffer()), st)
				}
				if !bytes.Equal(r.Buffer(), pattern(size)) || !s.Done() {
					t.Fatalf("%s size %d late %v: wrong data or send not complete", p.name, size, late)
				}
				h.checkClean(t)
			}
		}
	}
	// A receive that brings its own buffer does not call Alloc.
	h := newHarness(t, 2, protos[0].cfg())
	r := &Request{Buf: guarded(8), Alloc: func(int) []byte { t.Fatal("Alloc called"); return nil }}
	oneMessage(t, h, protos[0], 8, 0, r, false)
}

// TestDataDest: a byte-stream transport asks DataDest where a Data frame's
// payload goes, reads it there, then delivers the frame; the engine skips
// its copy and completes the receive. DataDest refuses frames from another
// rank, for no receive, and ones that would overrun.
func TestDataDest(t *testing.T) {
	h := newHarness(t, 2, engCfg{EagerLimit: 8, ChunkSize: 16})
	data := pattern(100)
	buf := guarded(90) // truncated: 90 of 100 bytes
	r := &Request{Context: 1, Peer: 0, Tag: 1, Buf: buf}
	h.recv(1, r)
	h.send(0, &Request{Context: 1, Peer: 1, To: 1, Tag: 1, Buf: data})
	h.deliver(0, 1) // RTS
	h.deliver(1, 0) // CTS: the sender queues the Data frames
	q := h.queued(0, 1)
	h.links[0][1] = nil
	if len(q) != 6 { // 90 bytes in 16-byte chunks
		t.Fatalf("%d Data frames, want 6", len(q))
	}
	e := h.engs[1]
	if e.DataDest(&q[0].Header, 1, 16) != nil {
		t.Error("DataDest accepted a frame from the wrong rank")
	}
	if e.DataDest(&q[0].Header, 0, 91) != nil || e.DataDest(&q[5].Header, 0, 11) != nil {
		t.Error("DataDest accepted a payload that overruns the receive")
	}
	bad := q[0].Header
	bad.RecvID++
	if e.DataDest(&bad, 0, 16) != nil {
		t.Error("DataDest accepted a frame for no receive")
	}
	bad = q[0].Header
	bad.Kind = wire.Eager
	if e.DataDest(&bad, 0, 16) != nil {
		t.Error("DataDest accepted an Eager frame")
	}
	for _, f := range q {
		dst := e.DataDest(&f.Header, 0, len(f.Payload))
		if len(dst) != len(f.Payload) || cap(dst) != len(dst) || &dst[0] != &buf[f.Offset] {
			t.Fatalf("DataDest at %d: %d bytes", f.Offset, len(dst))
		}
		copy(dst, f.Payload) // what the transport's read does
		f.Payload = dst
		if err := h.inject(&f); err != nil {
			t.Fatal(err)
		}
	}
	if !r.Done() || !errors.Is(r.Status().Err, ErrTruncate) || checkGuarded(buf, 90, data) != nil {
		t.Fatalf("in-place delivery: done %v %+v", r.Done(), r.Status())
	}
	if e.DataDest(&q[0].Header, 0, 16) != nil {
		t.Error("DataDest accepted a frame for a completed receive")
	}
	h.checkClean(t)
}
