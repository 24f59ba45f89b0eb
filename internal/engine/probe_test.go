package engine

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/mpigo/mpi/internal/wire"
)

// TestIprobe: Iprobe reports an unexpected message's envelope and size
// without consuming it, as often as asked; a receive then gets it.
func TestIprobe(t *testing.T) {
	for _, p := range protos {
		t.Run(p.name, func(t *testing.T) {
			h := newHarness(t, 2, p.cfg())
			e := h.engs[1]
			size := p.size()
			s := &Request{Mode: p.mode, Context: 1, Peer: 1, Self: 4, To: 1, Tag: 3, Buf: pattern(size), Sig: 11}
			if _, ok := e.Iprobe(1, AnySource, AnyTag, nil); ok {
				t.Fatal("Iprobe found a message in an empty engine")
			}
			h.send(0, s)
			h.drain()
			want := Status{Source: 4, Tag: 3, Size: size, Count: size, Sig: 11}
			for _, q := range [][2]int{{4, 3}, {AnySource, 3}, {4, AnyTag}, {AnySource, AnyTag}, {4, 3}} {
				if st, ok := e.Iprobe(1, q[0], q[1], nil); !ok || st != want {
					t.Fatalf("Iprobe(%d, %d): %v %+v, want %+v", q[0], q[1], ok, st, want)
				}
			}
			for _, q := range [][3]int{{1, 0, 3}, {1, 4, 2}, {2, AnySource, AnyTag}} {
				if _, ok := e.Iprobe(uint32(q[0]), q[1], q[2], nil); ok {
					t.Fatalf("Iprobe(%v) found the message", q)
				}
			}
			if got := h.pending(1); got != [4]int{0, 1, 0, 0} {
				t.Fatalf("pending after Iprobe: %v", got)
			}
			if p.waits() && s.Done() {
				t.Fatal("Iprobe completed a synchronous or rendezvous send")
			}
			r := &Request{Context: 1, Peer: 4, Tag: 3, Buf: guarded(size)}
			h.recv(1, r)
			h.drain()
			if !r.Done() || checkGuarded(r.Buf, size, pattern(size)) != nil || !s.Done() {
				t.Fatalf("receive after Iprobe: done %v %+v, send done %v", r.Done(), r.Status(), s.Done())
			}
			if _, ok := e.Iprobe(1, AnySource, AnyTag, nil); ok {
				t.Fatal("Iprobe found a received message")
			}
			h.checkClean(t)
		})
	}
}

// TestImprobe: Improbe takes the message out of matching: later probes and
// receives do not see it, and only MRecv receives it; the protocol then
// finishes (Ack, Fin or CTS/Data) as for a receive.
func TestImprobe(t *testing.T) {
	for _, p := range protos {
		for _, variant := range []string{"plain", "truncate", "alloc", "type-mismatch"} {
			t.Run(p.name+"/"+variant, func(t *testing.T) {
				h := newHarness(t, 2, p.cfg())
				e := h.engs[1]
				size := p.size()
				s := &Request{Mode: p.mode, Context: 1, Peer: 1, Self: 0, To: 1, Tag: 3, Buf: pattern(size), Sig: 8}
				h.send(0, s)
				h.drain()
				if m, ok := e.Improbe(1, 1, 3, nil); ok || m != nil {
					t.Fatal("Improbe matched another source")
				}
				if m, ok := e.Improbe(2, AnySource, AnyTag, nil); ok || m != nil {
					t.Fatal("Improbe matched another context")
				}
				m, ok := e.Improbe(1, AnySource, AnyTag, nil)
				if !ok || m == nil {
					t.Fatal("Improbe found nothing")
				}
				if st := m.Status(); st.Source != 0 || st.Tag != 3 || st.Size != size || st.Sig != 8 {
					t.Fatalf("Message.Status %+v", st)
				}
				if _, ok := e.Iprobe(1, AnySource, AnyTag, nil); ok {
					t.Fatal("message still visible to Iprobe after Improbe")
				}
				if m2, ok := e.Improbe(1, AnySource, AnyTag, nil); ok || m2 != nil {
					t.Fatal("message taken twice by Improbe")
				}
				other := &Request{Context: 1, Peer: AnySource, Tag: AnyTag, Buf: guarded(size)}
				h.recv(1, other)
				h.drain()
				if other.Done() {
					t.Fatal("a receive got the probed message")
				}
				if p.waits() && s.Done() {
					t.Fatal("the send completed before MRecv")
				}
				r := &Request{}
				want, count := error(nil), size
				switch variant {
				case "plain":
					r.Buf = guarded(size)
				case "truncate":
					r.Buf, want, count = guarded(size/2), ErrTruncate, size/2
				case "alloc":
					r.Alloc = func(n int) []byte { return guarded(n) }
				case "type-mismatch":
					r.Buf, r.Sig, want, count = guarded(size), 9, ErrType, 0
				}
				h.mrecv(1, m, r)
				h.drain()
				st := r.Status()
				if !r.Done() || !errors.Is(st.Err, want) || (want == nil) != (st.Err == nil) || st.Count != count || st.Size != size {
					t.Fatalf("MRecv: done %v %+v", r.Done(), st)
				}
				if err := checkGuarded(r.Buf, count, pattern(size)); err != nil {
					t.Fatal(err)
				}
				if !s.Done() || s.Status() != (Status{}) {
					t.Fatalf("send after MRecv: done %v %+v", s.Done(), s.Status())
				}
				if !e.CancelRecv(other) {
					t.Fatal("the other receive is no longer posted")
				}
				h.checkClean(t)
			})
		}
	}
}

