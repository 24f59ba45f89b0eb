package engine

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/mpigo/mpi/internal/wire"
)

// sim is a deterministic network of engines: frames wait in per-link FIFO
// queues until the test delivers them, one at a time, in an order it
// chooses. There are no goroutines and no clocks.
type sim struct {
	t     testing.TB
	engs  []*Engine
	links map[[2]int][]wire.Frame
}

type simConfig struct {
	eager, chunk int
	direct       bool
}

func newSim(t testing.TB, n int, cfg simConfig) *sim {
	s := &sim{t: t, links: map[[2]int][]wire.Frame{}}
	for r := 0; r < n; r++ {
		direct := func(int) bool { return cfg.direct }
		s.engs = append(s.engs, New(r, Config{EagerLimit: cfg.eager, ChunkSize: cfg.chunk}, direct))
	}
	return s
}

// flush "sends" what an engine call put in out, as a runtime would: the
// frame is queued (its payload copied, since frames borrow payloads) and
// then the item's request completes.
func (s *sim) flush(out *Outbox) {
	for i := 0; i < out.Len(); i++ {
		it := out.At(i)
		f := it.F
		f.Payload = append([]byte(nil), f.Payload...)
		k := [2]int{f.From, f.To}
		s.links[k] = append(s.links[k], f)
		if it.Done != nil {
			it.Done.Complete(Status{})
		}
	}
	out.Reset()
}

func (s *sim) send(from int, r *Request) {
	var out Outbox
	s.engs[from].Send(r, &out)
	s.flush(&out)
}

func (s *sim) recv(at int, r *Request) {
	var out Outbox
	s.engs[at].PostRecv(r, &out)
	s.flush(&out)
}

// deliver delivers the first frame queued on link from->to.
func (s *sim) deliver(from, to int) error {
	k := [2]int{from, to}
	q := s.links[k]
	if len(q) == 0 {
		s.t.Fatalf("nothing to deliver on %d->%d", from, to)
	}
	f := q[0]
	s.links[k] = q[1:]
	var out Outbox
	err := s.engs[to].Deliver(&f, &out)
	s.flush(&out)
	return err
}

// links returns the links with frames waiting, in a fixed order.
func (s *sim) busy() [][2]int {
	var ks [][2]int
	for a := range s.engs {
		for b := range s.engs {
			if len(s.links[[2]int{a, b}]) > 0 {
				ks = append(ks, [2]int{a, b})
			}
		}
	}
	return ks
}

// drain delivers frames until none are left.
func (s *sim) drain() {
	for {
		ks := s.busy()
		if len(ks) == 0 {
			return
		}
		if err := s.deliver(ks[0][0], ks[0][1]); err != nil {
			s.t.Fatal(err)
		}
	}
}

func (s *sim) clean(t testing.TB) {
	t.Helper()
	for r, e := range s.engs {
		if p, u, sn, rv := e.Pending(); p+u+sn+rv != 0 {
			t.Errorf("engine %d not clean: %d posted, %d unexpected, %d sends, %d receives in flight", r, p, u, sn, rv)
		}
	}
}

func payload(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + 3)
	}
	return b
}

// A protocol configuration and the message that exercises it.
type protoCase struct {
	name string
	cfg  simConfig
	size int
	mode Mode
}

var protocols = []protoCase{
	{"eager", simConfig{eager: 64, chunk: 16}, 40, Standard},
	{"eager-sync", simConfig{eager: 64, chunk: 16}, 40, Synchronous},
	{"eager-empty", simConfig{eager: 64, chunk: 16}, 0, Standard},
	{"rendezvous-direct", simConfig{eager: 64, chunk: 16, direct: true}, 1000, Standard},
	{"rendezvous-direct-sync", simConfig{eager: 64, chunk: 16, direct: true}, 1000, Synchronous},
	{"rendezvous-stream", simConfig{eager: 64, chunk: 16}, 10*16 + 3, Standard},
	{"rendezvous-stream-sync", simConfig{eager: 0, chunk: 16}, 10*16 + 3, Synchronous},
}

