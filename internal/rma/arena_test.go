package rma

import (
	"errors"
	"testing"
	"unsafe"
)

func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b[:cap(b)]))) }

// TestArena: blocks of every class and of their own chunk are zeroed,
// disjoint, found in their chunk at the right offset, reused after Free,
// and a block's whole chunk goes back to drop; bad frees are refused.
func TestArena(t *testing.T) {
	var made, dropped int
	a := NewArena(func(id uint32, size int) (Chunk, error) {
		made++
		return Chunk{Mem: make([]byte, size), Shared: id%2 == 1, Owner: 7}, nil
	}, func(Chunk) { dropped++ })
	sizes := []int{0, 1, 16, 17, 100, 4096, 1 << 20, ChunkSize + 1}
	var blocks [][]byte
	for _, n := range sizes {
		b, err := a.Alloc(n)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != n || cap(b) < max(n, 1) {
			t.Fatalf("Alloc(%d): len %d cap %d", n, len(b), cap(b))
		}
		for i := range b {
			if b[i] != 0 {
				t.Fatalf("Alloc(%d): byte %d is %d", n, i, b[i])
			}
			b[i] = 0xff
		}
		blocks = append(blocks, b)
	}
	for i, b := range blocks {
		for j, c := range blocks {
			if i != j && addr(b) < addr(c)+uintptr(cap(c)) && addr(c) < addr(b)+uintptr(cap(b)) {
				t.Fatalf("blocks of %d and %d bytes overlap", sizes[i], sizes[j])
			}
		}
		if len(b) == 0 {
			continue
		}
		pl, ok := a.Find(b)
		if ok && (pl.Chunk%2 != 1 || pl.Owner != 7 || pl.Off < 0 || pl.Off+len(b) > pl.Size) {
			t.Fatalf("Find(%d bytes): %+v", len(b), pl)
		}
		if want := i < len(blocks)-1; ok != want { // the small blocks' chunk is shared, the big one's not
			t.Fatalf("Find(%d bytes): shared %v, want %v", len(b), ok, want)
		}
	}
	if made != 2 {
		t.Fatalf("%d chunks made, want 2 (small blocks share one)", made)
	}
	big := blocks[len(blocks)-1]
	if err := a.Free(addr(big)); err != nil || dropped != 1 {
		t.Fatalf("Free of a big block: %v, %d dropped", err, dropped)
	}
	if err := a.Free(addr(big)); err == nil {
		t.Fatal("a second Free of one block was accepted")
	}
	mid := blocks[4] // 100 bytes: class of 128
	if err := a.Free(addr(mid) + 1); err == nil {
		t.Fatal("Free inside a block was accepted")
	}
	if err := a.Free(addr(mid)); err != nil {
		t.Fatal(err)
	}
	again, _ := a.Alloc(120)
	if addr(again) != addr(mid) || again[0] != 0 {
		t.Fatalf("a freed block of the same class was not reused zeroed")
	}
	wrong := errors.New("no memory")
	b := NewArena(func(uint32, int) (Chunk, error) { return Chunk{}, wrong }, nil)
	if _, err := b.Alloc(8); !errors.Is(err, wrong) {
		t.Fatalf("a chunk that cannot be made: %v", err)
	}
	if _, err := a.Alloc(-1); err == nil {
		t.Fatal("a negative size was accepted")
	}
}

// TestTable: the owner's list as an origin reads it, through additions,
// removals, a full table and a mapping smaller than the capacity claims.
func TestTable(t *testing.T) {
	mem := make([]byte, TableSize(3))
	own := NewTable(mem, 3)
	peer := OpenTable(mem)
	e := func(b int64) Entry { return Entry{Base: b, Len: 8, Off: b * 8, Size: 4096, Chunk: 1, Owner: 2} }
	for _, b := range []int64{10, 20, 30} {
		if !own.Add(e(b)) {
			t.Fatalf("Add(%d) refused", b)
		}
	}
	if own.Add(e(40)) {
		t.Fatal("a full table took a fourth entry")
	}
	got, gen, ok := peer.Read(nil)
	if !ok || gen != 0 || len(got) != 3 || got[1] != e(20) {
		t.Fatalf("Read: %v %d %v", got, gen, ok)
	}
	own.Remove(10)
	got, gen, ok = peer.Read(got)
	if !ok || gen != 1 || len(got) != 2 || peer.Detached() != 1 {
		t.Fatalf("after Remove: %v %d %v", got, gen, ok)
	}
	for _, g := range got {
		if g.Base == 10 {
			t.Fatal("a removed entry is still listed")
		}
	}
	if peer.Seq()&1 != 0 {
		t.Fatal("the sequence is odd with no change under way")
	}
	// A peer's mapping bounds what it reads, whatever the header says.
	short := OpenTable(mem[:TableSize(1)])
	if got, _, ok := short.Read(nil); !ok || len(got) != 1 {
		t.Fatalf("a short mapping read %d entries", len(got))
	}
}
