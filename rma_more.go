package mpi

import (
	"sync"
	"time"

	"github.com/mpigo/mpi/internal/rma"
)

// The rest of MPI-3.1 chapter 11 around the typed window: get-accumulate,
// REPLACE and NO_OP, request forms, generalized active target (PSCW),
// local flushes, Sync, and the window's attributes.

// Replace is the operation that stores the origin's value (MPI_REPLACE):
// Accumulate with Replace is an atomic Put.
func Replace[T any]() Op[T] {
	return Op[T]{&opDef[T]{name: "replace", fn: func(_, b T) T { return b }, vec: func(x, y []T) { copy(x, y) }}}
}

// NoOp is the operation that leaves the target unchanged (MPI_NO_OP):
// FetchAndOp or GetAccumulate with NoOp is an atomic read.
func NoOp[T any]() Op[T] {
	return Op[T]{&opDef[T]{name: "no_op", fn: func(a, _ T) T { return a }, vec: func(x, y []T) {}}}
}

// Codes of Replace and NoOp in requests (after the predefined kinds).
const (
	kReplace = opKind(nOpKinds) + iota
	kNoOp
)

// opFor returns the operation a request's code names for T.
func opFor[T any](k byte) (Op[T], bool) {
	switch opKind(k) {
	case kReplace:
		return Replace[T](), true
	case kNoOp:
		return NoOp[T](), true
	}
	if k >= byte(nOpKinds) {
		return Op[T]{}, false
	}
	o, ok := cachedOp[T](opKind(k))
	return o, ok && o.opDef != nil
}

// GetAccumulate combines vals into target's window at disp like
// Accumulate and stores in result the values the elements held before,
// atomically per element (MPI_Get_accumulate). len(result) must be
// len(vals). It is complete on return.
func (w *Window[T]) GetAccumulate(vals, result []T, target, disp int, op Op[T]) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.GetAccumulate", nil, Undefined, Undefined), &err)
	}

	if err := w.accOp("GetAccumulate", target, op); err != nil {
		return err
	}
	if len(result) != len(vals) {
		return w.errorf("GetAccumulate", ErrCount, target, "result holds %d elements, vals %d", len(result), len(vals))
	}
	if null, err := w.check("GetAccumulate", target, disp, len(vals)); null || err != nil {
		return err
	}
	if len(vals) == 0 {
		return nil
	}
	if m := w.reach[target]; m != nil {
		span, err := w.span("GetAccumulate", m, target, disp, len(vals))
		if err != nil {
			return err
		}
		if err := w.accLock(m, target); err != nil {
			return w.failed("GetAccumulate", target, err)
		}
		dst := elemsOf[T](span, 0, len(vals), w.esize)
		copy(result, dst)
		op.apply(dst, vals, true)
		rma.AccUnlock(m.acc)
		return nil
	}
	if k, ok := w.predef(op); ok {
		rep, err := w.call("GetAccumulate", target, reqFop, k, disp, len(vals), bytesOf(vals, w.esize))
		if err != nil {
			return err
		}
		copy(bytesOf(result, w.esize), rep)
		return nil
	}
	old, err := w.remoteApply("GetAccumulate", target, disp, vals, op)
	if err != nil {
		return err
	}
	copy(result, old)
	return nil
}

// Rput is Put returning a request (MPI_Rput). The request completes when
// vals may be reused; the data reaches the target at the next flush or
// synchronisation, as with Put. Where the target's memory is reachable
// the copy is done on return; towards a target served by messages the
// data is sent in the background, and the request completes once it is
// on its way.
func (w *Window[T]) Rput(vals []T, target, disp int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.Rput", nil, Undefined, Undefined), &err)
	}

	if w.byMessage("Rput", target, disp, len(vals)) && !w.dynamic {
		w.pend[target].Add(1)
		r, err := w.isend(target, rmaRequest(reqPut, 0, 0, disp, len(vals), bytesOf(vals, w.esize)))
		if err != nil {
			return nil, w.failed("Rput", target, err)
		}
		return r, nil
	}
	if err := w.Put(vals, target, disp); err != nil {
		return nil, err
	}
	return w.c.nullRequest("Window.Rput", emptyStatus), nil
}