// event is one step of a schedule: post the receive, post the send, or
// deliver the head of a link.
type event struct {
	kind     byte // 'r', 's', 'd'
	from, to int
}

func (e event) String() string {
	if e.kind == 'd' {
		return fmt.Sprintf("deliver %d->%d", e.from, e.to)
	}
	return map[byte]string{'r': "post recv", 's': "post send"}[e.kind]
}

// run1 replays schedule for one message from rank 0 to rank 1 and returns
// the events enabled afterwards.
type oneMsg struct {
	s          *sim
	send, recv *Request
	posted     bool // receive posted
	data       []byte
	buf        []byte
}

func replay(t testing.TB, pc protoCase, sched []event) (*oneMsg, []event) {
	m := &oneMsg{s: newSim(t, 2, pc.cfg), data: payload(pc.size)}
	m.buf = make([]byte, pc.size, pc.size+8)
	m.send = &Request{Mode: pc.mode, Context: 4, Peer: 1, Self: 0, To: 1, Tag: 9, Buf: m.data, Sig: 77}
	m.recv = &Request{Context: 4, Peer: 0, Tag: 9, Buf: m.buf, Sig: 77}
	sent := false
	for _, ev := range sched {
		switch ev.kind {
		case 'r':
			m.s.recv(1, m.recv)
			m.posted = true
		case 's':
			m.s.send(0, m.send)
			sent = true
		case 'd':
			if err := m.s.deliver(ev.from, ev.to); err != nil {
				t.Fatalf("%v: %v", sched, err)
			}
		}
		if pc.mode == Synchronous && m.send.Done() && !m.posted {
			t.Fatalf("%v: synchronous send completed before the receive was posted", sched)
		}
	}
	var next []event
	if !m.posted {
		next = append(next, event{kind: 'r'})
	}
	if !sent {
		next = append(next, event{kind: 's'})
	}
	for _, k := range m.s.busy() {
		next = append(next, event{'d', k[0], k[1]})
	}
	return m, next
}

// TestEngineInterleavings runs one message through every order of its
// events — receive early or late, each frame delivered whenever it may be —
// for each protocol, and checks the result at the end of every order.
func TestEngineInterleavings(t *testing.T) {
	for _, pc := range protocols {
		t.Run(pc.name, func(t *testing.T) {
			schedules := 0
			var explore func(sched []event)
			explore = func(sched []event) {
				m, next := replay(t, pc, sched)
				if len(next) > 0 {
					for _, ev := range next {
						explore(append(append([]event(nil), sched...), ev))
					}
					return
				}
				schedules++
				if !m.recv.Done() || !m.send.Done() {
					t.Fatalf("%v: stuck: recv done %v, send done %v", sched, m.recv.Done(), m.send.Done())
				}
				st := m.recv.Status()
				if st.Err != nil || st.Source != 0 || st.Tag != 9 || st.Size != pc.size || st.Count != pc.size || st.Sig != 77 {
					t.Fatalf("%v: status %+v", sched, st)
				}
				if !bytes.Equal(m.buf, m.data) {
					t.Fatalf("%v: received bytes differ", sched)
				}
				if st := m.send.Status(); st.Err != nil || st.Cancelled {
					t.Fatalf("%v: send status %+v", sched, st)
				}
				m.s.clean(t)
			}
			explore(nil)
			if schedules < 2 {
				t.Errorf("only %d schedules explored", schedules)
			}
			t.Logf("%d schedules", schedules)
		})
	}
}

