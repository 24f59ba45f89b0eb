package shm

import (
	"encoding/binary"
	"sync/atomic"
	"unsafe"

	"github.com/mpigo/mpi/internal/wire"
)

// A box is the fast path for small messages: a ring of cache-line cells
// next to each ring. A frame takes one cell, which holds its sequence
// number, a compact header and up to boxPayload bytes, so an 8-byte
// message crosses between cores as one cache line, and the receiver
// learns of it from that same line instead of from the ring's tail. A
// frame of up to boxMax bytes goes on in continuation cells after it.
//
// Cell layout (64 bytes):
//
//	[0, 8)    seq: the position + 1 of the frame it holds (published last)
//	[8]       kind   [9] flags   [10, 12) payload length, | cellID
//	[12, 16)  context   [16, 20) source   [20, 24) tag
//	[24, 32)  type signature
//	[32, 64)  payload; or, with cellID set in the length,
//	[32, 56)  payload and [56, 64) the send id
//
// A continuation cell (the payload past the first cell's room):
//
//	[0, 8)    0, which no frame's seq is
//	[8, 64)   payload
//
// The sender writes the continuation cells, then the first cell, and
// stores its seq last. The receiver reads seq only where a frame starts,
// and a continuation cell's 0 can never pass for the seq of a frame that
// later starts in that cell.
//
// A send id names a message that its sender may still cancel (Isend and
// the other non-blocking sends): such a message needs no answer unless it
// is cancelled, so it takes the box too when its payload leaves room for
// the id. Before the id had a place here, every Isend went through the
// ring with its whole 64-byte header (see docs/performance.md).
//
// Only the sender writes cells; the receiver only reads them, and gives
// them back by publishing how many it has consumed (the box head, in the
// ring's consumer line) once per drain. A receiver that wrote each cell
// free instead paid for taking the line back from the sender on every
// message, on its way to deliver it. The sender reads the head only when the
// cells it knows to be free run out. A cell holds the frame at pos when
// its seq is pos + 1, which no older frame in that cell can have.
//
// Only eager frames that need no answer (at most a send id) and fit go in
// a cell. Order with the ring: a sender uses its box only while every frame
// it put in the ring has been consumed (the ring's head equals its tail),
// and the receiver loads the ring's tail before it empties the box, then
// reads the ring up to that tail. A box frame written before a ring frame
// is therefore always seen first, and one written after it cannot exist
// until the ring frame has been consumed.
type box struct {
	mem  []byte         // boxCells cells
	head *atomic.Uint64 // cells consumed, published by the receiver
}

const (
	cellSize   = 64
	boxCells   = 64
	boxBytes   = cellSize * boxCells
	boxPayload = cellSize - 32
	// idPayload is the room for the payload of a frame with a send id.
	idPayload = boxPayload - 8
	// contPayload is the payload a continuation cell holds.
	contPayload = cellSize - 8
	// boxMax is the largest payload that takes the box (5 cells, 6 with
	// a send id). Larger frames go through the ring, which measured as
	// fast or faster for them: at 1 KiB (19 cells) the box took 1.25-1.41
	// us one way against the ring's 1.04 (docs/performance.md, "Small
	// messages in the box").
	boxMax = 256
	// cellID marks, in a cell's length field, a frame with a send id.
	cellID = 0x8000
)

// cellsFor returns how many cells a payload of n bytes takes, with a send
// id or not, or 0 if it is too large for the box.
func cellsFor(n int, id bool) int {
	room := boxPayload
	if id {
		room = idPayload
	}
	switch {
	case n <= room:
		return 1
	case n > boxMax:
		return 0
	}
	return 1 + (n-room+contPayload-1)/contPayload
}

// newBox views mem as a box whose head lives at head.
func newBox(mem []byte, head *atomic.Uint64) box {
	return box{mem: mem[:boxBytes:boxBytes], head: head}
}

func (b box) cell(pos uint64) []byte {
	i := (pos % boxCells) * cellSize
	return b.mem[i : i+cellSize : i+cellSize]
}

func seqOf(c []byte) *atomic.Uint64 { return (*atomic.Uint64)(unsafe.Pointer(&c[0])) }

// fits returns how many cells f takes in the box, or 0 if it cannot take
// it: the box carries eager frames that need no answer
// (wire.Header.Unanswered: the box's receiver gives none) of up to boxMax
// bytes.
func fits(f *wire.Frame) int {
	if !f.Unanswered(len(f.Payload)) {
		return 0
	}
	return cellsFor(len(f.Payload), f.SendID != 0)
}

// put writes the eager frame (h, payload) into the cells from pos, which
// the caller knows to be free and fits has accepted.
func (b box) put(pos uint64, h *wire.Header, payload []byte) {
	b.putParts(pos, h.Kind, h.Flags, h.Context, h.Src, h.Tag, h.Sig, h.SendID, payload)
}

// putParts is put with the header's fields as arguments: building a
// Header only to read it back here cost a stalled copy of it. The payload
// has at most boxMax bytes; the frame takes cellsFor cells.
func (b box) putParts(pos uint64, kind wire.Kind, flags uint8, ctx uint32, src, tag int32, sig, sendID uint64, payload []byte) {
	le := binary.LittleEndian
	room := boxPayload
	if sendID != 0 {
		room = idPayload
	}
	n := uint16(len(payload))
	if len(payload) > room {
		rest := payload[room:]
		for i := uint64(1); len(rest) > 0; i++ {
			cc := b.cell(pos + i)
			le.PutUint64(cc, 0)
			rest = rest[copy(cc[8:], rest):]
		}
		payload = payload[:room:room]
	}
	c := b.cell(pos)
	seq := seqOf(c)
	c[8], c[9] = byte(kind), flags
	if sendID != 0 {
		le.PutUint64(c[32+idPayload:], sendID)
		n |= cellID
	}
	le.PutUint16(c[10:], n)
	le.PutUint32(c[12:], ctx)
	le.PutUint32(c[16:], uint32(src))
	le.PutUint32(c[20:], uint32(tag))
	le.PutUint64(c[24:], sig)
	copy(c[32:], payload)
	seq.Store(pos + 1)
}

