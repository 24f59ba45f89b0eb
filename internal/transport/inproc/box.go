package inproc

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"unsafe"

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
// in a box per sender instead: a ring of slots in the receiver's memory
// that only that sender writes. The sender copies the message into slots
// and publishes the first one's sequence number; it touches nothing of the
// receiver's engine. The receiver collects the messages when it polls
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
//     published a message; if the inbox closed meanwhile it delivers its own
//     box itself (drainAll). Sequentially consistent atomics make at least
//     one of the two see the message, so no message stays in a box while its
//     receiver sleeps.
//   - Order: a sender delivers the general way (to the handler, or the
//     short road when the box is closed or full) only once its box is
//     empty: it drains its own box first. Frames from one sender to one
//     receiver therefore reach the receiver's engine in the order they
//     were sent.
//   - Each box has one producer lock (goroutines of the sending rank) and
//     one consumer lock (the receiving rank's goroutines, and the sender
//     draining on its receiver's behalf). A message is delivered while the
//     consumer lock is held, so deliveries from one box never interleave.

// A box is a ring of 16-byte slots. A message takes one slot or more,
// and the slots of consecutive messages follow each other, so a stream of
// small messages packs four to a cache line and the line crosses between
// the cores once per four messages, not once per message: that crossing
// is what a small send waits for (docs/performance.md, "Mailboxes between
// goroutine ranks"). A message's envelope is written only when it differs
// from the one before in the same box (both ends remember the last), and
// a send id only when it is not the last one plus 1, so an 8-byte message
// in a stream to one peer is one slot.
//
// The first slot of a message:
//
//	w      start: seq(pos), which no continuation slot's 0 can be
//	b[0:2) its payload length, | flags << 11
//	b[2:)  the first startData payload bytes
//
// then, in this order, each only when its flag says so:
//
//	envelope A: w 0, b[0:4) context, b[4:8) source, b[8:12) tag  (fEnv)
//	envelope B: w 0, b[0:8) type signature                       (fEnv)
//	send id:    w 0, b[0:8) id                                   (fID)
//
// and the payload past startData, 12 bytes a slot (w 0). The sender
// writes them all, then the first slot's w last. The receiver reads w only
// where a message starts.
//
// A payload longer than boxSmall goes in whole slots instead (fLine): the
// first slot carries only the length and flags, and the payload fills
// whole 16-byte slots, w included, after the envelope and id slots, in
// one copy each way; the receiver hands it over in place unless it wraps
// around the ring's end. Those slots' w hold payload bytes, which could
// pass for the seq of a message that later starts there. So a sender
// clears (to 0) the w of the slot after each message it publishes
// whenever a line payload may have filled that slot in the ring's last
// turn (lineEnd): the receiver, which reads w only at the head, then
// finds 0 there, or the seq of the message that starts there, never
// payload.
const (
	slotBytes = 16
	boxSlots  = 1024 // 16 KiB a box
	startData = 10
	contData  = 12
	// boxSmall is the largest payload carried in 12-byte pieces (202
	// bytes, 17 slots).
	boxSmall = startData + 16*contData
	// boxMax is the largest payload that goes in a box; larger messages
	// go the general way. Two ranks that exchange messages of a few
	// hundred bytes the general way each deliver into the other's engine
	// while the other posts there, and collide (docs/performance.md,
	// "Exchanges of 95 bytes to 1 KiB").
	boxMax = 1024
	// boxFullPolls is how many times a sender that finds its box full
	// looks again for room, a pause apart, before it empties the box
	// itself: about 55 us here (a pause takes 27 ns on this machine's
	// processors, up to about 140 cycles on recent Intel ones), about as
	// long as a wait watches before it parks (Config.Spin's 50 us).
	// Shorter, 64 polls, was too short to help: a receiver that collects
	// a full box at once works through it for longer than that.
	boxFullPolls = 2048
)

// Flags of a message's first slot (b[0:2) >> 11).
const (
	fEnv    = 1 << iota // its envelope follows (else: the last one's)
	fID                 // its send id follows
	fIDNext             // its send id is the last one's + 1
	fLine               // its payload fills whole slots (longer than boxSmall)
	lenMask = 1<<11 - 1
)

// slot is 16 bytes of a box.
type slot struct {
	w uint32 // seq(pos) in the first slot of a message; 0 in the others
	b [12]byte
}

// seq is what the first slot of the message at position pos holds in w:
// never 0, and different from what it held boxSlots positions before.
func seq(pos uint64) uint32 { return uint32(pos)&(1<<31-1) | 1<<31 }

// envelope is what both ends of a box remember of the last message.
type envelope struct {
	ctx      uint32
	src, tag int32
	sig, id  uint64 // id: the last send id that was not 0
}

