package mpi

import (
	"errors"
	"sync/atomic"
	"unsafe"

	"github.com/mpigo/mpi/internal/checked"
	"github.com/mpigo/mpi/internal/transport"
)

// ErrRMAShared: the ranks of a window cannot share memory, as they are not
// all processes of one node (MPI_ERR_RMA_SHARED).
var ErrRMAShared = errors.New("memory cannot be shared")

func init() { predefinedClasses = append(predefinedClasses, ErrRMAShared) }

// Where the memory of a NewSharedWindow window lives (sharedWhere).
const (
	sharedNowhere int64 = iota // rank 0 could not allocate it
	sharedHeap                 // Go memory: every rank is a goroutine of rank 0's process
	sharedSegment              // a segment rank 0 created, mapped by the others
)

// sharedLine is the room of one rank's two synchronisation words at the
// start of a NewSharedWindow allocation: a cache line each.
const sharedLine = 64

// NewSharedWindow allocates n zeroed elements of T on the calling rank as
// its part of one allocation that holds every rank's part, one after the
// other in rank order (MPI_Win_allocate_shared): rank r+1's elements
// follow rank r's in memory, with nothing between them, so a rank that
// has SharedQuery'd the first part may walk into the next with plain
// loads and stores (MPI's default, without alloc_shared_noncontig). It is
// collective over c; n may differ between ranks and may be 0. Every rank
// must reach every other's memory: goroutine ranks of one process, or
// processes of one node with shared memory between them; otherwise every
// rank gets ErrRMAShared. Rank 0 allocates the memory.
func NewSharedWindow[T any](c *Comm, n int) (_ *Window[T], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("NewSharedWindow", c, Undefined, Undefined), &err)
	}

	const op = "NewSharedWindow"
	if err := c.check(op); err != nil {
		return nil, err
	}
	if c.inter != nil {
		return nil, c.fail(op, ErrComm, loc{}, "windows need an intracommunicator")
	}
	t := typeOf[T]()
	var bad error
	switch {
	case t.shape != shapePlain || t.size == 0:
		bad = c.errorf(op, ErrType, loc{}, "a window holds plain values (numbers, bools, arrays and structs of them), not %s", typeName[T]())
	case n < 0:
		bad = c.errorf(op, ErrCount, loc{}, "negative number of elements %d", n)
	default:
		if _, ok := userAlloc(n, t.size, segHeader); !ok {
			bad = c.errorf(op, ErrCount, loc{}, "%d elements of %s (%d bytes each) are more memory than a process can address", n, typeName[T](), t.size)
		}
	}
	d, err := c.dupContext(op)
	if err != nil {
		return nil, err
	}
	d.name = "window of " + c.Name()
	d.shadow.name = d.name
	w := &Window[T]{c: d, esize: t.size, srvDone: make(chan struct{}), alloc: true, shared: true}
	w.errh.Store(c.errh.Load())
	fail := func(err error) (*Window[T], error) {
		d.free()
		return nil, c.handle(err)
	}
	info := winInfo{N: int64(n), Esize: int64(t.size), Sig: t.sig}
	if bad != nil {
		info.Bad = 1
	}
	infos, err := Allgather(d, info)
	if err != nil {
		return fail(err)
	}
	// Every rank decides the same from the same infos: all fail or none.
	size := d.Size()
	offs := make([]int, size+1)
	offs[0], _ = checked.Mul(size, sharedLine)
	for r, in := range infos {
		if bad != nil {
			break
		}
		switch {
		case in.Bad != 0:
			bad = c.errorf(op, ErrArg, loc{}, "rank %d passed wrong arguments", r)
		case in.Esize != int64(t.size) || in.Sig != t.sig:
			bad = c.errorf(op, ErrType, loc{}, "rank %d made its window with another element type than %s", r, typeName[T]())
		default:
			b, ok1 := checked.Mul(int(in.N), t.size)
			e, ok2 := checked.Add(offs[r], b)
			if _, ok3 := userAlloc(e, 1, sharedLine); !ok1 || !ok2 || !ok3 {
				bad = c.errorf(op, ErrCount, loc{}, "the ranks' parts together (up to rank %d's %d elements of %s) are more memory than a process can address", r, in.N, typeName[T]())
			}
			offs[r+1] = e
		}
	}
	if bad != nil {
		return fail(bad)
	}
	mem, err := w.sharedMemory(offs[size])
	if err != nil {
		return fail(err)
	}
	w.targets(size)
	for r, in := range infos {
		w.sizes[r] = int(in.N)
		w.reach[r] = &tmem{
			buf:  mem[offs[r]:offs[r+1]:offs[r+1]],
			lock: (*atomic.Int64)(unsafe.Pointer(&mem[r*sharedLine])),
			acc:  (*atomic.Uint32)(unsafe.Pointer(&mem[r*sharedLine+8])),
		}
	}
	w.me = w.reach[d.rank]
	w.local = elemsOf[T](w.me.buf, 0, n, t.size)
	w.hetReach() // hetero_rma.go
	_, w.ops = cachedOp[T](kSum)
	if !w.ops {
		_, w.ops = cachedOp[T](kLand) // bool
	}
	go w.serve()
	return w, nil
}

