package shm

import (
	"sync/atomic"
	"unsafe"

	"github.com/mpigo/mpi/internal/memcopy"
	"github.com/mpigo/mpi/internal/wire"
)

// A ring is a single-producer, single-consumer byte stream in shared
// memory. Its layout, at the start of its memory:
//
//	[0, 8)      tail: bytes ever written (only the producer stores it)
//	[64, 72)    head: bytes ever read (only the consumer stores it)
//	[72, 80)    the head of the fast box next to the ring (see box)
//	[128, ...)  data: a power-of-two number of bytes, used modulo its size
//
// tail and head live in cache lines of their own so that the producer and
// the consumer do not steal each other's line on every update. The
// producer copies bytes in, then stores tail: the store publishes them
// (Go's atomics order the plain copies before it). The consumer loads tail,
// copies or hands out the bytes before it, then stores head, which gives
// their room back. Frames (a wire header and its payload) follow each other
// in the stream; one may straddle the end of the data and continue at its
// start, and one larger than the ring is written in parts as room appears.
type ring struct {
	tail *atomic.Uint64
	head *atomic.Uint64
	data []byte
	mask uint64
}

// boxHead is the box head's offset in a ring's memory.
const boxHead = 72

// ringHeader is the size of a ring's index lines before its data.
const ringHeader = 128

// ringBytes is the memory a ring of capacity c takes.
func ringBytes(c int) int { return ringHeader + c }

// slotBytes is the memory of one sender's slot in an inbox: its fast box,
// then its ring.
func slotBytes(c int) int { return boxBytes + ringBytes(c) }

// A roomWaiter is what a writer calls on: waitRoom when the ring is full
// (an error gives up: the consumer died or the transport closed), wake
// after each publication (it wakes the consumer if it sleeps).
type roomWaiter interface {
	waitRoom(spins int) error
	wake()
}

// boxHeadAt returns the box head in the memory of a ring.
func boxHeadAt(mem []byte) *atomic.Uint64 { return (*atomic.Uint64)(unsafe.Pointer(&mem[boxHead])) }

// newRing views mem (at least ringBytes(c) bytes, 8-byte aligned) as a ring
// of capacity c, a power of two.
func newRing(mem []byte, c int) ring {
	return ring{
		tail: (*atomic.Uint64)(unsafe.Pointer(&mem[0])),
		head: (*atomic.Uint64)(unsafe.Pointer(&mem[64])),
		data: mem[ringHeader : ringHeader+c : ringHeader+c],
		mask: uint64(c - 1),
	}
}

// put copies as much of p as fits at position pos (the producer's tail),
// wrapping at the end of the data, given that the consumer's head is head.
// It returns the number of bytes copied; the caller publishes them.
func (r *ring) put(pos, head uint64, p []byte) int {
	free := uint64(len(r.data)) - (pos - head)
	n := min(uint64(len(p)), free)
	if n == 0 {
		return 0
	}
	at := pos & r.mask
	k := memcopy.Copy(r.data[at:], p[:n])
	memcopy.Copy(r.data, p[k:n])
	return int(n)
}

// get copies len(p) bytes at position pos into p, wrapping at the end. The
// caller has checked that they are there.
func (r *ring) get(pos uint64, p []byte) {
	at := pos & r.mask
	k := memcopy.Copy(p, r.data[at:])
	memcopy.Copy(p[k:], r.data)
}

// view returns the n bytes at pos if they are contiguous in the data, or
// nil if they wrap.
func (r *ring) view(pos uint64, n int) []byte {
	at := pos & r.mask
	if at+uint64(n) > uint64(len(r.data)) {
		return nil
	}
	return r.data[at : at+uint64(n) : at+uint64(n)]
}

// reader is the consumer's side of a ring: it turns the stream back into
// frames, possibly across several polls when a frame arrives in parts.
//
// Its positions are its own, apart from the ring's shared ones: pos is
// how far it has consumed, which it publishes to the shared head
// (ring.head) only now and then; published is the value it last stored
// there.
type reader struct {
	ring
	box       box
	published uint64 // the ring's head as last stored
	bpos      uint64 // fast-box frames consumed
	pos       uint64 // bytes consumed: the head not yet published
	from      int    // the producer's world rank
	self      int
	partial   bool // the header of the current frame has been read
	hdr       wire.Header
	n         int    // its payload length
	dst       []byte // where the payload goes: a placed receive buffer or scratch
	got       int    // payload bytes copied into dst so far
	scratch   []byte
	boxBuf    [boxMax]byte // a box frame's payload, gathered from its cells
	// A run of box frames for Config.EagerRun: their headers, payloads
	// and cells.
	runH [runMax]wire.Header
	runP [runMax][]byte
	runC [runMax]uint64
	hb   [wire.HeaderSize]byte
}

// poll delivers the frames that have arrived whole, through deliver, and
// moves the bytes of a frame that is still arriving into its destination.
// place, if not nil, may give the destination of a payload (the posted
// receive buffer it fills). It reports whether it consumed anything, and
// fails on a malformed header.
func (rd *reader) poll(deliver func(f wire.Frame), place func(h *wire.Header, from, n int) []byte, limit int) (bool, error) {
	return rd.pollTo(rd.tail.Load(), deliver, nil, place, limit)
}

