package shm

import (
	"bytes"
	"encoding/binary"
	"sync/atomic"
	"testing"

	"github.com/mpigo/mpi/internal/wire"
)

// TestBoxCell: the cells of a frame give back the header and payload put
// into them, with or without a send id, in one cell or with continuation
// cells, across the end of the box; fits admits exactly the frames the
// box takes and says how many cells they take.
func TestBoxCell(t *testing.T) {
	tests := []struct {
		name   string
		n      int
		sendID uint64
		flags  uint8
		pos    uint64
		cells  int // 0: not in the box
	}{
		{"empty", 0, 0, 0, 0, 1},
		{"8 bytes", 8, 0, 0, 1, 1},
		{"full cell", boxPayload, 0, 0, 2, 1},
		{"one continuation", boxPayload + 1, 0, 0, 3, 2},
		{"full continuation", boxPayload + contPayload, 0, 0, 5, 2},
		{"two continuations", boxPayload + contPayload + 1, 0, 0, 7, 3},
		{"8 bytes with id", 8, 1<<63 | 77, 0, 10, 1},
		{"room left by the id", idPayload, 5, 0, 11, 1},
		{"id and a continuation", idPayload + 1, 5, 0, 12, 2},
		{"largest", boxMax, 0, 0, 20, 5},
		{"largest with id", boxMax, 6, 0, 40, 6},
		{"across the end", 200, 7, 0, boxCells - 3, 5},
		{"too long", boxMax + 1, 0, 0, 0, 0},
		{"synchronous", 8, 5, wire.FlagSync, 0, 0},
	}
	var head atomic.Uint64
	b := newBox(make([]byte, boxBytes), &head)
	var buf [boxMax]byte
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := make([]byte, tt.n)
			for k := range p {
				p[k] = byte(i + k*13)
			}
			f := wire.Frame{Header: wire.Header{Kind: wire.Eager, Flags: tt.flags, Context: 3, Src: 1, Tag: int32(i), Size: int64(tt.n), Sig: 99, SendID: tt.sendID}, Payload: p}
			if got := fits(&f); got != tt.cells {
				t.Fatalf("fits = %d cells, want %d", got, tt.cells)
			}
			if tt.cells == 0 {
				return
			}
			pos := tt.pos
			b.put(pos, &f.Header, f.Payload)
			if !b.ready(pos) {
				t.Fatal("cell not ready after put")
			}
			for k := 1; k < tt.cells; k++ {
				if b.ready(pos + uint64(k)) {
					t.Fatalf("continuation cell %d looks like the frame at its position", k)
				}
			}
			var h wire.Header
			got, cells := b.take(pos, &h, &buf)
			if h != f.Header {
				t.Errorf("header %+v, want %+v", h, f.Header)
			}
			if !bytes.Equal(got, p) {
				t.Errorf("payload %v, want %v", got, p)
			}
			if cells != uint64(tt.cells) {
				t.Errorf("take: %d cells, want %d", cells, tt.cells)
			}
		})
	}
}

// TestBoxCellCorrupt: a cell whose length claims more than the box holds
// is read only up to boxMax bytes, within the box, and a send id is never
// read as payload.
func TestBoxCellCorrupt(t *testing.T) {
	var head atomic.Uint64
	var buf [boxMax]byte
	for _, tt := range []struct {
		length uint16
		want   int
	}{{0x7fff, boxMax}, {cellID | 0x7fff, boxMax}, {cellID | boxPayload, boxPayload}} {
		for _, pos := range []uint64{0, boxCells - 1} {
			b := newBox(make([]byte, boxBytes), &head)
			c := b.cell(pos)
			binary.LittleEndian.PutUint16(c[10:], tt.length)
			if tt.length&cellID != 0 {
				binary.LittleEndian.PutUint64(c[32+idPayload:], 0x1d1d1d1d1d1d1d1d)
			}
			var h wire.Header
			got, cells := b.take(pos, &h, &buf)
			if len(got) != tt.want || h.Size != int64(tt.want) || cells > boxCells {
				t.Errorf("length field %#x at %d: read %d bytes (Size %d) from %d cells, want %d", tt.length, pos, len(got), h.Size, cells, tt.want)
			}
			if tt.length&cellID != 0 && bytes.Contains(got, []byte{0x1d, 0x1d, 0x1d, 0x1d, 0x1d, 0x1d, 0x1d, 0x1d}) {
				t.Errorf("length field %#x: the send id was read as payload", tt.length)
			}
		}
	}
}

// FuzzBoxTake: whatever another process wrote into a box, take reads at
// most boxMax bytes, from cells of the box, and no more cells than a
// frame of that length takes.
func FuzzBoxTake(f *testing.F) {
	var head atomic.Uint64
	seed := newBox(make([]byte, boxBytes), &head)
	seed.put(62, &wire.Header{Kind: wire.Eager, Tag: 3, SendID: 9}, bytes.Repeat([]byte{7}, 200))
	f.Add(seed.mem, uint8(62))
	f.Add(make([]byte, boxBytes), uint8(0))
	f.Fuzz(func(t *testing.T, mem []byte, at uint8) {
		m := make([]byte, boxBytes)
		copy(m, mem)
		b := newBox(m, &head)
		pos := uint64(at) % boxCells
		var h wire.Header
		var buf [boxMax]byte
		got, cells := b.take(pos, &h, &buf)
		if len(got) > boxMax || h.Size != int64(len(got)) {
			t.Fatalf("read %d bytes, Size %d", len(got), h.Size)
		}
		// The cell says whether it carries a send id (which may be 0).
		if a, b := cellsFor(len(got), false), cellsFor(len(got), true); cells != uint64(a) && cells != uint64(b) {
			t.Fatalf("%d bytes from %d cells, want %d or %d", len(got), cells, a, b)
		}
	})
}
