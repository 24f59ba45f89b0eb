package main

import (
	"testing"

	"github.com/mpigo/mpi"
)

func TestRing(t *testing.T) {
	for _, n := range []int{1, 2, 5} {
		err := mpi.Run(n, func(world *mpi.Comm) error {
			tok, err := Ring(world, 7)
			if err != nil {
				return err
			}
			if world.Rank() == 0 && tok != 7*n {
				t.Errorf("%d ranks: token %d, want %d", n, tok, 7*n)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