// pollTo is poll for the bytes before tail, a value of the ring's tail
// loaded earlier. Whole plain eager frames go through eager when it is set
// (as box frames do): no Frame is built, and the engine takes its short
// path.
//
// The ring's head is published every ringPublish bytes and when the poll
// ends, not after every frame: the store is a locked instruction, and a
// sender that streams small frames faster than they are consumed paid one
// per frame on the receiving side.
func (rd *reader) pollTo(tail uint64, deliver func(f wire.Frame), eager func(h *wire.Header, from int, payload []byte) error, place func(h *wire.Header, from, n int) []byte, limit int) (bool, error) {
	if tail == rd.pos {
		return false, nil
	}
	for {
		avail := tail - rd.pos
		if !rd.partial {
			if avail < wire.HeaderSize {
				break
			}
			rd.get(rd.pos, rd.hb[:])
			var n int
			var err error
			// The header lives in the reader, not on the stack: place
			// takes its address, which would move a local to the heap.
			rd.hdr, n, err = wire.Unmarshal(rd.hb[:])
			if err != nil {
				return true, err
			}
			h := &rd.hdr
			if n > limit {
				return true, errTooBig(n, limit)
			}
			avail -= wire.HeaderSize
			// A whole frame that does not wrap is handed out in place: the
			// engine copies what it keeps before deliver returns.
			if uint64(n) <= avail {
				if v := rd.view(rd.pos+wire.HeaderSize, n); v != nil || n == 0 {
					rd.pos += wire.HeaderSize
					if eager != nil && h.Unanswered(n) {
						if err := eager(h, rd.from, v); err != nil {
							rd.ring.head.Store(rd.pos)
							return true, err
						}
					} else {
						if pd := placed(place, h, rd.from, n); pd != nil {
							memcopy.Copy(pd, v)
							v = pd
						}
						deliver(wire.Frame{Header: *h, From: rd.from, To: rd.self, Payload: v})
					}
					rd.pos += uint64(n)
					if rd.pos-rd.published >= ringPublish {
						rd.ring.head.Store(rd.pos)
						rd.published = rd.pos
					}
					continue
				}
			}
			rd.pos += wire.HeaderSize
			rd.partial, rd.n, rd.got = true, n, 0
			rd.dst = placed(place, h, rd.from, n)
			if rd.dst == nil {
				if cap(rd.scratch) < n {
					rd.scratch = make([]byte, n)
				}
				rd.dst = rd.scratch[:n]
			}
		}
		k := int(min(uint64(rd.n-rd.got), tail-rd.pos))
		if k > 0 {
			rd.get(rd.pos, rd.dst[rd.got:rd.got+k])
			rd.got += k
			rd.pos += uint64(k)
		}
		if rd.got < rd.n {
			break
		}
		rd.partial = false
		deliver(wire.Frame{Header: rd.hdr, From: rd.from, To: rd.self, Payload: rd.dst})
		rd.dst = nil
		if cap(rd.scratch) > 4<<20 { // do not keep a huge buffer for one large frame
			rd.scratch = nil
		}
	}
	rd.ring.head.Store(rd.pos)
	rd.published = rd.pos
	return true, nil
}

// ringPublish is how many consumed bytes pollTo lets pass before it
// publishes the ring's head in the middle of a poll.
const ringPublish = 4096

func placed(place func(h *wire.Header, from, n int) []byte, h *wire.Header, from, n int) []byte {
	if place == nil || n == 0 {
		return nil
	}
	if d := place(h, from, n); len(d) == n {
		return d
	}
	return nil
}

// tryWriteFrame writes a header and its payload, published by a single
// store, if the ring has room for both now, and reports whether it did.
func (w *writer) tryWriteFrame(hb []byte, payload []byte, rw roomWaiter) bool {
	n := uint64(len(hb) + len(payload))
	if uint64(len(w.data))-(w.pos-w.seenHead) < n {
		w.seenHead = w.ring.head.Load()
	}
	if uint64(len(w.data))-(w.pos-w.seenHead) < n {
		return false
	}
	w.put(w.pos, w.seenHead, hb)
	w.put(w.pos+uint64(len(hb)), w.seenHead, payload)
	w.pos += n
	w.ring.tail.Store(w.pos)
	rw.wake()
	return true
}

// writer is the producer's side of a ring. pos is how far it has
// written, the value it stores to the shared tail (ring.tail); seenHead is
// the shared head as it last loaded it: the room is at least what that
// implies.
type writer struct {
	ring
	pos      uint64 // bytes written and published
	seenHead uint64 // the ring's head as last loaded
}

// write copies p into the ring as room allows, publishing as it goes, and
// calls rw.waitRoom when the ring is full and rw.wake after each
// publication.
func (w *writer) write(p []byte, rw roomWaiter) error {
	spins := 0
	for len(p) > 0 {
		if uint64(len(w.data))-(w.pos-w.seenHead) < uint64(len(p)) {
			w.seenHead = w.ring.head.Load()
		}
		k := w.put(w.pos, w.seenHead, p)
		if k == 0 {
			rw.wake()
			if err := rw.waitRoom(spins); err != nil {
				return err
			}
			spins++
			continue
		}
		spins = 0
		p = p[k:]
		w.pos += uint64(k)
		w.ring.tail.Store(w.pos)
		rw.wake()
	}
	return nil
}

// writeFrame writes a header and its payload; small frames are published
// by a single store.
func (w *writer) writeFrame(hb []byte, payload []byte, rw roomWaiter) error {
	if w.tryWriteFrame(hb, payload, rw) {
		return nil
	}
	if err := w.write(hb, rw); err != nil {
		return err
	}
	return w.write(payload, rw)
}
