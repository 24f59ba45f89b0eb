package mpi_test

import (
	"fmt"

	"github.com/mpigo/mpi"
)

// A job of goroutine ranks spawns workers: a function registered under a
// name, which the spawned ranks run with their parent reachable through
// GetParent. Under mpigo run the command is a program instead, and the
// children are processes (docs/spawn.md).
func ExampleComm_Spawn() {
	mpi.RegisterSpawnable("example.square", func(world *mpi.Comm) error {
		parent := world.GetParent()
		x, _, err := mpi.Recv[int](parent, 0, 0)
		if err != nil {
			return err
		}
		if err := mpi.Send(parent, x*x, 0, 1); err != nil {
			return err
		}
		return parent.Disconnect()
	})
	err := mpi.Run(1, func(world *mpi.Comm) error {
		workers, _, err := world.Spawn("example.square", nil, 3, nil, 0)
		if err != nil {
			return err
		}
		for w := 0; w < workers.RemoteSize(); w++ {
			if err := mpi.Send(workers, w+2, w, 0); err != nil {
				return err
			}
		}
		for w := 0; w < workers.RemoteSize(); w++ {
			sq, _, err := mpi.Recv[int](workers, w, 1)
			if err != nil {
				return err
			}
			fmt.Printf("worker %d: %d\n", w, sq)
		}
		return workers.Disconnect()
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// worker 0: 4
	// worker 1: 9
	// worker 2: 16
}
