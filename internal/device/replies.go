package device

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/mpigo/mpi/internal/engine"
	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/wire"
)

// replies queues the frames that deliveries from a transport's own
// goroutine (tcp readers, the shm poller) want sent, and a goroutine of
// the rank sends them. A reader must never block in a write: if two
// ranks' readers each waited for the other to read, with both socket
// buffers full, neither would.
//
// A delivery first tries to send its answers itself, with sends that never
// wait (transport.TrySender: shm), which spares the hand-over to the reply
// sender's goroutine, a wake-up on the critical path of every rendezvous
// (docs/performance.md, "Mid-sized messages over shm"). Answers keep their
// order: a delivery sends directly only while nothing is queued and no
// other goroutine is sending answers (busy); what it cannot send at once,
// and all that follows, is queued.
//
// The queue is bounded with back-pressure on the reader, as grpc-go's
// transport throttles its reader past 50 queued control frames: a
// delivery that leaves more than ReplyBound answers queued waits, before
// its reader reads on, until the sender has brought the queue down to
// half the bound. Peers that flood a rank with frames that each need an
// answer (rendezvous announcements of posted receives, synchronous sends)
// then slow down to the pace at which the rank's answers leave, instead
// of growing its memory without end. The bound is soft in one case only:
// when the sender has sent nothing for replyStall, the reader goes on
// reading (and the queue grows) — the sender is blocked in a write to a
// peer whose own reader may be waiting in the same way for this rank's,
// and two readers that both waited would hang the two ranks. Reading on
// keeps the rank live; the peer's progress then unblocks the sender.
type replies struct {
	mu    sync.Mutex
	items []engine.Item
	busy  bool // a goroutine is sending answers; others queue theirs
	wake  chan struct{}
	stop  chan struct{}
	done  chan struct{}

	// queued counts the answers queued and not yet sent (in items, or
	// taken by the sender); sent counts those sent, for readers to see
	// the sender move. high is the most ever queued (ReplyHigh).
	queued, sent, high atomic.Int64
	// room, when not nil, is closed by the sender once queued drops to
	// half the bound: readers waiting for room wait on it.
	room chan struct{}
}

// ReplyBound is the number of queued answers past which a delivery waits
// for the reply sender (see replies). A variable for tests.
var ReplyBound int64 = 1024

// replyStall is how long a delivery waits for a reply sender that sends
// nothing before it reads on regardless (see replies).
var replyStall = 20 * time.Millisecond

// StartReplies starts the rank's reply sender, once (one serves every
// transport of the rank), and registers its stop with Hooks.AddCloser.
func (d *Device) StartReplies() { d.startReplies(d.Hooks.AddCloser) }