// Rget is Get returning a request (MPI_Rget); buf holds the data when the
// request completes. Towards a target served by messages Rget returns as
// soon as the request is sent, and the answer is stored into buf in the
// background: compute meanwhile, then Wait.
func (w *Window[T]) Rget(buf []T, target, disp int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.Rget", nil, Undefined, Undefined), &err)
	}

	if w.byMessage("Rget", target, disp, len(buf)) {
		pr, err := w.startCall("Rget", target, func(tag int) []byte { return rmaRequest(reqGet, 0, tag, disp, len(buf), nil) })
		if err != nil {
			return nil, err
		}
		return w.background("Rget", target, func() error {
			rep, _, err := w.endCall("Rget", target, pr)
			if err != nil {
				return err
			}
			if len(rep) != len(buf)*w.esize {
				return w.errorf("Rget", ErrOther, target, "the target answered %d bytes, want %d", len(rep), len(buf)*w.esize)
			}
			copy(bytesOf(buf, w.esize), rep)
			return nil
		})
	}
	if err := w.Get(buf, target, disp); err != nil {
		return nil, err
	}
	return w.c.nullRequest("Window.Rget", emptyStatus), nil
}

// Raccumulate is Accumulate returning a request (MPI_Raccumulate), which
// completes when vals may be reused. Towards a target served by messages
// it works in the background, like Rput.
func (w *Window[T]) Raccumulate(vals []T, target, disp int, op Op[T]) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.Raccumulate", nil, Undefined, Undefined), &err)
	}

	if op.valid() && w.byMessage("Raccumulate", target, disp, len(vals)) {
		if k, ok := w.predef(op); ok && !w.dynamic {
			w.pend[target].Add(1)
			r, err := w.isend(target, rmaRequest(reqAcc, k, 0, disp, len(vals), bytesOf(vals, w.esize)))
			if err != nil {
				return nil, w.failed("Raccumulate", target, err)
			}
			return r, nil
		}
		mine := append([]T(nil), vals...)
		return w.background("Raccumulate", target, func() error { return w.Accumulate(mine, target, disp, op) })
	}
	if err := w.Accumulate(vals, target, disp, op); err != nil {
		return nil, err
	}
	return w.c.nullRequest("Window.Raccumulate", emptyStatus), nil
}

// RgetAccumulate is GetAccumulate returning a request
// (MPI_Rget_accumulate); result holds the old values when it completes.
// Towards a target served by messages it works in the background.
func (w *Window[T]) RgetAccumulate(vals, result []T, target, disp int, op Op[T]) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.RgetAccumulate", nil, Undefined, Undefined), &err)
	}

	if op.valid() && len(result) == len(vals) && w.byMessage("RgetAccumulate", target, disp, len(vals)) {
		mine := append([]T(nil), vals...)
		return w.background("RgetAccumulate", target, func() error { return w.GetAccumulate(mine, result, target, disp, op) })
	}
	if err := w.GetAccumulate(vals, result, target, disp, op); err != nil {
		return nil, err
	}
	return w.c.nullRequest("Window.RgetAccumulate", emptyStatus), nil
}

// byMessage reports whether an operation of n elements at disp of target
// passes the checks and travels by message; when it is false the
// synchronous call does the work (and reports any error).
func (w *Window[T]) byMessage(op string, target, disp, n int) bool {
	if w == nil || w.c == nil || w.freed.Load() || target < 0 || target >= len(w.sizes) || n == 0 || w.reach[target] != nil || !w.access[target].Load() {
		return false
	}
	if w.dynamic {
		return disp >= 0
	}
	return disp >= 0 && disp <= w.sizes[target] && n <= w.sizes[target]-disp
}

// FlushLocal completes locally every operation of this rank towards
// target (MPI_Win_flush_local): origin buffers may be reused. Every
// operation here is locally complete when its call returns, so FlushLocal
// only checks that a passive-target epoch is open.
func (w *Window[T]) FlushLocal(target int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.FlushLocal", nil, Undefined, Undefined), &err)
	}

	if err := w.checkSync("FlushLocal", target); err != nil || target == ProcNull {
		return err
	}
	w.mu.Lock()
	open := w.lockAll || w.locks[target] != lockNone
	w.mu.Unlock()
	if !open {
		return w.errorf("FlushLocal", ErrRMASync, target, "FlushLocal outside a passive-target epoch towards target %d", target)
	}
	return nil
}