// box carries the small messages of one sender to one receiver.
type box struct {
	// The producer's lines: goroutines of the sending rank.
	pmu   sync.Mutex
	tail  uint64 // slots written
	limit uint64 // tail may grow up to limit without reading head
	sent  envelope
	// lineEnd is the position after the last slot that a line payload
	// filled: the slot after a message may hold payload bytes in its w
	// only while it is less than boxSlots behind lineEnd.
	lineEnd uint64
	_       [128 - 32 - 32]byte
	// The consumer's lines: the receiving rank, or its sender draining.
	cmu   sync.Mutex
	head  atomic.Uint64 // slots delivered, published after each drain
	got   envelope
	buf   [boxMax]byte // a payload in pieces, put together
	_     [64 - (16+32+boxMax)%64]byte
	slots [boxSlots]slot
}

// put copies one message into b and reports true, or reports false if b
// has no room for it.
func (b *box) put(ctx uint32, src, tag int32, sig, id uint64, payload []byte) bool {
	n := len(payload)
	b.pmu.Lock()
	flags, k := 0, 1
	e := &b.sent
	if ctx != e.ctx || src != e.src || tag != e.tag || sig != e.sig {
		flags |= fEnv
		k += 2
	}
	switch {
	case id == 0:
	case id == e.id+1:
		flags |= fIDNext
	default:
		flags |= fID
		k++
	}
	switch {
	case n > boxSmall:
		flags |= fLine
		k += (n + slotBytes - 1) / slotBytes
	case n > startData:
		k += (n - startData + contData - 1) / contData
	}
	// Room for the message and the slot after it, which may be cleared
	// below.
	pos := b.tail
	if pos+uint64(k)+1 > b.limit {
		b.limit = b.head.Load() + boxSlots
		if pos+uint64(k)+1 > b.limit {
			b.pmu.Unlock()
			return false
		}
	}
	first := &b.slots[pos%boxSlots]
	binary.LittleEndian.PutUint16(first.b[:2], uint16(n|flags<<11))
	rest := payload
	if flags&fLine == 0 {
		rest = payload[copy(first.b[2:], payload):]
	}
	at := pos + 1
	next := func() *slot {
		s := &b.slots[at%boxSlots]
		at++
		// A continuation's w is 0, so that no stale seq can ever pass
		// for a message's start. It is stored only where it is not 0
		// already (a start in the last lap), and atomically: a consumer
		// that read head before a sender emptied the box may look at w
		// here while we write (Collect's ready; it then finds nothing).
		if s.w != 0 {
			atomic.StoreUint32(&s.w, 0)
		}
		return s
	}
	if flags&fEnv != 0 {
		a := next()
		binary.LittleEndian.PutUint32(a.b[0:], ctx)
		binary.LittleEndian.PutUint32(a.b[4:], uint32(src))
		binary.LittleEndian.PutUint32(a.b[8:], uint32(tag))
		binary.LittleEndian.PutUint64(next().b[0:], sig)
		e.ctx, e.src, e.tag, e.sig = ctx, src, tag, sig
	}
	if flags&fID != 0 {
		binary.LittleEndian.PutUint64(next().b[0:], id)
	}
	if id != 0 {
		e.id = id
	}
	if flags&fLine != 0 {
		at = b.putLine(at, rest)
	} else {
		// Whole slots as 12-byte moves, not a copy call each: a 128-byte
		// payload is ten of them.
		for len(rest) >= contData {
			next().b = [contData]byte(rest)
			rest = rest[contData:]
		}
		if len(rest) > 0 {
			copy(next().b[:], rest)
		}
	}
	// The slot after this message: where the receiver looks next. If a
	// line payload may have left bytes in its w, clear them first.
	if at < b.lineEnd+boxSlots {
		if s := &b.slots[at%boxSlots]; atomic.LoadUint32(&s.w) != 0 {
			atomic.StoreUint32(&s.w, 0)
		}
	}
	atomic.StoreUint32(&first.w, seq(pos))
	b.tail = at
	b.pmu.Unlock()
	return true
}

// lineBytes returns the bytes of the slots from position at, up to the
// ring's end or n slots, whichever comes first.
func (b *box) lineBytes(at uint64, n int) []byte {
	i := int(at % boxSlots)
	n = min(n, boxSlots-i)
	return unsafe.Slice((*byte)(unsafe.Pointer(&b.slots[i])), n*slotBytes)
}

