package mpi

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mpigo/mpi/internal/device"
	"github.com/mpigo/mpi/internal/diag"
	"github.com/mpigo/mpi/internal/rma"
	"github.com/mpigo/mpi/internal/transport"
)

// One-sided communication (MPI-3.1 chapter 11): docs/rma.md.

// Error classes of one-sided communication.
var (
	// ErrRMARange: a displacement (plus the elements that follow it) lies
	// outside the target's window (MPI_ERR_RMA_RANGE).
	ErrRMARange = errors.New("displacement outside the target's window")
	// ErrRMASync: a one-sided call outside an access epoch, an Unlock
	// without a Lock, a second Lock of one target, or any use of a freed
	// window (MPI_ERR_RMA_SYNC).
	ErrRMASync = errors.New("one-sided synchronization error")
)

func init() { predefinedClasses = append(predefinedClasses, ErrRMARange, ErrRMASync) }

// Window is a window of elements of T on every rank of a communicator
// (MPI_Win): memory that the other ranks read and write with Put, Get,
// Accumulate, FetchAndOp and CompareAndSwap, without the owner taking
// part. T must be a plain type (numbers, bools, arrays and structs of
// them): no pointers, strings, slices or maps.
//
// Operations happen inside epochs: between two Fence calls (active
// target, every rank takes part), or between Lock and Unlock of a target
// (or LockAll and UnlockAll; passive target: the target does nothing).
// Put, Get and Accumulate are complete (their data at the target, or in
// the buffer) at the next Flush, FlushAll, Unlock, UnlockAll or Fence;
// FetchAndOp and CompareAndSwap are complete on return.
//
// Goroutine ranks reach each other's windows directly in memory, and so
// do processes on one node for windows made by NewWindow (the memory is
// then a shared mapping); otherwise operations travel as messages that
// the target's runtime serves in the background, so a target that is
// busy computing still serves them. A Window is safe for use by many
// goroutines at once.
type Window[T any] struct {
	c     *Comm // private duplicate of the creating communicator
	local []T
	esize int
	sizes []int      // elements of each rank's window
	reach []*tmem    // per rank: its memory, reachable directly; nil: by messages
	peers []*peerWin // per rank: a same-node process reached in part directly (rma_peer.go)
	me    *tmem
	ops   bool    // T has predefined operations the target can apply itself
	fab   *fabWin // the targets reached through the fabric (rma_fabric.go); nil: none

	seg     []byte   // this rank's segment (nil: Go memory)
	maps    [][]byte // peers' segments mapped here
	srvDone chan struct{}
	// srvBuf is the server's receive buffer, reused for the next request
	// (next): the server serves one request at a time, and nothing keeps
	// a request's bytes past serveOne.
	srvBuf   []byte
	srvAlloc func(int) []byte // w.serverBuf, for the server's receives
	// applied counts the requests the server goroutine has carried out
	// on this rank's window (serveOne). The rank's own goroutine reads it
	// when a synchronization ends and in Local (synced): the server's
	// writes to the window then come before the rank's reads for the
	// race detector too. Over tcp their real order runs through sockets
	// (the server's answer to the origin, the origin's next message
	// here), which the race detector does not see.
	applied atomic.Uint64
	tag     atomic.Uint32
	pend    []atomic.Int32   // per target: message operations not yet flushed
	q       []rmaq           // per target: small requests not sent yet (rma_msg.go)
	bg      []sync.WaitGroup // per target: request-form operations still at work (rma_buf.go)
	// Per target reached by message: a shared lock (Lock, LockAll) not
	// asked for yet (deferred), taken at the epoch's first operation
	// towards the target under deferMu, or never (takeDeferred).
	deferred []atomic.Bool
	deferMu  []sync.Mutex
	served   atomic.Int64 // requests this rank's server received

	mu      sync.Mutex
	fence   bool
	locks   []int8 // per target: lockNone, lockShared, lockExcl
	nlocks  int
	lockAll bool
	freed   atomic.Bool
	closing atomic.Bool // Free has begun: lock waits at this target give up
	issued  atomic.Bool // an operation was issued since the last fence (rma_assert.go)

	alloc     bool   // made by NewWindow or NewSharedWindow
	shared    bool   // made by NewSharedWindow: one allocation holds every rank's part
	goMem     bool   // this rank's part is Go memory of the window's own, zeroed by Free
	dynamic   bool   // made by NewDynamicWindow
	exposed   []int  // PSCW: origins of the open exposure epoch (Post)
	accessing []int  // PSCW: targets of the open access epoch (Start)
	started   []bool // per target: in the access epoch of Start
	pscw      pscwNote
	access    []atomic.Bool // per target: an access epoch is open (publish)
	passive   []atomic.Bool // per target: a passive-target epoch is open (publish)
	errh      atomic.Pointer[ErrHandler]
}

const (
	lockNone int8 = iota
	lockShared
	lockExcl
)

