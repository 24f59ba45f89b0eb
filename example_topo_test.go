package mpi_test

import (
	"fmt"

	"github.com/mpigo/mpi"
)

// A 3x2 grid, periodic in its first dimension: CartShift names the ranks
// to receive from and send to when data moves one step along a
// dimension, ProcNull beyond a non-periodic edge.
func ExampleComm_CartCreate() {
	mpi.Run(6, func(world *mpi.Comm) error {
		dims, _ := mpi.DimsCreate(world.Size(), []int{0, 0})
		grid, err := world.CartCreate(dims, []bool{true, false}, false)
		if err != nil {
			return err
		}
		if grid.Rank() == 4 {
			_, _, coords, _ := grid.CartGet()
			up, down, _ := grid.CartShift(0, 1)
			left, right, _ := grid.CartShift(1, 1)
			fmt.Println("dims", dims, "coords", coords)
			fmt.Println("dimension 0: from", up, "to", down)
			name := func(r int) any {
				if r == mpi.ProcNull {
					return "ProcNull"
				}
				return r
			}
			fmt.Println("dimension 1: from", name(left), "to", name(right))
		}
		return nil
	})
	// Output:
	// dims [3 2] coords [2 0]
	// dimension 0: from 2 to 0
	// dimension 1: from ProcNull to 5
}

// Every rank of a ring sends its value to both neighbours and gets
// theirs: the lower neighbour's first, then the upper one's.
func ExampleNeighborAllgather() {
	mpi.Run(4, func(world *mpi.Comm) error {
		ring, err := world.CartCreate([]int{4}, []bool{true}, false)
		if err != nil {
			return err
		}
		got, err := mpi.NeighborAllgather(ring, fmt.Sprintf("r%d", ring.Rank()))
		if ring.Rank() == 0 {
			fmt.Println(got, err)
		}
		return err
	})
	// Output: [r3 r1] <nil>
}

// When the grid has fewer ranks than the communicator, the ranks left
// over get a nil *Comm (MPI_COMM_NULL) and no error: check for nil before
// using the grid. A nil *Comm's Rank is mpi.Undefined.
func ExampleComm_CartCreate_leftOver() {
	mpi.Run(5, func(world *mpi.Comm) error {
		grid, err := world.CartCreate([]int{2, 2}, []bool{false, false}, false)
		if err != nil {
			return err
		}
		if grid == nil {
			fmt.Println("rank", world.Rank(), "is not in the grid; its rank there is Undefined:", grid.Rank() == mpi.Undefined)
			return nil
		}
		return mpi.Barrier(grid)
	})
	// Output: rank 4 is not in the grid; its rank there is Undefined: true
}
