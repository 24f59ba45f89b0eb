package rma

import (
	"sync/atomic"
	"unsafe"
)

// A Table is the shared header of a window whose memory its owner did not
// allocate as one shared segment (a window over memory the program gave,
// a dynamic window), made for the processes of its node: the lock word
// and the accumulate mutex, which origins then take directly as they do
// for NewWindow's memory, and, for a dynamic window, the list of attached
// regions that lie in shared chunks of the owner's arena, which origins
// map and reach directly. Only the owner writes the list, under a
// sequence lock; origins copy it when an address misses what they know,
// and drop what they know when the owner detaches anything (Detached).
//
// Layout: a 64-byte header (lock, accumulate mutex, sequence, count,
// detach generation, capacity), then Cap entries of EntrySize bytes.
type Table struct{ mem []byte }

const (
	tableHeader = 64
	// EntrySize is the size of one region's entry.
	EntrySize = 48
)

// TableSize is the size of a table with room for n entries.
func TableSize(n int) int { return tableHeader + n*EntrySize }

// Entry describes one attached region that lies in a shared chunk.
type Entry struct {
	Base  int64  // displacement of the region's first element
	Len   int64  // its length in bytes
	Off   int64  // its offset in the chunk
	Size  int64  // the chunk's size
	Chunk uint32 // the chunk's id in its owner's arena
	Owner int32  // the world rank whose arena made the chunk
}

// NewTable returns the table in mem, a zeroed segment of TableSize(n)
// bytes, and records its capacity; the owner calls it once.
func NewTable(mem []byte, n int) Table {
	t := Table{mem}
	t.u32(24).Store(uint32(n))
	return t
}

// OpenTable returns the table in mem as a peer mapped it.
func OpenTable(mem []byte) Table { return Table{mem} }

func (t Table) u32(off int) *atomic.Uint32 { return (*atomic.Uint32)(unsafe.Pointer(&t.mem[off])) }
func (t Table) i64(off int) *atomic.Int64  { return (*atomic.Int64)(unsafe.Pointer(&t.mem[off])) }

// Lock is the window's passive-target lock word.
func (t Table) Lock() *atomic.Int64 { return t.i64(0) }

// Acc is the window's accumulate mutex.
func (t Table) Acc() *atomic.Uint32 { return t.u32(8) }

// Seq is the sequence word: odd while the owner changes the list.
func (t Table) Seq() uint32 { return t.u32(12).Load() }

// Detached counts the owner's detachments: what an origin learnt of the
// list holds as long as it does not change.
func (t Table) Detached() uint32 { return t.u32(20).Load() }

// capacity is the room for entries, bounded by the mapping (the value is
// the owner's to write: an origin never trusts it beyond its mapping).
func (t Table) capacity() int {
	n := int(t.u32(24).Load())
	if most := (len(t.mem) - tableHeader) / EntrySize; n > most || n < 0 {
		return max(most, 0)
	}
	return n
}

func (t Table) entry(i int) int { return tableHeader + i*EntrySize }

func (t Table) put(i int, e Entry) {
	o := t.entry(i)
	t.i64(o).Store(e.Base)
	t.i64(o + 8).Store(e.Len)
	t.i64(o + 16).Store(e.Off)
	t.i64(o + 24).Store(e.Size)
	t.u32(o + 32).Store(e.Chunk)
	t.u32(o + 36).Store(uint32(e.Owner))
}

func (t Table) get(i int) Entry {
	o := t.entry(i)
	return Entry{
		Base:  t.i64(o).Load(),
		Len:   t.i64(o + 8).Load(),
		Off:   t.i64(o + 16).Load(),
		Size:  t.i64(o + 24).Load(),
		Chunk: t.u32(o + 32).Load(),
		Owner: int32(t.u32(o + 36).Load()),
	}
}

// Add lists e; false if the table is full (origins then reach the region
// by message).
func (t Table) Add(e Entry) bool {
	n := int(t.u32(16).Load())
	if n >= t.capacity() {
		return false
	}
	seq := t.u32(12)
	seq.Add(1)
	t.put(n, e)
	t.u32(16).Store(uint32(n + 1))
	seq.Add(1)
	return true
}

// Remove drops the entry of the region at base, if listed, and counts a
// detachment either way.
func (t Table) Remove(base int64) {
	seq := t.u32(12)
	seq.Add(1)
	n := int(t.u32(16).Load())
	for i := range n {
		if t.i64(t.entry(i)).Load() == base {
			t.put(i, t.get(n-1))
			t.u32(16).Store(uint32(n - 1))
			break
		}
	}
	t.u32(20).Add(1)
	seq.Add(1)
}

// Read copies the list into dst[:0] and returns it with the detach
// generation it belongs to; false if the owner was changing it (try
// again).
func (t Table) Read(dst []Entry) ([]Entry, uint32, bool) {
	seq := t.u32(12)
	s := seq.Load()
	if s&1 != 0 {
		return dst[:0], 0, false
	}
	gen := t.Detached()
	n := min(int(t.u32(16).Load()), t.capacity())
	dst = dst[:0]
	for i := range n {
		dst = append(dst, t.get(i))
	}
	if seq.Load() != s {
		return dst[:0], 0, false
	}
	return dst, gen, true
}