// winInfo is what ranks tell each other when they create a window.
type winInfo struct {
	N     int64
	Esize int64
	Sig   uint64
	Seg   int64 // 1: the window is a shared segment peers may map; 2: a shared header (rma.Table); 3: a header with a dynamic window's list
	Bad   int64 // 1: this rank's arguments were wrong
	// With Seg 2: the window's memory lies in chunk Chunk (0: none) of
	// the arena, named after world rank ChunkOwner, of ChunkSize bytes,
	// at offset ChunkOff.
	Chunk, ChunkOwner, ChunkSize, ChunkOff int64
	// Fab: the length of the key this rank's part is exposed with through
	// the fabric (0: not exposed; rma_fabric.go).
	Fab int64
}

// NewWindow allocates n zeroed elements of T on the calling rank and
// makes them, with the other ranks' parts, a window (MPI_Win_allocate).
// It is collective over c; n may differ between ranks and may be 0. On
// processes of one node the memory is shared, and origins there access
// it directly.
func NewWindow[T any](c *Comm, n int) (_ *Window[T], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("NewWindow", c, Undefined, Undefined), &err)
	}

	return newWindow[T](c, "NewWindow", n, nil, true)
}

// WindowOf makes a window over the caller's memory local (MPI_Win_create):
// Local returns local itself. It is collective over c; local may be nil.
func WindowOf[T any](c *Comm, local []T) (_ *Window[T], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("WindowOf", c, Undefined, Undefined), &err)
	}

	return newWindow[T](c, "WindowOf", len(local), local, false)
}

// NewDynamicWindow makes a window with no memory yet
// (MPI_Win_create_dynamic): each rank adds memory with Attach, which
// returns the displacement origins use to reach it, and removes it with
// Detach. It is collective over c. Operations on it travel as messages
// between processes (a displacement outside the target's attached memory
// is then reported by the target: ErrRMARange), and go straight to memory
// between goroutine ranks.
func NewDynamicWindow[T any](c *Comm) (_ *Window[T], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("NewDynamicWindow", c, Undefined, Undefined), &err)
	}

	return newWindow[T](c, "NewDynamicWindow", 0, nil, false, true)
}

func newWindow[T any](c *Comm, op string, n int, local []T, alloc bool, dynamic ...bool) (*Window[T], error) {
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
		// Before anything is allocated, here or in a segment: n·size
		// must neither wrap (a segment sized by a wrapped product would
		// be too small) nor exceed what a process can address (make
		// would panic or die of out-of-memory).
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
	w := &Window[T]{c: d, esize: t.size, srvDone: make(chan struct{}), alloc: alloc}
	w.errh.Store(c.errh.Load())
	p := c.p
	me := c.group[c.rank]
	fail := func(err error) (*Window[T], error) {
		w.closeFabric()
		if w.seg != nil {
			unmapSegment(w.seg)
		}
		for _, m := range w.maps {
			unmapSegment(m)
		}
		d.free()
		return nil, c.handle(err)
	}
	info := winInfo{N: int64(n), Esize: int64(t.size), Sig: t.sig}
	var segName string
	if bad != nil {
		info.Bad = 1
	} else {
		if alloc {
			if tr := w.shmPeer(); tr != nil {
				segName = tr.SegmentName(me, segmentSuffix("w", uint64(d.ctx)))
				if mem, err := createSegment(segName, segSize(n, t.size)); err == nil {
					w.seg = mem
					info.Seg = 1
				}
			}
			if w.seg != nil {
				w.me = segMem(w.seg)
				w.local = elemsOf[T](w.me.buf, 0, n, t.size)
			} else {
				w.local = make([]T, n)
				w.me = heapMem(bytesOf(w.local, t.size))
				w.goMem = true
			}
		} else {
			if len(dynamic) > 0 {
				w.dynamic = true
				w.me = heapMem(nil)
				w.me.dyn = &dynTable{}
			} else {
				w.local = local
				w.me = heapMem(bytesOf(local, t.size))
			}
			segName = w.sharedHeader(me, &info)
		}
		register(p.job, d.ctx, me, w.me)
	}
	var fabKey []byte
	if bad == nil {
		fabKey = w.exposeFabric() // rma_fabric.go
		info.Fab = int64(len(fabKey))
	}
	infos, err := Allgather(d, info)
	if err != nil {
		if segName != "" {
			removeSegment(segName)
		}
		if bad == nil {
			unregister(p.job, d.ctx)
		}
		return fail(err)
	}
	for r, in := range infos {
		if bad != nil {
			break
		}
		switch {
		case in.Bad != 0:
			bad = c.errorf(op, ErrArg, loc{}, "rank %d passed wrong arguments", r)
		case in.Esize != int64(t.size) || in.Sig != t.sig:
			bad = c.errorf(op, ErrType, loc{}, "rank %d made its window with another element type than %s", r, typeName[T]())
		}
	}
	if bad != nil {
		if info.Bad == 0 {
			unregister(p.job, d.ctx)
			if segName != "" {
				removeSegment(segName)
			}
		}
		return fail(bad)
	}
	w.targets(d.Size())
	for r, in := range infos {
		w.sizes[r] = int(in.N)
		g := d.group[r]
		switch {
		case r == d.rank:
			w.reach[r] = w.me
		case p.inProcess(g):
			w.reach[r] = lookup(p.job, d.ctx, g)
		case in.Seg == 1 && p.segmentsFor(g) != nil:
			name := p.segmentsFor(g).SegmentName(g, segmentSuffix("w", uint64(d.ctx)))
			if mem, err := openSegment(name, segSize(int(in.N), t.size)); err == nil {
				w.maps = append(w.maps, mem)
				w.reach[r] = segMem(mem)
			}
		case in.Seg >= 2 && p.segmentsFor(g) != nil:
			w.openHeader(r, g, in)
		}
	}
	w.hetReach() // hetero_rma.go
	if slices.ContainsFunc(infos, func(in winInfo) bool { return in.Fab > 0 }) {
		keys, err := Allgather(d, fabKey)
		if err != nil {
			unregister(p.job, d.ctx)
			if segName != "" {
				removeSegment(segName)
			}
			return fail(err)
		}
		w.openFabric(keys)                         // rma_fabric.go
		if err := w.decideAtomics(d); err != nil { // rma_atomic.go
			unregister(p.job, d.ctx)
			if segName != "" {
				removeSegment(segName)
			}
			return fail(err)
		}
	}
	_, w.ops = cachedOp[T](kSum)
	if !w.ops {
		_, w.ops = cachedOp[T](kLand) // bool
	}
	go w.serve()
	err = Barrier(d)
	unregister(p.job, d.ctx)
	if segName != "" {
		removeSegment(segName)
	}
	if err != nil {
		w.stopServer()
		return fail(err)
	}
	return w, nil
}