// FlushLocalAll is FlushLocal towards every target (MPI_Win_flush_local_all).
func (w *Window[T]) FlushLocalAll() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.FlushLocalAll", nil, Undefined, Undefined), &err)
	}

	if err := w.checkSync("FlushLocalAll", noTarget); err != nil {
		return err
	}
	w.mu.Lock()
	open := w.lockAll || w.nlocks > 0
	w.mu.Unlock()
	if !open {
		return w.errorf("FlushLocalAll", ErrRMASync, noTarget, "FlushLocalAll outside a passive-target epoch")
	}
	return nil
}

// Sync makes this rank's own loads and stores on Local and the window's
// public copy agree (MPI_Win_sync). Windows here have one copy (the
// UNIFIED model), so Sync is a full memory barrier and nothing more.
func (w *Window[T]) Sync() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.Sync", nil, Undefined, Undefined), &err)
	}

	if err := w.checkSync("Sync", noTarget); err != nil {
		return err
	}
	var fence int32
	rma.Barrier(&fence)
	w.synced()
	return nil
}

// Generalized active target: Post and Complete are notices that travel
// to the other side's window server (requests reqPost and reqComplete),
// which counts them; Start and Wait wait for the counts. Going through the
// server keeps the notices from blocking on a peer that has not reached
// its matching call yet, and orders Complete after the operations sent
// before it.

// pscwNote is what the server tells the PSCW calls.
type pscwNote struct {
	mu       sync.Mutex
	posts    []int         // per rank: Post notices not yet consumed by Start
	complete []int         // per rank: Complete notices not yet consumed by Wait
	changed  chan struct{} // closed (and replaced) when a count grows
}

func (n *pscwNote) init(size int) {
	n.posts = make([]int, size)
	n.complete = make([]int, size)
	n.changed = make(chan struct{})
}

// note counts a notice from rank r.
func (n *pscwNote) note(post bool, r int) {
	n.mu.Lock()
	if post {
		n.posts[r]++
	} else {
		n.complete[r]++
	}
	close(n.changed)
	n.changed = make(chan struct{})
	n.mu.Unlock()
}

// take consumes one notice from each of ranks if all are there; with
// block, it waits for them (ending if giveUp reports the job or a peer
// gone).
func (w *Window[T]) take(post bool, ranks []int, block bool) (bool, error) {
	n := &w.pscw
	for {
		n.mu.Lock()
		counts := n.complete
		if post {
			counts = n.posts
		}
		all := true
		for _, r := range ranks {
			if counts[r] == 0 {
				all = false
				break
			}
		}
		if all {
			for _, r := range ranks {
				counts[r]--
			}
			n.mu.Unlock()
			return true, nil
		}
		ch := n.changed
		n.mu.Unlock()
		if !block {
			return false, nil
		}
		select {
		case <-ch:
		case <-time.After(100 * time.Millisecond):
			for _, r := range ranks {
				if err := w.giveUp(r)(); err != nil {
					return false, err
				}
			}
		}
	}
}

// Post starts an exposure epoch for the ranks of g (MPI_Win_post): they
// may access this rank's window after their Start until their Complete.
// g holds ranks of the window's group (world ranks, as every Group).
func (w *Window[T]) Post(g *Group) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.Post", nil, Undefined, Undefined), &err)
	}

	ranks, err := w.pscwRanks("Post", g)
	if err != nil {
		return err
	}
	w.mu.Lock()
	if w.exposed != nil {
		w.mu.Unlock()
		return w.errorf("Post", ErrRMASync, noTarget, "an exposure epoch is already open (call Wait first)")
	}
	w.exposed = ranks
	w.mu.Unlock()
	for _, r := range ranks {
		if err := w.send(r, rmaRequest(reqPost, 0, 0, 0, 0, nil), false); err != nil {
			return w.failed("Post", r, err)
		}
	}
	return nil
}