// putLine copies a line payload into whole slots from position at and
// returns the position after them. The producer lock is held.
func (b *box) putLine(at uint64, p []byte) uint64 {
	k := (len(p) + slotBytes - 1) / slotBytes
	end := at + uint64(k)
	if raceEnabled {
		// The race detector would report a stale look at a w (ready, with
		// an old head) against the copy's plain writes; give it atomic
		// ones. The bytes that land are the same.
		for ; len(p) > 0; at++ {
			var s [slotBytes]byte
			p = p[copy(s[:], p):]
			sl := &b.slots[at%boxSlots]
			atomic.StoreUint32(&sl.w, binary.NativeEndian.Uint32(s[:4]))
			sl.b = [contData]byte(s[4:])
		}
	} else {
		for len(p) > 0 {
			dst := b.lineBytes(at, (len(p)+slotBytes-1)/slotBytes)
			c := copy(dst, p)
			p = p[c:]
			at += uint64(len(dst) / slotBytes)
		}
	}
	b.lineEnd = end
	return end
}

// ready reports whether a message waits in b. Any goroutine may ask.
func (b *box) ready() bool {
	h := b.head.Load()
	return atomic.LoadUint32(&b.slots[h%boxSlots].w) == seq(h)
}

// drain delivers the messages in b, in order, to deliver as from's, and
// reports whether there were any. The caller holds b.cmu.
func (b *box) drain(from int, deliver EagerFunc) bool {
	h0 := b.head.Load()
	pos := h0
	e := &b.got
	for {
		first := &b.slots[pos%boxSlots]
		if atomic.LoadUint32(&first.w) != seq(pos) {
			break
		}
		fn := int(binary.LittleEndian.Uint16(first.b[:2]))
		n, flags := fn&lenMask, fn>>11
		at := pos + 1
		if flags&fEnv != 0 {
			a, c := &b.slots[at%boxSlots], &b.slots[(at+1)%boxSlots]
			e.ctx = binary.LittleEndian.Uint32(a.b[0:])
			e.src = int32(binary.LittleEndian.Uint32(a.b[4:]))
			e.tag = int32(binary.LittleEndian.Uint32(a.b[8:]))
			e.sig = binary.LittleEndian.Uint64(c.b[0:])
			at += 2
		}
		var id uint64
		switch {
		case flags&fID != 0:
			id = binary.LittleEndian.Uint64(b.slots[at%boxSlots].b[0:])
			at++
		case flags&fIDNext != 0:
			id = e.id + 1
		}
		if id != 0 {
			e.id = id
		}
		var payload []byte
		if flags&fLine != 0 {
			k := (n + slotBytes - 1) / slotBytes
			if p := b.lineBytes(at, k); len(p) >= n {
				payload = p[:n] // in place: it does not wrap
			} else {
				got := copy(b.buf[:n], p)
				copy(b.buf[got:n], b.lineBytes(at+uint64(len(p)/slotBytes), k))
				payload = b.buf[:n]
			}
			at += uint64(k)
		} else if n <= startData {
			payload = first.b[2 : 2+n]
		} else {
			got := copy(b.buf[:], first.b[2:])
			for ; n-got >= contData; got += contData {
				*(*[contData]byte)(b.buf[got:]) = b.slots[at%boxSlots].b
				at++
			}
			if got < n {
				copy(b.buf[got:n], b.slots[at%boxSlots].b[:])
				at++
			}
			payload = b.buf[:n]
		}
		h := wire.Header{Kind: wire.Eager, Context: e.ctx, Src: e.src, Tag: e.tag, Size: int64(n), Sig: e.sig, SendID: id}
		deliver(h, from, payload)
		// Give the slots back now and then, not only at the end: a
		// sender that streams keeps writing while we deliver.
		if at-h0 >= boxSlots/2 && pos-h0 < boxSlots/2 {
			b.head.Store(at)
		}
		pos = at
	}
	if pos == h0 {
		return false
	}
	b.head.Store(pos)
	return true
}

// drainAll delivers every message in b, waiting for another consumer to
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
	// stale is Sweep's record, by sender rank: 1 + the head of a box that
	// held a message at the last Sweep, or 0. Only the sweeper touches it.
	stale []uint64
	// onFull, if set (by tests, before any message), runs when a sender
	// first finds its box full, on the sender's goroutine.
	onFull func()
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

// Sweep closes the inbox if a message has waited in one of its boxes
// since the last Sweep with nobody collecting it, and reports whether it
// did. It is the rank's safety net: one goroutine calls it every few
// milliseconds, so that a rank that stops looking at its messages without
// closing its inbox first (a goroutine blocked outside the library, a
// path that forgot to collect) delays its messages by that much instead
// of never getting them.
func (ib *Inbox) Sweep() bool {
	if ib.stale == nil {
		ib.stale = make([]uint64, len(ib.boxes))
	}
	if !ib.open.Load() {
		clear(ib.stale)
		return false
	}
	stale := false
	for i := range ib.boxes {
		b := ib.boxes[i].Load()
		if b == nil || !b.ready() {
			ib.stale[i] = 0
			continue
		}
		h := b.head.Load() + 1
		if ib.stale[i] == h {
			stale = true
		}
		ib.stale[i] = h
	}
	if stale {
		ib.Close()
		clear(ib.stale)
	}
	return stale
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
