// Heat2d solves the 2-D heat equation on an n×n grid with Jacobi
// iterations, decomposed over a Cartesian grid of ranks: DimsCreate picks
// the process grid, CartCreate builds it, CartShift names the neighbours
// and one NeighborAlltoall per step exchanges the halo rows and columns.
// The wall above the grid is held at 1, the other walls at 0.
//
// At the end rank 0 gathers the blocks and prints a checksum, the sum of
// all cells in global order. Every cell is computed with the same
// arithmetic whatever the decomposition, so the checksum is identical,
// bit for bit, for any number of ranks.
//
//	go run ./cmd/mpigo run -n 4 ./examples/heat2d
//	MPIGO_NP=6 go run ./examples/heat2d -n 96 -steps 1000
package main

import (
	"flag"
	"fmt"

	"github.com/mpigo/mpi"
)

func main() {
	n := flag.Int("n", 120, "grid size (n×n cells)")
	steps := flag.Int("steps", 500, "Jacobi iterations")
	flag.Parse()
	mpi.Main(func(world *mpi.Comm) error {
		sum, err := Solve(world, *n, *steps)
		if err != nil {
			return err
		}
		if world.Rank() == 0 {
			fmt.Printf("heat2d: %dx%d grid, %d steps, %d ranks\n", *n, *n, *steps, world.Size())
			fmt.Printf("checksum %.12e\n", sum)
		}
		return nil
	})
}

// Initial is the temperature of cell (i, j) at the start.
func Initial(i, j int) float64 { return float64((7*i+13*j)%17) / 16 }

// Hot is the temperature of the wall above row 0; the other walls are 0.
const Hot = 1.0

// update is the Jacobi step of one cell: the same expression, in the same
// order, for every cell on every decomposition.
func update(up, down, left, right float64) float64 { return 0.25 * (((up + down) + left) + right) }

// Block returns the rows or columns [lo, hi) of n that part k of p owns.
func Block(n, p, k int) (lo, hi int) { return k * n / p, (k + 1) * n / p }

// Solve runs steps Jacobi iterations of the n×n grid over the ranks of
// world and returns the checksum at rank 0 (0 elsewhere).
func Solve(world *mpi.Comm, n, steps int) (float64, error) {
	dims, err := mpi.DimsCreate(world.Size(), []int{0, 0})
	if err != nil {
		return 0, err
	}
	grid, err := world.CartCreate(dims, []bool{false, false}, true)
	if err != nil {
		return 0, err
	}
	defer grid.Free()
	_, _, me, err := grid.CartGet()
	if err != nil {
		return 0, err
	}
	r0, r1 := Block(n, dims[0], me[0])
	c0, c1 := Block(n, dims[1], me[1])
	h, w := r1-r0, c1-c0

	// The local block with a halo of one cell: (h+2)×(w+2), row-major.
	stride := w + 2
	u := make([]float64, (h+2)*stride)
	next := make([]float64, len(u))
	for i := range h {
		for j := range w {
			u[(i+1)*stride+j+1] = Initial(r0+i, c0+j)
		}
	}
	// Walls: the halo cells on the grid's edge never change.
	if r0 == 0 {
		for j := range w {
			u[j+1], next[j+1] = Hot, Hot
		}
	}

	// Neighbours in the order of the neighbourhood collectives:
	// up, down (dimension 0), left, right (dimension 1).
	var nb [4]int
	if nb[0], nb[1], err = grid.CartShift(0, 1); err != nil {
		return 0, err
	}
	if nb[2], nb[3], err = grid.CartShift(1, 1); err != nil {
		return 0, err
	}
	send := make([][]float64, 4)
	send[0], send[1] = make([]float64, w), make([]float64, w)
	send[2], send[3] = make([]float64, h), make([]float64, h)

	for range steps {
		// Halo exchange: my first row goes up, my last row down, my
		// first column left, my last column right; what arrives from
		// above fills the top halo row, and so on.
		copy(send[0], u[stride+1:stride+1+w])
		copy(send[1], u[h*stride+1:h*stride+1+w])
		for i := range h {
			send[2][i] = u[(i+1)*stride+1]
			send[3][i] = u[(i+1)*stride+w]
		}
		halo, err := mpi.NeighborAlltoall(grid, send)
		if err != nil {
			return 0, err
		}
		if nb[0] != mpi.ProcNull {
			copy(u[1:1+w], halo[0])
		}
		if nb[1] != mpi.ProcNull {
			copy(u[(h+1)*stride+1:(h+1)*stride+1+w], halo[1])
		}
		for i := range h {
			if nb[2] != mpi.ProcNull {
				u[(i+1)*stride] = halo[2][i]
			}
			if nb[3] != mpi.ProcNull {
				u[(i+1)*stride+w+1] = halo[3][i]
			}
		}
		for i := 1; i <= h; i++ {
			for j := 1; j <= w; j++ {
				k := i*stride + j
				next[k] = update(u[k-stride], u[k+stride], u[k-1], u[k+1])
			}
		}
		// The halos of next are refreshed by the next exchange (walls stay).
		u, next = next, u
	}

	// Gather the blocks at rank 0 and sum in global order.
	mine := make([]float64, 0, h*w)
	for i := 1; i <= h; i++ {
		mine = append(mine, u[i*stride+1:i*stride+1+w]...)
	}
	blocks, err := mpi.Gather(grid, mine, 0)
	if err != nil || grid.Rank() != 0 {
		return 0, err
	}
	global := make([]float64, n*n)
	for q, b := range blocks {
		co, err := grid.CartCoords(q)
		if err != nil {
			return 0, err
		}
		q0, q1 := Block(n, dims[0], co[0])
		p0, p1 := Block(n, dims[1], co[1])
		bw := p1 - p0
		for i := q0; i < q1; i++ {
			copy(global[i*n+p0:i*n+p1], b[(i-q0)*bw:(i-q0+1)*bw])
		}
	}
	return Checksum(global), nil
}

// Checksum sums the cells of the global grid in row-major order.
func Checksum(g []float64) float64 {
	s := 0.0
	for _, v := range g {
		s += v
	}
	return s
}

// Serial runs the same computation on one grid, without MPI, and returns
// its checksum.
func Serial(n, steps int) float64 {
	at := func(g []float64, i, j int) float64 {
		switch {
		case i < 0:
			return Hot
		case i >= n || j < 0 || j >= n:
			return 0
		}
		return g[i*n+j]
	}
	u, next := make([]float64, n*n), make([]float64, n*n)
	for i := range n {
		for j := range n {
			u[i*n+j] = Initial(i, j)
		}
	}
	for range steps {
		for i := range n {
			for j := range n {
				next[i*n+j] = update(at(u, i-1, j), at(u, i+1, j), at(u, i, j-1), at(u, i, j+1))
			}
		}
		u, next = next, u
	}
	return Checksum(u)
}
