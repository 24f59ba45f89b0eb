package mpi

import (
	"github.com/mpigo/mpi/internal/rma"
)

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
