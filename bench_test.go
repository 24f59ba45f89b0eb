package mpi_test

// The root package's benchmarks, all in this file: point-to-point round
// trips through the typed and raw layers, non-blocking and self sends,
// the cost of type signatures, and derived datatypes.

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
		b.Run(tr, func(b *testing.B) { messageRate(b, tr, false) })
	}
}

// BenchmarkMessageRateSet is BenchmarkMessageRate with each window posted
// in a Requests set (`mpigo bench bw -api set`).
func BenchmarkMessageRateSet(b *testing.B) {
	for _, tr := range []string{"inproc", "shm"} {
		b.Run(tr, func(b *testing.B) { messageRate(b, tr, true) })
	}
}

// messageRate runs the message-rate test over transport tr, posting the
// windows in a Requests set if set.
func messageRate(b *testing.B, tr string, set bool) {
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
		var rs mpi.Requests
		post := func(w int) error {
			var r mpi.Waiter
			var err error
			switch {
			case set && c.Rank() == 0:
				return mpi.PostIsend(&rs, c, bufs[0], 1, 2)
			case set:
				return mpi.PostIrecvInto(&rs, c, bufs[w], 0, 2)
			case c.Rank() == 0:
				r, err = mpi.Isend(c, bufs[0], 1, 2)
			default:
				r, err = mpi.IrecvInto(c, bufs[w], 0, 2)
			}
			reqs = append(reqs, r)
			return err
		}
		if err := mpi.Barrier(c); err != nil {
			return err
		}
		if c.Rank() == 0 {
			b.ResetTimer()
		}
		for n := 0; n < b.N; n += window {
			reqs = reqs[:0]
			for w := 0; w < window; w++ {
				if err := post(w); err != nil {
					return err
				}
			}
			var err error
			if set {
				err = rs.WaitAll()
			} else {
				err = mpi.WaitAll(reqs...)
			}
			if err != nil {
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
}

// pingPongT runs b.N round trips of a []E of n elements between two
// goroutine ranks through the typed layer (Send, RecvInto).
func pingPongT[E any](b *testing.B, n int) {
	b.ReportAllocs()
	err := mpi.Run(2, func(c *mpi.Comm) error {
		v := make([]E, n)
		b.SetBytes(int64(2 * len(mpi.AsBytes(v))))
		peer := 1 - c.Rank()
		if err := mpi.Barrier(c); err != nil {
			return err
		}
		if c.Rank() == 0 {
			b.ResetTimer()
		}
		for i := 0; i < b.N; i++ {
			if c.Rank() == 0 {
				if err := mpi.Send(c, v, peer, 1); err != nil {
					return err
				}
				if _, err := mpi.RecvInto(c, v, peer, 1); err != nil {
					return err
				}
			} else {
				if _, err := mpi.RecvInto(c, v, peer, 1); err != nil {
					return err
				}
				if err := mpi.Send(c, v, peer, 1); err != nil {
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

// pingPongDT runs b.N round trips of count elements of dt in buf. With
// flat, rank 1 receives and sends back the message as contiguous bytes.
func pingPongDT(b *testing.B, buf []byte, count int, dt *mpi.Datatype, flat bool) {
	b.ReportAllocs()
	b.SetBytes(int64(2 * count * dt.Size()))
	err := mpi.Run(2, func(c *mpi.Comm) error {
		mine := append([]byte(nil), buf...)
		if flat && c.Rank() == 1 {
			mine, count, dt = make([]byte, count*dt.Size()), count*dt.Size(), mpi.Byte
		}
		peer := 1 - c.Rank()
		if err := mpi.Barrier(c); err != nil {
			return err
		}
		if c.Rank() == 0 {
			b.ResetTimer()
		}
		for i := 0; i < b.N; i++ {
			if c.Rank() == 0 {
				if err := c.Send(mine, count, dt, peer, 1); err != nil {
					return err
				}
				if _, err := c.Recv(mine, count, dt, peer, 1); err != nil {
					return err
				}
			} else {
				if _, err := c.Recv(mine, count, dt, peer, 1); err != nil {
					return err
				}
				if err := c.Send(mine, count, dt, peer, 1); err != nil {
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

type pair32 struct {
	A float32
	B int32
}

type rec32 struct {
	X, Y, Z float64
	N       int32
	F       float32
}

// BenchmarkAPIs compares, back to back, the same ping-pong through the
// low-level byte path (raw), the typed layer with []float64 (float64),
// the typed layer with a []struct of plain fields of the same byte size
// (struct), the low-level layer with a derived datatype that takes every
// other 8-byte word of a buffer twice as large (vector), and that datatype
// on rank 0 with contiguous bytes on rank 1 (vector-contiguous): the
// abstraction penalties of issue 6.
func BenchmarkAPIs(b *testing.B) {
	for _, size := range []int{8, 1 << 20} {
		b.Run(fmt.Sprintf("raw/%d", size), func(b *testing.B) { pingPong(b, size, true) })
		b.Run(fmt.Sprintf("float64/%d", size), func(b *testing.B) { pingPongT[float64](b, size/8) })
		if size == 8 {
			b.Run(fmt.Sprintf("struct/%d", size), func(b *testing.B) { pingPongT[pair32](b, 1) })
		} else {
			b.Run(fmt.Sprintf("struct/%d", size), func(b *testing.B) { pingPongT[rec32](b, size/32) })
		}
		vec, _ := mpi.NewVector(size/8, 1, 2, mpi.Float64)
		vec.Commit()
		b.Run(fmt.Sprintf("vector/%d", size), func(b *testing.B) { pingPongDT(b, make([]byte, 2*size), 1, vec, false) })
		b.Run(fmt.Sprintf("vector-contiguous/%d", size), func(b *testing.B) { pingPongDT(b, make([]byte, 2*size), 1, vec, true) })
	}
}

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

// The cost of the type-signature check of the low-level collectives
// (coll_bufsig.go): 8-byte Allreduce and Bcast on two goroutine ranks, the
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
				return mpi.AllreduceSliceInto(c, v[:1], out[:1], mpi.Sum[float64]())
			}},
			{"Allreduce8", func(c *mpi.Comm, v, out []float64) error {
				r, err := mpi.Allreduce(c, v[0], mpi.Sum[float64]())
				out[0] = r
				return err
			}},
			{"BcastInto8", func(c *mpi.Comm, v, out []float64) error { return mpi.BcastInto(c, v[:1], 0) }},
			{"Bcast8", func(c *mpi.Comm, v, out []float64) error {
				r, err := mpi.Bcast(c, v[0], 0)
				out[0] = r
				return err
			}},
			{"Gather8", func(c *mpi.Comm, v, out []float64) error {
				_, err := mpi.Gather(c, v[0], 0)
				return err
			}},
			{"Scatter8", func(c *mpi.Comm, v, out []float64) error {
				_, err := mpi.Scatter(c, v[:2], 0)
				return err
			}},
			// The forms mpigo bench allgather, alltoall, reduce_scatter
			// and scan measure, 8 bytes to or from each rank.
			{"AllgatherInto8", func(c *mpi.Comm, v, out []float64) error { return mpi.AllgatherInto(c, v[:1], out) }},
			{"AlltoallInto8", func(c *mpi.Comm, v, out []float64) error { return mpi.AlltoallInto(c, v, out) }},
			{"ReduceScatterBlockInto8", func(c *mpi.Comm, v, out []float64) error {
				return mpi.ReduceScatterBlockInto(c, v, out[:1], mpi.Sum[float64]())
			}},
			{"ScanSliceInto8", func(c *mpi.Comm, v, out []float64) error {
				return mpi.ScanSliceInto(c, v[:1], out[:1], mpi.Sum[float64]())
			}},
		}
		for _, op := range ops {
			b.Run(fmt.Sprintf("%s/%s", tr, op.name), func(b *testing.B) {
				b.ReportAllocs()
				mpi.RunConfig(2, cfg, func(c *mpi.Comm) error {
					v, out := make([]float64, 2), make([]float64, 2) // an element per rank
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

// BenchmarkBcast8 is the 8-byte Bcast of a float64 from rank 0, on 2 and
// 4 goroutine ranks over inproc and over the shared-memory transport,
// timed on the root: the call whose cost a check of the ranks' roots
// must not raise (issue 40).
func BenchmarkBcast8(b *testing.B) {
	for _, tr := range []string{"inproc", "shm"} {
		cfg := mpi.DefaultConfig()
		cfg.Transport = tr
		if tr == "inproc" {
			cfg.Transport = ""
		}
		for _, n := range []int{2, 4} {
			b.Run(fmt.Sprintf("%s/%dranks", tr, n), func(b *testing.B) {
				b.ReportAllocs()
				mpi.RunConfig(n, cfg, func(c *mpi.Comm) error {
					v := float64(c.Rank())
					mpi.Barrier(c)
					if c.Rank() == 0 {
						b.ResetTimer()
					}
					for i := 0; i < b.N; i++ {
						r, err := mpi.Bcast(c, v, 0)
						if err != nil {
							return err
						}
						v = r
					}
					return nil
				})
			})
		}
	}
}

// BenchmarkAllreduce8Entry is the 8-byte Allreduce of a float64 on 2
// goroutine ranks: the call whose cost the check for concurrent
// collectives on one communicator must not raise (issue 40).
func BenchmarkAllreduce8Entry(b *testing.B) {
	b.ReportAllocs()
	mpi.Run(2, func(c *mpi.Comm) error {
		v := float64(c.Rank())
		mpi.Barrier(c)
		if c.Rank() == 0 {
			b.ResetTimer()
		}
		for i := 0; i < b.N; i++ {
			r, err := mpi.Allreduce(c, v, mpi.Sum[float64]())
			if err != nil {
				return err
			}
			v = r - v
		}
		return nil
	})
}
