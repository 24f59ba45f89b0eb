// Quickstart is the program from the README: Send, Recv and Allreduce.
//
//	MPIGO_NP=2 go run ./examples/quickstart
package main

import (
	"fmt"

	"github.com/mpigo/mpi"
)

func main() { mpi.Main(hello) }

func hello(world *mpi.Comm) error {
	if world.Rank() == 0 {
		mpi.Send(world, []float64{1, 2, 3}, 1, 0) // any Go value
	} else if world.Rank() == 1 {
		v, st, err := mpi.Recv[[]float64](world, 0, 0)
		fmt.Println(v, st.Count(), err) // [1 2 3] 3 <nil>
	}
	total, err := mpi.Allreduce(world, world.Rank(), mpi.Sum[int]())
	fmt.Println("rank", world.Rank(), "sum of ranks:", total, err)
	return err
}
