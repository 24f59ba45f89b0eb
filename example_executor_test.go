package mpi_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/mpigo/mpi"
)

// A task pool: rank 0 maps tasks over the other ranks and gets the
// results in task order. With processes it is the same program under
// `mpigo run -n 4`.
func ExampleNewExecutor() {
	err := mpi.Run(4, func(world *mpi.Comm) error {
		square := func(_ context.Context, x int) (int, error) { return x * x, nil }
		e, err := mpi.NewExecutor(world, 0, square)
		if err != nil || e == nil {
			return err // a worker: it ran tasks until rank 0 shut the executor down
		}
		var squares []int
		for r, err := range e.Map(context.Background(), slices.Values([]int{1, 2, 3, 4, 5})) {
			if err != nil {
				return err
			}
			squares = append(squares, r)
		}
		t, err := e.Submit(12)
		if err != nil {
			return err
		}
		r, err := t.Wait()
		fmt.Println(squares, r, err, e.Workers(), "workers")
		return e.Shutdown()
	})
	fmt.Println(err)
	// Output:
	// [1 4 9 16 25] 144 <nil> 3 workers
	// <nil>
}

// A task pool that starts its own workers, as mpi4py.futures'
// MPIPoolExecutor does: the client spawns them and maps tasks over them.
// Under mpigo run the command is a program whose ranks call
// ServeExecutor; in a job of goroutine ranks it is a function registered
// with RegisterSpawnable.
func ExampleSpawnExecutor() {
	mpi.RegisterSpawnable("cube-worker", func(world *mpi.Comm) error {
		return mpi.ServeExecutor(world, func(_ context.Context, x int) (int, error) { return x * x * x, nil })
	})
	err := mpi.Run(1, func(world *mpi.Comm) error {
		e, err := mpi.SpawnExecutor[int, int](world, "cube-worker", nil, 2, nil, mpi.ExecutorOptions{})
		if err != nil {
			return err
		}
		var cubes []int
		for r, err := range e.Map(context.Background(), slices.Values([]int{1, 2, 3, 4})) {
			if err != nil {
				return err
			}
			cubes = append(cubes, r)
		}
		fmt.Println(cubes, e.Workers(), "workers")
		return e.Shutdown()
	})
	fmt.Println(err)
	// Output:
	// [1 8 27 64] 2 workers
	// <nil>
}
