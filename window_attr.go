package mpi

import "math"

// A window's attributes and memory queries: its group, name, displacement
// unit, flavor and memory model, the shared memory of a peer, and the
// memory attached to a dynamic window.

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
// for NewWindow, "shared" for NewSharedWindow, "create" for WindowOf; ""
// for a nil or freed window.
func (w *Window[T]) Flavor() string {
	switch {
	case w.gone():
		return ""
	case w.shared:
		return "shared"
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
		r := dynRegion{base: base, buf: bytesOf(mem, w.esize)}
		d.regions = append(d.regions, r)
		d.sharedRegion(r)
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
			d.unshareRegion(r)
			return nil
		}
	}
	return w.errorf("Detach", ErrArg, noTarget, "the slice (%d elements) is not attached to the window", len(mem))
}

// AttachAt is Attach at a displacement the caller chooses: mem[0] is
// then reached at disp, mem[i] at disp + i. The C ABI attaches memory so
// (MPI_Win_attach), because C origins address a dynamic window by the
// absolute address of the target's memory, which the target chose without
// asking the window. disp must not be negative and the region must not
// overlap memory already attached. Attach's later displacements lie
// beyond every region AttachAt added, so the two never collide. Regions
// that follow each other both in displacements and in memory (two halves
// of one array) form one range: an operation may cross from one into the
// next.
func (w *Window[T]) AttachAt(mem []T, disp int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.AttachAt", nil, Undefined, Undefined), &err)
	}

	if err := w.checkSync("AttachAt", noTarget); err != nil {
		return err
	}
	if !w.dynamic {
		return w.errorf("AttachAt", ErrArg, noTarget, "AttachAt needs a window made by NewDynamicWindow")
	}
	if disp < 0 || len(mem) > math.MaxInt-disp-1 {
		return w.errorf("AttachAt", ErrArg, noTarget, "displacement %d for %d elements is outside the window's displacements", disp, len(mem))
	}
	d := w.me.dyn
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(mem) == 0 {
		return nil
	}
	end := disp + len(mem)
	for _, r := range d.regions {
		rend := r.base + len(r.buf)/w.esize
		if disp < rend && r.base < end {
			return w.errorf("AttachAt", ErrArg, noTarget, "elements %d..%d overlap memory attached at %d..%d", disp, end-1, r.base, rend-1)
		}
	}
	r := dynRegion{base: disp, buf: bytesOf(mem, w.esize)}
	d.regions = append(d.regions, r)
	d.sharedRegion(r)
	d.next = max(d.next, end+1)
	return nil
}
