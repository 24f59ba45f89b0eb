package engine

import (
	"fmt"
	"testing"
)

// matchSend sends a one-byte message v from rank from (communicator rank
// self) to rank to, eagerly unless the harness's limit is below one byte.
func matchSend(h *harness, from, self, to int, ctx uint32, tag int, v byte) *Request {
	r := &Request{Context: ctx, Peer: to, Self: self, To: to, Tag: tag, Buf: []byte{v}}
	h.send(from, r)
	return r
}

func matchRecv(ctx uint32, src, tag int) *Request {
	return &Request{Context: ctx, Peer: src, Tag: tag, Buf: guarded(4)}
}

// got returns the byte r received, or '-' if r has not completed.
func got(r *Request) byte {
	if !r.Done() {
		return '-'
	}
	if st := r.Status(); st.Err != nil || st.Count != 1 {
		return '!'
	}
	return r.Buf[0]
}

// TestMatchEnvelope checks which receives match which messages, with the
// receive posted first and with the message arriving first.
func TestMatchEnvelope(t *testing.T) {
	type env struct {
		ctx      uint32
		src, tag int
	}
	tests := []struct {
		name      string
		recv, msg env
		match     bool
	}{
		{"exact", env{1, 0, 5}, env{1, 0, 5}, true},
		{"any-source", env{1, AnySource, 5}, env{1, 2, 5}, true},
		{"any-tag", env{1, 2, AnyTag}, env{1, 2, 7}, true},
		{"any-any", env{1, AnySource, AnyTag}, env{1, 2, 0}, true},
		{"tag-zero", env{1, 0, 0}, env{1, 0, 0}, true},
		{"other-source", env{1, 0, 5}, env{1, 2, 5}, false},
		{"other-tag", env{1, 0, 5}, env{1, 0, 6}, false},
		{"other-context", env{1, 0, 5}, env{2, 0, 5}, false},
		{"other-context-wildcards", env{1, AnySource, AnyTag}, env{2, 0, 5}, false},
		{"context-zero-vs-one", env{0, AnySource, AnyTag}, env{1, 0, 5}, false},
	}
	for _, tc := range tests {
		for _, late := range []bool{false, true} {
			for _, p := range protos {
				name := fmt.Sprintf("%s/late=%v/%s", tc.name, late, p.name)
				t.Run(name, func(t *testing.T) {
					h := newHarness(t, 3, p.cfg())
					// The sender is world rank 0 whatever its communicator rank.
					data := pattern(p.size())
					s := &Request{Mode: p.mode, Context: tc.msg.ctx, Peer: 1, Self: tc.msg.src, To: 1, Tag: tc.msg.tag, Buf: data}
					r := &Request{Context: tc.recv.ctx, Peer: tc.recv.src, Tag: tc.recv.tag, Buf: guarded(p.size())}
					if !late {
						h.recv(1, r)
					}
					h.send(0, s)
					h.drain()
					if late {
						if _, ok := h.engs[1].Iprobe(tc.recv.ctx, tc.recv.src, tc.recv.tag, nil); ok != tc.match {
							t.Errorf("Iprobe found the message: %v, want %v", ok, tc.match)
						}
						h.recv(1, r)
						h.drain()
					}
					if r.Done() != tc.match {
						t.Fatalf("receive matched: %v, want %v", r.Done(), tc.match)
					}
					if !tc.match {
						if p.waits() && s.Done() {
							t.Error("the send completed without a matching receive")
						}
						if want := [4]int{1, 1, 0, 0}; h.pending(1) != want {
							t.Errorf("receiver pending %v, want %v", h.pending(1), want)
						}
						return
					}
					st := r.Status()
					if st.Err != nil || st.Source != tc.msg.src || st.Tag != tc.msg.tag || checkGuarded(r.Buf, len(data), data) != nil {
						t.Fatalf("status %+v", st)
					}
					h.checkClean(t)
				})
			}
		}
	}
}

// TestMatchPostingOrder: a message goes to the first posted receive that
// matches it, and a receive that does not match is skipped and stays.
func TestMatchPostingOrder(t *testing.T) {
	h := newHarness(t, 3, engCfg{EagerLimit: 64, ChunkSize: 16})
	r1 := matchRecv(1, AnySource, AnyTag)
	rSrc2 := matchRecv(1, 2, AnyTag) // only rank 2
	r2 := matchRecv(1, AnySource, 5)
	r3 := matchRecv(1, 0, 5)
	rCtx := matchRecv(3, AnySource, AnyTag) // another context
	for _, r := range []*Request{r1, rSrc2, r2, r3, rCtx} {
		h.recv(1, r)
	}
	for i, v := range []byte{'a', 'b', 'c'} {
		matchSend(h, 0, 0, 1, 1, 5, v)
		h.drain()
		want := []byte{'-', '-', '-'}
		for j := 0; j <= i; j++ {
			want[j] = []byte{'a', 'b', 'c'}[j]
		}
		if g := []byte{got(r1), got(r2), got(r3)}; string(g) != string(want) {
			t.Fatalf("after message %d: receives got %q, want %q", i, g, want)
		}
	}
	if rSrc2.Done() || rCtx.Done() {
		t.Fatal("a non-matching receive matched")
	}
	matchSend(h, 2, 2, 1, 1, 9, 'd') // from rank 2: rSrc2, the only one left on context 1
	h.drain()
	if got(rSrc2) != 'd' || rCtx.Done() {
		t.Fatalf("rSrc2 got %q", got(rSrc2))
	}
	if !h.engs[1].CancelRecv(rCtx) {
		t.Fatal("could not cancel the receive on context 3")
	}
	h.checkClean(t)
}

