// failprog is an MPI program in which one rank fails while the others wait
// for it; mpigo run's tests check that the job ends cleanly.
package main

import (
	"errors"
	"os"

	"github.com/mpigo/mpi"
)

func main() {
	mpi.Main(func(world *mpi.Comm) error {
		if err := mpi.Barrier(world); err != nil {
			return err
		}
		switch {
		case world.Rank() == 1 && len(os.Args) > 1 && os.Args[1] == "panic":
			panic("rank 1 panics on purpose")
		case world.Rank() == 1 && len(os.Args) > 1 && os.Args[1] == "die":
			os.Exit(3) // no word to anyone
		case world.Rank() == 1 && len(os.Args) > 1 && os.Args[1] == "abort":
			mpi.Abort(world, 5)
		case world.Rank() == 1:
			return errors.New("rank 1 fails on purpose")
		}
		_, _, err := mpi.Recv[int](world, 1, 0) // never sent
		return err
	})
}
