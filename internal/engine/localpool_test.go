package engine

import "testing"

// TestUnexpectedNoAllocs: a steady stream of unexpected eager messages,
// each received after it arrived, reuses the engine's own queue entries
// and buffers: no allocation per message.
func TestUnexpectedNoAllocs(t *testing.T) {
	e := New(1, Config{EagerLimit: 1 << 16}, nil)
	f, _ := New(0, Config{EagerLimit: 1 << 16}, nil).EagerFrame(Standard, 1, 0, 1, 5, make([]byte, 8), 0)
	buf := make([]byte, 8)
	var r Request
	r.W = NewWaiter()
	var out Outbox
	step := func() {
		out.Reset()
		g := f
		if err := e.Deliver(&g, &out); err != nil {
			t.Fatal(err)
		}
		r.Reset()
		r.Context, r.Peer, r.Tag, r.Buf = 1, 0, 5, buf
		e.PostRecv(&r, &out)
		if !r.Done() {
			t.Fatal("not received")
		}
	}
	step()
	if n := testing.AllocsPerRun(100, step); n != 0 {
		t.Fatalf("%v allocations per message", n)
	}
}
