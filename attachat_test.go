package mpi_test

import (
	"errors"
	"strconv"
	"testing"

	"github.com/mpigo/mpi"
)

// TestRMAAttachAt: memory attached at a displacement of the caller's
// choosing is reached there, overlaps and negative displacements are
// refused, and Attach's own displacements stay clear of it.
func TestRMAAttachAt(t *testing.T) {
	if strconv.IntSize < 64 {
		t.Skip("displacements above 2^40 need a 64-bit int")
	}
	// Not a constant: 1<<40 does not fit a 32-bit int, where this file
	// must still compile.
	shift := 40
	at := 1 << shift
	matrix(t, 2, func(c *mpi.Comm) error {
		w, err := mpi.NewDynamicWindow[int32](c)
		if err != nil {
			return err
		}
		mem := make([]int32, 4)
		if err := w.AttachAt(mem, at); err != nil {
			return err
		}
		if err := w.AttachAt(make([]int32, 2), at+3); !errors.Is(err, mpi.ErrArg) {
			return check(c, false, "overlapping AttachAt: %v", err)
		}
		if err := w.AttachAt(make([]int32, 1), -1); !errors.Is(err, mpi.ErrArg) {
			return check(c, false, "AttachAt at -1: %v", err)
		}
		other := make([]int32, 1)
		base, err := w.Attach(other)
		if err != nil {
			return err
		}
		if base < at+4 {
			return check(c, false, "Attach after AttachAt gave %d, inside [%d, %d)", base, at, at+4)
		}
		// Origins may reach the memory once its owner attached it.
		if err := c.Barrier(); err != nil {
			return err
		}
		right := (c.Rank() + 1) % c.Size()
		if err := w.Lock(right, false); err != nil {
			return err
		}
		if err := w.Put([]int32{int32(c.Rank() + 7)}, right, at+2); err != nil {
			return err
		}
		if err := w.Put([]int32{1, 2}, right, at+3); !errors.Is(err, mpi.ErrRMARange) {
			return check(c, false, "put across the end of AttachAt memory: %v", err)
		}
		if err := w.Unlock(right); err != nil {
			return err
		}
		if err := w.Fence(); err != nil {
			return err
		}
		left := (c.Rank() + c.Size() - 1) % c.Size()
		if mem[2] != int32(left+7) {
			return check(c, false, "AttachAt memory holds %v", mem)
		}
		if err := w.Detach(mem); err != nil {
			return err
		}
		return w.Free()
	})
}
