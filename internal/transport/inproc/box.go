package inproc

import (
	"sync"
	"sync/atomic"

	"github.com/mpigo/mpi/internal/wire"
)

// Mailboxes: the receiver's side of small messages while it watches.
//
// Without them, a short-road message (SendEager) is delivered on the
// sender's goroutine: it takes the receiver's engine lock, matches against
// the receiver's posted receives and, if it completes a request that the
// receiver waits for, wakes it. Between ranks that each keep a processor
// and poll, that costs twice over: the sender and the receiver fight over
// the receiver's engine lock and request lines while the receiver posts
// its receives, and a message that comes before its receive is copied
// into the unexpected queue.
//
// So a rank that watches (Inbox.Open: it polls in its waits, as a rank
// with a processor of its own does) lets its senders leave small messages
// in a box per sender instead: a ring of cells in the receiver's memory
// that only that sender writes. The sender copies the message into a cell
// and publishes the cell's sequence number; it touches nothing of the
// receiver's engine. The receiver collects the cells when it polls
// (Inbox.Collect) and delivers them to its own engine, so matching stays
// on the goroutine that owns the engine's data, and a message that comes
// while its receive is posted is matched as it is collected, without the
// unexpected queue. This is Open MPI's fast box between processes, here
// between goroutines.
//
// The rules that keep it safe:
//
//   - A box is used only while its receiver's inbox is open. A rank closes
//     it (Inbox.Close) before any goroutine of it parks, and Close delivers
//     what the boxes hold. A sender reads the open flag again after it
//     published a cell; if the inbox closed meanwhile it delivers its own
//     box itself (drainAll). Sequentially consistent atomics make at least
//     one of the two see the cell, so no message stays in a box while its
//     receiver sleeps.
//   - Order: a sender delivers the general way (to the handler, or the
//     short road when the box is closed or full) only once its box is
//     empty: it drains its own box first. Frames from one sender to one
//     receiver therefore reach the receiver's engine in the order they
//     were sent.
//   - Each box has one producer lock (goroutines of the sending rank) and
//     one consumer lock (the receiving rank's goroutines, and the sender
//     draining on its receiver's behalf). A cell is delivered while the
//     consumer lock is held, so deliveries from one box never interleave.

// cellData is the largest payload a cell holds: a cell is 128 bytes, two
// cache lines, of which the header and the first 24 payload bytes share
// the first, so an 8-byte message crosses between cores as one line.
const (
	cellData = 88
	boxCells = 64
)

// cell is one message in a box. seq is pos+1 once the sender has written
// the cell for position pos, and is stored last.
type cell struct {
	seq      atomic.Uint64
	ctx      uint32
	n        uint32
	src, tag int32
	sig, id  uint64
	data     [cellData]byte
}

// box carries the small messages of one sender to one receiver.
type box struct {
	// The producer's line: goroutines of the sending rank.
	pmu   sync.Mutex
	tail  uint64 // cells written
	limit uint64 // tail may grow up to limit without reading head
	_     [64 - 24]byte
	// The consumer's line: the receiving rank, or its sender draining.
	cmu   sync.Mutex
	head  atomic.Uint64 // cells delivered, published after each drain
	_     [64 - 16]byte
	cells [boxCells]cell
}

// put copies one message into b and reports true, or reports false if b
// is full.
func (b *box) put(ctx uint32, src, tag int32, sig, id uint64, payload []byte) bool {
	b.pmu.Lock()
	pos := b.tail
	if pos >= b.limit {
		b.limit = b.head.Load() + boxCells
		if pos >= b.limit {
			b.pmu.Unlock()
			return false
		}
	}
	c := &b.cells[pos%boxCells]
	c.ctx, c.n, c.src, c.tag, c.sig, c.id = ctx, uint32(len(payload)), src, tag, sig, id
	copy(c.data[:], payload)
	c.seq.Store(pos + 1)
	b.tail = pos + 1
	b.pmu.Unlock()
	return true
}

// ready reports whether a cell waits in b. Any goroutine may ask.
func (b *box) ready() bool {
	h := b.head.Load()
	return b.cells[h%boxCells].seq.Load() == h+1
}

// drain delivers the cells of b, in order, to deliver as from's messages,
// and reports whether there were any. The caller holds b.cmu.
func (b *box) drain(from int, deliver EagerFunc) bool {
	h0 := b.head.Load()
	pos := h0
	for {
		c := &b.cells[pos%boxCells]
		if c.seq.Load() != pos+1 {
			break
		}
		h := wire.Header{Kind: wire.Eager, Context: c.ctx, Src: c.src, Tag: c.tag, Size: int64(c.n), Sig: c.sig, SendID: c.id}
		deliver(h, from, c.data[:c.n])
		pos++
		// Give the cells back now and then, not only at the end: a
		// sender that streams keeps writing while we deliver.
		if pos-h0 == boxCells/2 {
			b.head.Store(pos)
		}
	}
	if pos == h0 {
		return false
	}
	b.head.Store(pos)
	return true
}

// drainAll delivers every cell of b, waiting for another consumer to
// finish first: when it returns, every message put in b before the call
// has been delivered.
func (b *box) drainAll(from int, deliver EagerFunc) {
	b.cmu.Lock()
	b.drain(from, deliver)
	b.cmu.Unlock()
}

// Inbox is the receiving side of one endpoint's boxes, one per sender.
type Inbox struct {
	open    atomic.Bool
	_       [64 - 4]byte
	boxes   []atomic.Pointer[box] // by sender rank; made by the sender
	deliver EagerFunc
}

// Open lets senders leave small messages in the inbox's boxes. The rank
// promises to Collect them whenever it looks at its messages (a test, a
// probe, a poll of a wait) and to Close the inbox before any of its
// goroutines parks.
func (ib *Inbox) Open() {
	if !ib.open.Load() {
		ib.open.Store(true)
	}
}

// IsOpen reports whether the inbox is open.
func (ib *Inbox) IsOpen() bool { return ib.open.Load() }

// Close makes senders deliver on their own goroutines again, and delivers
// every message the boxes hold. Once it returns, no message sent before it
// waits in a box.
func (ib *Inbox) Close() {
	if ib.open.Load() {
		ib.open.Store(false)
	}
	for i := range ib.boxes {
		if b := ib.boxes[i].Load(); b != nil && b.ready() {
			b.drainAll(i, ib.deliver)
		}
	}
}

// Collect delivers the messages waiting in the boxes and reports whether
// there were any. A box that another goroutine is emptying is skipped.
func (ib *Inbox) Collect() bool {
	got := false
	for i := range ib.boxes {
		b := ib.boxes[i].Load()
		if b == nil || !b.ready() || !b.cmu.TryLock() {
			continue
		}
		if b.drain(i, ib.deliver) {
			got = true
		}
		b.cmu.Unlock()
	}
	return got
}

// boxFrom returns the box for messages from rank from, making it if need be.
func (ib *Inbox) boxFrom(from int) *box {
	if b := ib.boxes[from].Load(); b != nil {
		return b
	}
	nb := new(box)
	if ib.boxes[from].CompareAndSwap(nil, nb) {
		return nb
	}
	return ib.boxes[from].Load()
}

// flushFrom delivers what rank from left in the inbox, so that a message
// it now sends the general way arrives after them.
func (ib *Inbox) flushFrom(from int) {
	if b := ib.boxes[from].Load(); b != nil && b.ready() {
		b.drainAll(from, ib.deliver)
	}
}
