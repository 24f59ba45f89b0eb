//go:build cgo

package capi

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/mpigo/mpi"
)

// attached is set by Attach: the Go program started MPI and ends it.
var attached atomic.Bool

// Attach makes w, the Go program's MPI_COMM_WORLD (what mpi.Init
// returned, or the communicator mpi.Main passed; not renamed), the MPI of the C code
// linked into the program: from then on the C functions MPI_* of this
// package work in the same job as the Go code, MPI_Initialized answers
// true, MPI_COMM_WORLD and MPI_COMM_SELF are w and w.Self(), and
// MPI_Query_thread answers MPI_THREAD_MULTIPLE. The Go program still ends
// MPI with mpi.Finalize (or by returning from Main's function), after
// which the C functions fail as after MPI_Finalize; the C code's own
// MPI_Finalize is an error, as it is for any library that did not start
// MPI. Call Attach once, before the C code calls MPI.
//
// A program whose C code calls MPI_Init itself needs no Attach: the Go
// side gets that world with CommFromC(MPI_COMM_WORLD) and must not call
// mpi.Init.
//
// Only a process that is one rank can share its MPI so: goroutine ranks
// (mpi.Run) have a world each, and C's MPI_COMM_WORLD names one per
// process.
func Attach(w *mpi.Comm) error {
	initMu.Lock()
	defer initMu.Unlock()
	switch {
	case w == nil:
		return fmt.Errorf("capi.Attach: the communicator is nil")
	case phase.Load() == phaseRunning:
		return fmt.Errorf("capi.Attach: MPI is already started for C (MPI_Init or an earlier Attach); CommFromC(MPI_COMM_WORLD) gives its world")
	case phase.Load() == phaseAfter || mpi.Finalized():
		return fmt.Errorf("capi.Attach: MPI is finalized")
	case w.Name() != "WORLD":
		// A renamed world is refused too: the name is the only mark of the
		// world the public API shows.
		return fmt.Errorf("capi.Attach: communicator %q is not the world (the communicator of mpi.Init or mpi.Main, under its own name)", w.Name())
	}
	world.c, self.c = w, w.Self()
	world.errh.Store(MPI_ERRORS_ARE_FATAL)
	self.errh.Store(MPI_ERRORS_ARE_FATAL)
	provided = MPI_THREAD_MULTIPLE
	attached.Store(true)
	noteMainThread()
	phase.Store(phaseRunning)
	fastStart(w.Rank(), w.Size())
	return nil
}

// goFinalized reports whether the Go program that attached its MPI has
// finalized it since.
func goFinalized() bool { return attached.Load() && mpi.Finalized() }

// CommToC returns c's C handle as the integer MPI_Comm_toint gives, which
// C turns into the MPI_Comm with MPI_Comm_fromint (in cgo code:
// C.MPI_Comm_fromint(C.int(h))), making a handle if c has none yet. World
// and self are MPI_COMM_WORLD and MPI_COMM_SELF, nil is MPI_COMM_NULL. The
// handle stays valid until C frees it (MPI_Comm_free) or c is freed; one
// made here has MPI_ERRORS_ARE_FATAL as its error handler, as a new
// communicator would inherit from world in C.
func CommToC(c *mpi.Comm) (int32, error) {
	if c == nil {
		return toint(MPI_COMM_NULL), nil
	}
	if !usable() {
		return toint(MPI_COMM_NULL), fmt.Errorf("capi.CommToC: %v", notRunning())
	}
	commMu.Lock()
	defer commMu.Unlock()
	if h := commHandle(c); h != MPI_COMM_NULL {
		return toint(h), nil
	}
	ce := &commEntry{c: c}
	ce.errh.Store(MPI_ERRORS_ARE_FATAL)
	h := comms.add(ce)
	commHandles.Store(c, h)
	return toint(h), nil
}

// commMu makes CommToC's look-up and creation one step.
var commMu sync.Mutex

// CommFromC returns the communicator behind v, a C handle as the integer
// MPI_Comm_toint gives (in cgo code: CommFromC(int32(C.MPI_Comm_toint(comm)))).
func CommFromC(v int32) (*mpi.Comm, error) {
	h := fromint(v)
	if !usable() {
		return nil, fmt.Errorf("capi.CommFromC: %v", notRunning())
	}
	switch h {
	case MPI_COMM_NULL:
		return nil, fmt.Errorf("capi.CommFromC: MPI_COMM_NULL is not a communicator")
	case MPI_COMM_WORLD:
		if world.c != nil {
			return world.c, nil
		}
	case MPI_COMM_SELF:
		if self.c != nil {
			return self.c, nil
		}
	}
	if ce, ok := comms.get(h); ok {
		return ce.c, nil
	}
	return nil, fmt.Errorf("capi.CommFromC: %#x is not a communicator handle (freed, garbage, or of another kind)", h)
}