func TestEngineMatching(t *testing.T) {
	s := newSim(t, 3, simConfig{eager: 1 << 10, chunk: 64})
	mk := func(ctx uint32, peer, tag int) *Request {
		return &Request{Context: ctx, Peer: peer, Tag: tag, Buf: make([]byte, 8)}
	}
	send := func(from, ctx uint32, tag int, v byte) {
		s.send(int(from), &Request{Context: ctx, Peer: 2, Self: int(from), To: 2, Tag: tag, Buf: []byte{v}})
	}
	// Receives posted first, in this order.
	anyAny := mk(1, AnySource, AnyTag)
	from1 := mk(1, 1, AnyTag)
	tag5 := mk(1, AnySource, 5)
	otherCtx := mk(3, AnySource, AnyTag)
	for _, r := range []*Request{anyAny, from1, tag5, otherCtx} {
		s.recv(2, r)
	}
	send(0, 1, 5, 'a') // first posted match: anyAny
	send(0, 1, 5, 'b') // from1 doesn't match source 0: tag5
	send(1, 1, 7, 'c') // from1
	send(0, 2, 7, 'd') // context 2: nobody -> unexpected
	s.drain()
	for _, c := range []struct {
		r    *Request
		want byte
	}{{anyAny, 'a'}, {tag5, 'b'}, {from1, 'c'}} {
		if !c.r.Done() || c.r.Buf[0] != c.want {
			t.Errorf("receive got %q (done %v), want %q", c.r.Buf[0], c.r.Done(), c.want)
		}
	}
	if otherCtx.Done() {
		t.Error("a receive on context 3 matched a message on another context")
	}
	if st, ok := s.engs[2].Iprobe(2, AnySource, AnyTag, nil); !ok || st.Tag != 7 {
		t.Errorf("Iprobe on context 2: %v %+v", ok, st)
	}
	if _, ok := s.engs[2].Iprobe(1, AnySource, AnyTag, nil); ok {
		t.Error("Iprobe found a message on context 1")
	}
	if !s.engs[2].CancelRecv(otherCtx) || !otherCtx.Status().Cancelled {
		t.Error("could not cancel the posted receive")
	}
	r := mk(2, 0, 7)
	s.recv(2, r)
	if !r.Done() || r.Buf[0] != 'd' {
		t.Error("unexpected message not received")
	}
	s.clean(t)
}

// Non-overtaking: messages from one sender are matched in order, whether
// they arrive before or after the receives and whatever their protocol.
func TestEngineNonOvertaking(t *testing.T) {
	for _, direct := range []bool{false, true} {
		s := newSim(t, 2, simConfig{eager: 32, chunk: 16, direct: direct})
		const n = 100
		var sends []*Request
		for i := 0; i < n; i++ {
			b := payload(1 + (i*37)%100) // eager and rendezvous mixed
			b[0] = byte(i)
			r := &Request{Context: 1, Peer: 1, To: 1, Tag: i % 3, Buf: b}
			sends = append(sends, r)
			s.send(0, r)
			if i%4 == 0 {
				s.drain()
			}
		}
		for i := 0; i < n; i++ {
			r := &Request{Context: 1, Peer: 0, Tag: AnyTag, Alloc: func(n int) []byte { return make([]byte, n) }}
			s.recv(1, r)
			s.drain()
			if !r.Done() || r.Buf[0] != byte(i) {
				t.Fatalf("direct=%v: receive %d got message %d", direct, i, r.Buf[0])
			}
		}
		for i, r := range sends {
			if !r.Done() {
				t.Fatalf("send %d not complete", i)
			}
		}
		s.clean(t)
	}
}