// ready reports whether the cell at pos holds the frame at pos.
func (b box) ready(pos uint64) bool { return seqOf(b.cell(pos)).Load() == pos+1 }

// take decodes the frame at pos into h and returns its payload and the
// number of cells it takes. A payload within the first cell is returned in
// place, valid until the cells are given back (the box head passes them);
// a longer one is gathered into buf.
func (b box) take(pos uint64, h *wire.Header, buf *[boxMax]byte) ([]byte, uint64) {
	c := b.cell(pos)
	le := binary.LittleEndian
	l := le.Uint16(c[10:])
	n, room, id := int(l&^cellID), boxPayload, uint64(0)
	if l&cellID != 0 {
		room, id = idPayload, le.Uint64(c[32+idPayload:])
	}
	// A corrupt length cannot make us read more than boxMax bytes, past
	// the box (cells wrap), or the send id as payload.
	n = min(n, boxMax)
	// Field by field: building a Header and copying it over *h stalled
	// on store forwarding (perf annotate: two thirds of take's time).
	h.Kind, h.Flags = wire.Kind(c[8]), c[9]
	h.Context = le.Uint32(c[12:])
	h.Src, h.Tag = int32(le.Uint32(c[16:])), int32(le.Uint32(c[20:]))
	h.Size, h.Offset = int64(n), 0
	h.SendID, h.RecvID = id, 0
	h.Sig, h.Token = le.Uint64(c[24:]), 0
	if n <= room {
		return c[32 : 32+n], 1
	}
	k := copy(buf[:], c[32:32+room])
	cells := uint64(1)
	for ; k < n; cells++ {
		k += copy(buf[k:n], b.cell(pos + cells)[8:])
	}
	return buf[:n], cells
}

// drainBox delivers the frames waiting in rd's box, in order: through eager
// when it is set (box frames are all eager ones that need no answer), else
// through deliver. It stops at a frame eager refuses and returns the error.
//
// With run set, the frames go through run instead, a run at a time
// (drainRuns).
func (rd *reader) drainBox(deliver func(f wire.Frame), eager func(h *wire.Header, from int, payload []byte) error,
	run func(from int, hs []wire.Header, ps [][]byte) (int, error)) (bool, error) {
	if run != nil && eager != nil {
		return rd.drainRuns(eager, run)
	}
	got := false
	for rd.box.ready(rd.bpos) {
		p, cells := rd.box.take(rd.bpos, &rd.hdr, &rd.boxBuf)
		if eager != nil {
			if err := eager(&rd.hdr, rd.from, p); err != nil {
				rd.box.head.Store(rd.bpos)
				return true, err
			}
		} else {
			deliver(wire.Frame{Header: rd.hdr, From: rd.from, To: rd.self, Payload: p})
		}
		rd.bpos += cells
		got = true
	}
	// The head is published after every drain, though the sender needs it
	// only when the cells it knows to be free run out: hasWork looks for
	// the next frame at the published head (the only atomic copy of bpos).
	// Publishing every 16 frames instead made every poll look busy.
	if got {
		rd.box.head.Store(rd.bpos)
	}
	return got, nil
}

// runMax is the most box frames drainRuns hands over at once.
const runMax = 16

// drainRuns is drainBox through run: the waiting frames go over up to
// runMax at a time, which the engine delivers under one lock of its own
// instead of one lock a frame (docs/performance.md, "Box frames a run at
// a time"); a frame with none after it yet goes alone through eager, the
// shorter road. A payload that fits its first cell is handed over in
// place: the cells are given back (the box head) only after run returns.
// A longer one is gathered into boxBuf, which the next would overwrite,
// so it ends its run.
func (rd *reader) drainRuns(eager func(h *wire.Header, from int, payload []byte) error,
	run func(from int, hs []wire.Header, ps [][]byte) (int, error)) (bool, error) {
	got := false
	for rd.box.ready(rd.bpos) {
		p, cells := rd.box.take(rd.bpos, &rd.runH[0], &rd.boxBuf)
		rd.runP[0], rd.runC[0] = p, cells
		k, pos := 1, rd.bpos+cells
		for cells == 1 && k < runMax && rd.box.ready(pos) {
			p, cells = rd.box.take(pos, &rd.runH[k], &rd.boxBuf)
			rd.runP[k], rd.runC[k] = p, cells
			pos += cells
			k++
		}
		var n int
		var err error
		if k == 1 {
			if err = eager(&rd.runH[0], rd.from, p); err == nil {
				n = 1
			}
		} else {
			n, err = run(rd.from, rd.runH[:k], rd.runP[:k])
		}
		for _, c := range rd.runC[:n] {
			rd.bpos += c
		}
		got = true
		if err != nil {
			rd.box.head.Store(rd.bpos)
			return true, err
		}
	}
	if got {
		rd.box.head.Store(rd.bpos)
	}
	return got, nil
}

// hasWork reports whether rd's box or ring holds a frame, with loads only:
// pollers look before they take the right to consume.
func (rd *reader) hasWork() bool {
	return rd.box.ready(rd.box.head.Load()) || rd.tail.Load() != rd.ring.head.Load()
}
