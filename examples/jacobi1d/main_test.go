package main

import (
	"math"
	"testing"

	"github.com/mpigo/mpi"
)

// The solution and the number of steps are the same on any number of
// ranks, and close to the exact solution x(1-x)/2.
func TestJacobi1d(t *testing.T) {
	const n = 40
	var want []float64
	wantSteps := 0
	for _, ranks := range []int{1, 2, 3, 4, 7} {
		err := mpi.Run(ranks, func(world *mpi.Comm) error {
			u, steps, err := Solve(world, n, 1e-9, 100_000)
			if err != nil || world.Rank() != 0 {
				return err
			}
			if want == nil {
				want, wantSteps = u, steps
				h := 1.0 / (n + 1)
				for i, v := range u {
					x := float64(i+1) * h
					if math.Abs(v-x*(1-x)/2) > 1e-5 {
						t.Errorf("point %d: %v, exact %v", i, v, x*(1-x)/2)
					}
				}
				return nil
			}
			if steps != wantSteps {
				t.Errorf("%d ranks: %d steps, 1 rank took %d", ranks, steps, wantSteps)
			}
			for i := range u {
				if u[i] != want[i] {
					t.Errorf("%d ranks: point %d is %v, on 1 rank %v", ranks, i, u[i], want[i])
					break
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
