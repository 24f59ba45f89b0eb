package mpi_test

import (
	"fmt"
	"testing"

	"github.com/mpigo/mpi"
)

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
