package shm

import (
	"encoding/binary"
	"sync/atomic"
	"unsafe"

	"github.com/mpigo/mpi/internal/wire"
)

// A box is the fast path for the smallest messages: a ring of cache-line
// cells next to each ring, one frame per cell. A cell holds its sequence
// number, a compact header and up to boxPayload bytes, so an 8-byte
// message crosses between cores as one cache line, and the receiver
// learns of it from that same line instead of from the ring's tail.
//
// Cell layout (64 bytes):
//
//	[0, 8)    seq: 0 when free, else the frame's position + 1 (published last)
//	[8]       kind   [9] flags   [10, 12) payload length
//	[12, 16)  context   [16, 20) source   [20, 24) tag
//	[24, 32)  type signature
//	[32, 64)  payload
//
// Only eager frames that need no answer (no send id) and fit go in a
// cell. Order with the ring: a sender uses its box only while every frame
// it put in the ring has been consumed (the ring's head equals its tail),
// and the receiver loads the ring's tail before it empties the box, then
// reads the ring up to that tail. A box frame written before a ring frame
// is therefore always seen first, and one written after it cannot exist
// until the ring frame has been consumed.
type box struct {
	mem []byte // boxCells cells
}

const (
	cellSize   = 64
	boxCells   = 64
	boxBytes   = cellSize * boxCells
	boxPayload = cellSize - 32
)

func newBox(mem []byte) box { return box{mem: mem[:boxBytes:boxBytes]} }

func (b box) cell(pos uint64) []byte {
	i := (pos % boxCells) * cellSize
	return b.mem[i : i+cellSize : i+cellSize]
}

func seqOf(c []byte) *atomic.Uint64 { return (*atomic.Uint64)(unsafe.Pointer(&c[0])) }

// fits reports whether f can travel in a cell.
func fits(f *wire.Frame) bool {
	return f.Kind == wire.Eager && f.SendID == 0 && f.RecvID == 0 && f.Offset == 0 &&
		len(f.Payload) <= boxPayload && f.Size == int64(len(f.Payload)) && len(f.Region) == 0
}

// put writes f into the cell at pos if the receiver has freed it.
func (b box) put(pos uint64, f *wire.Frame) bool {
	c := b.cell(pos)
	seq := seqOf(c)
	if seq.Load() != 0 {
		return false
	}
	le := binary.LittleEndian
	c[8], c[9] = byte(f.Kind), f.Flags
	le.PutUint16(c[10:], uint16(len(f.Payload)))
	le.PutUint32(c[12:], f.Context)
	le.PutUint32(c[16:], uint32(f.Src))
	le.PutUint32(c[20:], uint32(f.Tag))
	le.PutUint64(c[24:], f.Sig)
	copy(c[32:], f.Payload)
	seq.Store(pos + 1)
	return true
}

// ready reports whether the cell at pos holds the frame at pos.
func (b box) ready(pos uint64) bool { return seqOf(b.cell(pos)).Load() == pos+1 }

// take decodes the frame at pos into h and returns its payload, which
// stays valid until free(pos).
func (b box) take(pos uint64, h *wire.Header) []byte {
	c := b.cell(pos)
	le := binary.LittleEndian
	n := int(le.Uint16(c[10:]))
	if n > boxPayload {
		n = boxPayload // a corrupt cell cannot make us read past it
	}
	*h = wire.Header{Kind: wire.Kind(c[8]), Flags: c[9], Context: le.Uint32(c[12:]), Src: int32(le.Uint32(c[16:])),
		Tag: int32(le.Uint32(c[20:])), Size: int64(n), Sig: le.Uint64(c[24:])}
	return c[32 : 32+n]
}

// free gives the cell at pos back to the sender.
func (b box) free(pos uint64) { seqOf(b.cell(pos)).Store(0) }

// drainBox delivers the frames waiting in rd's box, in order.
func (rd *reader) drainBox(deliver func(f wire.Frame)) bool {
	got := false
	for rd.box.ready(rd.bpos) {
		p := rd.box.take(rd.bpos, &rd.hdr)
		deliver(wire.Frame{Header: rd.hdr, From: rd.from, To: rd.self, Payload: p})
		rd.box.free(rd.bpos)
		rd.bpos++
		got = true
	}
	return got
}
