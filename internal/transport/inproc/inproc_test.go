package inproc

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/wire"
)

// SendEager hands the destination's handler the eager frame Send would
// have carried (sender, envelope, signature, send id, payload), and fails
// for a rank that does not exist or has exited.
func TestSendEager(t *testing.T) {
	fb := NewFabric(3)
	var got []wire.Frame
	fb.Attach(2, func(f wire.Frame) {
		f.Payload = append([]byte(nil), f.Payload...)
		got = append(got, f)
	})
	var es transport.EagerSender = fb.Attach(1, func(wire.Frame) {})
	if err := es.SendEager(2, 7, 3, 9, 0xabc, 42, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	want := wire.Frame{Header: wire.Header{Kind: wire.Eager, Context: 7, Src: 3, Tag: 9, Size: 5, SendID: 42, Sig: 0xabc},
		From: 1, To: 2}
	if len(got) != 1 {
		t.Fatalf("%d frames delivered, want 1", len(got))
	}
	f := got[0]
	if string(f.Payload) != "hello" {
		t.Errorf("payload %q, want %q", f.Payload, "hello")
	}
	if !f.Unanswered(len(f.Payload)) {
		t.Errorf("frame %+v is not a plain eager one", f.Header)
	}
	f.Payload = nil
	if f.Header != want.Header || f.From != want.From || f.To != want.To || f.Region != nil || f.Source != nil {
		t.Errorf("frame %+v, want %+v", f, want)
	}
	if err := es.SendEager(0, 7, 3, 9, 0, 0, nil); err == nil {
		t.Error("SendEager to a rank with no handler succeeded")
	}
	if err := es.SendEager(3, 7, 3, 9, 0, 0, nil); err == nil {
		t.Error("SendEager to rank 3 of 3 succeeded")
	}
	fb.Detach(2)
	if err := es.SendEager(2, 7, 3, 9, 0, 0, nil); err == nil {
		t.Error("SendEager to an exited rank succeeded")
	}
	if r := es.EagerRoom(); r != 0 {
		t.Errorf("EagerRoom = %d, want 0 (the eager limit stays)", r)
	}
}

// recorder is an endpoint's receiver that keeps what it is given.
type recorder struct {
	mu  sync.Mutex
	got []wire.Frame
}

func (r *recorder) frame(f wire.Frame) {
	r.mu.Lock()
	f.Payload = append([]byte(nil), f.Payload...)
	r.got = append(r.got, f)
	r.mu.Unlock()
}

func (r *recorder) eager(h wire.Header, from int, payload []byte) {
	r.frame(wire.Frame{Header: h, From: from, Payload: payload})
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

// An open inbox keeps small messages until the receiver collects them,
// and delivers them in order, with their envelope; Close delivers what is
// left; larger messages and frames wait for the box to be emptied first.
func TestInboxKeepsOrder(t *testing.T) {
	fb := NewFabric(2)
	var rec recorder
	mb := fb.AttachEager(1, rec.frame, rec.eager).Mailbox()
	tr := fb.AttachEager(0, func(wire.Frame) {}, func(wire.Header, int, []byte) {})
	mb.Open()
	big := make([]byte, boxMax+1)
	for i := range 10 {
		p := []byte{byte(i)}
		if i == 7 {
			p = append(big, byte(i))
		}
		if err := tr.SendEager(1, 5, 0, int32(i), 0xab, uint64(i), p); err != nil {
			t.Fatal(err)
		}
		if i == 3 {
			if n := rec.count(); n != 0 {
				t.Fatalf("%d messages delivered while the inbox is open, want 0", n)
			}
			if !mb.Collect() {
				t.Fatal("Collect found nothing")
			}
			if n := rec.count(); n != 4 {
				t.Fatalf("%d messages delivered after Collect, want 4", n)
			}
		}
	}
	// 4..6 in the box, then 7 (too large) forced them out before it; 8
	// and 9 wait in the box again.
	if n := rec.count(); n != 8 {
		t.Fatalf("%d messages delivered, want 8", n)
	}
	if err := tr.Send(wire.Frame{Header: wire.Header{Kind: wire.RTS, Tag: 10}, From: 0, To: 1}); err != nil {
		t.Fatal(err)
	}
	mb.Close()
	if mb.IsOpen() {
		t.Error("IsOpen after Close")
	}
	if n := rec.count(); n != 11 {
		t.Fatalf("%d messages delivered, want 11", n)
	}
	for i, f := range rec.got {
		if int(f.Tag) != i {
			t.Errorf("message %d has tag %d: out of order", i, f.Tag)
		}
		if i < 10 && (f.Context != 5 || f.From != 0 || f.Sig != 0xab || f.SendID != uint64(i) || f.Payload[len(f.Payload)-1] != byte(i) || f.Size != int64(len(f.Payload))) {
			t.Errorf("message %d: %+v", i, f)
		}
	}
	// Closed: delivered at once.
	tr.SendEager(1, 5, 0, 11, 0, 0, []byte{1})
	if n := rec.count(); n != 12 {
		t.Errorf("%d messages delivered to a closed inbox, want 12", n)
	}
}

// A full box is emptied by its sender, which then delivers its message
// itself: a receiver that stopped collecting makes a sender wait only a
// bounded while (boxFullPolls) for room, once per box full.
func TestInboxFull(t *testing.T) {
	fb := NewFabric(2)
	var rec recorder
	mb := fb.AttachEager(1, rec.frame, rec.eager).Mailbox()
	tr := fb.AttachEager(0, func(wire.Frame) {}, func(wire.Header, int, []byte) {})
	mb.Open()
	for i := range 3*boxSlots + 5 {
		tr.SendEager(1, 0, 0, int32(i), 0, 0, []byte{byte(i)})
	}
	if n := rec.count(); n == 0 || n > 3*boxSlots+5-1 {
		t.Fatalf("%d delivered before Collect", n)
	}
	mb.Collect()
	if n := rec.count(); n != 3*boxSlots+5 {
		t.Fatalf("%d delivered, want %d", n, 3*boxSlots+5)
	}
	for i, f := range rec.got {
		if int(f.Tag) != i {
			t.Fatalf("message %d has tag %d", i, f.Tag)
		}
	}
}

// Senders racing a receiver that opens, collects and closes: every
// message is delivered exactly once and in each sender's order, and once
// the receiver has closed, every message whose send returned has been
// delivered (none waits in a box that nobody will collect). Run with
// -race.
func TestInboxRace(t *testing.T) {
	const senders, each = 2, 50000
	fb := NewFabric(senders + 1)
	var mu sync.Mutex
	next := make([]int, senders)
	var sent [senders]atomic.Int64
	bad := 0
	deliver := func(h wire.Header, from int, _ []byte) {
		mu.Lock()
		if int(h.Tag) != next[from] {
			bad++
		}
		next[from] = int(h.Tag) + 1
		mu.Unlock()
	}
	mb := fb.AttachEager(senders, func(f wire.Frame) { deliver(f.Header, f.From, f.Payload) }, deliver).Mailbox()
	var wg sync.WaitGroup
	for s := range senders {
		tr := fb.AttachEager(s, func(wire.Frame) {}, deliver)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var payload [boxMax]byte
			for i := range each {
				// Sizes vary, so that a slot that started a message in one
				// turn of the ring continues one in the next.
				tr.SendEager(senders, 0, int32(s), int32(i), 0, 0, payload[:i*7%(boxMax+1)])
				sent[s].Add(1)
			}
		}()
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	stuck := 0
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				mb.Close()
				return
			default:
			}
			switch i % 7 {
			case 0:
				mb.Open()
				if i%49 == 0 {
					// Let the boxes fill up: their senders empty them.
					time.Sleep(20 * time.Microsecond)
				}
			case 5:
				mb.Close()
				for k := 0; k < 4; k++ {
					runtime.Gosched()
				}
				for s := range senders {
					n := sent[s].Load()
					mu.Lock()
					if int64(next[s]) < n {
						stuck++
					}
					mu.Unlock()
				}
			default:
				mb.Collect()
			}
		}
	}()
	wg.Wait()
	close(stop)
	<-done
	mu.Lock()
	defer mu.Unlock()
	if bad != 0 {
		t.Errorf("%d messages out of order", bad)
	}
	if stuck != 0 {
		t.Errorf("%d times a closed inbox still held a message whose send had returned", stuck)
	}
	for s, n := range next {
		if n != each {
			t.Errorf("sender %d: %d messages delivered, want %d", s, n, each)
		}
	}
}

