package mpi_test

import (
	"testing"

	"github.com/mpigo/mpi"
)

// BenchmarkSelf measures the software path of one message with no
// goroutine switch: a rank sends 8 bytes to itself and receives them.
func BenchmarkSelf(b *testing.B) {
	b.ReportAllocs()
	mpi.Run(1, func(c *mpi.Comm) error {
		buf := make([]byte, 8)
		for i := 0; i < b.N; i++ {
			mpi.Send(c, buf, 0, 1)
			mpi.RecvInto(c, buf, 0, 1)
		}
		return nil
	})
}
