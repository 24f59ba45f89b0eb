package mpi_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/mpigo/mpi"
)

// TestConcurrentJobs runs a job over every transport of the matrix at
// once, in one process: each job's waits poll only its own transports and
// keep their own tunables (internal/progress), so every job must compute
// its own results exactly, whatever the others do meanwhile.
func TestConcurrentJobs(t *testing.T) {
	const n, rounds = 3, 200
	cases := transports()
	errs := make([]error, len(cases))
	var wg sync.WaitGroup
	for i, tc := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A job-specific offset: a message crossing jobs would show.
			base := 1000 * (i + 1)
			errs[i] = mpi.RunConfig(n, tc.cfg, func(c *mpi.Comm) error {
				me, next, prev := c.Rank(), (c.Rank()+1)%n, (c.Rank()+n-1)%n
				for k := range rounds {
					v := base + k*n + me
					var got int
					if me%2 == 0 {
						if err := mpi.Send(c, v, next, k); err != nil {
							return err
						}
						g, _, err := mpi.Recv[int](c, prev, k)
						if err != nil {
							return err
						}
						got = g
					} else {
						g, _, err := mpi.Recv[int](c, prev, k)
						if err != nil {
							return err
						}
						got = g
						if err := mpi.Send(c, v, next, k); err != nil {
							return err
						}
					}
					if want := base + k*n + prev; got != want {
						return fmt.Errorf("rank %d round %d: got %d from rank %d, want %d", me, k, got, prev, want)
					}
					sum, err := mpi.Allreduce(c, v, mpi.Sum[int]())
					if err != nil {
						return err
					}
					if want := n*(base+k*n) + n*(n-1)/2; sum != want {
						return fmt.Errorf("rank %d round %d: sum %d, want %d", me, k, sum, want)
					}
				}
				return nil
			})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("%s: %v", cases[i].name, err)
		}
	}
}
