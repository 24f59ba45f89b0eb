package mpi

import "testing"

// BenchmarkCallSetup measures what the signature check adds to one
// collective call besides a compare per message: making the call
// (signature, pooled object) and ending it.
func BenchmarkCallSetup(b *testing.B) {
	Run(1, func(c *Comm) error {
		b.Run("low", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				cc := c.lowCall(lowSig(Float64, 1), true)
				_ = c.via(cc)
				_ = cc.done("Allreduce", nil)
			}
		})
		b.Run("typed", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				cc := sliceCall[float64](c, 1)
				_ = c.via(cc)
				_ = cc.done("Allreduce", nil)
			}
		})
		return nil
	})
}