// Messages of every size a box takes, with envelopes and send ids that
// repeat, follow each other or jump, come out of the box as they went in,
// across many turns of its ring and with the receiver collecting at
// random moments.
func TestBoxRoundTrip(t *testing.T) {
	fb := NewFabric(2)
	var rec recorder
	mb := fb.AttachEager(1, rec.frame, rec.eager).Mailbox()
	tr := fb.AttachEager(0, func(wire.Frame) {}, func(wire.Header, int, []byte) {})
	mb.Open()
	rng := rand.New(rand.NewPCG(1, 2))
	var want []wire.Frame
	id := uint64(0)
	for i := range 20000 {
		h := wire.Header{Kind: wire.Eager, Context: 3, Src: 1, Tag: int32(i % 3), Sig: 0xfeed}
		if rng.IntN(4) == 0 {
			h.Context, h.Src, h.Sig = rng.Uint32(), int32(rng.Uint32()), rng.Uint64()
		}
		switch rng.IntN(3) {
		case 0:
			h.SendID = 0
		case 1:
			id++
			h.SendID = id
		default:
			id += uint64(rng.IntN(1000)) + 2
			h.SendID = id
		}
		p := make([]byte, rng.IntN(boxMax+1))
		for j := range p {
			p[j] = byte(rng.Uint32())
		}
		h.Size = int64(len(p))
		want = append(want, wire.Frame{Header: h, From: 0, Payload: p})
		if err := tr.SendEager(1, h.Context, h.Src, h.Tag, h.Sig, h.SendID, p); err != nil {
			t.Fatal(err)
		}
		if rng.IntN(50) == 0 {
			mb.Collect()
		}
	}
	mb.Close()
	if len(rec.got) != len(want) {
		t.Fatalf("%d messages delivered, want %d", len(rec.got), len(want))
	}
	for i, f := range rec.got {
		w := want[i]
		if f.Header != w.Header || f.From != w.From || !bytes.Equal(f.Payload, w.Payload) {
			t.Fatalf("message %d: got %+v %x, want %+v %x", i, f.Header, f.Payload, w.Header, w.Payload)
		}
	}
}

