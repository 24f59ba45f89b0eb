// collprog runs a few collectives and point-to-point exchanges and prints
// one line of results at rank 0; the launcher tests run it under every
// launcher and expect the same line.
package main

import (
	"fmt"
	"slices"

	"github.com/mpigo/mpi"
)

func main() {
	mpi.Main(func(world *mpi.Comm) error {
		rank, size := world.Rank(), world.Size()
		sum, err := mpi.Allreduce(world, rank+1, mpi.Sum[int]())
		if err != nil {
			return err
		}
		msg, err := mpi.Bcast(world, fmt.Sprintf("hello from %d", rank), 0)
		if err != nil {
			return err
		}
		all, err := mpi.Allgather(world, rank*rank)
		if err != nil {
			return err
		}
		out := make([]int, size)
		for i := range out {
			out[i] = rank*100 + i
		}
		got, err := mpi.Alltoall(world, out)
		if err != nil {
			return err
		}
		for i, v := range got {
			if v != i*100+rank {
				return fmt.Errorf("alltoall: got %v", got)
			}
		}
		big := make([]float64, 1<<17) // 1 MiB: rendezvous over every transport
		for i := range big {
			big[i] = float64(rank)
		}
		red, err := mpi.AllreduceSlice(world, big, mpi.Sum[float64]())
		if err != nil {
			return err
		}
		scan, err := mpi.Scan(world, 1, mpi.Sum[int]())
		if err != nil {
			return err
		}
		if scan != rank+1 {
			return fmt.Errorf("scan: %d", scan)
		}
		if rank == 0 {
			fmt.Printf("collprog: %d ranks: allreduce %d, bcast %q, allgather %v, big allreduce %v, alltoall and scan ok\n",
				size, sum, msg, all, red[len(red)-1] == float64(size*(size-1)/2) && slices.Max(red) == slices.Min(red))
		}
		return nil
	})
}