// TestMatchArrivalOrder: unexpected messages are matched in arrival order,
// and a receive takes the first one that matches, leaving earlier
// non-matching ones queued in order.
func TestMatchArrivalOrder(t *testing.T) {
	h := newHarness(t, 3, engCfg{EagerLimit: 64, ChunkSize: 16})
	matchSend(h, 0, 0, 1, 1, 1, 'a')
	matchSend(h, 2, 2, 1, 1, 2, 'b')
	matchSend(h, 0, 0, 1, 1, 2, 'c')
	matchSend(h, 2, 2, 1, 2, 2, 'x') // other context
	matchSend(h, 2, 2, 1, 1, 1, 'd')
	// Arrival order: a (0), b (2), c (0), x, d (2).
	for _, k := range [][2]int{{0, 1}, {2, 1}, {0, 1}, {2, 1}, {2, 1}} {
		if err := h.deliver(k[0], k[1]); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		src, tag int
		want     byte
	}{
		{2, AnyTag, 'b'},
		{AnySource, 1, 'a'},
		{AnySource, 1, 'd'},
		{AnySource, AnyTag, 'c'},
	}
	for _, s := range steps {
		r := matchRecv(1, s.src, s.tag)
		h.recv(1, r)
		if got(r) != s.want {
			t.Fatalf("receive (%d, %d) got %q, want %q", s.src, s.tag, got(r), s.want)
		}
	}
	r := matchRecv(1, AnySource, AnyTag)
	h.recv(1, r)
	if r.Done() {
		t.Fatal("a receive on context 1 took the message on context 2")
	}
	h.engs[1].CancelRecv(r)
	r = matchRecv(2, AnySource, AnyTag)
	h.recv(1, r)
	if got(r) != 'x' {
		t.Fatalf("context 2 receive got %q", got(r))
	}
	h.checkClean(t)
}

// TestNonOvertaking: 100 messages with one envelope arrive before their
// receives (AnyTag) and are received in order; then the same with the
// receives posted first; then with eager and rendezvous messages mixed.
func TestNonOvertaking(t *testing.T) {
	const n = 100
	for _, tc := range []struct {
		name      string
		cfg       engCfg
		late      bool
		mixedSize bool
	}{
		{"eager-unexpected", engCfg{EagerLimit: 64, ChunkSize: 16}, true, false},
		{"eager-posted", engCfg{EagerLimit: 64, ChunkSize: 16}, false, false},
		{"mixed-unexpected", engCfg{EagerLimit: 32, ChunkSize: 16}, true, true},
		{"mixed-posted", engCfg{EagerLimit: 32, ChunkSize: 16}, false, true},
		{"mixed-direct-unexpected", engCfg{EagerLimit: 32, ChunkSize: 16, Direct: true}, true, true},
		{"mixed-direct-posted", engCfg{EagerLimit: 32, ChunkSize: 16, Direct: true}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, 2, tc.cfg)
			var sends, recvs []*Request
			post := func() {
				for range n {
					r := &Request{Context: 1, Peer: 0, Tag: AnyTag, Alloc: func(n int) []byte { return make([]byte, n) }}
					recvs = append(recvs, r)
					h.recv(1, r)
				}
			}
			if !tc.late {
				post()
			}
			for i := range n {
				size := 1
				if tc.mixedSize {
					size = 1 + (i*37)%90 // eager and rendezvous
				}
				b := pattern(size)
				b[0] = byte(i)
				s := &Request{Mode: Mode(i % 2), Context: 1, Peer: 1, To: 1, Tag: 7, Buf: b}
				sends = append(sends, s)
				h.send(0, s)
				if i%7 == 0 {
					h.drain()
				}
			}
			h.drain()
			if tc.late {
				post()
				h.drain()
			}
			for i, r := range recvs {
				if !r.Done() || r.Status().Err != nil || r.Buf[0] != byte(i) || len(r.Buf) != len(sends[i].Buf) {
					t.Fatalf("receive %d: done %v, %+v, got message %d", i, r.Done(), r.Status(), r.Buf[0])
				}
				if !sends[i].Done() {
					t.Fatalf("send %d not complete", i)
				}
			}
			h.checkClean(t)
		})
	}
}
