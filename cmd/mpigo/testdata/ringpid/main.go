// ringpid writes its pid to DIR/pid.RANK and passes a token round the ring
// until it is killed; mpigo run's tests kill ranks of it at random.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/mpigo/mpi"
)

func main() {
	dir := os.Args[1]
	mpi.Main(func(world *mpi.Comm) error {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("pid.%d", world.Rank())), []byte(fmt.Sprint(os.Getpid())), 0o644)
		me, n := world.Rank(), world.Size()
		token := 0
		for {
			next, prev := (me+1)%n, (me+n-1)%n
			r, err := mpi.Isend(world, token+1, next, 0)
			if err != nil {
				return err
			}
			if token, _, err = mpi.Recv[int](world, prev, 0); err != nil {
				return err
			}
			if _, err := r.Wait(); err != nil {
				return err
			}
		}
	})
}
