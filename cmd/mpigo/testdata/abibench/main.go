// Command abibench is the Go half of the ABI layer's cost measurement
// (testdata/abi/bench.c is the C half): MPI_Comm_rank's and an 8-byte ping-pong's cost
// through mpigo's low-level API. Run both under mpigo run -n 2.
package main

import (
	"fmt"

	"github.com/mpigo/mpi"
)

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
		buf := make([]byte, 8)
		for round := range 2 {
			if err := w.Barrier(); err != nil {
				return err
			}
			t = mpi.Wtime()
			for range iters {
				switch w.Rank() {
				case 0:
					if err := w.Send(buf, 8, mpi.Byte, 1, 0); err != nil {
						return err
					}
					if _, err := w.Recv(buf, 8, mpi.Byte, 1, 0); err != nil {
						return err
					}
				case 1:
					if _, err := w.Recv(buf, 8, mpi.Byte, 0, 0); err != nil {
						return err
					}
					if err := w.Send(buf, 8, mpi.Byte, 0, 0); err != nil {
						return err
					}
				}
			}
			t = mpi.Wtime() - t
			if w.Rank() == 0 && round == 1 {
				fmt.Printf("Go 8-byte ping-pong: %.3f us one-way\n", t/iters/2*1e6)
			}
		}
		return nil
	})
}
