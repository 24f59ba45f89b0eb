package main

import (
	"fmt"
	"math"
	"testing"

	"github.com/mpigo/mpi"
)

// The checksum is the same, bit for bit, on 1, 2, 3, 4 and 6 ranks, and
// equals the serial computation's.
func TestHeat2dChecksum(t *testing.T) {
	const n, steps = 120, 60
	want := Serial(n, steps)
	wantStr := fmt.Sprintf("checksum %.12e", want)
	for _, np := range []int{1, 2, 3, 4, 6} {
		var got float64
		err := mpi.Run(np, func(world *mpi.Comm) error {
			s, err := Solve(world, n, steps)
			if world.Rank() == 0 {
				got = s
			}
			return err
		})
		if err != nil {
			t.Fatalf("%d ranks: %v", np, err)
		}
		if s := fmt.Sprintf("checksum %.12e", got); s != wantStr || math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("%d ranks: %s (%x), serial %s (%x)", np, s, math.Float64bits(got), wantStr, math.Float64bits(want))
		}
	}
	if want == 0 || math.IsNaN(want) {
		t.Errorf("degenerate checksum %v", want)
	}
}

// An uneven decomposition (a 5x5 grid on 2, 3, 4 and 6 ranks) agrees too.
func TestHeat2dUneven(t *testing.T) {
	want := Serial(5, 7)
	for _, np := range []int{2, 3, 4, 6} {
		var got float64
		err := mpi.Run(np, func(world *mpi.Comm) error {
			s, err := Solve(world, 5, 7)
			if world.Rank() == 0 {
				got = s
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("%d ranks: %v, serial %v", np, got, want)
		}
	}
}
