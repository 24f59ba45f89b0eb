package mpi

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
			p := &proc{}
			p.tr = transport.NewRouter(2, func(int) transport.Transport { return tr })
			stop := p.startReplies()
			defer stop()
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
				p.q.mu.Lock()
				p.q.items = append(p.q.items, engine.Item{F: wire.Frame{Header: wire.Header{Kind: wire.Fin, Tag: 0}, To: 1}})
				p.q.mu.Unlock()
				want = append([]int32{0}, want...)
			}
			p.answer(&out, &more)
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
