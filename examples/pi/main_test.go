package main

import (
	"math"
	"testing"

	"github.com/mpigo/mpi"
)

func TestPi(t *testing.T) {
	for _, n := range []int{1, 2, 3, 8} {
		err := mpi.Run(n, func(world *mpi.Comm) error {
			pi, err := Pi(world, 100000)
			if err != nil {
				return err
			}
			if math.Abs(pi-math.Pi) > 1e-8 {
				t.Errorf("%d ranks: rank %d got %v", n, world.Rank(), pi)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
