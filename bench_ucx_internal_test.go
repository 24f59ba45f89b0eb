//go:build cgo && mpigo_ucx

package mpi

import "testing"

// BenchmarkPingPongUCX is the 8-byte ping-pong of the low-level calls
// (MPI_Send and MPI_Recv from C) between two goroutine ranks over UCX's
// shared memory: the software path of a message over the UCX transport,
// and its allocations (allocs/op counts both ranks' and one round trip).
func BenchmarkPingPongUCX(b *testing.B) {
	cfg := ucxConfig(b, "posix,cma,self")
	b.ReportAllocs()
	err := RunConfig(2, cfg, func(c *Comm) error {
		peer := 1 - c.Rank()
		buf := make([]byte, 8)
		if err := Barrier(c); err != nil {
			return err
		}
		if c.Rank() == 0 {
			b.ResetTimer()
		}
		for i := 0; i < b.N; i++ {
			if c.Rank() == 0 {
				if err := c.Send(buf, 8, Byte, peer, 1); err != nil {
					return err
				}
				if _, err := c.Recv(buf, 8, Byte, peer, 1); err != nil {
					return err
				}
			} else {
				if _, err := c.Recv(buf, 8, Byte, peer, 1); err != nil {
					return err
				}
				if err := c.Send(buf, 8, Byte, peer, 1); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
