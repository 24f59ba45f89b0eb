// Jacobi1d solves the 1-D Poisson problem -u” = 1 on [0,1] with u(0) =
// u(1) = 0 by Jacobi iteration, the grid split in blocks across ranks. It
// is the last step of docs/tutorial.md: each step exchanges one ghost
// value with each neighbour (SendrecvInto, ProcNull at the ends), and an
// Allreduce of the change decides when to stop. The answer is the same on
// any number of ranks.
//
//	MPIGO_NP=4 go run ./examples/jacobi1d
//	mpigo run -n 4 ./examples/jacobi1d -n 200
package main

import (
	"flag"
	"fmt"
	"math"

	"github.com/mpigo/mpi"
)

func main() {
	n := flag.Int("n", 100, "interior grid points")
	tol := flag.Float64("tol", 1e-10, "stop when no point changes by more than this")
	flag.Parse()
	mpi.Main(func(world *mpi.Comm) error {
		u, steps, err := Solve(world, *n, *tol, 1_000_000)
		if err != nil {
			return err
		}
		if world.Rank() == 0 {
			// The exact solution is x(1-x)/2; report the largest error.
			worst := 0.0
			h := 1.0 / float64(*n+1)
			for i, v := range u {
				x := float64(i+1) * h
				worst = math.Max(worst, math.Abs(v-x*(1-x)/2))
			}
			fmt.Printf("jacobi1d: %d points on %d ranks, %d steps, max error %.1e\n", *n, world.Size(), steps, worst)
		}
		return nil
	})
}

// Solve runs Jacobi iteration on n interior points until no point changes
// by more than tol (or maxSteps), and returns the whole solution on rank 0
// (nil elsewhere) with the number of steps taken.
func Solve(world *mpi.Comm, n int, tol float64, maxSteps int) ([]float64, int, error) {
	me, size := world.Rank(), world.Size()
	// Block decomposition: the first n%size ranks get one point more.
	count := n / size
	if me < n%size {
		count++
	}
	h := 1.0 / float64(n+1)
	// u[0] and u[count+1] are ghost cells: the neighbours' edge values
	// (or the boundary value 0 at the ends of the domain).
	u := make([]float64, count+2)
	next := make([]float64, count+2)
	left, right := me-1, me+1
	if left < 0 {
		left = mpi.ProcNull // sends to ProcNull do nothing, receives leave the ghost as is
	}
	if right >= size {
		right = mpi.ProcNull
	}
	steps := 0
	for steps < maxSteps {
		steps++
		// Send my first value left and receive my right ghost from the
		// right, then the other way round.
		if _, err := mpi.SendrecvInto(world, u[1:2], left, 0, u[count+1:count+2], right, 0); err != nil {
			return nil, steps, err
		}
		if _, err := mpi.SendrecvInto(world, u[count:count+1], right, 1, u[0:1], left, 1); err != nil {
			return nil, steps, err
		}
		change := 0.0
		for i := 1; i <= count; i++ {
			next[i] = (u[i-1] + u[i+1] + h*h) / 2
			change = math.Max(change, math.Abs(next[i]-u[i]))
		}
		u, next = next, u
		change, err := mpi.Allreduce(world, change, mpi.Max[float64]())
		if err != nil {
			return nil, steps, err
		}
		if change <= tol {
			break
		}
	}
	parts, err := mpi.Gather(world, u[1:count+1], 0)
	if err != nil || me != 0 {
		return nil, steps, err
	}
	whole := make([]float64, 0, n)
	for _, p := range parts {
		whole = append(whole, p...)
	}
	return whole, steps, nil
}
