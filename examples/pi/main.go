// Pi estimates π by integrating 4/(1+x²) over [0,1] with the midpoint
// rule: every rank sums its share of the intervals and Allreduce adds the
// shares up. It is the classic first MPI program (cpi.c in MPICH).
//
//	go run ./examples/pi              one rank
//	MPIGO_NP=4 go run ./examples/pi   four goroutine ranks
package main

import (
	"flag"
	"fmt"
	"math"

	"github.com/mpigo/mpi"
)

func main() {
	n := flag.Int("intervals", 10_000_000, "number of intervals")
	flag.Parse()
	mpi.Main(func(world *mpi.Comm) error {
		pi, err := Pi(world, *n)
		if err != nil {
			return err
		}
		if world.Rank() == 0 {
			fmt.Printf("pi is approximately %.16f, error %.2e (%d ranks, %d intervals)\n",
				pi, math.Abs(pi-math.Pi), world.Size(), *n)
		}
		return nil
	})
}

// Pi returns the estimate of π from n intervals, on every rank.
func Pi(world *mpi.Comm, n int) (float64, error) {
	// Rank 0 decides n; everybody learns it.
	n, err := mpi.Bcast(world, n, 0)
	if err != nil {
		return 0, err
	}
	h := 1.0 / float64(n)
	sum := 0.0
	for i := world.Rank(); i < n; i += world.Size() {
		x := h * (float64(i) + 0.5)
		sum += 4 / (1 + x*x)
	}
	return mpi.Allreduce(world, sum*h, mpi.Sum[float64]())
}
