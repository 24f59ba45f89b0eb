package main

import (
	"testing"

	"github.com/mpigo/mpi"
)

// The master-worker product equals the serial one on 1 to 5 ranks,
// including more workers than rows.
func TestMatmul(t *testing.T) {
	for _, n := range []int{3, 40} {
		a, b := Matrix(n, 1), Matrix(n, 2)
		want := Serial(n, a, b)
		for np := 1; np <= 5; np++ {
			var got []float64
			err := mpi.Run(np, func(world *mpi.Comm) error {
				var aa, bb []float64
				if world.Rank() == 0 {
					aa, bb = a, b
				}
				c, err := Multiply(world, n, aa, bb)
				if world.Rank() == 0 {
					got = c
				} else if c != nil {
					t.Errorf("rank %d got a result", world.Rank())
				}
				return err
			})
			if err != nil {
				t.Fatalf("n=%d, %d ranks: %v", n, np, err)
			}
			if !Equal(got, want) {
				t.Errorf("n=%d, %d ranks: product differs from the serial one", n, np)
			}
		}
	}
	// A known product: [[1 2] [3 4]]·[[5 6] [7 8]].
	if c := Serial(2, []float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}); !Equal(c, []float64{19, 22, 43, 50}) {
		t.Errorf("serial product %v", c)
	}
}
