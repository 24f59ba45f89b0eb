package mpi

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/mpigo/mpi/internal/checked"
	"github.com/mpigo/mpi/internal/rma"
	"github.com/mpigo/mpi/internal/transport"
)

// This file holds where a window's memory lives and how an origin reaches
// it directly: a tmem is one rank's window memory with its two
// synchronisation words (internal/rma). Goroutine ranks of one process
// find each other's tmem in a registry; processes on one node map each
// other's window segments (NewWindow over shared memory). Any target an
// origin cannot reach directly is served by messages (rma_msg.go).

// tmem is the memory of one rank's window as an origin reaches it.
type tmem struct {
	buf  []byte         // the window's bytes
	lock *atomic.Int64  // passive-target lock word (rma.Lock)
	acc  *atomic.Uint32 // accumulate mutex (rma.AccLock)
	dyn  *dynTable      // dynamic windows: the attached regions (buf is nil)
}

// span returns the bytes of n elements of esize bytes from element disp,
// or false if they are not all inside the window (or, for a dynamic
// window, inside one attached region).
func (m *tmem) span(disp, n, esize int) ([]byte, bool) {
	if m.dyn != nil {
		return m.dyn.find(disp, n, esize)
	}
	if disp < 0 || n < 0 || disp*esize > len(m.buf) || n*esize > len(m.buf)-disp*esize {
		return nil, false
	}
	return m.buf[disp*esize : (disp+n)*esize], true
}

// dynTable is the address space of one rank's dynamic window: attached
// regions at displacements that are handed out once and never reused.
type dynTable struct {
	mu      sync.RWMutex
	regions []dynRegion
	next    int // the displacement the next region gets
	// shared is the list origins on the node read (rma_peer.go); nil:
	// none.
	shared *rma.Table
}

type dynRegion struct {
	base int    // displacement of the region's first element
	buf  []byte // its memory
}