// Start starts an access epoch towards the ranks of g (MPI_Win_start): it
// returns once each of them has called Post.
func (w *Window[T]) Start(g *Group) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.Start", nil, Undefined, Undefined), &err)
	}

	ranks, err := w.pscwRanks("Start", g)
	if err != nil {
		return err
	}
	w.mu.Lock()
	if w.accessing != nil {
		w.mu.Unlock()
		return w.errorf("Start", ErrRMASync, noTarget, "an access epoch is already open (call Complete first)")
	}
	w.mu.Unlock()
	if _, err := w.take(true, ranks, true); err != nil {
		return w.failed("Start", noTarget, err)
	}
	w.mu.Lock()
	w.accessing = ranks
	for _, r := range ranks {
		w.started[r] = true
	}
	w.publish()
	w.mu.Unlock()
	return nil
}

// Complete ends the access epoch Start began (MPI_Win_complete): every
// operation towards those targets is complete at them when their Wait
// returns.
func (w *Window[T]) Complete() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.Complete", nil, Undefined, Undefined), &err)
	}

	if err := w.checkSync("Complete", noTarget); err != nil {
		return err
	}
	w.mu.Lock()
	ranks := w.accessing
	w.mu.Unlock()
	if ranks == nil {
		return w.errorf("Complete", ErrRMASync, noTarget, "Complete without Start")
	}
	for _, r := range ranks {
		w.bg[r].Wait() // request-form operations still at work
	}
	w.mu.Lock()
	if ranks = w.accessing; ranks == nil {
		w.mu.Unlock()
		return w.errorf("Complete", ErrRMASync, noTarget, "Complete without Start")
	}
	w.accessing = nil
	for _, r := range ranks {
		w.started[r] = false
	}
	w.publish()
	w.issued.Store(false) // the epoch's operations are complete (FenceAssert)
	w.mu.Unlock()
	var first error
	for _, r := range ranks {
		// The notice follows this rank's requests to r, which the server
		// serves in order; direct operations are done already.
		w.pend[r].Store(0)
		if err := w.send(r, rmaRequest(reqComplete, 0, 0, 0, 0, nil), false); err != nil && first == nil {
			first = w.failed("Complete", r, err)
		}
	}
	return first
}

// Wait ends the exposure epoch Post began (MPI_Win_wait): it returns once
// every rank of the group has called Complete, and their operations are
// then visible in Local.
func (w *Window[T]) Wait() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.Wait", nil, Undefined, Undefined), &err)
	}

	if err := w.checkSync("Wait", noTarget); err != nil {
		return err
	}
	w.mu.Lock()
	ranks := w.exposed
	w.mu.Unlock()
	if ranks == nil {
		return w.errorf("Wait", ErrRMASync, noTarget, "Wait without Post")
	}
	if _, err := w.take(false, ranks, true); err != nil {
		return w.failed("Wait", noTarget, err)
	}
	w.mu.Lock()
	w.exposed = nil
	w.mu.Unlock()
	return nil
}

// Test is Wait that does not block (MPI_Win_test): it reports whether
// every rank of the group has called Complete, and if so ends the epoch.
func (w *Window[T]) Test() (_ bool, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.Test", nil, Undefined, Undefined), &err)
	}

	if err := w.checkSync("Test", noTarget); err != nil {
		return false, err
	}
	w.mu.Lock()
	ranks := w.exposed
	w.mu.Unlock()
	if ranks == nil {
		return false, w.errorf("Test", ErrRMASync, noTarget, "Test without Post")
	}
	ok, _ := w.take(false, ranks, false)
	if ok {
		w.mu.Lock()
		w.exposed = nil
		w.mu.Unlock()
	}
	return ok, nil
}

// pscwRanks turns g into ranks of the window's group.
func (w *Window[T]) pscwRanks(op string, g *Group) ([]int, error) {
	if err := w.checkSync(op, noTarget); err != nil {
		return nil, err
	}
	if err := g.check("Window." + op); err != nil {
		return nil, err
	}
	ranks := make([]int, 0, g.Size())
	for _, world := range g.ranks {
		r := -1
		for i, m := range w.c.group {
			if m == world {
				r = i
				break
			}
		}
		if r < 0 {
			return nil, w.errorf(op, ErrGroup, noTarget, "world rank %d is not a member of the window", world)
		}
		ranks = append(ranks, r)
	}
	return ranks, nil
}

// Group returns the group of the window's ranks (MPI_Win_get_group); nil
// for a nil or freed window.
func (w *Window[T]) Group() *Group {
	if w.gone() {
		return nil
	}
	return w.c.Group()
}

