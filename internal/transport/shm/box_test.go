package shm

import (
	"bytes"
	"encoding/binary"
	"errors"
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

// TestDrainRuns: drainBox with a run callback hands the box's frames over
// in order, in runs of at most runMax frames, a frame with continuation
// cells last in its run (its payload is in the reader's one gather
// buffer), a frame with nothing after it alone through eager; a run that
// fails part-way leaves the frames after the failure in the box, and the
// head counts exactly the cells delivered.
func TestDrainRuns(t *testing.T) {
	var head atomic.Uint64
	rd := &reader{box: newBox(make([]byte, boxBytes), &head), from: 3}
	type got struct {
		tag   int32
		p     []byte
		run   int // the size of the run it came in; 1 through eager
		index int // its place in that run
	}
	var gots []got
	var failAt int32 = -1 // tag at which run fails
	eager := func(h *wire.Header, from int, p []byte) error {
		if from != 3 {
			t.Fatalf("eager: from %d", from)
		}
		gots = append(gots, got{h.Tag, bytes.Clone(p), 1, 0})
		return nil
	}
	run := func(from int, hs []wire.Header, ps [][]byte) (int, error) {
		if from != 3 || len(hs) != len(ps) || len(hs) < 2 || len(hs) > runMax {
			t.Fatalf("run: from %d, %d headers, %d payloads", from, len(hs), len(ps))
		}
		for i := range hs {
			if hs[i].Tag == failAt {
				return i, errFail
			}
			gots = append(gots, got{hs[i].Tag, bytes.Clone(ps[i]), len(hs), i})
		}
		return len(hs), nil
	}
	payload := func(tag, n int) []byte {
		p := make([]byte, n)
		for k := range p {
			p[k] = byte(tag*7 + k)
		}
		return p
	}
	var pos uint64
	put := func(tag, n int) {
		h := wire.Header{Kind: wire.Eager, Context: 1, Src: 3, Tag: int32(tag), Size: int64(n)}
		k := cellsFor(n, false)
		if pos+uint64(k)-head.Load() > boxCells {
			t.Fatalf("test writes past the free cells")
		}
		rd.box.put(pos, &h, payload(tag, n))
		pos += uint64(k)
	}
	check := func(from, to int, long map[int]bool) {
		t.Helper()
		if len(gots) != to-from {
			t.Fatalf("delivered %d frames, want %d", len(gots), to-from)
		}
		for i, g := range gots {
			tag := from + i
			n := 8
			if long[tag] {
				n = 100
			}
			if g.tag != int32(tag) || !bytes.Equal(g.p, payload(tag, n)) {
				t.Fatalf("frame %d: tag %d, payload % x", i, g.tag, g.p)
			}
			if long[tag] && g.index != g.run-1 {
				t.Fatalf("frame %d with continuation cells is %d of a run of %d", tag, g.index, g.run)
			}
		}
		if head.Load() != rd.bpos || rd.bpos != pos {
			t.Fatalf("head %d, bpos %d, want %d", head.Load(), rd.bpos, pos)
		}
		gots = gots[:0]
	}

	// One frame alone: through eager.
	put(0, 8)
	if ok, err := rd.drainBox(nil, eager, run); !ok || err != nil {
		t.Fatalf("drainBox: %v %v", ok, err)
	}
	check(0, 1, nil)
	// 40 frames, two of them long, across the end of the box.
	long := map[int]bool{5: true, 30: true}
	for tag := 1; tag < 41; tag++ {
		if long[tag] {
			put(tag, 100)
		} else {
			put(tag, 8)
		}
	}
	if _, err := rd.drainBox(nil, eager, run); err != nil {
		t.Fatal(err)
	}
	check(1, 41, long)
	// A run that fails at its fourth frame: the three before it count.
	for tag := 41; tag < 51; tag++ {
		put(tag, 8)
	}
	failAt = 44
	if _, err := rd.drainBox(nil, eager, run); err != errFail {
		t.Fatalf("drainBox: %v, want the run's error", err)
	}
	pos -= 7 // the frames from the failure on stay in the box
	check(41, 44, nil)
	failAt = -1
	pos += 7
	if _, err := rd.drainBox(nil, eager, run); err != nil {
		t.Fatal(err)
	}
	check(44, 51, nil)
}

var errFail = errors.New("refused")
