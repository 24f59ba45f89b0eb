package mpi_test

import (
	"testing"

	"github.com/mpigo/mpi"
)

// BenchmarkIsendPingPong is the 8-byte ping-pong through Isend and Irecv
// with Wait: the non-blocking eager path, which a cancellable send takes
// (docs/mapping.md, Cancel).
func BenchmarkIsendPingPong(b *testing.B) {
	b.ReportAllocs()
	err := mpi.Run(2, func(c *mpi.Comm) error {
		buf := make([]byte, 8)
		peer := 1 - c.Rank()
		if err := mpi.Barrier(c); err != nil {
			return err
		}
		if c.Rank() == 0 {
			b.ResetTimer()
		}
		step := func(send bool) error {
			var r *mpi.Request
			var err error
			if send {
				r, err = c.Isend(buf, len(buf), mpi.Byte, peer, 1)
			} else {
				r, err = c.Irecv(buf, len(buf), mpi.Byte, peer, 1)
			}
			if err != nil {
				return err
			}
			_, err = r.Wait()
			return err
		}
		for i := 0; i < b.N; i++ {
			first := c.Rank() == 0
			if err := step(first); err != nil {
				return err
			}
			if err := step(!first); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