// Name returns the window's name (MPI_Win_get_name); by default "window
// of" and the communicator's name. It is "" for a nil or freed window.
func (w *Window[T]) Name() string {
	if w.gone() {
		return ""
	}
	return w.c.Name()
}

// SetName names the window in error messages (MPI_Win_set_name). On a
// nil or freed window it does nothing.
func (w *Window[T]) SetName(name string) {
	if w.gone() {
		return
	}
	w.c.SetName(name)
}

// DispUnit returns the size of one element in bytes: displacements count
// elements (MPI_WIN_DISP_UNIT). It is 0 for a nil or freed window.
func (w *Window[T]) DispUnit() int {
	if w.gone() {
		return 0
	}
	return w.esize
}

// Flavor says how the window was made (MPI_WIN_CREATE_FLAVOR): "allocate"
// for NewWindow, "create" for WindowOf; "" for a nil or freed window.
func (w *Window[T]) Flavor() string {
	switch {
	case w.gone():
		return ""
	case w.alloc:
		return "allocate"
	}
	return "create"
}

// Model returns the window's memory model (MPI_WIN_MODEL): "unified", as
// every window here has one copy that origins and the owner share; "" for
// a nil or freed window.
func (w *Window[T]) Model() string {
	if w.gone() {
		return ""
	}
	return "unified"
}

// SharedQuery returns rank r's part of the window as a slice this rank
// may load from and store to directly (MPI_Win_shared_query): for the
// goroutine ranks of one process, and for NewWindow windows between
// processes of one node (the memory is a shared mapping). Accesses
// through it are plain memory accesses: order them with the window's
// synchronisation (Fence, Lock/Unlock, Sync). A rank whose memory is not
// reachable so gives ErrRank. The slice is valid until Free.
func (w *Window[T]) SharedQuery(r int) (_ []T, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.SharedQuery", nil, Undefined, Undefined), &err)
	}

	if err := w.checkSync("SharedQuery", r); err != nil {
		return nil, err
	}
	if r == ProcNull {
		return nil, nil
	}
	m := w.reach[r]
	if m == nil {
		return nil, w.errorf("SharedQuery", ErrRank, r, "rank %d's window is not in memory this rank can address (another node, or a WindowOf window in another process)", r)
	}
	if r == w.c.rank {
		return w.local, nil
	}
	return elemsOf[T](m.buf, 0, w.sizes[r], w.esize), nil
}

// Attach adds mem to this rank's part of a dynamic window
// (MPI_Win_attach) and returns the displacement of mem[0]: tell it to the
// origins (with a Send, a Bcast, ...), which then address mem[i] at that
// displacement + i. Displacements are never reused, so one that was
// detached cannot reach newer memory. An operation must lie inside one
// attached slice.
func (w *Window[T]) Attach(mem []T) (_ int, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.Attach", nil, Undefined, Undefined), &err)
	}

	if err := w.checkSync("Attach", noTarget); err != nil {
		return 0, err
	}
	if !w.dynamic {
		return 0, w.errorf("Attach", ErrArg, noTarget, "Attach needs a window made by NewDynamicWindow")
	}
	d := w.me.dyn
	d.mu.Lock()
	defer d.mu.Unlock()
	base := d.next
	if len(mem) > 0 {
		d.regions = append(d.regions, dynRegion{base: base, buf: bytesOf(mem, w.esize)})
	}
	d.next += len(mem) + 1
	return base, nil
}

// Detach removes memory that Attach added (MPI_Win_detach); mem must be
// the very slice attached.
func (w *Window[T]) Detach(mem []T) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.Detach", nil, Undefined, Undefined), &err)
	}

	if err := w.checkSync("Detach", noTarget); err != nil {
		return err
	}
	if !w.dynamic {
		return w.errorf("Detach", ErrArg, noTarget, "Detach needs a window made by NewDynamicWindow")
	}
	if len(mem) == 0 {
		return nil
	}
	b := bytesOf(mem, w.esize)
	d := w.me.dyn
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, r := range d.regions {
		if &r.buf[0] == &b[0] && len(r.buf) == len(b) {
			d.regions = append(d.regions[:i], d.regions[i+1:]...)
			return nil
		}
	}
	return w.errorf("Detach", ErrArg, noTarget, "the slice (%d elements) is not attached to the window", len(mem))
}