// Truncation: the buffer fills, nothing is written past it, ErrTruncate is
// reported, the sender completes and both engines are left clean.
func TestEngineTruncate(t *testing.T) {
	for _, pc := range protocols {
		for _, late := range []bool{false, true} {
			s := newSim(t, 2, pc.cfg)
			data := payload(100)
			if pc.size > 64 {
				data = payload(1000)
			}
			backing := bytes.Repeat([]byte{0xEE}, 80)
			r := &Request{Context: 1, Peer: 0, Tag: 1, Buf: backing[:60]}
			snd := &Request{Mode: pc.mode, Context: 1, Peer: 1, To: 1, Tag: 1, Buf: data}
			if !late {
				s.recv(1, r)
			}
			s.send(0, snd)
			s.drain()
			if late {
				s.recv(1, r)
				s.drain()
			}
			st := r.Status()
			if !r.Done() || !errors.Is(st.Err, ErrTruncate) || st.Count != 60 || st.Size != len(data) {
				t.Fatalf("%s late=%v: status %+v", pc.name, late, st)
			}
			if !bytes.Equal(backing[:60], data[:60]) || !bytes.Equal(backing[60:], bytes.Repeat([]byte{0xEE}, 20)) {
				t.Fatalf("%s late=%v: wrong bytes or written past the buffer", pc.name, late)
			}
			if !snd.Done() || snd.Status().Err != nil {
				t.Fatalf("%s late=%v: sender %v %+v", pc.name, late, snd.Done(), snd.Status())
			}
			s.clean(t)
		}
	}
}

// A receive of another type signature fails with ErrType without touching
// the buffer; 0 on either side matches anything.
func TestEngineTypeSignature(t *testing.T) {
	for _, pc := range protocols {
		s := newSim(t, 2, pc.cfg)
		buf := bytes.Repeat([]byte{1}, max(pc.size, 1))
		r := &Request{Context: 1, Peer: 0, Tag: 1, Buf: buf, Sig: 5}
		snd := &Request{Mode: pc.mode, Context: 1, Peer: 1, To: 1, Tag: 1, Buf: payload(pc.size), Sig: 6}
		s.recv(1, r)
		s.send(0, snd)
		s.drain()
		if !errors.Is(r.Status().Err, ErrType) || !bytes.Equal(buf, bytes.Repeat([]byte{1}, len(buf))) {
			t.Fatalf("%s: %+v", pc.name, r.Status())
		}
		if !snd.Done() {
			t.Fatalf("%s: sender left hanging after a type mismatch", pc.name)
		}
		s.clean(t)
		// Untyped (0) matches.
		r2 := &Request{Context: 1, Peer: 0, Tag: 1, Buf: make([]byte, pc.size)}
		s.recv(1, r2)
		s.send(0, &Request{Mode: pc.mode, Context: 1, Peer: 1, To: 1, Tag: 1, Buf: payload(pc.size), Sig: 6})
		s.drain()
		if r2.Status().Err != nil || r2.Status().Sig != 6 {
			t.Fatalf("%s: untyped receive: %+v", pc.name, r2.Status())
		}
		s.clean(t)
	}
}

// Alloc gives a buffer of exactly the message's size, on every protocol.
func TestEngineAllocOnMatch(t *testing.T) {
	for _, pc := range protocols {
		for _, late := range []bool{false, true} {
			s := newSim(t, 2, pc.cfg)
			r := &Request{Context: 1, Peer: AnySource, Tag: AnyTag, Alloc: func(n int) []byte { return make([]byte, n) }}
			if !late {
				s.recv(1, r)
			}
			s.send(0, &Request{Mode: pc.mode, Context: 1, Peer: 1, To: 1, Tag: 3, Buf: payload(pc.size)})
			s.drain()
			if late {
				s.recv(1, r)
				s.drain()
			}
			if !r.Done() || len(r.Buffer()) != pc.size || !bytes.Equal(r.Buffer(), payload(pc.size)) {
				t.Fatalf("%s late=%v: got %d bytes", pc.name, late, len(r.Buffer()))
			}
			s.clean(t)
		}
	}
}

