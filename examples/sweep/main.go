// Sweep runs a parameter sweep on a task pool (mpi.NewExecutor): rank 0
// hands out every point of a grid of parameters, the other ranks compute,
// and rank 0 prints the best point and a checksum of all results. The
// task is a damped, driven oscillator integrated for a few thousand
// steps; its result is the amplitude it settles at.
//
//	mpigo run -n 9 ./sweep                     a client and 8 workers
//	mpigo run -n 5 ./sweep -grid 64 -progress  64x64 points, progress on stderr
//	mpigo run --ft -n 5 ./sweep -kill 2        worker 2 kills itself (SIGKILL) at its 3rd task:
//	                                           its task runs again elsewhere, same output
//	MPIGO_NP=5 go run ./examples/sweep          goroutine ranks
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"

	"github.com/mpigo/mpi"
)

// Point is one task: a damping and a driving frequency.
type Point struct {
	I       int // index in the grid, to check the order of results
	Damping float64
	Drive   float64
}

// Outcome is a task's result.
type Outcome struct {
	I         int
	Amplitude float64
}

// Simulate integrates x” + 2·damping·x' + x = cos(drive·t) and returns
// the largest |x| over the last quarter of the run.
func Simulate(_ context.Context, p Point) (Outcome, error) {
	const dt, steps = 0.01, 4000
	x, v, peak := 0.0, 0.0, 0.0
	for s := 0; s < steps; s++ {
		t := float64(s) * dt
		a := math.Cos(p.Drive*t) - 2*p.Damping*v - x
		v += a * dt
		x += v * dt
		if s > 3*steps/4 {
			peak = max(peak, math.Abs(x))
		}
	}
	return Outcome{p.I, peak}, nil
}

// Grid is the sweep's n×n points: damping in [0.05, 0.5], drive in
// [0.5, 1.5].
func Grid(n int) func(yield func(Point) bool) {
	return func(yield func(Point) bool) {
		for i := 0; i < n*n; i++ {
			d := 0.05 + 0.45*float64(i/n)/float64(max(n-1, 1))
			w := 0.5 + float64(i%n)/float64(max(n-1, 1))
			if !yield(Point{i, d, w}) {
				return
			}
		}
	}
}

// Summary is what the sweep found.
type Summary struct {
	Results  int
	InOrder  bool
	Best     Point
	Peak     float64
	Checksum float64
}

// Sweep runs the n×n sweep over world with work (Simulate, or a wrapper
// in tests). On rank 0 it returns the summary; on the workers, a zero
// Summary once rank 0 is done.
func Sweep(world *mpi.Comm, n int, work func(context.Context, Point) (Outcome, error), opts mpi.ExecutorOptions) (Summary, error) {
	e, err := mpi.NewExecutorWith(world, 0, work, opts)
	if err != nil || e == nil {
		return Summary{}, err
	}
	s := Summary{InOrder: true}
	var points []Point
	for p := range Grid(n) {
		points = append(points, p)
	}
	for o, err := range e.Map(context.Background(), Grid(n)) {
		if err != nil {
			e.Shutdown()
			return s, err
		}
		if o.I != s.Results {
			s.InOrder = false
		}
		if o.Amplitude > s.Peak {
			s.Peak, s.Best = o.Amplitude, points[o.I]
		}
		s.Checksum += o.Amplitude
		s.Results++
	}
	return s, e.Shutdown()
}

func main() {
	n := flag.Int("grid", 32, "the grid is N×N points")
	kill := flag.Int("kill", -1, "this worker kills itself (SIGKILL) at its third task")
	progress := flag.Bool("progress", false, "report progress on stderr")
	flag.Parse()
	mpi.Main(func(world *mpi.Comm) error {
		var opts mpi.ExecutorOptions
		if *progress {
			opts.Progress, opts.ProgressTotal = os.Stderr, *n**n
		}
		done := 0
		work := func(ctx context.Context, p Point) (Outcome, error) {
			if done++; done == 3 && world.Rank() == *kill {
				killSelf()
			}
			return Simulate(ctx, p)
		}
		s, err := Sweep(world, *n, work, opts)
		if err != nil || world.Rank() != 0 {
			return err
		}
		fmt.Printf("%d results, in order: %v\n", s.Results, s.InOrder)
		fmt.Printf("largest amplitude %.6f at damping %.4f, drive %.4f\n", s.Peak, s.Best.Damping, s.Best.Drive)
		fmt.Printf("checksum %.9f\n", s.Checksum)
		return nil
	})
}

// killSelf ends this process as kill -9 would.
func killSelf() {
	p, _ := os.FindProcess(os.Getpid())
	p.Kill()
	select {}
}