// targets makes the window's per-target state for size ranks.
func (w *Window[T]) targets(size int) {
	w.sizes = make([]int, size)
	w.reach = make([]*tmem, size)
	w.peers = make([]*peerWin, size)
	w.pend = make([]atomic.Int32, size)
	w.bg = make([]sync.WaitGroup, size)
	w.deferred = make([]atomic.Bool, size)
	w.deferMu = make([]sync.Mutex, size)
	w.q = make([]rmaq, size)
	w.locks = make([]int8, size)
	w.started = make([]bool, size)
	w.access = make([]atomic.Bool, size)
	w.passive = make([]atomic.Bool, size)
	w.pscw.init(size)
}

// shmPeer returns the shared-memory transport towards some other member
// of w's communicator, or nil if none is reached that way.
func (w *Window[T]) shmPeer() transport.Segments { return w.peerSegments(w.c.p.segmentsFor) }

// peerSegments returns segs of the first other member of w's
// communicator for which it has a transport, or nil.
func (w *Window[T]) peerSegments(segs func(g int) transport.Segments) transport.Segments {
	for r, g := range w.c.group {
		if r != w.c.rank {
			if t := segs(g); t != nil {
				return t
			}
		}
	}
	return nil
}

// Local returns this rank's part of the window. For WindowOf it is the
// very slice passed in. It is nil for a nil or freed window; a slice it
// returned before Free then no longer belongs to the window (see Free).
func (w *Window[T]) Local() []T {
	if w.gone() {
		return nil
	}
	w.synced()
	return w.local
}

// synced orders what the server goroutine wrote into this rank's window
// before what the caller reads next (see applied).
func (w *Window[T]) synced() { w.applied.Load() }

// gone reports whether w is nil or freed: its getters then answer zero
// values, and its other calls fail.
func (w *Window[T]) gone() bool { return w == nil || w.c == nil || w.freed.Load() }

// Comm returns the communicator of the window's members (a duplicate of
// the one it was made on; MPI_Win_get_group gives its group); nil for a
// nil or freed window.
func (w *Window[T]) Comm() *Comm {
	if w.gone() {
		return nil
	}
	return w.c
}

// Size returns the number of elements of rank r's part of the window; 0
// for a nil or freed window.
func (w *Window[T]) Size(r int) int {
	if w.gone() || r < 0 || r >= len(w.sizes) {
		return 0
	}
	return w.sizes[r]
}

// errorf builds an *Error for window call op about target and passes it
// through the window's error handler.
func (w *Window[T]) errorf(op string, class error, target int, format string, args ...any) error {
	l := loc{}
	if target != noTarget {
		l = loc{what: "target", peer: target}
	}
	return w.handle(w.c.errorf("Window."+op, class, l, format, args...))
}

// failed wraps err, an error of a call the window made internally.
func (w *Window[T]) failed(op string, target int, err error) error {
	class := ErrOther
	for _, c := range predefinedClasses {
		if errors.Is(err, c) {
			class = c
			break
		}
	}
	l := loc{}
	if target != noTarget {
		l = loc{what: "target", peer: target}
	}
	e := w.c.errorf("Window."+op, class, l, "").(*Error)
	e.Cause = err
	return w.handle(e)
}

// handle passes a failed call's error through the window's handler.
func (w *Window[T]) handle(err error) error {
	h := w.errh.Load()
	if err == nil || h == nil || h == ErrorsReturn {
		return err
	}
	if h.fn != nil {
		h.fn(w.c, err)
	}
	if h.fatal {
		w.c.p.job.abort(w.c.p.Rank, 1, fmt.Errorf("error handler ErrorsAreFatal: %w", err))
	}
	return err
}

