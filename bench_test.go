package mpi_test

import (
	"fmt"
	"testing"

	"github.com/mpigo/mpi"
)

// roundTrips runs b.N round trips of size bytes between two goroutine ranks
// through the typed layer ([]byte) or the raw layer.
func pingPong(b *testing.B, size int, raw bool) {
	b.ReportAllocs()
	b.SetBytes(int64(2 * size))
	err := mpi.Run(2, func(c *mpi.Comm) error {
		buf := make([]byte, size)
		peer := 1 - c.Rank()
		if err := mpi.Barrier(c); err != nil {
			return err
		}
		if c.Rank() == 0 {
			b.ResetTimer()
		}
		for i := 0; i < b.N; i++ {
			if c.Rank() == 0 {
				if err := send(c, buf, peer, raw); err != nil {
					return err
				}
				if err := recv(c, buf, peer, raw); err != nil {
					return err
				}
			} else {
				if err := recv(c, buf, peer, raw); err != nil {
					return err
				}
				if err := send(c, buf, peer, raw); err != nil {
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

func send(c *mpi.Comm, buf []byte, peer int, raw bool) error {
	if raw {
		return c.Send(buf, len(buf), mpi.Byte, peer, 1)
	}
	return mpi.Send(c, buf, peer, 1)
}

func recv(c *mpi.Comm, buf []byte, peer int, raw bool) error {
	if raw {
		_, err := c.Recv(buf, len(buf), mpi.Byte, peer, 1)
		return err
	}
	_, err := mpi.RecvInto(c, buf, peer, 1)
	return err
}

func BenchmarkPingPong(b *testing.B) {
	for _, size := range []int{8, 4096, 1 << 20, 4 << 20} {
		for _, api := range []string{"typed", "raw"} {
			b.Run(fmt.Sprintf("%s/%d", api, size), func(b *testing.B) { pingPong(b, size, api == "raw") })
		}
	}
}

// BenchmarkPingPongFloat64 measures the typed path with []float64 against
// the raw byte path: MPI.NET's abstraction penalty.
func BenchmarkPingPongFloat64(b *testing.B) {
	for _, n := range []int{1, 1024, 131072} {
		b.Run(fmt.Sprintf("typed/%d", n*8), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(16 * n))
			mpi.Run(2, func(c *mpi.Comm) error { return roundTrips(b, c, make([]float64, n)) })
		})
	}
}

// BenchmarkScalar sends a float64 value (not a slice) each way.
func BenchmarkScalar(b *testing.B) {
	b.ReportAllocs()
	mpi.Run(2, func(c *mpi.Comm) error {
		peer := 1 - c.Rank()
		mpi.Barrier(c)
		if c.Rank() == 0 {
			b.ResetTimer()
		}
		x := 1.0
		for i := 0; i < b.N; i++ {
			if c.Rank() == 0 {
				mpi.Send(c, x, peer, 1)
				x, _, _ = mpi.Recv[float64](c, peer, 1)
			} else {
				y, _, _ := mpi.Recv[float64](c, peer, 1)
				mpi.Send(c, y+1, peer, 1)
			}
		}
		return nil
	})
}

func BenchmarkAllreduce(b *testing.B) {
	for _, n := range []int{2, 4} {
		for _, size := range []int{8, 1 << 20} {
			b.Run(fmt.Sprintf("%dranks/%d", n, size), func(b *testing.B) {
				b.ReportAllocs()
				mpi.Run(n, func(c *mpi.Comm) error {
					v := make([]float64, size/8)
					out := make([]float64, size/8)
					mpi.Barrier(c)
					if c.Rank() == 0 {
						b.ResetTimer()
					}
					for i := 0; i < b.N; i++ {
						if err := mpi.AllreduceSliceInto(c, v, out, mpi.Sum[float64]()); err != nil {
							return err
						}
					}
					return nil
				})
			})
		}
	}
}

// BenchmarkPingPongShm is the 8-byte ping-pong over the shared-memory
// transport between goroutine ranks: with GOMAXPROCS=1 (-cpu 1) it
// measures the software path alone, without cache lines crossing cores.
func BenchmarkPingPongShm(b *testing.B) {
	cfg := mpi.DefaultConfig()
	cfg.Transport = "shm"
	b.ReportAllocs()
	mpi.RunConfig(2, cfg, func(c *mpi.Comm) error { return roundTrips(b, c, make([]byte, 8)) })
}

// roundTrips runs b.N round trips of v between ranks 0 and 1 of c, timed on
// rank 0.
func roundTrips[E any](b *testing.B, c *mpi.Comm, v []E) error {
	peer := 1 - c.Rank()
	mpi.Barrier(c)
	if c.Rank() == 0 {
		b.ResetTimer()
	}
	for i := 0; i < b.N; i++ {
		if c.Rank() == 0 {
			mpi.Send(c, v, peer, 1)
			mpi.RecvInto(c, v, peer, 1)
		} else {
			mpi.RecvInto(c, v, peer, 1)
			mpi.Send(c, v, peer, 1)
		}
	}
	return nil
}

// BenchmarkMessageRate is `mpigo bench bw` at 8 bytes: rank 0 sends
// windows of 64 non-blocking 8-byte messages to rank 1, which posts one
// receive per message into a buffer of its own and acknowledges each
// window. One op is one message; allocs/op is the allocation per message.
func BenchmarkMessageRate(b *testing.B) {
	for _, tr := range []string{"inproc", "shm"} {
		b.Run(tr, func(b *testing.B) {
			cfg := mpi.DefaultConfig()
			cfg.Transport = tr
			b.ReportAllocs()
			const window = 64
			err := mpi.RunConfig(2, cfg, func(c *mpi.Comm) error {
				bufs := make([][]float64, window)
				for i := range bufs {
					bufs[i] = make([]float64, 1)
				}
				ack := make([]byte, 4)
				reqs := make([]mpi.Waiter, 0, window)
				if err := mpi.Barrier(c); err != nil {
					return err
				}
				if c.Rank() == 0 {
					b.ResetTimer()
				}
				for n := 0; n < b.N; n += window {
					reqs = reqs[:0]
					for w := 0; w < window; w++ {
						var r mpi.Waiter
						var err error
						if c.Rank() == 0 {
							r, err = mpi.Isend(c, bufs[0], 1, 2)
						} else {
							r, err = mpi.IrecvInto(c, bufs[w], 0, 2)
						}
						if err != nil {
							return err
						}
						reqs = append(reqs, r)
					}
					if err := mpi.WaitAll(reqs...); err != nil {
						return err
					}
					if c.Rank() == 0 {
						if _, err := c.Recv(ack, len(ack), mpi.Byte, 1, 3); err != nil {
							return err
						}
					} else if err := c.Send(ack, len(ack), mpi.Byte, 0, 3); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}
