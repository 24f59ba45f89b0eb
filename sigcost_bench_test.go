package mpi_test

import (
	"testing"

	"github.com/mpigo/mpi"
)

// The cost of the type-signature check of the low-level collectives
// (lowsig.go): 8-byte Allreduce and Bcast on two goroutine ranks, the
// case where a per-call cost shows most.
func BenchmarkLowColl8(b *testing.B) {
	cases := []struct {
		name string
		call func(c *mpi.Comm, in, out []byte) error
	}{
		{"Allreduce", func(c *mpi.Comm, in, out []byte) error {
			return c.Allreduce(in, out, 1, mpi.Float64, mpi.OpSum)
		}},
		{"Bcast", func(c *mpi.Comm, in, out []byte) error { return c.Bcast(in, 1, mpi.Float64, 0) }},
		{"AllreduceSliceInto", func(c *mpi.Comm, in, out []byte) error {
			return mpi.AllreduceSliceInto(c, []float64{1}, []float64{0}, mpi.Sum[float64]())
		}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			mpi.Run(2, func(c *mpi.Comm) error {
				in, out := make([]byte, 8), make([]byte, 8)
				mpi.Barrier(c)
				if c.Rank() == 0 {
					b.ResetTimer()
				}
				for i := 0; i < b.N; i++ {
					if err := tc.call(c, in, out); err != nil {
						return err
					}
				}
				return nil
			})
		})
	}
}