// SetErrHandler sets what happens when a call on the window fails
// (MPI_Win_set_errhandler): ErrorsReturn, ErrorsAreFatal, or a handler
// from NewErrHandler, which is called with the window's communicator
// (Comm). A window starts with the handler of the communicator it was
// made on. On a nil or freed window it does nothing.
func (w *Window[T]) SetErrHandler(h *ErrHandler) {
	if w.gone() {
		return
	}
	w.errh.Store(h)
}

// ErrHandler returns the window's error handler (MPI_Win_get_errhandler);
// ErrorsReturn for a nil or freed window, whose calls return their
// errors without calling a handler.
func (w *Window[T]) ErrHandler() *ErrHandler {
	if w.gone() {
		return ErrorsReturn
	}
	if h := w.errh.Load(); h != nil {
		return h
	}
	return ErrorsReturn
}

// CallErrHandler passes err through the window's error handler and
// returns it (MPI_Win_call_errhandler). On a nil window it fails with
// ErrArg, on a freed one with ErrRMASync, as every call does.
func (w *Window[T]) CallErrHandler(e error) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.CallErrHandler", nil, Undefined, Undefined), &err)
	}
	if err := w.checkSync("CallErrHandler", noTarget); err != nil {
		return err
	}
	return w.handle(e)
}

// SetInfo records hints for the window (MPI_Win_set_info); Info returns
// them (MPI_Win_get_info). The implementation needs none of the
// standard's hints (no_locks, accumulate_ordering, accumulate_ops,
// same_size, same_disp_unit): it is correct without them and keeps them
// only for the program to read back.
func (w *Window[T]) SetInfo(info *Info) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.SetInfo", nil, Undefined, Undefined), &err)
	}
	if err := w.checkSync("SetInfo", noTarget); err != nil {
		return err
	}
	return w.c.SetInfo(info)
}

// Info returns the hints set with SetInfo (MPI_Win_get_info); nil for a
// nil or freed window.
func (w *Window[T]) Info() *Info {
	if w.gone() {
		return nil
	}
	return w.c.Info()
}

const noTarget = -1 << 30

// check validates the window and target for a communication call: it
// reports whether the call is a no-op (ProcNull) and fails outside an
// access epoch towards target or beyond its window.
func (w *Window[T]) check(op string, target, disp, n int) (bool, error) {
	if w == nil || w.c == nil {
		return false, (*Comm)(nil).errorf("Window."+op, ErrArg, loc{}, "nil window")
	}
	if w.freed.Load() {
		return false, w.errorf(op, ErrRMASync, target, "the window has been freed")
	}
	if target == ProcNull {
		return true, nil
	}
	if target < 0 || target >= len(w.sizes) {
		return false, w.errorf(op, ErrRank, target, "target %d is not a rank of the window's group (size %d)", target, len(w.sizes))
	}
	if !w.access[target].Load() {
		return false, w.errorf(op, ErrRMASync, target, "no access epoch towards target %d (call Fence, Lock or LockAll first)", target)
	}
	if err := w.takeDeferred(op, target); err != nil {
		return false, err
	}
	if !w.issued.Load() {
		w.issued.Store(true) // for FenceAssert(ModeNoPrecede)
	}
	if w.dynamic {
		if disp < 0 || n < 0 {
			return false, w.errorf(op, ErrRMARange, target, "negative displacement %d or count %d", disp, n)
		}
		return false, nil // the target's regions decide (w.span)
	}
	if disp < 0 || n < 0 || disp > w.sizes[target] || n > w.sizes[target]-disp {
		return false, w.errorf(op, ErrRMARange, target, "displacement %d and %d element(s) lie outside target %d's window of %d element(s)", disp, n, target, w.sizes[target])
	}
	return false, nil
}

// accCheck is check for the accumulate family: the window first, so that
// a nil or freed window is reported as such (ErrArg, ErrRMASync) whatever
// op is and no error is built through a window that is not there; then
// op, then the epoch and range.
func (w *Window[T]) accCheck(name string, target, disp, n int, op Op[T]) (bool, error) {
	if err := w.accOp(name, target, op); err != nil {
		return false, err
	}
	return w.check(name, target, disp, n)
}

// accOp checks an accumulate-family call's window (nil, freed) and then
// its op, before the epoch and the range (check).
func (w *Window[T]) accOp(name string, target int, op Op[T]) error {
	if w == nil || w.c == nil {
		return (*Comm)(nil).errorf("Window."+name, ErrArg, loc{}, "nil window")
	}
	if w.freed.Load() {
		return w.errorf(name, ErrRMASync, target, "the window has been freed")
	}
	if !op.valid() {
		return w.errorf(name, ErrOp, target, "invalid operation (the zero Op)")
	}
	return nil
}

// Put writes vals into target's window at element disp (MPI_Put). It is
// complete at the next Flush, Unlock or Fence; vals may be reused at once.
func (w *Window[T]) Put(vals []T, target, disp int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.Put", nil, Undefined, Undefined), &err)
	}

	if null, err := w.check("Put", target, disp, len(vals)); null || err != nil {
		return err
	}
	if len(vals) == 0 {
		return nil
	}
	if m := w.direct(target, disp, len(vals)); m != nil {
		span, err := w.span("Put", m, target, disp, len(vals))
		if err != nil {
			return err
		}
		copy(span, bytesOf(vals, w.esize))
		return nil
	}
	if rm := w.remote(target); rm != nil {
		return w.fabPut("Put", rm, target, disp*w.esize, bytesOf(vals, w.esize))
	}
	return w.post("Put", target, reqPut, 0, disp, len(vals), bytesOf(vals, w.esize))
}

