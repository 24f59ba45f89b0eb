package main

import (
	"context"
	"errors"
	"testing"

	"github.com/mpigo/mpi"
)

// The sweep over goroutine ranks gives the serial answer, in order, with
// or without a worker that dies (fault tolerance on).
func TestSweep(t *testing.T) {
	const n = 12
	var want Summary
	want.InOrder = true
	for p := range Grid(n) {
		o, _ := Simulate(context.Background(), p)
		if o.Amplitude > want.Peak {
			want.Peak, want.Best = o.Amplitude, p
		}
		want.Checksum += o.Amplitude
		want.Results++
	}
	errDie := errors.New("worker died")
	for _, tc := range []struct {
		name string
		np   int
		die  int // the worker that dies at its third task, or -1
	}{{"plain", 5, -1}, {"worker dies", 5, 2}, {"one worker", 2, -1}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mpi.DefaultConfig()
			cfg.FT = tc.die >= 0
			var got Summary
			err := mpi.RunConfig(tc.np, cfg, func(world *mpi.Comm) error {
				died := make(chan struct{})
				done := 0
				work := func(ctx context.Context, p Point) (Outcome, error) {
					if done++; done == 3 && world.Rank() == tc.die {
						close(died)
						<-ctx.Done() // stuck until the rank's failure ends it
					}
					return Simulate(ctx, p)
				}
				res := make(chan error, 1)
				go func() {
					s, err := Sweep(world, n, work, mpi.ExecutorOptions{Chunk: 4})
					if world.Rank() == 0 {
						got = s
					}
					res <- err
				}()
				select {
				case err := <-res:
					return err
				case <-died:
					return errDie
				}
			})
			if tc.die >= 0 {
				if err == nil || !errors.Is(err, errDie) {
					t.Fatalf("job error %v, want the worker's death", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("got %+v, want %+v", got, want)
			}
		})
	}
}
