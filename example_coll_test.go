package mpi_test

import (
	"fmt"

	"github.com/mpigo/mpi"
)

// The low-level layer takes buffers, counts and datatypes, like the C API;
// InPlace makes the receive buffer the input.
func ExampleComm_Allreduce() {
	mpi.Run(4, func(world *mpi.Comm) error {
		v := []float64{float64(world.Rank()), 1}
		if err := world.Allreduce(mpi.InPlace, mpi.AsBytes(v), len(v), mpi.Float64, mpi.OpSum); err != nil {
			return err
		}
		if world.Rank() == 0 {
			fmt.Println(v)
		}
		return nil
	})
	// Output: [6 4]
}

// A non-blocking allreduce runs while the caller does other work; the
// Future returns the result.
func ExampleIallreduce() {
	mpi.Run(3, func(world *mpi.Comm) error {
		f, err := mpi.Iallreduce(world, world.Rank()+1, mpi.Prod[int]())
		if err != nil {
			return err
		}
		// ... compute ...
		p, err := f.Wait()
		if world.Rank() == 2 {
			fmt.Println(p, err)
		}
		return nil
	})
	// Output: 6 <nil>
}

// MinLoc finds the smallest value and the rank that has it.
func ExampleMinLoc() {
	mpi.Run(4, func(world *mpi.Comm) error {
		cost := []float64{3.5, 1.25, 7, 1.25}[world.Rank()]
		best, _ := mpi.Allreduce(world, mpi.ValueLoc[float64]{Value: cost, Loc: world.Rank()}, mpi.MinLoc[float64]())
		if world.Rank() == 0 {
			fmt.Printf("%v at rank %d\n", best.Value, best.Loc)
		}
		return nil
	})
	// Output: 1.25 at rank 1
}

// ReduceScatterBlock sums vectors and leaves each rank its block.
func ExampleReduceScatterBlock() {
	mpi.Run(2, func(world *mpi.Comm) error {
		v := []int{1, 2, 3, 4}
		mine, _ := mpi.ReduceScatterBlock(world, v, mpi.Sum[int]())
		if world.Rank() == 1 {
			fmt.Println(mine)
		}
		return nil
	})
	// Output: [6 8]
}

// Alltoall with the low-level layer: block j of the send buffer goes to
// rank j.
func ExampleComm_Alltoall() {
	mpi.Run(3, func(world *mpi.Comm) error {
		me := int32(world.Rank())
		send := []int32{me*10 + 0, me*10 + 1, me*10 + 2}
		recv := make([]int32, 3)
		if err := world.Alltoall(mpi.AsBytes(send), 1, mpi.Int32, mpi.AsBytes(recv), 1, mpi.Int32); err != nil {
			return err
		}
		if me == 1 {
			fmt.Println(recv)
		}
		return nil
	})
	// Output: [1 11 21]
}

// Scan computes prefix sums in rank order.
func ExampleScan() {
	mpi.Run(4, func(world *mpi.Comm) error {
		s, _ := mpi.Scan(world, world.Rank()+1, mpi.Sum[int]())
		all, _ := mpi.Gather(world, s, 0)
		if world.Rank() == 0 {
			fmt.Println(all)
		}
		return nil
	})
	// Output: [1 3 6 10]
}

// The Into forms of the elementwise reductions write into slices the
// caller keeps from one call to the next: a loop of them allocates
// nothing.
func ExampleReduceSliceInto() {
	mpi.Run(3, func(world *mpi.Comm) error {
		r := float64(world.Rank() + 1)
		v := []float64{r, r * r}
		total := make([]float64, len(v)) // used at the root only
		prefix := make([]float64, len(v))
		block := make([]float64, 1)
		for step := 0; step < 3; step++ {
			if err := mpi.ReduceSliceInto(world, v, total, mpi.Sum[float64](), 0); err != nil {
				return err
			}
			if err := mpi.ScanSliceInto(world, v, prefix, mpi.Sum[float64]()); err != nil {
				return err
			}
		}
		w := []float64{r, 2 * r, 3 * r}
		if err := mpi.ReduceScatterBlockInto(world, w, block, mpi.Max[float64]()); err != nil {
			return err
		}
		last := make([]float64, 3) // rank 2's prefix and block, at rank 0
		if world.Rank() == 2 {
			copy(last, append(prefix, block...))
		}
		if err := mpi.BcastInto(world, last, 2); err != nil {
			return err
		}
		if world.Rank() == 0 {
			fmt.Println("total", total, "prefix at rank 2", last[:2], "its block", last[2:])
		}
		return nil
	})
	// Output: total [6 14] prefix at rank 2 [6 14] its block [9]
}