// Sweep closes an inbox only when a message has waited through two sweeps
// with nobody collecting: a receiver that collects now and then is left
// alone, one that stopped gets its messages.
func TestInboxSweep(t *testing.T) {
	fb := NewFabric(2)
	var rec recorder
	mb := fb.AttachEager(1, rec.frame, rec.eager).Mailbox()
	tr := fb.AttachEager(0, func(wire.Frame) {}, func(wire.Header, int, []byte) {})
	steps := []struct {
		send, collect bool // before the sweep
		swept         bool // what Sweep reports
		delivered     int  // messages delivered after the sweep
	}{
		{swept: false, delivered: 0},                            // empty
		{send: true, swept: false, delivered: 0},                // first seen
		{send: true, swept: true, delivered: 2},                 // waited since: swept, closed
		{send: true, swept: false, delivered: 3},                // closed: delivered at once
		{send: true, swept: false, delivered: 3},                // opened again below: first seen
		{send: true, collect: true, swept: false, delivered: 5}, // collected between
		{send: true, swept: false, delivered: 5},                // a new head: first seen
		{swept: true, delivered: 6},                             // waited since
	}
	for i, s := range steps {
		if i == 0 || i == 4 {
			mb.Open()
		}
		if s.send {
			if err := tr.SendEager(1, 5, 0, int32(i), 0, 0, []byte{byte(i)}); err != nil {
				t.Fatal(err)
			}
		}
		if s.collect {
			mb.Collect()
		}
		if got := mb.Sweep(); got != s.swept {
			t.Errorf("step %d: Sweep = %v, want %v", i, got, s.swept)
		}
		if n := rec.count(); n != s.delivered {
			t.Errorf("step %d: %d messages delivered, want %d", i, n, s.delivered)
		}
		if s.swept && mb.IsOpen() {
			t.Errorf("step %d: open after a sweep that closed it", i)
		}
	}
}

