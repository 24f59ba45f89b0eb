package main

import (
	"context"
	"time"

	"github.com/mpigo/mpi"
)

// The executor tests (issue 45) measure the task pool: rank 0 maps tasks
// over every other rank. SIZE is a task's duration in microseconds (a
// time.Sleep on the worker; 0: an empty task).
//
//	executor       tasks per second, at the client
//	executor_util  the workers' utilisation (%): the time the tasks took,
//	               measured on the workers (a loaded machine oversleeps),
//	               over the workers' time from the first task to the last
//	               result
func (b *benchConfig) executor(c *mpi.Comm, size int) (float64, error) {
	d := time.Duration(size) * time.Microsecond
	work := func(_ context.Context, _ int32) (int64, error) {
		if d == 0 {
			return 0, nil
		}
		t0 := time.Now()
		time.Sleep(d)
		return int64(time.Since(t0)), nil
	}
	e, err := mpi.NewExecutor(c, 0, work)
	if err != nil || e == nil {
		return 0, err // a worker: it served until rank 0 shut the executor down
	}
	workers := c.Size() - 1
	iters := 20000
	if d > 0 {
		// About half a second of work for each worker.
		iters = max(1, workers*int(500*time.Millisecond/d))
	}
	if b.iters > 0 {
		iters = b.iters
	}
	b.lastIters.Store(int64(iters))
	tasks := func(n int) func(func(int32) bool) {
		return func(yield func(int32) bool) {
			for i := range n {
				if !yield(int32(i)) {
					return
				}
			}
		}
	}
	for _, err := range e.Map(context.Background(), tasks(max(iters/10, 1))) { // warm up
		if err != nil {
			e.Shutdown()
			return 0, err
		}
	}
	var busy time.Duration
	t0 := time.Now()
	for took, err := range e.Map(context.Background(), tasks(iters)) {
		if err != nil {
			e.Shutdown()
			return 0, err
		}
		busy += time.Duration(took)
	}
	el := time.Since(t0)
	if err := e.Shutdown(); err != nil {
		return 0, err
	}
	if b.test == "executor_util" {
		return 100 * busy.Seconds() / (float64(workers) * el.Seconds()), nil
	}
	return float64(iters) / el.Seconds(), nil
}
