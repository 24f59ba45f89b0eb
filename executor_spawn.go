package mpi

import (
	"context"
	"errors"
)

// This file is the spawning executor (issue 45), as mpi4py.futures'
// MPIPoolExecutor: the client starts its workers with Spawn instead of
// being given a job of them. The client's self communicator spawns the
// workers; parent and children merge their intercommunicator (the client
// first, so it is rank 0) and an ordinary executor runs over the merged
// communicator. Shutdown releases the workers, frees the merged
// communicator and disconnects from the workers' job on both sides.

// SpawnExecutor starts n workers with Spawn, from the calling rank alone
// (c's rank; the other ranks of c take no part and may make executors of
// their own), and returns a task pool whose client is the caller. The
// workers run command with args: a program that calls ServeExecutor with
// the work function under mpigo run, or, in a job of goroutine ranks
// (Run), a function registered with RegisterSpawnable that does. info
// takes Spawn's keys (host, wdir, path). T and R must be the types the
// workers serve.
//
// Shutdown waits for the tasks, releases the workers and disconnects from
// their job.
func SpawnExecutor[T, R any](c *Comm, command string, args []string, n int, info *Info, opts ExecutorOptions) (_ *Executor[T, R], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("SpawnExecutor", c, Undefined, Undefined), &err)
	}

	const op = "SpawnExecutor"
	if err := c.check(op); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, c.fail(op, ErrArg, loc{}, "%d workers: want at least 1", n)
	}
	ic, _, err := c.Self().Spawn(command, args, n, info, 0)
	if err != nil {
		return nil, err
	}
	m, err := ic.IntercommMerge(false) // the client first: rank 0
	if err != nil {
		ic.Disconnect()
		return nil, err
	}
	m.SetName("workers of " + c.Name())
	// The client runs no task: the work function is the workers'.
	none := func(context.Context, T) (R, error) {
		var r R
		return r, errors.New("the client of a spawning executor runs no task")
	}
	x, err := NewExecutorWith(m, 0, none, opts)
	if err != nil {
		m.Free()
		ic.Disconnect()
		return nil, err
	}
	x.x.release = func() error {
		m.Free()
		return ic.Disconnect()
	}
	return x, nil
}

// ServeExecutor is the body of a worker started by SpawnExecutor: it runs
// tasks with work until the client calls Shutdown, then disconnects from
// the client's job and returns. world is the worker job's world. It fails
// with ErrArg if this job was not spawned (it has no parent).
func ServeExecutor[T, R any](world *Comm, work func(ctx context.Context, task T) (R, error)) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("ServeExecutor", world, Undefined, Undefined), &err)
	}

	const op = "ServeExecutor"
	if err := world.check(op); err != nil {
		return err
	}
	parent := world.GetParent()
	if parent == nil {
		return world.fail(op, ErrArg, loc{}, "this job has no parent: ServeExecutor serves a client that started it with SpawnExecutor (to serve the ranks of one job, use NewExecutor)")
	}
	m, err := parent.IntercommMerge(true) // after the client
	if err != nil {
		return err
	}
	m.SetName("executor's workers")
	_, err = NewExecutor(m, 0, work)
	m.Free()
	if derr := parent.Disconnect(); err == nil {
		err = derr
	}
	return err
}