// Get reads len(buf) elements of target's window from element disp into
// buf (MPI_Get). buf holds them at the next Flush, Unlock or Fence.
func (w *Window[T]) Get(buf []T, target, disp int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.Get", nil, Undefined, Undefined), &err)
	}

	if null, err := w.check("Get", target, disp, len(buf)); null || err != nil {
		return err
	}
	if len(buf) == 0 {
		return nil
	}
	if m := w.direct(target, disp, len(buf)); m != nil {
		span, err := w.span("Get", m, target, disp, len(buf))
		if err != nil {
			return err
		}
		copy(bytesOf(buf, w.esize), span)
		return nil
	}
	if rm := w.remote(target); rm != nil {
		return w.fabGet("Get", rm, target, disp*w.esize, bytesOf(buf, w.esize))
	}
	rep, err := w.call("Get", target, reqGet, 0, disp, len(buf), nil)
	if err != nil {
		return err
	}
	copy(bytesOf(buf, w.esize), rep)
	return nil
}

// Accumulate combines vals into target's window at element disp
// (MPI_Accumulate): each element becomes op(target's value, origin's
// value), atomically per element with respect to the other
// accumulate-family calls on the window. op may be any Op, a closure made
// by NewOp included. Complete at the next Flush, Unlock or Fence.
func (w *Window[T]) Accumulate(vals []T, target, disp int, op Op[T]) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.Accumulate", nil, Undefined, Undefined), &err)
	}

	if null, err := w.accCheck("Accumulate", target, disp, len(vals), op); null || err != nil {
		return err
	}
	if len(vals) == 0 {
		return nil
	}
	if ok, err := w.typedAtomic("Accumulate", target, disp, atomName(op), false, vals, nil); ok { // rma_atomic.go
		return err
	}
	if m := w.direct(target, disp, len(vals)); m != nil {
		span, err := w.span("Accumulate", m, target, disp, len(vals))
		if err != nil {
			return err
		}
		if err := w.accLock(m, target); err != nil {
			return w.failed("Accumulate", target, err)
		}
		op.apply(elemsOf[T](span, 0, len(vals), w.esize), vals, true)
		rma.AccUnlock(m.acc)
		return nil
	}
	if k, ok := w.predef(op); ok {
		return w.post("Accumulate", target, reqAcc, k, disp, len(vals), bytesOf(vals, w.esize))
	}
	_, err = w.remoteApply("Accumulate", target, disp, vals, op)
	return err
}

// FetchAndOp replaces the element at disp of target's window with
// op(element, v) and returns the element's value before, atomically
// (MPI_Fetch_and_op). It is complete on return.
func (w *Window[T]) FetchAndOp(v T, target, disp int, op Op[T]) (_ T, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.FetchAndOp", nil, Undefined, Undefined), &err)
	}

	var old T
	if null, err := w.accCheck("FetchAndOp", target, disp, 1, op); null || err != nil {
		return old, err
	}
	if o, ok, err := w.typedAtomic1("FetchAndOp", target, disp, atomName(op), false, v, v); ok { // rma_atomic.go
		return o, err
	}
	if m := w.direct(target, disp, 1); m != nil {
		span, err := w.span("FetchAndOp", m, target, disp, 1)
		if err != nil {
			return old, err
		}
		if err := w.accLock(m, target); err != nil {
			return old, w.failed("FetchAndOp", target, err)
		}
		e := &elemsOf[T](span, 0, 1, w.esize)[0]
		old = *e
		*e = op.fn(old, v)
		rma.AccUnlock(m.acc)
		return old, nil
	}
	if k, ok := w.predef(op); ok {
		one := []T{v}
		rep, err := w.call("FetchAndOp", target, reqFop, k, disp, 1, bytesOf(one, w.esize))
		if err != nil {
			return old, err
		}
		copy(bytesOf(one, w.esize), rep)
		return one[0], nil
	}
	olds, err := w.remoteApply("FetchAndOp", target, disp, []T{v}, op)
	if err != nil {
		return old, err
	}
	return olds[0], nil
}

// CompareAndSwap replaces the element at disp of target's window with
// swap if its bytes equal compare's, and returns the element's value
// before, atomically (MPI_Compare_and_swap). It is complete on return.
func (w *Window[T]) CompareAndSwap(compare, swap T, target, disp int) (_ T, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.CompareAndSwap", nil, Undefined, Undefined), &err)
	}

	var old T
	if null, err := w.check("CompareAndSwap", target, disp, 1); null || err != nil {
		return old, err
	}
	if o, ok, err := w.typedAtomic1("CompareAndSwap", target, disp, "", true, compare, swap); ok { // rma_atomic.go
		return o, err
	}
	if m := w.direct(target, disp, 1); m != nil {
		span, err := w.span("CompareAndSwap", m, target, disp, 1)
		if err != nil {
			return old, err
		}
		if err := w.accLock(m, target); err != nil {
			return old, w.failed("CompareAndSwap", target, err)
		}
		e := elemsOf[T](span, 0, 1, w.esize)
		old = e[0]
		if string(bytesOf([]T{compare}, w.esize)) == string(bytesOf(e, w.esize)) {
			e[0] = swap
		}
		rma.AccUnlock(m.acc)
		return old, nil
	}
	two := []T{compare, swap}
	rep, err := w.call("CompareAndSwap", target, reqCas, 0, disp, 1, bytesOf(two, w.esize))
	if err != nil {
		return old, err
	}
	copy(bytesOf(two[:1], w.esize), rep)
	return two[0], nil
}

