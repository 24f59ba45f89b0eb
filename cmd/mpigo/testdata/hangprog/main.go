// Command hangprog makes one of the classic MPI mistakes (or, with
// "trace", does a little correct work to trace), for the hang diagnosis
// and trace tests of mpigo run.
package main

import (
	"fmt"
	"os"

	"github.com/mpigo/mpi"
)

func main() {
	mode := os.Args[1]
	mpi.Main(func(c *mpi.Comm) error {
		r := c.Rank()
		switch mode {
		case "ssendcycle":
			if err := mpi.Ssend(c, int64(1), 1-r, 5); err != nil {
				return err
			}
			_, _, err := mpi.Recv[int64](c, 1-r, 5)
			return err
		case "wrongtag":
			if r == 0 {
				return mpi.Ssend(c, int64(1), 1, 1)
			}
			_, _, err := mpi.Recv[int64](c, 0, 2)
			return err
		case "earlyreturn":
			if r == 1 {
				return nil
			}
			_, _, err := mpi.Recv[int64](c, 1, 4)
			return err
		case "barriermissing":
			if r == c.Size()-1 {
				_, _, err := mpi.Recv[int64](c, 0, 1)
				return err
			}
			if err := mpi.Barrier(c); err != nil {
				return err
			}
			return mpi.Send(c, int64(1), c.Size()-1, 1)
		case "bcastroots":
			root := 0
			if r == c.Size()-1 {
				root = 1
			}
			_, err := mpi.Bcast(c, int64(r), root)
			if err != nil {
				return err
			}
			return mpi.Barrier(c)
		case "trace":
			n := c.Size()
			for i := 0; i < 4; i++ {
				if _, _, err := mpi.Sendrecv[int64](c, int64(i), (r+1)%n, i, (r+n-1)%n, i); err != nil {
					return err
				}
			}
			s, err := mpi.Allreduce(c, int64(r), mpi.Sum[int64]())
			if err != nil {
				return err
			}
			if r == 0 {
				fmt.Println("sum", s)
			}
			return nil
		}
		return fmt.Errorf("unknown mode %q", mode)
	})
}