// Improbe takes a message out of matching; only MRecv gets it.
func TestEngineMprobe(t *testing.T) {
	for _, pc := range protocols {
		s := newSim(t, 2, pc.cfg)
		snd := &Request{Mode: pc.mode, Context: 1, Peer: 1, To: 1, Tag: 3, Buf: payload(pc.size)}
		s.send(0, snd)
		s.drain()
		st, ok := s.engs[1].Iprobe(1, 0, 3, nil)
		if !ok || st.Size != pc.size {
			t.Fatalf("%s: Iprobe %v %+v", pc.name, ok, st)
		}
		m, ok := s.engs[1].Improbe(1, AnySource, AnyTag, nil)
		if !ok || m == nil {
			t.Fatalf("%s: Improbe found nothing", pc.name)
		}
		if _, ok := s.engs[1].Iprobe(1, AnySource, AnyTag, nil); ok {
			t.Fatalf("%s: message still visible after Improbe", pc.name)
		}
		other := &Request{Context: 1, Peer: AnySource, Tag: AnyTag, Buf: make([]byte, pc.size)}
		s.recv(1, other)
		if other.Done() {
			t.Fatalf("%s: a receive got the probed message", pc.name)
		}
		r := &Request{Buf: make([]byte, pc.size)}
		var out Outbox
		s.engs[1].MRecv(m, r, &out)
		s.flush(&out)
		s.drain()
		if !r.Done() || !bytes.Equal(r.Buf, payload(pc.size)) || !snd.Done() {
			t.Fatalf("%s: MRecv: done %v, send done %v", pc.name, r.Done(), snd.Done())
		}
		s.engs[1].CancelRecv(other)
		s.clean(t)
	}
}

// A blocked probe's waiter is woken by the next arrival.
func TestEngineProbeWakeup(t *testing.T) {
	s := newSim(t, 2, simConfig{eager: 64, chunk: 16})
	w := NewWaiter()
	if _, ok := s.engs[1].Iprobe(1, AnySource, AnyTag, w); ok {
		t.Fatal("Iprobe found a message in an empty engine")
	}
	s.send(0, &Request{Context: 1, Peer: 1, To: 1, Tag: 1, Buf: []byte{1}})
	s.drain()
	select {
	case <-w.ch:
	default:
		t.Fatal("the probe's waiter was not woken by the arrival")
	}
}

func TestEngineCancelSend(t *testing.T) {
	cases := []protoCase{protocols[1], protocols[3], protocols[5]} // eager-sync, rendezvous direct, stream
	for _, pc := range cases {
		// Unmatched: cancelled, and the receiver never sees it.
		s := newSim(t, 2, pc.cfg)
		snd := &Request{Mode: pc.mode, Context: 1, Peer: 1, To: 1, Tag: 1, Buf: payload(pc.size)}
		s.send(0, snd)
		s.drain()
		var out Outbox
		if !s.engs[0].CancelSend(snd, &out) {
			t.Fatalf("%s: CancelSend refused", pc.name)
		}
		s.flush(&out)
		s.drain()
		if !snd.Done() || !snd.Status().Cancelled {
			t.Fatalf("%s: send not cancelled: %+v", pc.name, snd.Status())
		}
		s.clean(t)
		// Matched first: the cancel fails and the send completes normally.
		s = newSim(t, 2, pc.cfg)
		snd = &Request{Mode: pc.mode, Context: 1, Peer: 1, To: 1, Tag: 1, Buf: payload(pc.size)}
		s.send(0, snd)
		s.recv(1, &Request{Context: 1, Peer: 0, Tag: 1, Buf: make([]byte, pc.size)})
		out = Outbox{}
		s.engs[0].CancelSend(snd, &out)
		s.flush(&out)
		s.drain()
		if !snd.Done() || snd.Status().Cancelled {
			t.Fatalf("%s: matched send: %+v", pc.name, snd.Status())
		}
		s.clean(t)
	}
	// An eager standard send is complete at once: nothing to cancel.
	s := newSim(t, 2, protocols[0].cfg)
	snd := &Request{Context: 1, Peer: 1, To: 1, Tag: 1, Buf: payload(8)}
	s.send(0, snd)
	var out Outbox
	if s.engs[0].CancelSend(snd, &out) {
		t.Error("CancelSend accepted a completed eager send")
	}
}

