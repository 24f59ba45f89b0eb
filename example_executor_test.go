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
