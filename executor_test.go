package mpi_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
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

// Tasks and results of every shape the typed layer sends: strings,
// slices, and structs the codec encodes.
func TestExecutorShapes(t *testing.T) {
	type point struct {
		Name string
		Xs   []float64
	}
	work := func(_ context.Context, p point) (map[string]float64, error) {
		var s float64
		for _, x := range p.Xs {
			s += x
		}
		return map[string]float64{p.Name: s}, nil
	}
	err := execRun(t, 3, mpi.DefaultConfig(), mpi.ExecutorOptions{}, work, func(e *mpi.Executor[point, map[string]float64]) error {
		tasks := func(yield func(point) bool) {
			for i := range 200 {
				if !yield(point{fmt.Sprint("p", i), []float64{float64(i), 0.5}}) {
					return
				}
			}
		}
		i := 0
		for r, err := range e.Map(context.Background(), tasks) {
			if want := float64(i) + 0.5; err != nil || len(r) != 1 || r[fmt.Sprint("p", i)] != want {
				return fmt.Errorf("result %d = %v, %v; want p%d: %v", i, r, err, i, want)
			}
			i++
		}
		if i != 200 {
			return fmt.Errorf("%d results, want 200", i)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A work function's error and its panic are that task's error (the panic
// with its value and where it happened); the other tasks and the
// executor go on.
func TestExecutorTaskErrors(t *testing.T) {
	work := func(_ context.Context, x int) (int, error) {
		switch x % 100 {
		case 7:
			panic(fmt.Sprintf("boom %d", x))
		case 9:
			return 0, fmt.Errorf("no good: %d", x)
		}
		return x + 1, nil
	}
	err := execRun(t, 5, mpi.DefaultConfig(), mpi.ExecutorOptions{}, work, func(e *mpi.Executor[int, int]) error {
		i := 0
		for r, err := range e.Map(context.Background(), count(1000)) {
			var te *mpi.TaskError
			switch i % 100 {
			case 7:
				if !errors.As(err, &te) || !te.Panicked || !strings.Contains(te.Msg, fmt.Sprintf("boom %d", i)) || !strings.Contains(te.Msg, "executor_test.go") || te.Worker < 1 || te.Worker > 4 {
					return fmt.Errorf("task %d: error %v, want its panic with a stack from executor_test.go", i, err)
				}
			case 9:
				if !errors.As(err, &te) || te.Panicked || err.Error() != fmt.Sprintf("mpi: task failed on worker rank %d: no good: %d", te.Worker, i) {
					return fmt.Errorf("task %d: error %v, want the work function's", i, err)
				}
			default:
				if err != nil || r != i+1 {
					return fmt.Errorf("task %d: %d, %v", i, r, err)
				}
			}
			i++
		}
		if i != 1000 {
			return fmt.Errorf("%d results, want 1000", i)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Cancelling Map's context mid-way stops it at once: the work functions
// running are cancelled on the workers (else Shutdown would wait for
// them), Map ends with the context's error, and the executor goes on.
func TestExecutorCancel(t *testing.T) {
	var cancelled atomic.Int64
	work := func(ctx context.Context, x int) (int, error) {
		if x < 100 {
			return x, nil
		}
		select {
		case <-ctx.Done():
			cancelled.Add(1)
			return 0, ctx.Err()
		case <-time.After(30 * time.Second):
			return 0, errors.New("not cancelled")
		}
	}
	err := execRun(t, 5, mpi.DefaultConfig(), mpi.ExecutorOptions{}, work, func(e *mpi.Executor[int, int]) error {
		for _, brk := range []bool{false, true} {
			cancelled.Store(0)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			got, ends := 0, 0
			start := time.Now()
			for r, err := range e.Map(ctx, count(1000)) {
				if err != nil {
					if !errors.Is(err, context.Canceled) || got != 100 {
						return fmt.Errorf("error %v after %d results, want context.Canceled after 100", err, got)
					}
					ends++
					continue
				}
				if r != got {
					return fmt.Errorf("result %d = %d", got, r)
				}
				got++
				if got == 100 {
					if brk {
						break
					}
					go func() { time.Sleep(50 * time.Millisecond); cancel() }()
				}
			}
			cancel()
			if got != 100 || (ends != 1 && !brk) || (brk && ends != 0) {
				return fmt.Errorf("break %v: %d results and %d errors", brk, got, ends)
			}
			// The tasks are back from the workers, cancelled, before the
			// next map can have every worker.
			next := 0
			for r, err := range e.Map(context.Background(), count(50)) {
				if err != nil || r != next {
					return fmt.Errorf("after the cancellation: result %d = %d, %v", next, r, err)
				}
				next++
			}
			if d := time.Since(start); d > 20*time.Second {
				return fmt.Errorf("cancellation took %v", d)
			}
		}
		if err := e.Shutdown(); err != nil {
			return err
		}
		if cancelled.Load() == 0 {
			return errors.New("no work function saw its context cancelled")
		}
		return nil
	})
	if err != nil && !errors.Is(err, mpi.ErrShutdown) {
		t.Fatal(err)
	}
}

// Bad use: a task that cannot be encoded, a task type that never can,
// Submit and Map after Shutdown; each a clear error, never a hang.
func TestExecutorBadInput(t *testing.T) {
	work := func(_ context.Context, v any) (int, error) { return 1, nil }
	err := execRun(t, 3, mpi.DefaultConfig(), mpi.ExecutorOptions{}, work, func(e *mpi.Executor[any, int]) error {
		if _, err := e.Submit(func() {}); !errors.Is(err, mpi.ErrType) || !strings.Contains(err.Error(), "Executor.Submit") || !strings.Contains(err.Error(), "func") {
			return fmt.Errorf("Submit of a func: %v, want ErrType naming the call and the type", err)
		}
		tk, err := e.Submit("fine")
		if err != nil {
			return err
		}
		if r, err := tk.Wait(); r != 1 || err != nil {
			return fmt.Errorf("Submit after a bad task: %d, %v", r, err)
		}
		i := 0
		for r, err := range e.Map(context.Background(), func(yield func(any) bool) {
			_ = yield(1) && yield(make(chan int)) && yield(3)
		}) {
			if (i == 1) != (err != nil) || (i == 1 && !errors.Is(err, mpi.ErrType)) || (i != 1 && r != 1) {
				return fmt.Errorf("Map with a bad task: result %d = %d, %v", i, r, err)
			}
			i++
		}
		if i != 3 {
			return fmt.Errorf("Map with a bad task gave %d results, want 3", i)
		}
		if err := e.Shutdown(); err != nil {
			return err
		}
		if _, err := e.Submit(1); !errors.Is(err, mpi.ErrShutdown) {
			return fmt.Errorf("Submit after Shutdown: %v, want ErrShutdown", err)
		}
		for _, err := range e.Map(context.Background(), func(yield func(any) bool) { yield(1) }) {
			if !errors.Is(err, mpi.ErrShutdown) {
				return fmt.Errorf("Map after Shutdown: %v, want ErrShutdown", err)
			}
		}
		if err := e.Shutdown(); !errors.Is(err, mpi.ErrShutdown) {
			return fmt.Errorf("second Shutdown: %v, want ErrShutdown", err)
		}
		return nil
	})
	if err != nil && !errors.Is(err, mpi.ErrShutdown) {
		t.Fatal(err)
	}
	// A type that can never be sent fails NewExecutor on every rank.
	err = mpi.Run(2, func(c *mpi.Comm) error {
		_, err := mpi.NewExecutor(c, 0, func(context.Context, chan int) (int, error) { return 0, nil })
		if !errors.Is(err, mpi.ErrType) {
			return fmt.Errorf("NewExecutor of chan int tasks: %v, want ErrType", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Back-pressure: the client holds at most InFlight tasks, whatever a
// slow worker does. Map takes no task from its sequence beyond that, and
// Submit blocks.
func TestExecutorBackPressure(t *testing.T) {
	const inflight = 16
	release := make(chan struct{})
	work := func(ctx context.Context, x int) (int, error) {
		if x < 0 {
			<-release // held until the test lets go
		}
		if x%10 == 3 {
			time.Sleep(time.Millisecond) // some are slow
		}
		return x, nil
	}
	err := execRun(t, 5, mpi.DefaultConfig(), mpi.ExecutorOptions{InFlight: inflight}, work, func(e *mpi.Executor[int, int]) error {
		var taken, given, most int
		tasks := func(yield func(int) bool) {
			for i := range 1000 {
				taken++
				most = max(most, taken-given)
				if !yield(i) {
					return
				}
			}
		}
		for r, err := range e.Map(context.Background(), tasks) {
			if err != nil || r != given {
				return fmt.Errorf("result %d = %d, %v", given, r, err)
			}
			given++
		}
		if given != 1000 || most > inflight || most < inflight/2 {
			return fmt.Errorf("%d results; the client held up to %d tasks, want at most %d (and the window used)", given, most, inflight)
		}
		// Submit blocks once InFlight tasks are held.
		var ts []*mpi.Task[int]
		for range inflight {
			tk, err := e.Submit(-1)
			if err != nil {
				return err
			}
			ts = append(ts, tk)
		}
		extra := make(chan error, 1)
		go func() {
			tk, err := e.Submit(5)
			if err == nil {
				_, err = tk.Wait()
			}
			extra <- err
		}()
		select {
		case err := <-extra:
			return fmt.Errorf("Submit beyond InFlight returned (%v) while %d tasks were held", err, inflight)
		case <-time.After(200 * time.Millisecond):
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if _, err := e.SubmitContext(ctx, 6); !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("SubmitContext blocked by back-pressure: %v, want its deadline", err)
		}
		close(release)
		if err := <-extra; err != nil {
			return err
		}
		for _, tk := range ts {
			if _, err := tk.Wait(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Progress lines, on request, for a person at a terminal.
func TestExecutorProgress(t *testing.T) {
	var buf strings.Builder
	opts := mpi.ExecutorOptions{Progress: &buf, ProgressEvery: 10 * time.Millisecond, ProgressTotal: 300}
	work := func(_ context.Context, x int) (int, error) { time.Sleep(100 * time.Microsecond); return x, nil }
	err := execRun(t, 3, mpi.DefaultConfig(), opts, work, func(e *mpi.Executor[int, int]) error {
		for _, err := range e.Map(context.Background(), count(300)) {
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "executor: finished: 300 tasks done of 300 (100%), ") || !strings.Contains(last, "tasks/s, 2 workers") {
		t.Fatalf("last progress line %q", last)
	}
	if len(lines) < 2 || !strings.Contains(lines[0], "left") {
		t.Logf("progress:\n%s", buf.String())
	}
}

// errWorkerDied is what a worker that "dies" in these tests returns: a
// goroutine rank whose function fails is a failed rank under fault
// tolerance.
var errWorkerDied = errors.New("worker killed")

// TestExecutorWorkerDies: under fault tolerance a worker that dies in the
// middle of a task loses nothing: the task runs again on another worker
// and the others complete. A task that kills every worker that runs it
// fails after MaxTries, and no other task with it.
func TestExecutorWorkerDies(t *testing.T) {
	cases := []struct {
		name   string
		kill   func(rank, task, nth int) bool // whether this task, the nth this worker runs, kills it
		dead   int                            // workers that die
		poison int                            // the task that fails, or -1
	}{
		{"one", func(rank, task, nth int) bool { return rank == 2 && nth == 3 }, 1, -1},
		{"two", func(rank, task, nth int) bool { return (rank == 1 && nth == 2) || (rank == 3 && nth == 4) }, 2, -1},
		{"poison", func(rank, task, nth int) bool { return task == 13 }, 3, 13},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mpi.DefaultConfig()
			cfg.FT = true
			cfg.HangReport = 0
			hold := make(chan struct{})
			defer close(hold)
			done := make(chan error, 1)
			go func() {
				done <- mpi.RunConfig(5, cfg, func(c *mpi.Comm) error {
					die := make(chan struct{})
					nth := 0
					work := func(ctx context.Context, x int) (int, error) {
						nth++
						if tc.kill(c.Rank(), x, nth) {
							close(die) // this rank fails now, in the middle of the task
							<-hold
						}
						if x%16 == 0 {
							time.Sleep(20 * time.Microsecond) // every worker gets its share
						}
						return 2 * x, nil
					}
					if c.Rank() != 0 {
						served := make(chan error, 1)
						go func() {
							_, err := mpi.NewExecutorWith(c, 0, work, mpi.ExecutorOptions{})
							served <- err
						}()
						select {
						case err := <-served:
							return err
						case <-die:
							return errWorkerDied
						}
					}
					// Small batches, so that every worker runs its share.
					e, err := mpi.NewExecutorWith(c, 0, work, mpi.ExecutorOptions{MaxTries: 3, Chunk: 4})
					if err != nil {
						return err
					}
					i := 0
					for r, err := range e.Map(context.Background(), count(1000)) {
						if i == tc.poison {
							if !errors.Is(err, mpi.ErrProcFailed) || !strings.Contains(err.Error(), "ran 3 times") {
								return fmt.Errorf("poison task %d: %v, want ErrProcFailed after 3 tries", i, err)
							}
						} else if err != nil || r != 2*i {
							return fmt.Errorf("task %d: %d, %v", i, r, err)
						}
						i++
					}
					if i != 1000 {
						return fmt.Errorf("%d results, want 1000", i)
					}
					if n := e.Workers(); n != 4-tc.dead {
						return fmt.Errorf("%d live workers, want %d", n, 4-tc.dead)
					}
					return e.Shutdown()
				})
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(60 * time.Second):
				t.Fatal("the job did not end within 60s")
			}
			if err == nil || strings.Count(err.Error(), errWorkerDied.Error()) != tc.dead || strings.Count(err.Error(), "\n") != tc.dead-1 {
				t.Fatalf("job error %v; want the failures of %d workers only", err, tc.dead)
			}
		})
	}
}

// Without fault tolerance a worker that dies ends the job: the client's
// pending tasks fail with ErrProcFailed, and nothing hangs.
func TestExecutorWorkerDiesNoFT(t *testing.T) {
	done := make(chan error, 1)
	var clientErr atomic.Value
	go func() {
		done <- mpi.Run(3, func(c *mpi.Comm) error {
			work := func(ctx context.Context, x int) (int, error) {
				time.Sleep(100 * time.Microsecond)
				return x, nil
			}
			if c.Rank() == 1 {
				die := make(chan struct{})
				nth := 0
				w := func(ctx context.Context, x int) (int, error) {
					if nth++; nth == 5 {
						close(die)
						<-ctx.Done()
					}
					return work(ctx, x)
				}
				go mpi.NewExecutorWith(c, 0, w, mpi.ExecutorOptions{})
				<-die
				return errWorkerDied
			}
			e, err := mpi.NewExecutorWith(c, 0, work, mpi.ExecutorOptions{Chunk: 4})
			if err != nil || e == nil {
				return err
			}
			var last error
			for _, err := range e.Map(context.Background(), count(1000)) {
				if err != nil {
					last = err
				}
			}
			clientErr.Store(fmt.Sprint(last))
			if !errors.Is(last, mpi.ErrProcFailed) {
				return fmt.Errorf("tasks after a worker died: %v, want ErrProcFailed", last)
			}
			e.Shutdown()
			return nil
		})
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), errWorkerDied.Error()) || strings.Contains(err.Error(), "want ErrProcFailed") {
			t.Fatalf("job error %v (client saw %v)", err, clientErr.Load())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the job did not end within 60s")
	}
}

// BenchmarkExecutor measures task throughput with 4 workers (goroutine
// ranks): empty tasks, and 1 ms tasks (time.Sleep), with the workers'
// utilisation: the time the tasks took (a loaded machine oversleeps)
// over the workers' time.
func BenchmarkExecutor(b *testing.B) {
	for _, d := range []time.Duration{0, time.Millisecond} {
		b.Run(fmt.Sprint("task=", d), func(b *testing.B) {
			// A task's result is the time it took, measured on its worker:
			// the utilisation is their sum over the workers' time.
			work := func(_ context.Context, x int) (time.Duration, error) {
				if d == 0 {
					return 0, nil
				}
				t0 := time.Now()
				time.Sleep(d)
				return time.Since(t0), nil
			}
			err := mpi.Run(5, func(c *mpi.Comm) error {
				e, err := mpi.NewExecutor(c, 0, work)
				if err != nil || e == nil {
					return err
				}
				b.ReportAllocs()
				b.ResetTimer()
				start := time.Now()
				var busy time.Duration
				for took, err := range e.Map(context.Background(), count(b.N)) {
					if err != nil {
						return err
					}
					busy += took
				}
				el := time.Since(start)
				b.StopTimer()
				b.ReportMetric(float64(b.N)/el.Seconds(), "tasks/s")
				if d > 0 {
					b.ReportMetric(100*busy.Seconds()/(4*el.Seconds()), "%util")
				}
				return e.Shutdown()
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}

func init() {
	mpi.RegisterSpawnable("exectest.square", func(world *mpi.Comm) error {
		return mpi.ServeExecutor(world, func(_ context.Context, v int) (int, error) {
			if v < 0 {
				return 0, errors.New("negative")
			}
			return v * v, nil
		})
	})
	mpi.RegisterSpawnable("exectest.strings", func(world *mpi.Comm) error {
		return mpi.ServeExecutor(world, func(_ context.Context, s string) (int, error) { return len(s), nil })
	})
}

// TestSpawnExecutor: MPIPoolExecutor's shape: one rank spawns its workers,
// maps tasks over them in order, gets a task's error back, and shuts
// down, disconnecting from the workers' job; workers that serve other
// types are ErrType; ServeExecutor outside a spawned job
// is ErrArg.
func TestSpawnExecutor(t *testing.T) {
	err := mpi.Run(2, func(world *mpi.Comm) error {
		// Each rank of the job makes an executor of its own.
		x, err := mpi.SpawnExecutor[int, int](world, "exectest.square", nil, 3, nil, mpi.ExecutorOptions{})
		if err != nil {
			return err
		}
		if x.Workers() != 3 {
			return fmt.Errorf("%d workers, want 3", x.Workers())
		}
		i := 0
		for v, err := range x.Map(context.Background(), func(yield func(int) bool) {
			for k := range 1000 {
				if !yield(k) {
					return
				}
			}
		}) {
			if err != nil || v != i*i {
				return fmt.Errorf("task %d: %d, %v", i, v, err)
			}
			i++
		}
		if i != 1000 {
			return fmt.Errorf("%d results, want 1000", i)
		}
		tk, err := x.Submit(-1)
		if err != nil {
			return err
		}
		if _, err := tk.Wait(); err == nil || !strings.Contains(err.Error(), "negative") {
			return fmt.Errorf("a failing task: %v", err)
		}
		if err := x.Shutdown(); err != nil {
			return err
		}

		if _, err := mpi.SpawnExecutor[int, int](world, "exectest.strings", nil, 1, nil, mpi.ExecutorOptions{}); !errors.Is(err, mpi.ErrType) {
			return fmt.Errorf("workers serving strings for a client of ints: %v, want ErrType", err)
		}

		if err := mpi.ServeExecutor(world, func(context.Context, int) (int, error) { return 0, nil }); !errors.Is(err, mpi.ErrArg) {
			return fmt.Errorf("ServeExecutor in a job with no parent: %v, want ErrArg", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestExecutorTypesDiffer: a worker whose task or result type differs from
// the client's is ErrType on every rank when the executor is made, not a
// task decoded as another type.
func TestExecutorTypesDiffer(t *testing.T) {
	err := mpi.Run(3, func(world *mpi.Comm) error {
		var err error
		if world.Rank() == 2 {
			_, err = mpi.NewExecutor(world, 0, func(_ context.Context, s string) (int, error) { return len(s), nil })
		} else {
			_, err = mpi.NewExecutor(world, 0, func(_ context.Context, v int) (int, error) { return v, nil })
		}
		if !errors.Is(err, mpi.ErrType) || !strings.Contains(err.Error(), "rank 2") {
			return fmt.Errorf("NewExecutor with rank 2 serving strings: %v, want ErrType naming rank 2", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