func (d *dynTable) find(disp, n, esize int) ([]byte, bool) {
	if disp < 0 || n < 0 {
		return nil, false
	}
	a, ok1 := checked.Mul(disp, esize)
	l, ok2 := checked.Mul(n, esize)
	z, ok3 := checked.Add(a, l)
	if !ok1 || !ok2 || !ok3 {
		return nil, false
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	if n == 0 {
		// No bytes: any displacement inside a region or at its end.
		for _, r := range d.regions {
			rb := int64(r.base) * int64(esize)
			if int64(a) >= rb && int64(a) <= rb+int64(len(r.buf)) {
				return nil, true
			}
		}
		return nil, false
	}
	buf, rb, ok := d.cover(int64(a), int64(z), esize)
	if !ok {
		return nil, false
	}
	off := int64(a) - rb
	return buf[off : off+int64(l)], true
}

// cover returns attached memory that holds bytes [a, z) of the window's
// address space (a displacement times esize is a byte there), with the
// address of its first byte; a < z. The bytes may run over several
// regions when each was attached right after the one before: at the next
// displacement and at the next address in memory. The C ABI attaches at
// addresses, so two attachments of adjacent memory (two halves of one
// array) are then one range, which an origin may access with one
// operation (MPICH's rma/win_dynamic_rma_flush_get puts across the two).
// d.mu is held.
func (d *dynTable) cover(a, z int64, esize int) ([]byte, int64, bool) {
	for _, r := range d.regions {
		rb := int64(r.base) * int64(esize)
		re := rb + int64(len(r.buf))
		if a < rb || a >= re {
			continue
		}
		if z <= re {
			return r.buf, rb, true
		}
		n, last := len(r.buf), r.buf
		for end := re; end < z; {
			next := d.after(end, last, esize)
			if next == nil {
				return nil, 0, false
			}
			n += len(next)
			end += int64(len(next))
			last = next
		}
		return unsafe.Slice(&r.buf[0], n), rb, true
	}
	return nil, 0, false
}

// after returns the region that begins at byte end of the address space
// and in memory right after the last byte of prev, or nil.
func (d *dynTable) after(end int64, prev []byte, esize int) []byte {
	next := uintptr(unsafe.Pointer(unsafe.SliceData(prev))) + uintptr(len(prev))
	for _, r := range d.regions {
		if int64(r.base)*int64(esize) == end && uintptr(unsafe.Pointer(&r.buf[0])) == next {
			return r.buf
		}
	}
	return nil
}

// heapWords are the synchronisation words of a window in Go memory.
type heapWords struct {
	lock atomic.Int64
	acc  atomic.Uint32
}

func heapMem(buf []byte) *tmem {
	w := new(heapWords)
	return &tmem{buf: buf, lock: &w.lock, acc: &w.acc}
}

// segHeader is the room before a segment's data: the two words on a cache
// line of their own.
const segHeader = 64

func segSize(n, esize int) int { return segHeader + n*esize }

// segMem returns the tmem of a mapped segment.
func segMem(mem []byte) *tmem {
	return &tmem{
		buf:  mem[segHeader:],
		lock: (*atomic.Int64)(unsafe.Pointer(&mem[0])),
		acc:  (*atomic.Uint32)(unsafe.Pointer(&mem[8])),
	}
}

// winKey names one window among the goroutine ranks of a process: the
// job and the window's private context.
type winKey struct {
	j   *job
	ctx uint32
}

// winReg collects the tmem of every rank of a window hosted by this
// process, by world rank; the last rank to read it removes it.
type winReg struct {
	mu   sync.Mutex
	mems map[int]*tmem
	left int
}

var winRegs sync.Map // winKey -> *winReg

// register publishes m as world rank r's memory of the window on ctx.
func register(j *job, ctx uint32, r int, m *tmem) {
	v, _ := winRegs.LoadOrStore(winKey{j, ctx}, &winReg{mems: map[int]*tmem{}})
	reg := v.(*winReg)
	reg.mu.Lock()
	reg.mems[r] = m
	reg.left++
	reg.mu.Unlock()
}

// lookup returns the tmem world rank r registered for the window on ctx
// (nil if r is not a goroutine of this process).
func lookup(j *job, ctx uint32, r int) *tmem {
	v, ok := winRegs.Load(winKey{j, ctx})
	if !ok {
		return nil
	}
	reg := v.(*winReg)
	reg.mu.Lock()
	defer reg.mu.Unlock()
	return reg.mems[r]
}

// unregister is called once by every rank that registered, after all of
// them have looked up what they need.
func unregister(j *job, ctx uint32) {
	k := winKey{j, ctx}
	v, ok := winRegs.Load(k)
	if !ok {
		return
	}
	reg := v.(*winReg)
	reg.mu.Lock()
	reg.left--
	last := reg.left == 0
	reg.mu.Unlock()
	if last {
		winRegs.Delete(k)
	}
}

// inProcess reports whether the proc reaches world rank g by memory of its
// own process (the transport says so: goroutine ranks over inproc, or
// itself).
func (p *proc) inProcess(g int) bool { return p.Tr.SameProcess(g) }

// segmentsFor returns the transport towards world rank g if it shares
// memory segments (processes on one node), or nil.
func (p *proc) segmentsFor(g int) transport.Segments { return p.Tr.Segments(g) }

// sharedSegmentsFor returns, for a window of shared memory, the transport
// whose segments world rank g maps: segmentsFor's, or, for a peer of this
// node whose messages take the fabric (MPIGO_FABRIC_LOCAL=1), the
// shared-memory transport beside it; else nil.
func (p *proc) sharedSegmentsFor(g int) transport.Segments {
	if s := p.Tr.Segments(g); s != nil {
		return s
	}
	if p.SegmentsBeside != nil {
		return p.SegmentsBeside(g)
	}
	return nil
}

// bytesOf views a slice of plain elements as bytes.
func bytesOf[T any](s []T, esize int) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*esize)
}

// elemsOf views n elements of T at element offset off of b.
func elemsOf[T any](b []byte, off, n, esize int) []T {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[off*esize])), n)
}
