package shm

import (
	"bytes"
	"encoding/binary"
	"sync/atomic"
	"testing"

	"github.com/mpigo/mpi/internal/wire"
)

// TestBoxCell: a cell gives back the header and payload put into it, with
// or without a send id, and fits admits exactly the frames a cell holds.
func TestBoxCell(t *testing.T) {
	tests := []struct {
		name   string
		n      int
		sendID uint64
		flags  uint8
		fits   bool
	}{
		{"empty", 0, 0, 0, true},
		{"8 bytes", 8, 0, 0, true},
		{"full cell", boxPayload, 0, 0, true},
		{"too long", boxPayload + 1, 0, 0, false},
		{"8 bytes with id", 8, 1<<63 | 77, 0, true},
		{"room left by the id", idPayload, 5, 0, true},
		{"no room for the id", idPayload + 1, 5, 0, false},
		{"synchronous", 8, 5, wire.FlagSync, false},
	}
	var head atomic.Uint64
	b := newBox(make([]byte, boxBytes), &head)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := bytes.Repeat([]byte{byte(i + 1)}, tt.n)
			f := wire.Frame{Header: wire.Header{Kind: wire.Eager, Flags: tt.flags, Context: 3, Src: 1, Tag: int32(i), Size: int64(tt.n), Sig: 99, SendID: tt.sendID}, Payload: p}
			if got := fits(&f); got != tt.fits {
				t.Fatalf("fits = %v, want %v", got, tt.fits)
			}
			if !tt.fits {
				return
			}
			pos := uint64(i)
			b.put(pos, &f.Header, f.Payload)
			if !b.ready(pos) {
				t.Fatal("cell not ready after put")
			}
			var h wire.Header
			got := b.take(pos, &h)
			if h != f.Header {
				t.Errorf("header %+v, want %+v", h, f.Header)
			}
			if !bytes.Equal(got, p) {
				t.Errorf("payload %v, want %v", got, p)
			}
		})
	}
}

// TestBoxCellCorrupt: a cell whose length claims more than it holds is
// read only up to its room, and never into the send id.
func TestBoxCellCorrupt(t *testing.T) {
	var head atomic.Uint64
	b := newBox(make([]byte, boxBytes), &head)
	for _, tt := range []struct {
		length uint16
		want   int
	}{{0x7fff, boxPayload}, {cellID | 0x7fff, idPayload}, {cellID | boxPayload, idPayload}} {
		c := b.cell(0)
		binary.LittleEndian.PutUint16(c[10:], tt.length)
		var h wire.Header
		if got := b.take(0, &h); len(got) != tt.want || h.Size != int64(tt.want) {
			t.Errorf("length field %#x: read %d bytes (Size %d), want %d", tt.length, len(got), h.Size, tt.want)
		}
	}
}
