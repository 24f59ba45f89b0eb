package mpi_test

import (
	"fmt"

	"github.com/mpigo/mpi"
)

// A library that keeps to itself: each rank starts a session, makes a
// communicator of the job from the process set mpi://WORLD, and sums on
// it, while the program uses world as usual; neither sees the other's
// messages.
func ExampleCommCreateFromGroup() {
	lib := func(world *mpi.Comm) (int, error) {
		s, err := world.SessionInit(nil, nil) // goroutine ranks: world names the rank
		if err != nil {
			return 0, err
		}
		defer s.Finalize()
		g, err := s.GroupFromPset(mpi.PsetWorld)
		if err != nil {
			return 0, err
		}
		c, err := mpi.CommCreateFromGroup(g, "example.org/lib", nil, nil)
		if err != nil {
			return 0, err
		}
		defer c.Free()
		return mpi.Allreduce(c, c.Rank()+1, mpi.Sum[int]())
	}
	mpi.Run(4, func(world *mpi.Comm) error {
		sum, err := lib(world)
		if err != nil {
			return err
		}
		n, err := mpi.Allreduce(world, 1, mpi.Sum[int]())
		if err != nil {
			return err
		}
		if world.Rank() == 0 {
			fmt.Println("library sum", sum, "over", n, "ranks")
		}
		return nil
	})
	// Output: library sum 10 over 4 ranks
}

// The process sets a session knows, and their sizes.
func ExampleSession_PsetInfo() {
	mpi.Run(2, func(world *mpi.Comm) error {
		s, err := world.SessionInit(nil, nil)
		if err != nil {
			return err
		}
		defer s.Finalize()
		if world.Rank() != 0 {
			return nil
		}
		for _, name := range s.Psets() {
			in, err := s.PsetInfo(name)
			if err != nil {
				return err
			}
			size, _ := in.Get("mpi_size")
			fmt.Println(name, size)
		}
		return nil
	})
	// Output:
	// mpi://WORLD 2
	// mpi://SELF 1
	// mpigo://node 2
	// mpigo://app 2
	// mpigo://app/0 2
}
