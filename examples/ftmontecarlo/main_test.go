package main

import (
	"errors"
	"testing"

	"github.com/mpigo/mpi"
)

// The pool gives the serial estimate, bit for bit, whether or not workers
// die on the way (goroutine ranks whose function fails are failed ranks
// under fault tolerance).
func TestFtMonteCarloSurvives(t *testing.T) {
	const batches, points = 24, 2000
	var want int64
	for b := 0; b < batches; b++ {
		want += Batch(b, points)
	}
	wantPi := 4 * float64(want) / float64(batches*points)
	errDie := errors.New("worker died")
	cases := []struct {
		name string
		np   int
		die  map[int]int // worker -> batches it does before it dies (every worker gets one at the start)
	}{
		{"none", 4, nil},
		{"one", 4, map[int]int{2: 1}},
		{"two", 5, map[int]int{1: 1, 3: 1}},
		{"all", 3, map[int]int{1: 1, 2: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mpi.DefaultConfig()
			cfg.FT = true
			var got float64
			err := mpi.RunConfig(tc.np, cfg, func(world *mpi.Comm) error {
				pi, err := Estimate(world, batches, points, func(rank, done int) error {
					if n, ok := tc.die[rank]; ok && done == n {
						return errDie
					}
					return nil
				})
				if world.Rank() == 0 {
					got = pi
				}
				return err
			})
			var rankErrs []error
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				rankErrs = j.Unwrap()
			} else if err != nil {
				rankErrs = []error{err}
			}
			if len(rankErrs) != len(tc.die) {
				t.Fatalf("job error %v, want the failures of %d workers", err, len(tc.die))
			}
			for _, e := range rankErrs {
				if !errors.Is(e, errDie) {
					t.Fatalf("unexpected error: %v", e)
				}
			}
			if got != wantPi {
				t.Fatalf("estimate %v, want %v", got, wantPi)
			}
		})
	}
}