// A line payload whose bytes read as the seq of the message that will
// start in the same slot one turn of the ring later never passes for that
// message: the sender clears the slot after each message first, and the
// receiver, collecting after every message, finds only what was sent.
func TestBoxLinePayloadIsNoStart(t *testing.T) {
	fb := NewFabric(2)
	var rec recorder
	mb := fb.AttachEager(1, rec.frame, rec.eager).Mailbox()
	tr := fb.AttachEager(0, func(wire.Frame) {}, func(wire.Header, int, []byte) {})
	mb.Open()
	b := mb.(*Inbox).boxFrom(0)
	var want [][]byte
	// One envelope for all, given once: then a message's payload starts
	// in the slot after its first.
	send := func(p []byte) {
		t.Helper()
		if err := tr.SendEager(1, 7, 0, 9, 0x5eed, 0, p); err != nil {
			t.Fatal(err)
		}
		want = append(want, p)
		mb.Collect()
	}
	send([]byte{1})
	for turn := 0; turn < 5; turn++ {
		// Every word of the payload's j-th slot is the seq of the
		// position one turn after that slot's.
		first := b.tail + 1
		p := make([]byte, boxMax-turn*slotBytes)
		for j := 0; j*slotBytes < len(p); j++ {
			s := seq(first + uint64(j) + boxSlots)
			for w := j * slotBytes; w < min(len(p), (j+1)*slotBytes); w += 4 {
				binary.NativeEndian.PutUint32(p[w:], s)
			}
		}
		send(p)
		// One-slot messages walk the ring a whole turn, so that every one
		// of those slots is, in turn, the slot after a message.
		for i := range boxSlots {
			send([]byte{byte(i)})
		}
	}
	mb.Close()
	if len(rec.got) != len(want) {
		t.Fatalf("%d messages delivered, want %d", len(rec.got), len(want))
	}
	for i, f := range rec.got {
		if f.Context != 7 || f.Tag != 9 || f.Sig != 0x5eed || !bytes.Equal(f.Payload, want[i]) {
			t.Fatalf("message %d: %+v %x, want %x", i, f.Header, f.Payload, want[i])
		}
	}
}

// A sender that runs ahead of a receiver that collects waits for room in
// its full box instead of emptying it itself: the messages reach the
// receiver's engine on the receiver's goroutine (Collect), not on the
// sender's, which would match them there while the receiver posts. The
// receiver's look comes at the moment the sender finds its box full
// (onFull), so the test does not depend on how the two are scheduled.
func TestInboxFullWaits(t *testing.T) {
	fb := NewFabric(2)
	collecting := false
	inCollect, outside := 0, 0
	deliver := func(wire.Header, int, []byte) {
		if collecting {
			inCollect++
		} else {
			outside++
		}
	}
	mb := fb.AttachEager(1, func(wire.Frame) { outside++ }, deliver).Mailbox()
	tr := fb.AttachEager(0, func(wire.Frame) {}, func(wire.Header, int, []byte) {})
	ib := mb.(*Inbox)
	fulls := 0
	ib.onFull = func() {
		fulls++
		collecting = true
		mb.Collect()
		collecting = false
	}
	mb.Open()
	const n = 5 * boxSlots
	for i := range n {
		if err := tr.SendEager(1, 0, 0, int32(i), 0, 0, []byte{1, 2, 3}); err != nil {
			t.Fatal(err)
		}
	}
	collecting = true
	mb.Close()
	if fulls == 0 {
		t.Fatal("the box never filled")
	}
	if outside != 0 || inCollect != n {
		t.Errorf("%d of %d messages delivered on the sender's goroutine outside a look of the receiver's, %d in one; want none outside: a full box waits for its receiver", outside, n, inCollect)
	}
}
