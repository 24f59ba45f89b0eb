package mpi_test

import (
	"fmt"

	"github.com/mpigo/mpi"
)

// The low-level layer: rank 1 puts column 0 of its 3 x 4 row-major matrix
// (a vector datatype: non-contiguous at the origin) into row 1 of rank
// 0's window (contiguous at the target), then reads rank 0's column 2
// back into a plain slice (non-contiguous at the target).
func ExampleWindow_PutBuf() {
	const rows, cols = 3, 4
	mpi.Run(2, func(world *mpi.Comm) error {
		col, _ := mpi.NewVector(rows, 1, cols, mpi.Float64)
		col.Commit()
		w, err := mpi.NewWindow[float64](world, rows*cols) // displacements count float64s
		if err != nil {
			return err
		}
		if world.Rank() == 0 {
			for i := range w.Local() {
				w.Local()[i] = float64(i)
			}
		}
		w.Fence()
		if world.Rank() == 1 {
			m := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
			// origin: 1 column of m; target: 3 float64s from element 4 (row 1)
			w.PutBuf(mpi.AsBytes(m), 1, col, 0, 1*cols, rows, mpi.Float64)
		}
		w.Fence()
		if world.Rank() == 1 {
			got := make([]float64, rows)
			w.Lock(0, false)
			// origin: 3 float64s; target: 1 column from element 2
			w.GetBuf(mpi.AsBytes(got), rows, mpi.Float64, 0, 2, 1, col)
			w.Unlock(0)
			fmt.Println("column 2 of rank 0:", got)
		}
		mpi.Barrier(world)
		if world.Rank() == 0 {
			fmt.Println("rank 0:", w.Local())
		}
		return w.Free()
	})
	// Output:
	// column 2 of rank 0: [2 9 10]
	// rank 0: [0 1 2 3 1 5 9 7 8 9 10 11]
}

// Fence assertions: the first fence of a series ends no epoch
// (ModeNoPrecede: nothing to flush) and the last starts none
// (ModeNoSucceed: an operation after it is an error).
func ExampleWindow_FenceAssert() {
	mpi.Run(2, func(world *mpi.Comm) error {
		w, err := mpi.NewWindow[int](world, 1)
		if err != nil {
			return err
		}
		w.FenceAssert(mpi.ModeNoPrecede)
		w.Put([]int{10 + world.Rank()}, 1-world.Rank(), 0)
		w.FenceAssert(mpi.ModeNoStore | mpi.ModeNoSucceed)
		err = w.Put([]int{0}, 1-world.Rank(), 0)
		for r := 0; r < 2; r++ {
			if r == world.Rank() {
				fmt.Println("rank", r, "got", w.Local()[0], "then:", err != nil)
			}
			mpi.Barrier(world)
		}
		return w.Free()
	})
	// Output:
	// rank 0 got 11 then: true
	// rank 1 got 10 then: true
}
