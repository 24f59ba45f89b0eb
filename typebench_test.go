package mpi_test

import (
	"fmt"
	"testing"

	"github.com/mpigo/mpi"
)

// BenchmarkTypedColl measures the small typed collectives whose messages
// carry a type signature, over goroutine ranks on inproc and on the
// shared-memory transport. With -cpu 1 it measures the software path.
func BenchmarkTypedColl(b *testing.B) {
	for _, tr := range []string{"inproc", "shm"} {
		cfg := mpi.DefaultConfig()
		if tr == "shm" {
			cfg.Transport = "shm"
		}
		ops := []struct {
			name string
			f    func(c *mpi.Comm, v, out []float64) error
		}{
			{"AllreduceSliceInto8", func(c *mpi.Comm, v, out []float64) error {
				return mpi.AllreduceSliceInto(c, v, out, mpi.Sum[float64]())
			}},
			{"Allreduce8", func(c *mpi.Comm, v, out []float64) error {
				r, err := mpi.Allreduce(c, v[0], mpi.Sum[float64]())
				out[0] = r
				return err
			}},
			{"BcastInto8", func(c *mpi.Comm, v, out []float64) error { return mpi.BcastInto(c, v, 0) }},
			{"Bcast8", func(c *mpi.Comm, v, out []float64) error {
				r, err := mpi.Bcast(c, v[0], 0)
				out[0] = r
				return err
			}},
			{"Gather8", func(c *mpi.Comm, v, out []float64) error {
				_, err := mpi.Gather(c, v[0], 0)
				return err
			}},
		}
		for _, op := range ops {
			b.Run(fmt.Sprintf("%s/%s", tr, op.name), func(b *testing.B) {
				b.ReportAllocs()
				mpi.RunConfig(2, cfg, func(c *mpi.Comm) error {
					v, out := make([]float64, 1), make([]float64, 1)
					mpi.Barrier(c)
					if c.Rank() == 0 {
						b.ResetTimer()
					}
					for i := 0; i < b.N; i++ {
						if err := op.f(c, v, out); err != nil {
							return err
						}
					}
					return nil
				})
			})
		}
	}
}
