package mpi_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/mpigo/mpi"
)

// Config.Spin: goroutine ranks that watch for their answers before they
// park still get every message and result right, over inproc and tcp,
// whether the ranks fit in GOMAXPROCS (they spin) or not (they park at
// once).
func TestSpin(t *testing.T) {
	for _, tr := range []string{"inproc", "tcp"} {
		for _, n := range []int{2, 5} {
			t.Run(fmt.Sprintf("%s/%d", tr, n), func(t *testing.T) {
				cfg := mpi.DefaultConfig()
				cfg.Transport = tr
				cfg.Spin = 20 * time.Microsecond
				err := mpi.RunConfig(n, cfg, func(c *mpi.Comm) error {
					v, out := []float64{float64(c.Rank())}, []float64{0}
					want := float64(n * (n - 1) / 2)
					peer := c.Rank() ^ 1
					buf := make([]byte, 8)
					for i := range 300 {
						if err := mpi.AllreduceSliceInto(c, v, out, mpi.Sum[float64]()); err != nil {
							return err
						}
						if out[0] != want {
							return fmt.Errorf("allreduce %d: %v, want %v", i, out[0], want)
						}
						if peer >= n {
							continue
						}
						if c.Rank()&1 == 0 {
							buf[0] = byte(i)
							if err := mpi.Send(c, buf, peer, i); err != nil {
								return err
							}
							if _, err := mpi.RecvInto(c, buf, peer, i); err != nil {
								return err
							}
							if buf[0] != byte(i+1) {
								return fmt.Errorf("round trip %d: got %d back", i, buf[0])
							}
						} else {
							if _, err := mpi.RecvInto(c, buf, peer, i); err != nil {
								return err
							}
							buf[0]++
							if err := mpi.Send(c, buf, peer, i); err != nil {
								return err
							}
						}
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