// parked runs w.Park on a goroutine and returns a channel closed when it
// returns. A parked probe is woken by Wake; the timeout in waitWoken is
// only a safety net against hanging the test.
func parked(w *Waiter) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		w.Park()
		close(done)
	}()
	return done
}

func waitWoken(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: the probe's waiter was not woken", what)
	}
}

// woken reports, without blocking, whether w has a wake-up pending.
func woken(w *Waiter) bool {
	select {
	case <-w.ch:
		return true
	default:
		return false
	}
}

// TestProbeWaiter: a probe that found nothing registers its Waiter, and the
// next unexpected arrival (eager or RTS, matching or not: wake-ups may be
// spurious, the prober probes again) wakes it. A message that matches a
// posted receive does not.
func TestProbeWaiter(t *testing.T) {
	for _, p := range protos {
		for _, improbe := range []bool{false, true} {
			name := p.name + "/iprobe"
			if improbe {
				name = p.name + "/improbe"
			}
			t.Run(name, func(t *testing.T) {
				h := newHarness(t, 2, p.cfg())
				e := h.engs[1]
				w := NewWaiter()
				probe := func() bool {
					if improbe {
						m, ok := e.Improbe(1, 0, 3, w)
						if ok {
							h.mrecv(1, m, &Request{Buf: guarded(p.size())})
						}
						return ok
					}
					_, ok := e.Iprobe(1, 0, 3, w)
					return ok
				}
				if probe() {
					t.Fatal("probe found a message in an empty engine")
				}
				// A message that a posted receive takes does not wake the probe.
				r := &Request{Context: 1, Peer: 0, Tag: AnyTag, Buf: guarded(p.size())}
				h.recv(1, r)
				h.send(0, &Request{Mode: p.mode, Context: 1, Peer: 1, To: 1, Tag: 4, Buf: pattern(p.size())})
				h.drain()
				if !r.Done() || woken(w) {
					t.Fatalf("receive done %v; probe woken by a matched message", r.Done())
				}
				// The waiter is parked; a message it does not match arrives: a
				// spurious wake-up, the probe finds nothing and parks again.
				done := parked(w)
				h.send(0, &Request{Mode: p.mode, Context: 1, Peer: 1, To: 1, Tag: 5, Buf: pattern(p.size())})
				h.drain()
				waitWoken(t, done, "non-matching arrival")
				if probe() {
					t.Fatal("probe matched tag 5")
				}
				done = parked(w)
				h.send(0, &Request{Mode: p.mode, Context: 1, Peer: 1, To: 1, Tag: 3, Buf: pattern(p.size())})
				h.drain()
				waitWoken(t, done, "matching arrival")
				if !probe() {
					t.Fatal("probe found nothing after the arrival")
				}
				// Woken once per registration: the list was emptied.
				h.send(0, &Request{Mode: p.mode, Context: 1, Peer: 1, To: 1, Tag: 6, Buf: pattern(p.size())})
				h.drain()
				if woken(w) {
					t.Fatal("a waiter woken twice for one registration")
				}
			})
		}
	}
}

// TestProbeAbortWakes: Abort wakes blocked probes, and probes then report
// the error.
func TestProbeAbortWakes(t *testing.T) {
	e := New(0, DefaultConfig(), nil)
	w1, w2 := NewWaiter(), NewWaiter()
	e.Iprobe(1, AnySource, AnyTag, w1)
	e.Improbe(1, AnySource, AnyTag, w2)
	d1, d2 := parked(w1), parked(w2)
	boom := errors.New("boom")
	e.Abort(boom)
	waitWoken(t, d1, "Iprobe")
	waitWoken(t, d2, "Improbe")
	if st, ok := e.Iprobe(1, AnySource, AnyTag, nil); !ok || !errors.Is(st.Err, boom) {
		t.Fatalf("Iprobe after Abort: %v %+v", ok, st)
	}
	if m, ok := e.Improbe(1, AnySource, AnyTag, nil); !ok || m != nil {
		t.Fatalf("Improbe after Abort: %v %v", ok, m)
	}
}

// TestUnexpectedCopy: a frame only lends its payload to Deliver, so an
// unexpected eager message must be copied before Deliver returns.
func TestUnexpectedCopy(t *testing.T) {
	h := newHarness(t, 2, protos[0].cfg())
	payload := pattern(10)
	f := wire.Frame{Header: wire.Header{Kind: wire.Eager, Context: 1, Tag: 1, Size: 10}, From: 0, To: 1, Payload: payload}
	if err := h.inject(&f); err != nil {
		t.Fatal(err)
	}
	clear(payload) // the transport reuses its buffer
	for _, mprobe := range []bool{false, true} {
		r := &Request{Context: 1, Peer: 0, Tag: 1, Buf: make([]byte, 10)}
		if mprobe {
			m, _ := h.engs[1].Improbe(1, AnySource, AnyTag, nil)
			h.mrecv(1, m, r)
		} else {
			h.recv(1, r)
		}
		if !r.Done() || !bytes.Equal(r.Buf, pattern(10)) {
			t.Fatalf("mprobe %v: received %v", mprobe, r.Buf)
		}
		if err := h.inject(&wire.Frame{Header: f.Header, From: 0, To: 1, Payload: pattern(10)}); err != nil {
			t.Fatal(err)
		}
	}
	h.recv(1, &Request{Context: 1, Peer: 0, Tag: 1, Buf: make([]byte, 10)})
	h.checkClean(t)
}
