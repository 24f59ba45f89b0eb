package device

import (
	"sync"
	"testing"
	"time"

	"github.com/mpigo/mpi/internal/engine"
	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/wire"
)

// tryTransport records the frames it is given, in order, and takes the
// first room of them through TrySend (then none: the ring is full).
type tryTransport struct {
	mu     sync.Mutex
	room   int
	tags   []int32
	direct int // how many came through TrySend
}

func (t *tryTransport) Send(f wire.Frame) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tags = append(t.tags, f.Tag)
	return nil
}

func (t *tryTransport) TrySend(f wire.Frame) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.room == 0 {
		return false
	}
	t.room--
	t.direct++
	t.tags = append(t.tags, f.Tag)
	return true
}

func (t *tryTransport) sent() ([]int32, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]int32(nil), t.tags...), t.direct
}

// A delivery on a transport's goroutine sends its answers itself while its
// transport takes them at once (transport.TrySender), and queues the rest
// for the reply sender; either way they leave in order: out's (but its
// reads), then more's. A frame to pack stops the direct sends, and while
// answers are queued, later ones queue behind them.
func TestAnswerOrder(t *testing.T) {
	for _, tc := range []struct {
		name        string
		room        int
		fill        bool // the third answer of out is packed on sending
		queuedFirst bool // an earlier answer is still queued
		want        int  // sent directly
	}{
		{"all at once", 10, false, false, 5},
		{"ring full after two", 2, false, false, 2},
		{"ring full", 0, false, false, 0},
		{"a frame to pack", 10, true, false, 1},
		{"behind a queued answer", 10, false, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &tryTransport{room: tc.room}
			var _ transport.TrySender = tr
			d := &Device{}
			var closers []func() error
			d.Hooks.AddCloser = func(f func() error) { closers = append(closers, f) }
			d.Tr = transport.NewRouter(2, func(int) transport.Transport { return tr })
			d.StartReplies()
			defer closers[0]()
			var out, more engine.Outbox
			for i, tag := range []int32{1, 2, 3} {
				it := out.Add()
				it.F = wire.Frame{Header: wire.Header{Kind: wire.Fin, Tag: tag}, To: 1}
				if i == 1 {
					// A read, already run: not an answer to send.
					it.Fetch = &engine.Fetch{}
				}
				if i == 2 && tc.fill {
					it.Fill, it.FillLen = fakeLayout{}, 0
				}
			}
			for _, tag := range []int32{4, 5, 6} {
				more.Add().F = wire.Frame{Header: wire.Header{Kind: wire.Fin, Tag: tag}, To: 1}
			}
			want := []int32{1, 3, 4, 5, 6}
			if tc.queuedFirst {
				d.q.mu.Lock()
				d.q.items = append(d.q.items, engine.Item{F: wire.Frame{Header: wire.Header{Kind: wire.Fin, Tag: 0}, To: 1}})
				d.q.queued.Add(1)
				d.q.mu.Unlock()
				want = append([]int32{0}, want...)
			}
			d.answer(&out, &more)
			deadline := time.Now().Add(10 * time.Second)
			for {
				tags, direct := tr.sent()
				if len(tags) == len(want) {
					if direct != tc.want {
						t.Errorf("%d answers sent directly, want %d", direct, tc.want)
					}
					for i := range want {
						if tags[i] != want[i] {
							t.Fatalf("answers left in the order %v, want %v", tags, want)
						}
					}
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("after 10 s, %v of %v sent", tags, want)
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
}

// fakeLayout is a layout of no bytes: an answer to pack on sending.
type fakeLayout struct{}

func (fakeLayout) Len() int           { return 0 }
func (fakeLayout) Pack([]byte, int)   {}
func (fakeLayout) Unpack([]byte, int) {}

// slowTransport takes a while to send each frame, or blocks until
// released; it counts what it sent per sender (the frame's Tag).
type slowTransport struct {
	delay   time.Duration
	release chan struct{} // if not nil, Send waits for it to be closed
	mu      sync.Mutex
	got     map[int32][]uint32 // sender -> sequence numbers, in order
	n       int
}

func (t *slowTransport) Send(f wire.Frame) error {
	if t.release != nil {
		<-t.release
	}
	time.Sleep(t.delay)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.got == nil {
		t.got = map[int32][]uint32{}
	}
	t.got[f.Tag] = append(t.got[f.Tag], f.Context)
	t.n++
	return nil
}

func (t *slowTransport) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

// flood has readers goroutines each deliver per answers, one at a time,
// as tcp readers do, through d.answer.
func flood(d *Device, readers, per int) {
	var wg sync.WaitGroup
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				var out, more engine.Outbox
				out.Add().F = wire.Frame{Header: wire.Header{Kind: wire.CTS, Tag: int32(r), Context: uint32(i)}, To: 1}
				d.answer(&out, &more)
			}
		}()
	}
	wg.Wait()
}

// A flood of answers from many peers' readers is held to the reply
// queue's bound: a reader past it waits for the sender (back-pressure),
// and every answer still leaves, in each reader's order.
func TestReplyBoundFlood(t *testing.T) {
	defer func(b int64, s time.Duration) { ReplyBound, replyStall = b, s }(ReplyBound, replyStall)
	// The sender is slow, not stuck: a busy machine must not make the
	// readers take it for stuck (replyStall) and read on.
	ReplyBound, replyStall = 16, time.Minute
	tr := &slowTransport{delay: 20 * time.Microsecond}
	d := &Device{}
	var closers []func() error
	d.Hooks.AddCloser = func(f func() error) { closers = append(closers, f) }
	d.Tr = transport.NewRouter(2, func(int) transport.Transport { return tr })
	d.StartReplies()
	defer closers[0]()
	const readers, per = 8, 400
	flood(d, readers, per)
	deadline := time.Now().Add(20 * time.Second)
	for tr.count() < readers*per {
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s, %d of %d answers sent", tr.count(), readers*per)
		}
		time.Sleep(time.Millisecond)
	}
	if high := d.ReplyHigh(); high > ReplyBound+readers {
		t.Errorf("the reply queue held %d answers, want at most the bound %d and one per reader (%d)", high, ReplyBound, readers)
	}
	for r, seq := range tr.got {
		for i, s := range seq {
			if int(s) != i {
				t.Fatalf("reader %d's answers left as %v..., want in order", r, seq[:min(len(seq), i+3)])
			}
		}
	}
}

// A reply sender stuck in a write (its peer's reader waits too) does not
// stop the readers: past replyStall without progress they read on, and
// once the write goes through every answer leaves.
func TestReplyBoundStuckSender(t *testing.T) {
	defer func(b int64, s time.Duration) { ReplyBound, replyStall = b, s }(ReplyBound, replyStall)
	ReplyBound, replyStall = 4, 20*time.Millisecond
	tr := &slowTransport{release: make(chan struct{})}
	d := &Device{}
	var closers []func() error
	d.Hooks.AddCloser = func(f func() error) { closers = append(closers, f) }
	d.Tr = transport.NewRouter(2, func(int) transport.Transport { return tr })
	d.StartReplies()
	const readers, per = 2, 20
	done := make(chan struct{})
	go func() { flood(d, readers, per); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("readers still waiting for a stuck reply sender after 10 s")
	}
	close(tr.release)
	deadline := time.Now().Add(10 * time.Second)
	for tr.count() < readers*per {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s, %d of %d answers sent", tr.count(), readers*per)
		}
		time.Sleep(time.Millisecond)
	}
	closers[0]()
}
