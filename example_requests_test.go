package mpi_test

import (
	"fmt"

	"github.com/mpigo/mpi"
)

// A Requests set holds a window of non-blocking operations and is reused
// for the next window once WaitAll has completed it: the Go form of a C
// program's MPI_Request array. Posting in a set allocates no Request per
// message, which keeps the garbage collector away from a loop of many
// small messages. Each rank sends a window of values to its right
// neighbour and receives one from its left, three times over.
func ExampleRequests() {
	mpi.Run(3, func(world *mpi.Comm) error {
		me, n := world.Rank(), world.Size()
		right, left := (me+1)%n, (me+n-1)%n
		const win = 4
		in := make([][]int64, win)
		for i := range in {
			in[i] = make([]int64, 1)
		}
		var rs mpi.Requests
		sum := int64(0)
		for round := range 3 {
			for i := range win {
				if err := mpi.PostIrecvInto(&rs, world, in[i], left, i); err != nil {
					return err
				}
			}
			for i := range win {
				v := []int64{int64(100*round + 10*me + i)}
				if err := mpi.PostIsend(&rs, world, v, right, i); err != nil {
					return err
				}
			}
			if err := rs.WaitAll(); err != nil {
				return err
			}
			for i := range win {
				sum += in[i][0]
			}
		}
		if me == 0 {
			// From rank 2, window after window: 20+21+22+23, then 100 and 200 more each.
			fmt.Println("rank 0 received", sum, "in", 3*win, "messages; the last window from rank", rs.Status(0).Source)
		}
		return nil
	})
	// Output: rank 0 received 1458 in 12 messages; the last window from rank 2
}
