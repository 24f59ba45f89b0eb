package mpi_test

import (
	"errors"
	"slices"
	"strconv"
	"testing"
	"unsafe"

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

// TestRMAAttachAtAdjacent: two halves of one array attached one after the
// other (at the next displacement and the next address, as the C ABI's
// MPI_Win_attach of adjacent memory does) are one range that a single
// operation may cross; regions adjacent in displacements only are not.
// MPICH's rma/win_dynamic_rma_flush_get puts across two such halves.
func TestRMAAttachAtAdjacent(t *testing.T) {
	const at, gap = 1000, 5000
	matrix(t, 2, func(c *mpi.Comm) error {
		w, err := mpi.NewDynamicWindow[int32](c)
		if err != nil {
			return err
		}
		arr := make([]int32, 8)
		if err := w.AttachAt(arr[4:], at+4); err != nil {
			return err
		}
		if err := w.AttachAt(arr[:4], at); err != nil {
			return err
		}
		// Adjacent displacements, not adjacent memory: x[4] lies between.
		x := make([]int32, 9)
		if err := w.AttachAt(x[:4], gap); err != nil {
			return err
		}
		if err := w.AttachAt(x[5:], gap+4); err != nil {
			return err
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		right := (c.Rank() + 1) % c.Size()
		me := int32(c.Rank())
		if err := w.Lock(right, false); err != nil {
			return err
		}
		// Typed calls: elements 2..5 of the right neighbour's array.
		if err := w.Put([]int32{me + 10, me + 11, me + 12, me + 13}, right, at+2); err != nil {
			return err
		}
		if err := w.Flush(right); err != nil {
			return err
		}
		got := make([]int32, 8)
		if err := w.Get(got, right, at); err != nil {
			return err
		}
		if err := w.Flush(right); err != nil {
			return err
		}
		if want := []int32{0, 0, me + 10, me + 11, me + 12, me + 13, 0, 0}; !slices.Equal(got, want) {
			return check(c, false, "typed get across the halves: %v, want %v", got, want)
		}
		// Low-level calls: elements 1..6.
		src := []int32{1, 1, 1, 1, 1, 1}
		if err := w.AccumulateBuf(int32Bytes(src), 6, mpi.Int32, right, at+1, 6, mpi.Int32, mpi.OpSum); err != nil {
			return err
		}
		if err := w.Flush(right); err != nil {
			return err
		}
		low := make([]int32, 6)
		if err := w.GetBuf(int32Bytes(low), 6, mpi.Int32, right, at+1, 6, mpi.Int32); err != nil {
			return err
		}
		if err := w.Flush(right); err != nil {
			return err
		}
		if want := []int32{1, me + 11, me + 12, me + 13, me + 14, 1}; !slices.Equal(low, want) {
			return check(c, false, "low-level get across the halves: %v, want %v", low, want)
		}
		if err := w.Put([]int32{1, 2}, right, gap+3); !errors.Is(err, mpi.ErrRMARange) {
			return check(c, false, "typed put across regions apart in memory: %v", err)
		}
		if err := w.PutBuf(int32Bytes(src[:2]), 2, mpi.Int32, right, gap+3, 2, mpi.Int32); err == nil {
			err = w.Flush(right)
			if !errors.Is(err, mpi.ErrRMARange) {
				return check(c, false, "low-level put across regions apart in memory: %v", err)
			}
		} else if !errors.Is(err, mpi.ErrRMARange) {
			return check(c, false, "low-level put across regions apart in memory: %v", err)
		}
		if err := w.Unlock(right); err != nil {
			return err
		}
		if err := c.Barrier(); err != nil {
			return err
		}
		left := int32((c.Rank() + c.Size() - 1) % c.Size())
		if want := []int32{0, 1, left + 11, left + 12, left + 13, left + 14, 1, 0}; !slices.Equal(arr, want) {
			return check(c, false, "my array holds %v, want %v", arr, want)
		}
		if x[3] != 0 || x[4] != 0 || x[5] != 0 {
			return check(c, false, "a refused put wrote into %v", x)
		}
		return w.Free()
	})
}

// int32Bytes views s as bytes.
func int32Bytes(s []int32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), 4*len(s))
}
