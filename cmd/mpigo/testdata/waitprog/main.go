package main

import (
	"time"

	"github.com/mpigo/mpi"
)

func main() {
	mpi.Main(func(c *mpi.Comm) error {
		if c.Rank() == 1 {
			time.Sleep(3 * time.Second)
			return mpi.Send(c, 42, 0, 0)
		}
		_, _, err := mpi.Recv[int](c, 1, 0)
		return err
	})
}
