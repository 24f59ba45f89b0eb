// earlyreturn is an MPI program in which rank 1 leaves while the other
// ranks still need it: mpigo run's tests check that the launcher blames
// rank 1, not the ranks left waiting for it.
//
//	earlyreturn [MODE]
//
// MODE says how rank 1 leaves: return (its function returns nil at once,
// the default) or exit (it calls os.Exit(0) inside Main). Every other rank
// waits to receive a message from rank 1.
package main

import (
	"os"

	"github.com/mpigo/mpi"
)

func main() {
	mode := "return"
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	mpi.Main(func(world *mpi.Comm) error {
		if world.Rank() == 1 {
			if mode == "exit" {
				os.Exit(0)
			}
			return nil
		}
		_, _, err := mpi.Recv[int](world, 1, 0)
		return err
	})
}
