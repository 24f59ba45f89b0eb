// Ring passes a token around all ranks a number of times: rank 0 starts
// it, every rank adds one and passes it on. It shows blocking Send and Recv
// and the ProcNull-free ring pattern (ring_c.c in Open MPI's examples).
//
//	MPIGO_NP=5 go run ./examples/ring
package main

import (
	"flag"
	"fmt"

	"github.com/mpigo/mpi"
)

func main() {
	laps := flag.Int("laps", 10, "times the token goes round")
	flag.Parse()
	mpi.Main(func(world *mpi.Comm) error {
		token, err := Ring(world, *laps)
		if err != nil {
			return err
		}
		if world.Rank() == 0 {
			fmt.Printf("token is %d after %d laps of %d ranks\n", token, *laps, world.Size())
		}
		return nil
	})
}

// Ring sends a counter round the ring laps times and returns its final
// value at rank 0 (laps*size).
func Ring(world *mpi.Comm, laps int) (int, error) {
	rank, size := world.Rank(), world.Size()
	next, prev := (rank+1)%size, (rank+size-1)%size
	token := 0
	for lap := 0; lap < laps; lap++ {
		if rank == 0 {
			if err := mpi.Send(world, token+1, next, lap); err != nil {
				return 0, err
			}
			t, _, err := mpi.Recv[int](world, prev, lap)
			if err != nil {
				return 0, err
			}
			token = t
		} else {
			t, _, err := mpi.Recv[int](world, prev, lap)
			if err != nil {
				return 0, err
			}
			if err := mpi.Send(world, t+1, next, lap); err != nil {
				return 0, err
			}
		}
	}
	return token, nil
}
