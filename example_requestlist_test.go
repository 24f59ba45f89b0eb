package mpi_test

import (
	"fmt"

	"github.com/mpigo/mpi"
)

// A program ported from C keeps its requests in a []*mpi.Request; as a
// RequestList it goes to WaitAll, WaitAny, TestSome and the rest without
// being copied into a []mpi.Waiter.
func ExampleRequestList() {
	mpi.Run(3, func(c *mpi.Comm) error {
		if c.Rank() != 0 {
			return mpi.Send(c, []int32{int32(10 * c.Rank())}, 0, 0)
		}
		bufs := [][]int32{{0}, {0}, {0}}
		reqs := make([]*mpi.Request, c.Size())
		for src := 1; src < c.Size(); src++ {
			var err error
			if reqs[src], err = c.Irecv(mpi.AsBytes(bufs[src]), 1, mpi.Int32, src, 0); err != nil {
				return err
			}
		}
		// reqs[0] is nil: a null request, ignored.
		if err := mpi.RequestList(reqs).WaitAll(); err != nil {
			return err
		}
		fmt.Println(bufs[1][0], bufs[2][0])
		return nil
	})
	// Output: 10 20
}
