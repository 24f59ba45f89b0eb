package mpi

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
	if w.remote(target) != nil && (op == "Rput" || op == "Rget") {
		return false // through the fabric, complete on return (rma_fabric.go)
	}
	if w.atomicsTo(target) != nil {
		return false // accumulates may take the fabric's atomics, complete on return (rma_atomic.go)
	}
	if w.dynamic {
		if disp < 0 {
			return false
		}
	} else if disp < 0 || disp > w.sizes[target] || n > w.sizes[target]-disp {
		return false
	}
	// The request goes after the lock the epoch deferred; a lock that
	// cannot be taken is the synchronous call's error to report.
	return w.takeDeferred(op, target) == nil
}
