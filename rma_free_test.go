package mpi_test

import (
	"errors"
	"testing"

	"github.com/mpigo/mpi"
)

// TestWindowStaleSliceAfterFree keeps slices into a NewWindow window's
// memory (Local, and SharedQuery of the next rank) past Free, on every
// transport of the matrix: over shm the memory is a mapped segment, which
// Free used to unmap, so touching such a slice was a fatal fault; on
// goroutine ranks it kept the old values while Local still returned it.
// Now Local is nil after Free and a stale slice reads zeros and takes
// writes on every transport (issue 40). The getters answer zero values
// and calls fail with ErrRMASync.
func TestWindowStaleSliceAfterFree(t *testing.T) {
	matrix(t, 3, func(world *mpi.Comm) error {
		me, size := world.Rank(), world.Size()
		w, err := mpi.NewWindow[int64](world, 4)
		if err != nil {
			return err
		}
		if err := w.Fence(); err != nil {
			return err
		}
		if err := w.Put([]int64{int64(10 + me)}, (me+1)%size, 0); err != nil {
			return err
		}
		if err := w.Fence(); err != nil {
			return err
		}
		own := w.Local()
		if err := check(world, own[0] == int64(10+(me+size-1)%size), "own[0] = %d before Free", own[0]); err != nil {
			return err
		}
		peer, err := w.SharedQuery((me + 1) % size)
		if err != nil {
			peer = nil // tcp between goroutines: not addressable here
		}
		if err := w.Free(); err != nil {
			return err
		}
		if err := check(world, w.Local() == nil && w.Size(me) == 0 && w.Comm() == nil && w.Name() == "",
			"after Free: Local %v, Size %d, Comm %v, Name %q", w.Local(), w.Size(me), w.Comm(), w.Name()); err != nil {
			return err
		}
		if err := w.Fence(); !errors.Is(err, mpi.ErrRMASync) {
			return check(world, false, "Fence after Free: %v, want ErrRMASync", err)
		}
		// Every rank has freed before any touches a peer's memory: the
		// barrier is on world, not on the window.
		if err := mpi.Barrier(world); err != nil {
			return err
		}
		for _, s := range [][]int64{own, peer} {
			if err := check(world, len(s) == 0 || s[0] == 0, "a slice kept past Free reads %v, want 0", s); err != nil {
				return err
			}
		}
		// Every rank has read before any writes (own is the previous
		// rank's peer).
		if err := mpi.Barrier(world); err != nil {
			return err
		}
		if len(own) > 0 {
			own[0] = 7 // must not fault
		}
		return mpi.Barrier(world)
	})
}
