package rma

import (
	"fmt"
	"math/bits"
	"sort"
	"sync"
	"unsafe"
)

// An Arena hands out blocks of memory for one-sided communication
// (MPI_Alloc_mem) from chunks that its caller makes: on processes of one
// node, chunks are shared segments that peers may map, so that a window
// over such a block (MPI_Win_create, MPI_Win_attach) is reached by them
// directly. The arena only keeps the books: which chunk holds an address,
// which blocks are free. Small blocks come from shared chunks in
// power-of-two classes; a block too large for a chunk gets one of its own,
// which Free gives back to the caller's release function.
type Arena struct {
	mu     sync.Mutex
	mk     func(id uint32, size int) (Chunk, error)
	drop   func(Chunk)
	chunks []*arenaChunk // by address
	cur    *arenaChunk   // the chunk small blocks are cut from
	free   [classes][]uintptr
	blocks map[uintptr]block
	nextID uint32
}

// Chunk is one piece of memory the arena's caller made: its bytes and
// whatever the caller needs to find it again (Shared says peers can map it
// by ID).
type Chunk struct {
	Mem    []byte
	Shared bool
	Owner  int // the rank the shared chunk is named after
}

type arenaChunk struct {
	Chunk
	id   uint32
	base uintptr
	used int // bytes cut from the chunk so far (small-block chunks)
}

type block struct {
	c     *arenaChunk
	class int // -1: the block is the whole chunk
}

const (
	minBlock = 16
	classes  = 17 // 16 B .. 1 MiB
	// ChunkSize is the size of the chunks small blocks come from.
	ChunkSize = 4 << 20
)

// NewArena returns an arena whose chunks come from mk (id numbers them
// from 1) and go back to drop (which may be nil).
func NewArena(mk func(id uint32, size int) (Chunk, error), drop func(Chunk)) *Arena {
	return &Arena{mk: mk, drop: drop, blocks: map[uintptr]block{}}
}

// classOf returns the class of a block of n bytes, or -1 if the block
// gets a chunk of its own.
func classOf(n int) int {
	if n <= minBlock {
		return 0
	}
	c := bits.Len(uint(n-1)) - bits.Len(minBlock-1)
	if c >= classes {
		return -1
	}
	return c
}

// Alloc returns a zeroed block of n bytes; its capacity is the block's
// whole size, at least one byte, so that each block, of n = 0 too, has an
// address of its own.
func (a *Arena) Alloc(n int) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("negative size %d", n)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	cl := classOf(max(n, 1))
	if cl < 0 {
		c, err := a.newChunk(n)
		if err != nil {
			return nil, err
		}
		a.blocks[c.base] = block{c: c, class: -1}
		return c.Mem[:n:len(c.Mem)], nil
	}
	size := minBlock << cl
	var p uintptr
	var c *arenaChunk
	if l := a.free[cl]; len(l) > 0 {
		p = l[len(l)-1]
		a.free[cl] = l[:len(l)-1]
		c = a.chunkOf(p)
	} else {
		if a.cur == nil || a.cur.used+size > len(a.cur.Mem) {
			nc, err := a.newChunk(ChunkSize)
			if err != nil {
				return nil, err
			}
			a.cur = nc
		}
		c = a.cur
		p = c.base + uintptr(c.used)
		c.used += size
	}
	a.blocks[p] = block{c: c, class: cl}
	off := int(p - c.base)
	b := c.Mem[off : off+size : off+size]
	clear(b)
	return b[:n], nil
}

// Free gives back a block Alloc returned; p is its first byte's address.
func (a *Arena) Free(p uintptr) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	b, ok := a.blocks[p]
	if !ok {
		return fmt.Errorf("%#x is not the start of a block the arena gave", p)
	}
	delete(a.blocks, p)
	if b.class < 0 {
		i := sort.Search(len(a.chunks), func(i int) bool { return a.chunks[i].base >= b.c.base })
		a.chunks = append(a.chunks[:i], a.chunks[i+1:]...)
		if a.drop != nil {
			a.drop(b.c.Chunk)
		}
		return nil
	}
	a.free[b.class] = append(a.free[b.class], p)
	return nil
}

// Owns reports whether p is the start of a block the arena gave.
func (a *Arena) Owns(p uintptr) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.blocks[p]
	return ok
}

// Place is where a block lies in a shared chunk.
type Place struct {
	Chunk uint32 // the chunk's id
	Owner int    // the rank it is named after
	Size  int    // its size
	Off   int    // the block's offset in it
}

// Find returns where the bytes of mem lie, if all in one shared chunk.
func (a *Arena) Find(mem []byte) (Place, bool) {
	if len(mem) == 0 {
		return Place{}, false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.chunkOf(p)
	if c == nil || !c.Shared || p+uintptr(len(mem)) > c.base+uintptr(len(c.Mem)) {
		return Place{}, false
	}
	return Place{Chunk: c.id, Owner: c.Owner, Size: len(c.Mem), Off: int(p - c.base)}, true
}

// Chunks returns the chunks the arena holds now.
func (a *Arena) Chunks() []Chunk {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]Chunk, len(a.chunks))
	for i, c := range a.chunks {
		out[i] = c.Chunk
	}
	return out
}

// chunkOf returns the chunk whose memory holds address p, or nil. a.mu is
// held.
func (a *Arena) chunkOf(p uintptr) *arenaChunk {
	i := sort.Search(len(a.chunks), func(i int) bool { return a.chunks[i].base > p }) - 1
	if i < 0 {
		return nil
	}
	c := a.chunks[i]
	if p >= c.base+uintptr(len(c.Mem)) {
		return nil
	}
	return c
}

// newChunk makes a chunk of at least size bytes. a.mu is held.
func (a *Arena) newChunk(size int) (*arenaChunk, error) {
	a.nextID++
	ch, err := a.mk(a.nextID, max(size, 1))
	if err != nil {
		return nil, err
	}
	if len(ch.Mem) < size {
		return nil, fmt.Errorf("a chunk of %d bytes came back with %d", size, len(ch.Mem))
	}
	c := &arenaChunk{Chunk: ch, id: a.nextID, base: uintptr(unsafe.Pointer(unsafe.SliceData(ch.Mem)))}
	i := sort.Search(len(a.chunks), func(i int) bool { return a.chunks[i].base > c.base })
	a.chunks = append(a.chunks, nil)
	copy(a.chunks[i+1:], a.chunks[i:])
	a.chunks[i] = c
	return c, nil
}
