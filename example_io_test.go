package mpi_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/mpigo/mpi"
)

// Checkpoint a 4x6 array of float64 block-distributed over a 2x2 grid of
// 4 ranks with one collective write through a subarray view, then
// restart on 2 ranks that each read a band of rows: the file is the
// global array in row-major order, whatever the decomposition.
func ExampleSetViewBlock() {
	const rows, cols = 4, 6
	dir, _ := os.MkdirTemp("", "checkpoint")
	defer os.RemoveAll(dir)
	name := filepath.Join(dir, "state.bin")

	// Write: 4 ranks, each a 2x3 block.
	err := mpi.Run(4, func(world *mpi.Comm) error {
		r := world.Rank()
		sub := []int{rows / 2, cols / 2}
		start := []int{(r / 2) * sub[0], (r % 2) * sub[1]}
		block := make([]float64, sub[0]*sub[1])
		for i := range block {
			block[i] = float64(10*(start[0]+i/sub[1]) + start[1] + i%sub[1]) // 10*row + column
		}
		f, err := mpi.OpenFile(world, name, mpi.ModeCreate|mpi.ModeWronly, nil)
		if err != nil {
			return err
		}
		if err := mpi.SetViewBlock[float64](f, 0, []int{rows, cols}, sub, start, "native"); err != nil {
			return err
		}
		if _, err := mpi.WriteAtAll(f, 0, block); err != nil {
			return err // every rank gets the error; see docs/io.md for what the file holds then
		}
		return f.Close()
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	// Read back on 2 ranks: each gets 2 whole rows.
	err = mpi.Run(2, func(world *mpi.Comm) error {
		r := world.Rank()
		f, err := mpi.OpenFile(world, name, mpi.ModeRdonly, nil)
		if err != nil {
			return err
		}
		if err := mpi.SetViewBlock[float64](f, 0, []int{rows, cols}, []int{rows / 2, cols}, []int{r * rows / 2, 0}, "native"); err != nil {
			return err
		}
		band := make([]float64, rows/2*cols)
		st, err := mpi.ReadAtAll(f, 0, band)
		if err != nil {
			return err
		}
		for q := 0; q < world.Size(); q++ {
			if q == r {
				fmt.Println("rank", r, "read", st.Count(), "values:", band)
			}
			mpi.Barrier(world)
		}
		return f.Close()
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// rank 0 read 12 values: [0 1 2 3 4 5 10 11 12 13 14 15]
	// rank 1 read 12 values: [20 21 22 23 24 25 30 31 32 33 34 35]
}