func TestEngineAbort(t *testing.T) {
	s := newSim(t, 2, simConfig{eager: 8, chunk: 4})
	posted := &Request{Context: 1, Peer: 0, Tag: 1, Buf: make([]byte, 4)}
	s.recv(1, posted)
	waiting := &Request{Context: 1, Peer: 1, To: 1, Tag: 2, Buf: payload(100)} // rendezvous, never matched
	s.send(0, waiting)
	s.drain()
	streaming := &Request{Context: 1, Peer: 0, Tag: 2, Buf: make([]byte, 100)}
	s.recv(1, streaming) // matches the RTS: CTS goes back; data not yet delivered
	boom := errors.New("boom")
	s.engs[1].Abort(boom)
	s.engs[0].Abort(boom)
	for i, r := range []*Request{posted, waiting, streaming} {
		if !r.Done() || !errors.Is(r.Status().Err, boom) {
			t.Errorf("request %d: done %v, %+v", i, r.Done(), r.Status())
		}
	}
	late := &Request{Context: 1, Peer: 0, Tag: 1, Buf: make([]byte, 4)}
	s.recv(1, late)
	lateSend := &Request{Context: 1, Peer: 1, To: 1, Tag: 1, Buf: payload(100)}
	s.send(0, lateSend)
	if !errors.Is(late.Status().Err, boom) || !errors.Is(lateSend.Status().Err, boom) {
		t.Errorf("operations after Abort: %+v %+v", late.Status(), lateSend.Status())
	}
	if !errors.Is(s.engs[1].Err(), boom) {
		t.Error("Err() does not report the abort")
	}
}

func TestEngineProtocolErrors(t *testing.T) {
	frames := []wire.Frame{
		{Header: wire.Header{Kind: wire.CTS, SendID: 99}, From: 1, To: 0},
		{Header: wire.Header{Kind: wire.Data, RecvID: 99, Size: 4}, From: 1, To: 0, Payload: []byte{1, 2, 3, 4}},
		{Header: wire.Header{Kind: wire.Fin, SendID: 99}, From: 1, To: 0},
		{Header: wire.Header{Kind: wire.Ack, SendID: 99}, From: 1, To: 0},
		{Header: wire.Header{Kind: wire.Eager, Size: 2}, From: 1, To: 0, Payload: []byte{1, 2, 3}},
		{Header: wire.Header{Kind: 200}, From: 1, To: 0},
	}
	for _, f := range frames {
		e := New(0, DefaultConfig(), nil)
		var out Outbox
		if err := e.Deliver(&f, &out); !errors.Is(err, ErrProtocol) {
			t.Errorf("%v: %v, want ErrProtocol", f.Kind, err)
		}
	}
}

func TestBsendBuffer(t *testing.T) {
	var b BsendBuffer
	if _, _, err := b.Alloc(1); !errors.Is(err, ErrNoBuffer) {
		t.Fatalf("no buffer: %v", err)
	}
	if err := b.Attach(make([]byte, 3*(100+BsendOverhead))); err != nil {
		t.Fatal(err)
	}
	if err := b.Attach(make([]byte, 10)); err == nil {
		t.Fatal("second Attach accepted")
	}
	var rel []func()
	for i := 0; i < 3; i++ {
		d, r, err := b.Alloc(100)
		if err != nil || len(d) != 100 {
			t.Fatalf("alloc %d: %v", i, err)
		}
		rel = append(rel, r)
	}
	if _, _, err := b.Alloc(1); !errors.Is(err, ErrBufferFull) {
		t.Fatalf("full buffer: %v", err)
	}
	rel[1]() // a hole in the middle is reused (first fit)
	rel[1]() // releasing twice is harmless
	if _, r, err := b.Alloc(100); err != nil {
		t.Fatalf("alloc into the hole: %v", err)
	} else {
		rel[1] = r
	}
	done := make(chan []byte)
	go func() {
		m, _ := b.Detach()
		done <- m
	}()
	for _, r := range rel {
		select {
		case <-done:
			t.Fatal("Detach returned while sends were still using the buffer")
		default:
		}
		r()
	}
	if m := <-done; len(m) != 3*(100+BsendOverhead) {
		t.Fatalf("Detach returned %d bytes", len(m))
	}
	if _, err := b.Detach(); err == nil {
		t.Fatal("Detach with nothing attached succeeded")
	}
}

