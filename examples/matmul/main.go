// Matmul multiplies two n×n matrices, C = A·B, master-worker style (the
// program PMPI ran against MPICH): rank 0 broadcasts B, then hands out the
// rows of A one at a time, each tagged with its row index; a worker
// returns the row of C under the same tag and gets the next row, or the
// stop tag when none is left. Fast workers get more rows than slow ones.
//
//	go run ./cmd/mpigo run -n 4 ./examples/matmul
//	MPIGO_NP=5 go run ./examples/matmul -n 300
package main

import (
	"flag"
	"fmt"

	"github.com/mpigo/mpi"
)

func main() {
	n := flag.Int("n", 200, "matrix size")
	flag.Parse()
	mpi.Main(func(world *mpi.Comm) error {
		var a, b []float64
		if world.Rank() == 0 {
			a, b = Matrix(*n, 1), Matrix(*n, 2)
		}
		c, err := Multiply(world, *n, a, b)
		if err != nil {
			return err
		}
		if world.Rank() == 0 {
			trace := 0.0
			for i := range *n {
				trace += c[i*(*n)+i]
			}
			ok := "matches"
			if !Equal(c, Serial(*n, a, b)) {
				ok = "DIFFERS FROM"
			}
			fmt.Printf("matmul: %dx%d on %d ranks, trace %.6e, %s the serial product\n", *n, *n, world.Size(), trace, ok)
		}
		return nil
	})
}

// StopTag tells a worker that no rows are left; rows use tags 0..n-1.
const StopTag = mpi.TagUB

// Matrix returns a deterministic n×n test matrix, row-major.
func Matrix(n, seed int) []float64 {
	m := make([]float64, n*n)
	for i := range m {
		m[i] = float64((i*seed*7+seed)%23) - 11
	}
	return m
}

// Row computes row a (of length n) times b.
func Row(a, b []float64, n int) []float64 {
	c := make([]float64, n)
	for k, x := range a {
		for j := range n {
			c[j] += float64(x * b[k*n+j]) // the conversion forbids a fused multiply-add
		}
	}
	return c
}

// Serial returns a·b.
func Serial(n int, a, b []float64) []float64 {
	c := make([]float64, 0, n*n)
	for i := range n {
		c = append(c, Row(a[i*n:(i+1)*n], b, n)...)
	}
	return c
}

// Equal reports whether two matrices are identical.
func Equal(x, y []float64) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

// Multiply returns a·b at rank 0 (nil elsewhere); a and b are read at
// rank 0 only.
func Multiply(world *mpi.Comm, n int, a, b []float64) ([]float64, error) {
	b, err := mpi.Bcast(world, b, 0)
	if err != nil {
		return nil, err
	}
	if world.Rank() != 0 {
		return nil, worker(world, n, b)
	}
	if world.Size() == 1 {
		return Serial(n, a, b), nil
	}
	c := make([]float64, n*n)
	next, busy := 0, 0
	// handOut gives worker w the next row, or the stop tag.
	handOut := func(w int) error {
		if next == n {
			return mpi.Send(world, []float64{}, w, StopTag)
		}
		busy++
		next++
		return mpi.Send(world, a[(next-1)*n:next*n], w, next-1)
	}
	for w := 1; w < world.Size(); w++ {
		if err := handOut(w); err != nil {
			return nil, err
		}
	}
	for busy > 0 {
		row, st, err := mpi.Recv[[]float64](world, mpi.AnySource, mpi.AnyTag)
		if err != nil {
			return nil, err
		}
		busy--
		if st.Tag < 0 || st.Tag >= n || len(row) != n {
			return nil, fmt.Errorf("worker %d returned %d values for row %d", st.Source, len(row), st.Tag)
		}
		copy(c[st.Tag*n:], row)
		if err := handOut(st.Source); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// worker multiplies the rows it is given until it gets the stop tag.
func worker(world *mpi.Comm, n int, b []float64) error {
	for {
		row, st, err := mpi.Recv[[]float64](world, 0, mpi.AnyTag)
		if err != nil {
			return err
		}
		if st.Tag == StopTag {
			return nil
		}
		if err := mpi.Send(world, Row(row, b, n), 0, st.Tag); err != nil {
			return err
		}
	}
}