// Fence ends the current active-target epoch and starts the next
// (MPI_Win_fence): every operation that any rank started on the window
// before the Fence is complete when Fence returns. It is collective over
// the window's ranks.
func (w *Window[T]) Fence() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.Fence", nil, Undefined, Undefined), &err)
	}

	if w == nil || w.c == nil {
		return (*Comm)(nil).errorf("Window.Fence", ErrArg, loc{}, "nil window")
	}
	if w.freed.Load() {
		return w.errorf("Fence", ErrRMASync, noTarget, "the window has been freed")
	}
	return w.fenceWith(0)
}

// Lock starts a passive-target access epoch towards target (MPI_Win_lock):
// exclusive excludes every other lock of target's window, shared excludes
// exclusive ones. Lock waits until the lock is granted; the target takes
// no part.
func (w *Window[T]) Lock(target int, exclusive bool) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.Lock", nil, Undefined, Undefined), &err)
	}

	if err := w.checkSync("Lock", target); err != nil || target == ProcNull {
		return err
	}
	w.mu.Lock()
	if w.locks[target] != lockNone || w.lockAll {
		w.mu.Unlock()
		return w.errorf("Lock", ErrRMASync, target, "target %d is already locked by this rank", target)
	}
	kind := lockShared
	if exclusive {
		kind = lockExcl
	}
	w.locks[target] = kind
	w.nlocks++
	w.publish()
	w.mu.Unlock()
	if err := w.acquire("Lock", target, exclusive); err != nil {
		w.mu.Lock()
		w.locks[target] = lockNone
		w.nlocks--
		w.publish()
		w.mu.Unlock()
		return err
	}
	return nil
}

// Unlock completes every operation towards target and ends the epoch
// that Lock started (MPI_Win_unlock).
func (w *Window[T]) Unlock(target int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.Unlock", nil, Undefined, Undefined), &err)
	}

	if err := w.checkSync("Unlock", target); err != nil || target == ProcNull {
		return err
	}
	w.mu.Lock()
	kind := w.locks[target]
	w.mu.Unlock()
	if kind == lockNone {
		return w.errorf("Unlock", ErrRMASync, target, "target %d is not locked by this rank", target)
	}
	err = w.release("Unlock", target, kind == lockExcl)
	w.mu.Lock()
	w.locks[target] = lockNone
	w.nlocks--
	w.publish()
	if w.nlocks == 0 && !w.lockAll {
		w.issued.Store(false) // the epochs' operations are complete (FenceAssert)
	}
	w.mu.Unlock()
	return err
}

// LockAll starts a shared passive-target epoch towards every rank of the
// window (MPI_Win_lock_all).
func (w *Window[T]) LockAll() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.LockAll", nil, Undefined, Undefined), &err)
	}

	if err := w.checkSync("LockAll", noTarget); err != nil {
		return err
	}
	w.mu.Lock()
	if w.lockAll || w.nlocks > 0 {
		w.mu.Unlock()
		return w.errorf("LockAll", ErrRMASync, noTarget, "this rank already holds a lock on the window")
	}
	w.lockAll = true
	w.publish()
	w.mu.Unlock()
	for t := range w.sizes {
		if err := w.acquire("LockAll", t, false); err != nil {
			for u := 0; u < t; u++ {
				w.release("LockAll", u, false)
			}
			w.mu.Lock()
			w.lockAll = false
			w.publish()
			w.mu.Unlock()
			return err
		}
	}
	return nil
}

// UnlockAll completes every operation of this rank on the window and ends
// the epoch LockAll started (MPI_Win_unlock_all).
func (w *Window[T]) UnlockAll() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.UnlockAll", nil, Undefined, Undefined), &err)
	}

	if err := w.checkSync("UnlockAll", noTarget); err != nil {
		return err
	}
	w.mu.Lock()
	if !w.lockAll {
		w.mu.Unlock()
		return w.errorf("UnlockAll", ErrRMASync, noTarget, "UnlockAll without LockAll")
	}
	w.mu.Unlock()
	var first error
	for t := range w.sizes {
		if err := w.release("UnlockAll", t, false); err != nil && first == nil {
			first = err
		}
	}
	w.mu.Lock()
	w.lockAll = false
	w.publish()
	w.issued.Store(false) // the epoch's operations are complete (FenceAssert)
	w.mu.Unlock()
	return first
}

// Flush completes every operation of this rank towards target without
// ending the passive-target epoch (MPI_Win_flush).
func (w *Window[T]) Flush(target int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.Flush", nil, Undefined, Undefined), &err)
	}

	if err := w.checkSync("Flush", target); err != nil || target == ProcNull {
		return err
	}
	if !w.passive[target].Load() {
		return w.errorf("Flush", ErrRMASync, target, "Flush outside a passive-target epoch towards target %d (call Lock or LockAll first)", target)
	}
	return w.flush("Flush", target)
}

