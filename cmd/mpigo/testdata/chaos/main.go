// chaos is the victim of mpigo run's random-kill test. Every rank passes a
// token round the ring for LAPS laps, every fourth lap with half a
// megabyte of company so that kills also land mid-rendezvous, then meets
// the others in a Barrier and returns: a test that kills a process at a
// random moment hits start-up, the running job or its shutdown.
//
//	chaos LAPS
package main

import (
	"os"
	"strconv"

	"github.com/mpigo/mpi"
)

func main() {
	laps, _ := strconv.Atoi(os.Args[1])
	mpi.Main(func(world *mpi.Comm) error {
		me, n := world.Rank(), world.Size()
		next, prev := (me+1)%n, (me+n-1)%n
		big := make([]int, 64<<10)
		token := []int{0}
		for lap := 0; lap < laps; lap++ {
			msg := []int{token[0] + 1}
			if lap%4 == 3 {
				big[0] = token[0] + 1
				msg = big
			}
			r, err := mpi.Isend(world, msg, next, 0)
			if err != nil {
				return err
			}
			if token, _, err = mpi.Recv[[]int](world, prev, 0); err != nil {
				return err
			}
			if _, err := r.Wait(); err != nil {
				return err
			}
		}
		return mpi.Barrier(world)
	})
}