// sharedMemory makes the bytes of a NewSharedWindow window: rank 0 of
// w.c allocates total bytes (Go memory when every rank is a goroutine of
// its process, else a segment of the node's shared memory) and the others
// reach them (rank 0's registry entry, or the segment mapped). When this
// returns without an error every rank has the memory; otherwise none
// keeps it, and every rank has the same class of error.
func (w *Window[T]) sharedMemory(total int) ([]byte, error) {
	const op = "NewSharedWindow"
	d := w.c
	p := d.p
	g0 := d.group[0]
	suffix := segmentSuffix("s", uint64(d.ctx))
	var (
		mem     []byte
		segName string
		where   = sharedNowhere
		why     error // why this rank has no memory
	)
	if d.rank == 0 {
		apart := false // some rank is another process
		for r, g := range d.group {
			if r != 0 && !p.inProcess(g) {
				apart = true
			}
		}
		if !apart {
			// 64 more bytes, so that the words and the parts start on
			// a cache line as in a mapping.
			b := make([]byte, total+sharedLine)
			off := (sharedLine - int(uintptr(unsafe.Pointer(&b[0]))%sharedLine)) % sharedLine
			mem, where = b[off:off+total:off+total], sharedHeap
			w.goMem = true
		} else if tr := w.sharedPeer(); tr != nil {
			segName = tr.SegmentName(g0, suffix)
			if m, err := createSegment(segName, total); err == nil {
				mem, where = m, sharedSegment
				w.seg = m
			} else {
				why = err
			}
		}
		if mem != nil {
			register(p.job, d.ctx, g0, &tmem{buf: mem})
		}
	}
	wheres, err := Allgather(d, where)
	if err != nil {
		w.dropShared(segName, mem)
		return nil, err
	}
	where = wheres[0]
	ok := int32(1)
	if d.rank != 0 {
		switch {
		case where == sharedNowhere:
		case p.inProcess(g0):
			if m := lookup(p.job, d.ctx, g0); m != nil {
				mem = m.buf
				w.goMem = where == sharedHeap
			}
		case where == sharedSegment && p.sharedSegmentsFor(g0) != nil:
			m, err := openSegment(p.sharedSegmentsFor(g0).SegmentName(g0, suffix), total)
			if err == nil {
				mem = m
				w.maps = append(w.maps, m)
			} else {
				why = err
			}
		}
		if mem == nil {
			ok = 0
		}
	} else if mem == nil {
		ok = 0
	}
	all, err := Allreduce(d, ok, Min[int32]())
	if d.rank == 0 && mem != nil {
		unregister(p.job, d.ctx)
		if segName != "" {
			removeSegment(segName)
		}
		segName = ""
	}
	if err == nil && all == 0 {
		const apart = "the ranks are not all processes of one node sharing memory"
		switch {
		case where == sharedNowhere && why != nil:
			err = d.errorf(op, ErrRMAShared, loc{}, "this rank (0) could not allocate a shared segment of %d bytes: %v", total, why)
		case where == sharedNowhere:
			err = d.errorf(op, ErrRMAShared, loc{what: "allocating rank", peer: 0}, "rank 0 could not allocate memory that every rank reaches: %s", apart)
		case ok == 0 && why != nil:
			err = d.errorf(op, ErrRMAShared, loc{what: "allocating rank", peer: 0}, "rank 0's memory cannot be mapped here: %v", why)
		case ok == 0:
			err = d.errorf(op, ErrRMAShared, loc{what: "allocating rank", peer: 0}, "rank 0's memory is out of this rank's reach: %s", apart)
		default:
			err = d.errorf(op, ErrRMAShared, loc{}, "another rank cannot reach rank 0's memory: %s", apart)
		}
	}
	if err != nil {
		w.dropShared(segName, nil)
		return nil, err
	}
	return mem, nil
}

// dropShared undoes sharedMemory's mappings after a failure: the
// segment's file (if still named), rank 0's registry entry (if mem is set)
// and every mapping made.
func (w *Window[T]) dropShared(segName string, mem []byte) {
	if mem != nil {
		unregister(w.c.p.job, w.c.ctx)
	}
	if segName != "" {
		removeSegment(segName)
	}
	if w.seg != nil {
		unmapSegment(w.seg)
		w.seg = nil
	}
	for _, m := range w.maps {
		unmapSegment(m)
	}
	w.maps = nil
	w.goMem = false
}

// sharedPeer returns the transport whose segments another rank of w maps
// (sharedSegmentsFor), or nil.
func (w *Window[T]) sharedPeer() transport.Segments {
	return w.peerSegments(w.c.p.sharedSegmentsFor)
}
