// Command abibench is the Go half of the ABI layer's cost measurement
// (testdata/abi/bench.c is the C half): MPI_Comm_rank's cost, an 8-byte and
// a 1 MiB ping-pong between ranks 0 and 1, and an 8-byte Allreduce over
// all ranks, through mpigo's low-level API. Run both under mpigo run -n 2.
package main

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/mpigo/mpi"
)

// pingpong times iters round trips of n bytes between ranks 0 and 1 and
// returns the seconds of the second of two rounds, as bench.c's does.
func pingpong(w *mpi.Comm, buf []byte, n, iters int) (float64, error) {
	var t float64
	for range 2 {
		if err := w.Barrier(); err != nil {
			return 0, err
		}
		t = mpi.Wtime()
		for range iters {
			switch w.Rank() {
			case 0:
				if err := w.Send(buf, n, mpi.Byte, 1, 0); err != nil {
					return 0, err
				}
				if _, err := w.Recv(buf, n, mpi.Byte, 1, 0); err != nil {
					return 0, err
				}
			case 1:
				if _, err := w.Recv(buf, n, mpi.Byte, 0, 0); err != nil {
					return 0, err
				}
				if err := w.Send(buf, n, mpi.Byte, 0, 0); err != nil {
					return 0, err
				}
			}
		}
		t = mpi.Wtime() - t
	}
	return t, nil
}

func main() {
	mpi.Main(func(w *mpi.Comm) error {
		const n, iters = 2000000, 100000
		t := mpi.Wtime()
		sum := 0
		for range n {
			sum += w.Rank()
		}
		t = mpi.Wtime() - t
		if w.Rank() == 0 {
			fmt.Printf("Go Rank: %.1f ns/call (%d)\n", t/n*1e9, sum)
		}
		if w.Size() > 1 {
			buf := make([]byte, 1<<20)
			t, err := pingpong(w, buf, 8, iters)
			if err != nil {
				return err
			}
			if w.Rank() == 0 {
				fmt.Printf("Go 8-byte ping-pong: %.3f us one-way\n", t/iters/2*1e6)
			}
			const big = 1000
			if t, err = pingpong(w, buf, 1<<20, big); err != nil {
				return err
			}
			if w.Rank() == 0 {
				fmt.Printf("Go 1 MiB ping-pong: %.0f MB/s\n", 2.0*big*(1<<20)/t/1e6)
			}
		}
		in, out := make([]byte, 8), make([]byte, 8)
		binary.NativeEndian.PutUint64(in, math.Float64bits(float64(w.Rank())))
		for range 2 {
			if err := w.Barrier(); err != nil {
				return err
			}
			t = mpi.Wtime()
			for range iters {
				if err := w.Allreduce(in, out, 1, mpi.Float64, mpi.OpSum); err != nil {
					return err
				}
			}
			t = mpi.Wtime() - t
		}
		if w.Rank() == 0 {
			fmt.Printf("Go 8-byte Allreduce: %.3f us (%g)\n", t/iters*1e6, math.Float64frombits(binary.NativeEndian.Uint64(out)))
		}
		return nil
	})
}
