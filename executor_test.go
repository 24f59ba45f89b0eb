package mpi_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mpigo/mpi"
)

// execRun runs f as the client of an executor of work over n goroutine
// ranks (rank 0 the client) with a deadline, and shuts the executor down.
func execRun[T, R any](t *testing.T, n int, cfg mpi.Config, opts mpi.ExecutorOptions, work func(context.Context, T) (R, error), f func(e *mpi.Executor[T, R]) error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		done <- mpi.RunConfig(n, cfg, func(c *mpi.Comm) error {
			e, err := mpi.NewExecutorWith(c, 0, work, opts)
			if err != nil || e == nil {
				return err
			}
			ferr := f(e)
			if err := e.Shutdown(); err != nil && ferr == nil {
				ferr = err
			}
			return ferr
		})
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(60 * time.Second):
		t.Fatalf("the job did not end within 60s")
		return nil
	}
}

func square(_ context.Context, x int) (int, error) { return x * x, nil }

// TestExecutorMap: 1,000 tasks over 4 workers come back complete and in
// order, through Map, MapUnordered and Submit, with task and result types
// of every shape the typed layer has (plain, slice, string, encoded).
func TestExecutorMap(t *testing.T) {
	const n = 1000
	err := execRun(t, 5, mpi.DefaultConfig(), mpi.ExecutorOptions{}, square, func(e *mpi.Executor[int, int]) error {
		i := 0
		for r, err := range e.Map(context.Background(), count(n)) {
			if err != nil || r != i*i {
				return fmt.Errorf("Map result %d = %d, %v; want %d", i, r, err, i*i)
			}
			i++
		}
		if i != n {
			return fmt.Errorf("Map gave %d results, want %d", i, n)
		}
		seen := make([]bool, n)
		for k, r := range e.MapUnordered(context.Background(), count(n)) {
			if r.Err != nil || r.Value != k*k || seen[k] {
				return fmt.Errorf("MapUnordered result %d = %+v (seen before: %v)", k, r, seen[k])
			}
			seen[k] = true
		}
		if i := slices.Index(seen, false); i >= 0 {
			return fmt.Errorf("MapUnordered did not give task %d", i)
		}
		var ts []*mpi.Task[int]
		for i := range n {
			tk, err := e.Submit(i)
			if err != nil {
				return err
			}
			ts = append(ts, tk)
		}
		for i, tk := range ts {
			if r, err := tk.Wait(); err != nil || r != i*i {
				return fmt.Errorf("Submit %d: %d, %v", i, r, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func count(n int) func(func(int) bool) {
	return func(yield func(int) bool) {
		for i := range n {
			if !yield(i) {
				return
			}
		}
	}
}