// FlushAll completes every operation of this rank on the window without
// ending the passive-target epochs (MPI_Win_flush_all).
func (w *Window[T]) FlushAll() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.FlushAll", nil, Undefined, Undefined), &err)
	}

	if err := w.checkSync("FlushAll", noTarget); err != nil {
		return err
	}
	w.mu.Lock()
	open := w.lockAll || w.nlocks > 0
	w.mu.Unlock()
	if !open {
		return w.errorf("FlushAll", ErrRMASync, noTarget, "FlushAll outside a passive-target epoch (call Lock or LockAll first)")
	}
	return w.flushAll("FlushAll")
}

// Free releases the window (MPI_Win_free). It is collective over the
// window's ranks and returns when every operation aimed at this rank's
// window has completed. Locks this rank still holds are released first.
// Every later call on the window fails with ErrRMASync, and its getters
// (Local, Size, Comm, Name, ...) answer zero values.
//
// A slice that Local or SharedQuery returned before Free stays safe to
// touch but no longer belongs to the window: for a NewWindow window it
// reads zeros from then on, on goroutine ranks and between processes
// alike (the shared memory is released, its addresses stay mapped to
// private zeroed pages); a WindowOf window's memory is the caller's own
// slice and keeps its values.
func (w *Window[T]) Free() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.Free", nil, Undefined, Undefined), &err)
	}

	if w == nil || w.c == nil {
		return (*Comm)(nil).errorf("Window.Free", ErrArg, loc{}, "nil window")
	}
	if w.freed.Swap(true) {
		return w.errorf("Free", ErrRMASync, noTarget, "the window has already been freed")
	}
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	w.mu.Lock()
	locks := append([]int8(nil), w.locks...)
	all := w.lockAll
	w.mu.Unlock()
	for t, k := range locks {
		if k != lockNone || all {
			keep(w.release("Free", t, k == lockExcl))
		}
	}
	keep(w.flushAll("Free"))
	if err := Barrier(w.c); err != nil {
		keep(w.failed("Free", noTarget, err))
	}
	w.closing.Store(true)
	w.stopServer()
	// No origin reaches this rank's part any more: every one has passed
	// the barrier, after its last flush.
	w.closeFabric()
	// Slices into the window's memory may outlive it: Local's and
	// SharedQuery's from before Free. A shared segment is not unmapped,
	// which would make such a slice fault (a fatal signal, not a panic),
	// but retired: its pages are released and its addresses read zeros
	// from now on (retireSegment), at the cost of the address range. The
	// Go memory of a NewWindow window between goroutine ranks is zeroed
	// to match, so a stale slice reads the same on every transport;
	// WindowOf's memory is the caller's and keeps its values.
	for _, m := range w.maps {
		retireSegment(m)
	}
	w.maps = nil
	switch {
	case w.seg != nil:
		retireSegment(w.seg)
	case w.goMem:
		clear(w.local)
	}
	w.c.free()
	return first
}

// publish recomputes, for every target, whether an access epoch is open
// towards it, for check to read without the lock. w.mu is held.
func (w *Window[T]) publish() {
	for t := range w.access {
		w.access[t].Store(w.fence || w.lockAll || w.locks[t] != lockNone || w.started[t])
		w.passive[t].Store(w.lockAll || w.locks[t] != lockNone)
	}
}

// checkSync validates a synchronisation call's window and target.
func (w *Window[T]) checkSync(op string, target int) error {
	if w == nil || w.c == nil {
		return (*Comm)(nil).errorf("Window."+op, ErrArg, loc{}, "nil window")
	}
	if w.freed.Load() {
		return w.errorf(op, ErrRMASync, target, "the window has been freed")
	}
	if target == noTarget || target == ProcNull {
		return nil
	}
	if target < 0 || target >= len(w.sizes) {
		return w.errorf(op, ErrRank, target, "target %d is not a rank of the window's group (size %d)", target, len(w.sizes))
	}
	return nil
}

// giveUp returns the test a wait towards target asks between naps: the
// job or the target is gone.
func (w *Window[T]) giveUp(target int) func() error {
	p := w.c.p
	g := w.c.group[target]
	return func() error {
		if err := p.Eng.Err(); err != nil {
			return err
		}
		if err := p.Eng.Lost(g); err != nil {
			return err
		}
		if f := p.job.Failure(); f != nil {
			return f
		}
		return nil
	}
}

// span resolves n elements at disp of target's memory m.
func (w *Window[T]) span(op string, m *tmem, target, disp, n int) ([]byte, error) {
	b, ok := m.span(disp, n, w.esize)
	if !ok {
		return nil, w.errorf(op, ErrRMARange, target, "displacement %d and %d element(s) lie outside target %d's attached memory", disp, n, target)
	}
	return b, nil
}

// accLock takes the accumulate mutex of target's memory m.
func (w *Window[T]) accLock(m *tmem, target int) error {
	if rma.TryAcc(m.acc) {
		return nil
	}
	return rma.AccLock(m.acc, w.giveUp(target))
}

