package mpi

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/mpigo/mpi/internal/rma"
	"github.com/mpigo/mpi/internal/transport"
)

// A window over memory its owner did not allocate as one shared segment
// (WindowOf, NewDynamicWindow) still has, between processes of one node,
// a shared header (rma.Table): its lock word and accumulate mutex, which
// origins take directly, and for a dynamic window the list of attached
// regions that lie in the owner's shared arena (AllocMem), which origins
// map and reach directly. What is not listed travels by message as
// before; the lock is then still direct, and Unlock and Flush complete
// the messages first.

// dynShared is how many regions of a dynamic window its shared list
// holds; regions beyond it are reached by message. The list's pages are
// only backed as they fill.
const dynShared = 4096

// peerWin is an origin's view of a same-node process's window that it
// cannot reach whole: the shared words, and the regions learnt so far.
type peerWin struct {
	m    *tmem     // lock and accumulate words; dyn: the regions learnt (nil: WindowOf)
	tab  rma.Table // the owner's shared header and list
	segs transport.Segments
	gen  atomic.Uint32
	mu   sync.Mutex // one refresh at a time
	ents []rma.Entry
	seq  uint32 // the list's sequence when last read (mu)
}

// resolve returns the memory to reach the target directly for an
// operation that try accepts (it checks that the bytes lie in what m
// knows), or nil: the operation travels by message.
func (pw *peerWin) resolve(esize int, try func(m *tmem) bool) *tmem {
	if pw == nil || pw.m.dyn == nil {
		return nil
	}
	if pw.tab.Detached() != pw.gen.Load() {
		pw.refresh(esize, true)
	}
	if try(pw.m) {
		return pw.m
	}
	if !pw.refresh(esize, false) {
		return nil
	}
	if try(pw.m) {
		return pw.m
	}
	return nil
}

// refresh reads the owner's list again when it changed (always, with
// force) and makes the regions learnt what it says; it reports whether
// anything was read.
func (pw *peerWin) refresh(esize int, force bool) bool {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	s := pw.tab.Seq()
	if !force && s == pw.seq {
		return false
	}
	var gen uint32
	for i := 0; ; i++ {
		var ok bool
		if pw.ents, gen, ok = pw.tab.Read(pw.ents); ok {
			break
		}
		if i > 1000 {
			// The owner keeps changing the list: reach what is not
			// learnt by message this time.
			return false
		}
		rma.Pause(i)
	}
	regions := make([]dynRegion, 0, len(pw.ents))
	for _, e := range pw.ents {
		if e.Base < 0 || e.Len <= 0 || e.Off < 0 || e.Size <= 0 || e.Off > e.Size-e.Len {
			continue
		}
		mem := mapPeerChunk(pw.segs, int(e.Owner), e.Chunk, e.Size)
		if mem == nil {
			continue
		}
		regions = append(regions, dynRegion{base: int(e.Base), buf: mem[e.Off : e.Off+e.Len : e.Off+e.Len]})
	}
	d := pw.m.dyn
	d.mu.Lock()
	d.regions = regions
	d.mu.Unlock()
	pw.seq = s
	pw.gen.Store(gen)
	return true
}

// direct returns target's memory to reach directly for n elements at
// disp, or nil if they travel by message.
func (w *Window[T]) direct(target, disp, n int) *tmem {
	if m := w.reach[target]; m != nil {
		return m
	}
	return w.peers[target].resolve(w.esize, func(m *tmem) bool {
		_, ok := m.span(disp, n, w.esize)
		return ok
	})
}

// directView is direct for the bytes of a low-level call (rma_buf.go).
func (w *Window[T]) directView(target int, base int64, d *vdesc) *tmem {
	if m := w.reach[target]; m != nil {
		return m
	}
	return w.peers[target].resolve(w.esize, func(m *tmem) bool {
		_, _, ok := m.view(base, d, w.esize)
		return ok
	})
}

