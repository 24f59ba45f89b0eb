package mpi_test

import (
	"errors"
	"fmt"

	"github.com/mpigo/mpi"
)

// A rank dies; the survivors revoke the communicator, shrink it and go on.
func ExampleComm_Shrink() {
	cfg := mpi.DefaultConfig()
	cfg.FT = true
	err := mpi.RunConfig(4, cfg, func(c *mpi.Comm) error {
		if c.Rank() == 3 {
			return errors.New("rank 3 dies")
		}
		if _, err := mpi.Allreduce(c, 1, mpi.Sum[int]()); err != nil {
			c.Revoke()
		}
		s, err := c.Shrink()
		if err != nil {
			return err
		}
		n, _ := mpi.Allreduce(s, 1, mpi.Sum[int]())
		if s.Rank() == 0 {
			fmt.Println("survivors:", n)
		}
		return nil
	})
	fmt.Println(err)
	// Output:
	// survivors: 3
	// rank 3: rank 3 dies
}

// Agree gives every survivor the same value, the AND of the live ranks'
// flags, and reports failures not yet acknowledged.
func ExampleComm_Agree() {
	cfg := mpi.DefaultConfig()
	cfg.FT = true
	mpi.RunConfig(3, cfg, func(c *mpi.Comm) error {
		if c.Rank() == 2 {
			return errors.New("rank 2 dies")
		}
		v, err := c.Agree(0b11 >> c.Rank()) // 0b11 & 0b01
		if errors.Is(err, mpi.ErrProcFailed) {
			failed, _ := c.GetFailed()
			c.AckFailed(failed.Size())
			v, err = c.Agree(v)
		}
		if c.Rank() == 0 {
			fmt.Printf("agreed %#b, %v\n", v, err)
		}
		return nil
	})
	// Output:
	// agreed 0b1, <nil>
}