// startReplies is StartReplies with the sender's stop registered by add.
func (d *Device) startReplies(add func(func() error)) {
	if d.q != nil {
		return
	}
	q := &replies{wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	d.q = q
	go func() {
		defer close(q.done)
		var batch engine.Outbox
		for {
			select {
			case <-q.wake:
			case <-q.stop:
				return
			}
			for {
				q.mu.Lock()
				if q.busy || len(q.items) == 0 {
					// A delivery sending directly wakes this goroutine
					// again if it leaves items behind.
					q.mu.Unlock()
					break
				}
				items := q.items
				q.items, q.busy = nil, true
				q.mu.Unlock()
				for _, it := range items {
					batch.Reset()
					*batch.Add() = it
					d.Exec(&batch)
					q.sentOne()
				}
				q.mu.Lock()
				q.busy = false
				q.mu.Unlock()
			}
		}
	}()
	add(func() error {
		close(q.stop)
		<-q.done
		return nil
	})
}

// sentOne notes that the sender sent one queued answer, and lets the
// readers waiting for room go on once the queue is down to half the
// bound.
func (q *replies) sentOne() {
	q.sent.Add(1)
	if q.queued.Add(-1) > ReplyBound/2 {
		return
	}
	q.mu.Lock()
	if q.room != nil {
		close(q.room)
		q.room = nil
	}
	q.mu.Unlock()
}

// ReplyHigh is the most answers ever queued for the reply sender.
func (d *Device) ReplyHigh() int64 {
	if d.q == nil {
		return 0
	}
	return d.q.high.Load()
}

// answer sends the answers of a delivery on a transport's own goroutine:
// those in out (but its reads, already run), then those in more (the
// answers of the reads). It sends what its transports take at once
// itself, and queues the rest, in order, for the reply sender; past the
// bound it waits for room (see replies).
func (d *Device) answer(out, more *engine.Outbox) {
	n := out.Len()
	q := d.q
	q.mu.Lock()
	sent := 0 // answers sent directly, in order: those of out, then more
	if !q.busy && len(q.items) == 0 {
		q.busy = true
		q.mu.Unlock()
		sent = d.trySendAnswers(out, more)
		q.mu.Lock()
		q.busy = false
	}
	added := 0
	k := 0
	for i := 0; i < n; i++ {
		if it := out.At(i); it.Fetch == nil {
			if k >= sent {
				q.items = append(q.items, *it)
				added++
			}
			k++
		}
	}
	for i := 0; i < more.Len(); i++ {
		if k >= sent {
			q.items = append(q.items, *more.At(i))
			added++
		}
		k++
	}
	queued := len(q.items) > 0
	// Counted before the sender can take them: a count that lagged
	// behind would let the sender see room that is not there.
	total := q.queued.Add(int64(added))
	q.mu.Unlock()
	if !queued {
		return
	}
	for h := q.high.Load(); total > h && !q.high.CompareAndSwap(h, total); h = q.high.Load() {
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
	if h, ok := d.Prog.(interface{ Handoff() }); ok {
		// A wait polling on this processor lets the sender run.
		h.Handoff()
	}
	if total > ReplyBound {
		q.waitRoom()
	}
}

// waitRoom waits until the reply sender has brought the queue down to
// half the bound, or has sent nothing for replyStall (see replies).
func (q *replies) waitRoom() {
	var t *time.Timer
	for q.queued.Load() > ReplyBound/2 {
		q.mu.Lock()
		if q.queued.Load() <= ReplyBound/2 {
			q.mu.Unlock()
			return
		}
		if q.room == nil {
			q.room = make(chan struct{})
		}
		room := q.room
		q.mu.Unlock()
		before := q.sent.Load()
		if t == nil {
			t = time.NewTimer(replyStall)
			defer t.Stop()
		} else {
			t.Reset(replyStall)
		}
		select {
		case <-room:
			// Every waiting reader wakes; those that run late may find
			// the queue filled again by the first: they wait again.
			if q.queued.Load() <= ReplyBound {
				return
			}
		case <-q.stop:
			return
		case <-t.C:
			if q.sent.Load() == before {
				return // the sender is stuck: read on (see replies)
			}
		}
	}
}

// trySendAnswers sends the answers in out (but its reads) and then those
// in more, in that order, as long as their transports take them at once
// (transport.TrySender), and returns how many it sent. It stops at the
// first it cannot send so: a frame to pack (Fill), a transport without
// TrySend, or no room now.
func (d *Device) trySendAnswers(out, more *engine.Outbox) int {
	sent := 0
	for _, o := range [2]*engine.Outbox{out, more} {
		for i, n := 0, o.Len(); i < n; i++ {
			it := o.At(i)
			if it.Fetch != nil {
				continue
			}
			t, ok := d.Tr.For(it.F.To).(transport.TrySender)
			if !ok || it.Fill != nil || !t.TrySend(it.F) {
				return sent
			}
			if d.Counting() && (it.F.Kind == wire.Eager || it.F.Kind == wire.RTS) {
				d.CountSent(it.F.To, int(it.F.Size), it.F.Context, int(it.F.Tag))
			}
			if it.Done != nil {
				it.Done.CompleteOnce(engine.Status{})
			}
			sent++
		}
	}
	return sent
}