// acquire takes target's lock, directly or by message.
func (w *Window[T]) acquire(op string, target int, exclusive bool) error {
	if m := w.lockWords(target); m != nil {
		if rma.TryLock(m.lock, exclusive) {
			return nil
		}
		// A wait that outlasts its spin shows in hang reports as this
		// rank waiting for target, as a lock asked for by message does.
		p, giveUp := w.c.p, w.giveUp(target)
		var bw *device.Parked
		err := rma.Lock(m.lock, exclusive, func() error {
			if bw == nil {
				bw = p.Blk.AddStatic(diag.Wait{Call: "Window." + op, Kind: diag.KindRecv, Comm: w.c.Name(),
					Peer: target, PeerWorld: w.c.group[target], Tag: diag.None, Root: diag.None})
			}
			return giveUp()
		})
		if bw != nil {
			p.Blk.Remove(bw)
		}
		if err != nil {
			return w.failed(op, target, fmt.Errorf("%w: waiting for the lock: %w", ErrProcFailed, err))
		}
		return nil
	}
	if !exclusive {
		// MPI lets a lock wait for the epoch's first operation: a shared
		// lock by message is asked for then (takeDeferred), and an epoch
		// with no operation towards the target sends it nothing. An
		// exclusive lock is taken now: programs use it as a mutex.
		if err := w.giveUp(target)(); err != nil && target != w.c.rank {
			return w.failed(op, target, fmt.Errorf("%w: %w", ErrProcFailed, err))
		}
		w.deferred[target].Store(true)
		return nil
	}
	_, err := w.call(op, target, reqLockX, 0, 0, 0, nil)
	return err
}

// takeDeferred takes the shared lock of target that Lock or LockAll
// deferred, if any, before the epoch's first operation towards it (op):
// one atomic load when there is none. Callers of one epoch that race take
// it once.
func (w *Window[T]) takeDeferred(op string, target int) error {
	if !w.deferred[target].Load() {
		return nil
	}
	mu := &w.deferMu[target]
	mu.Lock()
	defer mu.Unlock()
	if !w.deferred[target].Load() {
		return nil
	}
	if _, err := w.call(op, target, reqLockS, 0, 0, 0, nil); err != nil {
		return err
	}
	w.deferred[target].Store(false)
	return nil
}

// release completes the operations towards target and drops its lock.
func (w *Window[T]) release(op string, target int, exclusive bool) error {
	if pw := w.peers[target]; pw != nil {
		// The lock is direct, some operations may have gone by message:
		// they are complete first.
		err := w.flush(op, target)
		rma.Unlock(pw.m.lock, exclusive)
		return err
	}
	if m := w.reach[target]; m != nil {
		var err error
		if e := w.giveUp(target)(); e != nil && target != w.c.rank {
			err = w.failed(op, target, fmt.Errorf("%w: %w", ErrProcFailed, e))
		}
		rma.Unlock(m.lock, exclusive)
		return err
	}
	if w.deferred[target].Swap(false) {
		// Never taken: no operation went to target in the epoch.
		return nil
	}
	w.bg[target].Wait()
	k := reqUnlockS
	if exclusive {
		k = reqUnlockX
	}
	// The fabric's puts are in the target's memory before it learns that
	// the lock is free.
	ferr := w.fabFlush(op, target)
	w.pend[target].Store(0)
	_, err := w.call(op, target, k, 0, 0, 0, nil)
	return cmp.Or(ferr, err)
}

// flush completes the operations towards target. Direct operations are
// complete already; flush then only reports a job that went down (a lost
// process on the node is reported by Unlock, Fence and Free).
func (w *Window[T]) flush(op string, target int) error {
	if w.reach[target] != nil {
		if f := w.c.p.job.Failure(); f != nil && target != w.c.rank {
			return w.failed(op, target, f)
		}
		return nil
	}
	ferr := w.fabFlush(op, target)
	w.bg[target].Wait()
	if w.pend[target].Swap(0) == 0 {
		return ferr
	}
	_, err := w.call(op, target, reqFlush, 0, 0, 0, nil)
	return cmp.Or(ferr, err)
}

// flushAll completes the operations towards every target.
func (w *Window[T]) flushAll(op string) error {
	var first error
	for t := range w.sizes {
		if w.reach[t] != nil {
			continue
		}
		if err := w.flush(op, t); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// predef returns the code of op if the target can apply it itself: a
// predefined operation on a basic type.
func (w *Window[T]) predef(op Op[T]) (byte, bool) {
	if op.vec == nil {
		return 0, false
	}
	switch op.name {
	case "replace":
		return byte(kReplace), true
	case "no_op":
		return byte(kNoOp), true
	}
	k, ok := opKinds[op.name]
	if !ok || !w.ops {
		return 0, false
	}
	if o, ok := cachedOp[T](k); !ok || o.opDef == nil {
		return 0, false
	}
	return byte(k), true
}

var opKinds = map[string]opKind{
	"sum": kSum, "prod": kProd, "min": kMin, "max": kMax, "land": kLand, "lor": kLor,
	"lxor": kLxor, "band": kBand, "bor": kBor, "bxor": kBxor,
}