// FuzzDeliver feeds random frames to an engine with receives posted and
// sends in flight: it may return errors but must never panic.
func FuzzDeliver(f *testing.F) {
	f.Add([]byte{1, 0, 5, 0, 10, 3, 1, 2, 3})
	f.Add([]byte{2, 1, 0, 1, 200, 0, 4, 3, 1, 0, 2, 4, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		e := New(0, Config{EagerLimit: 16, ChunkSize: 8}, func(int) bool { return len(data)%2 == 0 })
		var out Outbox
		e.PostRecv(&Request{Context: 1, Peer: AnySource, Tag: AnyTag, Buf: make([]byte, 8)}, &out)
		e.PostRecv(&Request{Context: 1, Peer: 1, Tag: 2, Alloc: func(n int) []byte {
			if n > 1<<16 {
				n = 1 << 16
			}
			return make([]byte, n)
		}}, &out)
		e.Send(&Request{Context: 1, Peer: 1, To: 1, Tag: 2, Buf: make([]byte, 40)}, &out)
		for len(data) >= 6 {
			n := int(data[5] % 32)
			if n > len(data)-6 {
				n = len(data) - 6
			}
			fr := wire.Frame{Header: wire.Header{Kind: wire.Kind(data[0] % 10), Context: uint32(data[1] % 3), Src: int32(data[2] % 3),
				Tag: int32(data[3] % 4), Size: int64(data[4]), SendID: uint64(data[1] % 4), RecvID: uint64(data[2] % 4), Offset: int64(data[3] % 8)},
				From: 1, To: 0, Payload: data[6 : 6+n]}
			if fr.Kind == wire.RTS && len(data)%3 == 0 {
				fr.Region = make([]byte, fr.Size)
			}
			out.Reset()
			e.Deliver(&fr, &out)
			data = data[6+n:]
		}
	})
}

func BenchmarkEagerPostedMatch(b *testing.B) {
	e := New(0, DefaultConfig(), nil)
	r := &Request{}
	buf := make([]byte, 8)
	f := wire.Frame{Header: wire.Header{Kind: wire.Eager, Context: 1, Src: 1, Tag: 1, Size: 8}, From: 1, Payload: make([]byte, 8)}
	var out Outbox
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r.Reset()
		r.Context, r.Peer, r.Tag, r.Buf = 1, 1, 1, buf
		e.PostRecv(r, &out)
		e.Deliver(&f, &out)
	}
}

func BenchmarkEagerUnexpected(b *testing.B) {
	e := New(0, DefaultConfig(), nil)
	r := &Request{}
	buf := make([]byte, 8)
	f := wire.Frame{Header: wire.Header{Kind: wire.Eager, Context: 1, Src: 1, Tag: 1, Size: 8}, From: 1, Payload: make([]byte, 8)}
	var out Outbox
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		e.Deliver(&f, &out)
		r.Reset()
		r.Context, r.Peer, r.Tag, r.Buf = 1, 1, 1, buf
		e.PostRecv(r, &out)
	}
}

