package mpi_test

import (
	"fmt"

	"github.com/mpigo/mpi"
)

// WaitAny takes the same requests as WaitAll (typed receives, sends,
// collectives, one by one or as a []mpi.Waiter list) and says which one
// completed (a request it has returned is ignored afterwards); the value
// of a *Pending is then read with its Wait. Rank 0
// serves whichever worker answers first.
func ExampleWaitAny() {
	mpi.Run(3, func(world *mpi.Comm) error {
		if world.Rank() != 0 {
			return mpi.Send(world, world.Rank()*10, 0, 0)
		}
		var reqs []mpi.Waiter
		var pend []*mpi.Pending[int]
		for src := 1; src < world.Size(); src++ {
			p, err := mpi.Irecv[int](world, src, 0)
			if err != nil {
				return err
			}
			reqs, pend = append(reqs, p), append(pend, p)
		}
		sum := 0
		for range pend {
			i, _, err := mpi.WaitAny(reqs...)
			if err != nil {
				return err
			}
			v, _, err := pend[i].Wait()
			if err != nil {
				return err
			}
			sum += v
		}
		i, _, _ := mpi.WaitAny(reqs...)
		fmt.Println("sum", sum, "then", i == mpi.Undefined)
		return nil
	})
	// Output: sum 30 then true
}
