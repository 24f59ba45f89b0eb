package engine

import (
	"errors"
	"runtime"
	"sync"
	"testing"
)

func TestOutbox(t *testing.T) {
	var o Outbox
	for i := range 5 { // past the two inline items
		it := o.Add()
		if it.F.Kind != 0 || it.Done != nil {
			t.Fatalf("item %d not empty", i)
		}
		it.F.Tag = int32(i)
	}
	if o.Len() != 5 {
		t.Fatalf("Len %d", o.Len())
	}
	for i := range 5 {
		if o.At(i).F.Tag != int32(i) {
			t.Fatalf("At(%d) has tag %d", i, o.At(i).F.Tag)
		}
	}
	o.Reset()
	if o.Len() != 0 {
		t.Fatalf("Len %d after Reset", o.Len())
	}
	for i := range 3 {
		if it := o.Add(); it.F.Tag != 0 {
			t.Fatalf("item %d reused without clearing", i)
		}
	}
}

// TestEagerFrame: the frame a blocking standard send hands straight to the
// transport is the one Send would have produced.
func TestEagerFrame(t *testing.T) {
	e := New(2, Config{EagerLimit: 8, ChunkSize: 4}, nil)
	buf := pattern(8)
	f, ok := e.EagerFrame(Standard, 7, 1, 3, 9, buf, 42)
	if !ok {
		t.Fatal("EagerFrame refused an 8-byte message")
	}
	r := &Request{Context: 7, Self: 1, Peer: 5, To: 3, Tag: 9, Buf: buf, Sig: 42}
	var out Outbox
	e.Send(r, &out)
	g := out.At(0).F
	if f.Header != g.Header || f.From != g.From || f.To != g.To || &f.Payload[0] != &g.Payload[0] || len(f.Payload) != 8 {
		t.Fatalf("EagerFrame %+v, Send %+v", f, g)
	}
	if _, ok := e.EagerFrame(Standard, 7, 1, 3, 9, pattern(9), 0); ok {
		t.Fatal("EagerFrame accepted a message above the eager limit")
	}
	if _, ok := e.EagerFrame(Synchronous, 7, 1, 3, 9, buf, 0); ok {
		t.Fatal("EagerFrame accepted a synchronous send, which needs an answer")
	}
}

// TestRequestReuse: a request may be reused after Reset for any protocol,
// including after it was cancelled.
func TestRequestReuse(t *testing.T) {
	h := newHarness(t, 2, engCfg{EagerLimit: 8, ChunkSize: 4})
	var s, r Request
	for i := range 12 {
		size := []int{4, 20}[i%2]
		mode := []Mode{Standard, Synchronous}[i/2%2]
		cancel := i/4%3 == 1
		s.Reset()
		s.Mode, s.Context, s.Peer, s.To, s.Tag, s.Buf = mode, 1, 1, 1, i, pattern(size)
		r.Reset()
		r.Context, r.Peer, r.Tag, r.Buf = 1, 0, i, guarded(size)
		h.send(0, &s)
		h.drain()
		if cancel && h.cancelSend(0, &s) {
			h.drain()
			if !s.Status().Cancelled {
				t.Fatalf("%d: not cancelled", i)
			}
			continue
		}
		h.recv(1, &r)
		h.drain()
		if !s.Done() || !r.Done() || s.Status().Cancelled || checkGuarded(r.Buf, size, pattern(size)) != nil {
			t.Fatalf("%d: send done %v %+v, receive done %v %+v", i, s.Done(), s.Status(), r.Done(), r.Status())
		}
	}
	h.checkClean(t)
}

// TestRequestWait: Wait returns once another goroutine completes the
// request, with or without its own Waiter, and the request may then be
// reset and reused at once (the race detector checks the handshake).
func TestRequestWait(t *testing.T) {
	for _, own := range []bool{false, true} {
		var r Request
		if own {
			r.W = NewWaiter()
		}
		for i := range 2000 {
			r.Reset()
			r.Tag = i
			start := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				r.Complete(Status{Tag: i, Count: i})
			}()
			if i%2 == 0 {
				close(start) // complete, probably, before Wait
			} else {
				go close(start)
			}
			if st := r.Wait(); st.Count != i || !r.Done() {
				t.Fatalf("Wait returned %+v", st)
			}
			wg.Wait()
		}
	}
	// Fail does not override a completed request.
	var r Request
	r.Complete(Status{Count: 3})
	r.Fail(errors.New("late"))
	if r.Status().Err != nil || r.Status().Count != 3 {
		t.Fatalf("Fail overrode a completed request: %+v", r.Status())
	}
}

// TestWaiterSharedAcrossRequests: one Waiter registered on several
// requests (WaitAny) is woken by whichever completes.
func TestWaiterSharedAcrossRequests(t *testing.T) {
	w := NewWaiter()
	rs := make([]Request, 3)
	for i := range rs {
		rs[i].SetWaiter(w)
	}
	done := parked(w)
	go rs[1].Complete(Status{})
	waitWoken(t, done, "WaitAny")
	for !rs[1].Done() { // the completer wakes, then publishes fin
		runtime.Gosched()
	}
	if rs[0].Done() || rs[2].Done() {
		t.Fatal("the wrong request completed")
	}
}

// TestCompletionState: a completion nobody waits for publishes done and
// finished in one step; one after a Waiter registered wakes it; a Waiter
// registered after the result is told so by register.
func TestCompletionState(t *testing.T) {
	var r Request
	r.Complete(Status{Count: 1})
	if got := r.state.Load(); got != stDone|stFin {
		t.Fatalf("state after a completion with nobody waiting = %#x, want %#x", got, stDone|stFin)
	}
	if !r.register(NewWaiter()) {
		t.Fatal("register on a completed request reported it pending")
	}

	r.Reset()
	w := NewWaiter()
	if r.register(w) {
		t.Fatal("register on a pending request reported it done")
	}
	done := parked(w)
	go r.Complete(Status{Count: 2})
	waitWoken(t, done, "Wait")
	for !r.Done() {
		runtime.Gosched()
	}
	if st := r.Status(); st.Count != 2 {
		t.Fatalf("status %+v", st)
	}
}

// TestEagerIDs: ids reserved in a batch never repeat one another or the
// ids handed out one by one.
func TestEagerIDs(t *testing.T) {
	e := New(0, DefaultConfig(), nil)
	seen := map[uint64]bool{}
	take := func(id uint64) {
		if id&eagerID == 0 {
			t.Fatalf("id %#x lacks the eager mark", id)
		}
		if seen[id] {
			t.Fatalf("id %#x handed out twice", id)
		}
		seen[id] = true
	}
	for range 3 {
		take(e.EagerID())
		first := e.EagerIDs(5)
		for i := range uint64(5) {
			take(first + i)
		}
	}
	take(e.EagerID())
}