// sharedRegion lists a region just attached to this rank's dynamic window
// in the shared list, if its memory lies in a shared chunk of the arena.
// d.mu is held.
func (d *dynTable) sharedRegion(r dynRegion) {
	if d.shared == nil || len(r.buf) == 0 {
		return
	}
	pl, ok := procArena().Find(r.buf)
	if !ok {
		return
	}
	d.shared.Add(rma.Entry{Base: int64(r.base), Len: int64(len(r.buf)), Off: int64(pl.Off), Size: int64(pl.Size), Chunk: pl.Chunk, Owner: int32(pl.Owner)})
}

// unshareRegion drops a detached region from the shared list. d.mu is
// held.
func (d *dynTable) unshareRegion(r dynRegion) {
	if d.shared == nil {
		return
	}
	d.shared.Remove(int64(r.base))
}

// lockWords returns the words of target's lock and accumulate mutex when
// this rank takes them directly, or nil (by message).
func (w *Window[T]) lockWords(target int) *tmem {
	if m := w.reach[target]; m != nil {
		return m
	}
	if pw := w.peers[target]; pw != nil {
		return pw.m
	}
	return nil
}

// sharedHeader gives this rank's part of a WindowOf or dynamic window a
// shared header when processes of its node are among the window's ranks,
// records it in info and returns the segment's file name ("" if none).
// me is this rank's world rank.
func (w *Window[T]) sharedHeader(me int, info *winInfo) string {
	tr := w.shmPeer()
	if tr == nil {
		return ""
	}
	n := 0
	if w.dynamic {
		n = dynShared
	}
	name := tr.SegmentName(me, segmentSuffix("w", uint64(w.c.ctx)))
	mem, err := createSegment(name, rma.TableSize(n))
	if err != nil {
		return ""
	}
	w.seg = mem
	tab := rma.NewTable(mem, n)
	w.me.lock, w.me.acc = tab.Lock(), tab.Acc()
	info.Seg = 2
	switch {
	case w.dynamic:
		info.Seg = 3
		w.me.dyn.shared = &tab
	default:
		if pl, ok := procArena().Find(w.me.buf); ok {
			info.Chunk, info.ChunkOwner, info.ChunkSize, info.ChunkOff = int64(pl.Chunk), int64(pl.Owner), int64(pl.Size), int64(pl.Off)
		}
	}
	return name
}

// openHeader maps the shared header of rank r (world rank g), a process
// of this node, as in describes it: r's window is then reached whole
// (WindowOf over AllocMem's memory), or its lock directly and its memory
// in part (peerWin). Without the header, r is reached by message.
func (w *Window[T]) openHeader(r, g int, in winInfo) {
	segs := w.c.p.segmentsFor(g)
	n := 0
	if in.Seg == 3 {
		n = dynShared
	}
	mem, err := openSegment(segs.SegmentName(g, segmentSuffix("w", uint64(w.c.ctx))), rma.TableSize(n))
	if err != nil {
		return
	}
	w.maps = append(w.maps, mem)
	tab := rma.OpenTable(mem)
	m := &tmem{lock: tab.Lock(), acc: tab.Acc()}
	if in.Seg == 3 {
		m.dyn = &dynTable{}
		w.peers[r] = &peerWin{m: m, tab: tab, segs: segs}
		return
	}
	if in.Chunk > 0 && in.Chunk <= math.MaxUint32 && in.ChunkOff >= 0 && in.N >= 0 && in.N <= (in.ChunkSize-in.ChunkOff)/int64(w.esize) {
		if c := mapPeerChunk(segs, int(in.ChunkOwner), uint32(in.Chunk), in.ChunkSize); c != nil {
			end := in.ChunkOff + in.N*int64(w.esize)
			m.buf = c[in.ChunkOff:end:end]
			w.reach[r] = m
			return
		}
	}
	w.peers[r] = &peerWin{m: m, tab: tab, segs: segs}
}