// FailAll fails what depends on the dead peer and nothing else.
func TestEngineFailAll(t *testing.T) {
	s := newSim(t, 3, simConfig{eager: 8, chunk: 4})
	fromDead := &Request{Context: 1, Peer: 1, FromWorld: 2, Tag: 1, Buf: make([]byte, 4)}
	fromLive := &Request{Context: 1, Peer: 0, FromWorld: 1, Tag: 1, Buf: make([]byte, 4)}
	anySrc := &Request{Context: 1, Peer: AnySource, Tag: 1, Buf: make([]byte, 4)}
	for _, r := range []*Request{fromDead, fromLive, anySrc} {
		s.recv(2, r)
	}
	toDead := &Request{Context: 1, Peer: 1, To: 1, Tag: 1, Buf: payload(100)} // rendezvous, waiting
	s.send(2, toDead)
	boom := errors.New("rank 1 died")
	s.engs[2].FailAll(1, boom)
	if !errors.Is(fromDead.Status().Err, boom) || !errors.Is(toDead.Status().Err, boom) {
		t.Errorf("requests on the dead rank: %+v %+v", fromDead.Status(), toDead.Status())
	}
	if fromLive.Done() {
		t.Error("FailAll failed a receive that does not depend on the dead rank")
	}
	if !errors.Is(anySrc.Status().Err, boom) {
		t.Errorf("AnySource receive: %+v", anySrc.Status())
	}
	if p, _, _, _ := s.engs[2].Pending(); p != 1 {
		t.Errorf("%d receives still posted, want 1", p)
	}
}

// DataDest lets a byte-stream transport read Data payloads straight into
// the receive buffer; delivering them then copies nothing.
func TestEngineDataDest(t *testing.T) {
	s := newSim(t, 2, simConfig{eager: 8, chunk: 16})
	data := payload(100)
	buf := make([]byte, 100)
	r := &Request{Context: 1, Peer: 0, Tag: 1, Buf: buf}
	s.recv(1, r)
	s.send(0, &Request{Context: 1, Peer: 1, To: 1, Tag: 1, Buf: data})
	s.deliver(0, 1) // RTS
	s.deliver(1, 0) // CTS: the sender queues Data frames
	q := s.links[[2]int{0, 1}]
	s.links[[2]int{0, 1}] = nil
	if len(q) != 7 {
		t.Fatalf("%d data frames, want 7", len(q))
	}
	if s.engs[1].DataDest(&q[0].Header, 1, 16) != nil {
		t.Error("DataDest accepted a frame from the wrong rank")
	}
	if s.engs[1].DataDest(&q[0].Header, 0, 200) != nil {
		t.Error("DataDest accepted a payload that overruns the receive")
	}
	for _, f := range q {
		dst := s.engs[1].DataDest(&f.Header, 0, len(f.Payload))
		if len(dst) != len(f.Payload) || &dst[0] != &buf[f.Offset] {
			t.Fatalf("DataDest at %d: %d bytes", f.Offset, len(dst))
		}
		copy(dst, f.Payload) // what the transport's read does
		f.Payload = dst
		var out Outbox
		if err := s.engs[1].Deliver(&f, &out); err != nil {
			t.Fatal(err)
		}
	}
	if !r.Done() || !bytes.Equal(buf, data) {
		t.Fatal("in-place delivery did not complete the receive")
	}
	s.clean(t)
}

// A rendezvous counts each Data frame that reaches its receive
// (Engine.Chunks): hang diagnosis reads them as the progress of one long
// message, so that a transfer longer than its threshold is not a hang.
func TestEngineChunksCounted(t *testing.T) {
	s := newSim(t, 2, simConfig{eager: 64, chunk: 100})
	data := payload(1000)
	r := &Request{Context: 1, Peer: 0, Tag: 1, Buf: make([]byte, len(data))}
	s.recv(1, r)
	s.send(0, &Request{Context: 1, Peer: 1, To: 1, Tag: 1, Buf: data})
	s.deliver(0, 1) // RTS
	s.deliver(1, 0) // CTS
	var seen []uint64
	for len(s.links[[2]int{0, 1}]) > 0 {
		if err := s.deliver(0, 1); err != nil {
			t.Fatal(err)
		}
		seen = append(seen, s.engs[1].Chunks())
	}
	if len(seen) != 10 || seen[0] != 1 || seen[9] != 10 {
		t.Fatalf("Chunks after each of the Data frames: %v, want 1 to 10", seen)
	}
	if !r.Done() || !bytes.Equal(r.Buf, data) {
		t.Fatalf("receive done %v, bytes right %v", r.Done(), bytes.Equal(r.Buf, data))
	}
	s.drain()
	s.clean(t)
}
