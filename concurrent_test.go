package mpi_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mpigo/mpi"
)

// TestConcurrentCollectivesOneComm: two goroutines of rank 0 call a blocking
// Allreduce on one communicator at once. The second to come is refused
// at once (ErrOther, naming the call and the rule); the first completes
// with rank 1's one call, with the right sum. Before, over goroutine
// ranks both waited in the meeting for ever (the hang report), and over
// processes both took tags and waited for two calls of rank 1's. A
// non-blocking collective in flight under a blocking one is legitimate
// and still works.
func TestConcurrentCollectivesOneComm(t *testing.T) {
	for _, tc := range transports() {
		switch tc.name {
		case "inproc", "inproc-spin", "shm", "tcp":
		default:
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			refused := make(chan error, 1)
			done := make(chan error, 1)
			go func() {
				done <- mpi.RunConfig(2, tc.cfg, func(c *mpi.Comm) error {
					if c.Rank() == 1 {
						// Rank 1 calls once, after rank 0's second
						// goroutine was refused: the first is in the
						// call, waiting for rank 1, all along.
						if err := <-refused; !errors.Is(err, mpi.ErrOther) || !strings.Contains(err.Error(), "Allreduce") ||
							!strings.Contains(err.Error(), "one goroutine at a time") {
							return fmt.Errorf("rank 0's second Allreduce: got %v, want ErrOther naming Allreduce and the rule", err)
						}
						if r, err := mpi.Allreduce(c, 10.0, mpi.Sum[float64]()); err != nil || r != 11 {
							return fmt.Errorf("rank 1: Allreduce gave %v, %v, want 11", r, err)
						}
					} else {
						type result struct {
							r   float64
							err error
						}
						results := make(chan result, 2)
						for range 2 {
							go func() {
								r, err := mpi.Allreduce(c, 1.0, mpi.Sum[float64]())
								results <- result{r, err}
							}()
						}
						first := <-results
						refused <- first.err
						if first.err == nil {
							return fmt.Errorf("rank 0: an Allreduce completed (%v) while rank 1 had not called", first.r)
						}
						if second := <-results; second.err != nil || second.r != 11 {
							return fmt.Errorf("rank 0: the Allreduce let in gave %v, %v, want 11", second.r, second.err)
						}
					}
					// A non-blocking collective in flight under a blocking one.
					f, err := mpi.Iallreduce(c, 1.0, mpi.Sum[float64]())
					if err != nil {
						return err
					}
					r2, err := mpi.Allreduce(c, 2.0, mpi.Sum[float64]())
					if err != nil || r2 != 4 {
						return fmt.Errorf("rank %d: Allreduce under an Iallreduce gave %v, %v", c.Rank(), r2, err)
					}
					if r1, err := f.Wait(); err != nil || r1 != 2 {
						return fmt.Errorf("rank %d: Iallreduce gave %v, %v", c.Rank(), r1, err)
					}
					return nil
				})
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(30 * time.Second):
				// Before the fix: both goroutines of rank 0 were let in,
				// and waited for a second call of rank 1's.
				t.Fatal("the job has not ended after 30s")
			}
		})
	}
}
