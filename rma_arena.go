package mpi

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/mpigo/mpi/internal/rma"
	"github.com/mpigo/mpi/internal/transport"
)

// This file holds the memory of MPI_Alloc_mem (AllocMem) and how origins
// reach windows over it. In a process that is one rank of a job with
// other processes on its node, AllocMem's blocks come from shared chunks
// (segments in the shared-memory transport's folder, named after the
// rank): a window made over such memory (WindowOf, Attach, AttachAt)
// lets those processes map the chunk and read, write and accumulate in it
// directly, as they do for NewWindow's memory, instead of sending every
// operation to the target's runtime. Elsewhere the blocks are private
// mappings (Go memory where the system has none), which a C program may
// keep a pointer to.

// arenaState is the process's arena and how its chunks are named.
var arenaState struct {
	once  sync.Once
	arena *rma.Arena
	mu    sync.Mutex
	names map[uint32]string // shared chunks: their files, removed at the rank's end
}

// procArena returns the process's arena.
func procArena() *rma.Arena {
	a := &arenaState
	a.once.Do(func() {
		a.names = map[uint32]string{}
		a.arena = rma.NewArena(newArenaChunk, dropArenaChunk)
	})
	return a.arena
}

// arenaOf says after which rank, through which transport, the arena
// names its shared chunks (nil: the chunks are private); a variable for
// the tests, whose goroutine ranks talk over shm in one process.
var arenaOf = arenaRank

// arenaRank returns the rank this process is, with the transport that
// names its shared segments, when it is one rank of a launched job with
// processes on its node; else nil.
func arenaRank() (*proc, transport.Segments) {
	mainRanks.Lock()
	defer mainRanks.Unlock()
	if len(mainRanks.procs) != 1 {
		return nil, nil
	}
	p := mainRanks.procs[0]
	for _, g := range p.nodeRanks {
		if g != p.Rank {
			if t := p.segmentsFor(g); t != nil {
				return p, t
			}
		}
	}
	return nil, nil
}

func newArenaChunk(id uint32, size int) (rma.Chunk, error) {
	if p, t := arenaOf(); p != nil {
		name := t.SegmentName(p.Rank, segmentSuffix("a", uint64(id)))
		if mem, err := createSegment(name, size); err == nil {
			arenaState.mu.Lock()
			arenaState.names[id] = name
			arenaState.mu.Unlock()
			return rma.Chunk{Mem: mem, Shared: true, Owner: p.Rank}, nil
		}
	}
	if mem, err := mapPrivate(size); err == nil {
		return rma.Chunk{Mem: mem}, nil
	}
	return rma.Chunk{Mem: make([]byte, size)}, nil
}

func dropArenaChunk(c rma.Chunk) {
	// A peer may still hold a mapping of a shared chunk (a window over
	// it that the program freed wrongly): the memory goes when the last
	// mapping does. The addresses stay reserved here (Retire), so that a
	// slice the program kept never faults.
	if c.Shared {
		retireSegment(c.Mem)
		return
	}
	if len(c.Mem) > 0 && cap(c.Mem) > 0 {
		unmapSegment(c.Mem) // a private mapping (Go memory: nothing to do)
	}
}

// removeArenaFiles unlinks the files of this process's shared chunks:
// the rank has ended, and no peer maps a chunk after that. Mappings stay.
func removeArenaFiles() {
	a := &arenaState
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, name := range a.names {
		removeSegment(name)
		delete(a.names, id)
	}
}

// AllocMem returns n zeroed elements of T of memory for one-sided
// communication (MPI_Alloc_mem), to give back with FreeMem. T must be
// plain, as a window's elements are. A window made over it (WindowOf, or
// Attach to a dynamic window) is faster between processes of one node:
// they reach it directly in shared memory, where other memory makes them
// send each operation to the target's runtime. The memory is outside
// Go's heap, so a C program may keep a pointer to it.
func AllocMem[T any](n int) (_ []T, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("AllocMem", nil, Undefined, Undefined), &err)
	}
	t := typeOf[T]()
	switch {
	case t.shape != shapePlain || t.size == 0:
		return nil, (*Comm)(nil).errorf("AllocMem", ErrType, loc{}, "memory for windows holds plain values (numbers, bools, arrays and structs of them), not %s", typeName[T]())
	case n < 0:
		return nil, (*Comm)(nil).errorf("AllocMem", ErrArg, loc{}, "negative number of elements %d", n)
	}
	size, ok := userAlloc(n, t.size, 0)
	if !ok {
		return nil, (*Comm)(nil).errorf("AllocMem", ErrCount, loc{}, "%d elements of %s (%d bytes each) are more memory than a process can address", n, typeName[T](), t.size)
	}
	b, err := procArena().Alloc(size)
	if err != nil {
		return nil, &Error{Class: ErrOther, Op: "AllocMem", Rank: NoRank, Msg: fmt.Sprintf("cannot allocate %d bytes: %v", size, err), Cause: err}
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b[:cap(b)]))), cap(b)/t.size)[:n], nil
}

// FreeMem gives back memory AllocMem returned (MPI_Free_mem); s must
// start where AllocMem's slice started. Windows over it must be freed (or
// it detached) first.
func FreeMem[T any](s []T) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("FreeMem", nil, Undefined, Undefined), &err)
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	if cap(s) == 0 || procArena().Free(p) != nil {
		return (*Comm)(nil).errorf("FreeMem", ErrArg, loc{}, "the memory at %#x is not a block AllocMem returned", p)
	}
	return nil
}

// peerChunks holds the chunks of other processes' arenas mapped here, by
// file name; they stay mapped for the life of the process.
var peerChunks struct {
	sync.Mutex
	m map[string][]byte
}

// mapPeerChunk maps chunk id of world rank owner's arena, size bytes
// long, through t; nil if it cannot.
func mapPeerChunk(t transport.Segments, owner int, id uint32, size int64) []byte {
	if size <= 0 || size > 1<<46 {
		return nil
	}
	name := t.SegmentName(owner, segmentSuffix("a", uint64(id)))
	peerChunks.Lock()
	defer peerChunks.Unlock()
	if mem, ok := peerChunks.m[name]; ok {
		if int64(len(mem)) == size {
			return mem
		}
		return nil
	}
	mem, err := openSegment(name, int(size))
	if err != nil {
		return nil
	}
	if peerChunks.m == nil {
		peerChunks.m = map[string][]byte{}
	}
	peerChunks.m[name] = mem
	return mem
}
