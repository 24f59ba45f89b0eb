package topo_test

import (
	"fmt"
	"testing"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/conformance"
)

// Cartesian topologies: DimsCreate, coordinates, shifts, sub-grids
// (MPICH topo/cartmap1, cartshift1, cartsuball, dims1).
func TestCart(t *testing.T) {
	dims, err := mpi.DimsCreate(6, []int{0, 0})
	if err != nil || dims[0]*dims[1] != 6 || dims[0] < dims[1] {
		t.Fatalf("DimsCreate(6, 2): %v %v", dims, err)
	}
	conformance.Run(t, 6, func(c *mpi.Comm) error {
		g, err := c.CartCreate([]int{3, 2}, []bool{true, false}, false)
		if err != nil {
			return err
		}
		if k, err := mpi.TopoTest(g); err != nil || k != mpi.Cart {
			return fmt.Errorf("TopoTest: %v %v", k, err)
		}
		co, err := g.CartCoords(g.Rank())
		if err != nil {
			return err
		}
		if r, err := g.CartRank(co); err != nil || r != g.Rank() {
			return fmt.Errorf("CartRank(CartCoords) = %d %v", r, err)
		}
		src, dst, err := g.CartShift(0, 1) // periodic
		if err != nil {
			return err
		}
		wantDst, _ := g.CartRank([]int{(co[0] + 1) % 3, co[1]})
		wantSrc, _ := g.CartRank([]int{(co[0] + 2) % 3, co[1]})
		if src != wantSrc || dst != wantDst {
			return fmt.Errorf("shift dim 0: %d %d, want %d %d", src, dst, wantSrc, wantDst)
		}
		src, dst, err = g.CartShift(1, 1) // not periodic
		if err != nil {
			return err
		}
		if co[1] == 1 && dst != mpi.ProcNull || co[1] == 0 && src != mpi.ProcNull {
			return fmt.Errorf("shift dim 1 at %v: %d %d", co, src, dst)
		}
		sub, err := g.CartSub([]bool{true, false})
		if err != nil {
			return err
		}
		if sub.Size() != 3 {
			return fmt.Errorf("CartSub size %d", sub.Size())
		}
		// Neighbour exchange on the grid: every rank gets its
		// neighbours' ranks.
		got, err := mpi.NeighborAllgather(g, g.Rank())
		if err != nil {
			return err
		}
		if len(got) != 4 || got[0] != wantSrc || got[1] != wantDst {
			return fmt.Errorf("NeighborAllgather: %v", got)
		}
		return nil
	})
}

// Graph and distributed graph topologies and their neighbour lists
// (MPICH topo/graphcr, dgraph_unwgt, neighb_coll).
func TestGraphs(t *testing.T) {
	conformance.Run(t, 4, func(c *mpi.Comm) error {
		// A star: 0 is linked to 1, 2, 3.
		g, err := c.GraphCreate([]int{3, 4, 5, 6}, []int{1, 2, 3, 0, 0, 0}, false)
		if err != nil {
			return err
		}
		nb, err := g.GraphNeighbors(0)
		if err != nil || fmt.Sprint(nb) != "[1 2 3]" {
			return fmt.Errorf("GraphNeighbors(0): %v %v", nb, err)
		}
		got, err := mpi.NeighborAllgather(g, 10*g.Rank())
		if err != nil {
			return err
		}
		if g.Rank() == 0 && fmt.Sprint(got) != "[10 20 30]" || g.Rank() != 0 && fmt.Sprint(got) != "[0]" {
			return fmt.Errorf("rank %d: graph NeighborAllgather %v", g.Rank(), got)
		}
		// A directed ring as a distributed graph.
		r, n := c.Rank(), c.Size()
		dg, err := c.DistGraphCreateAdjacent([]int{(r + n - 1) % n}, nil, []int{(r + 1) % n}, nil, nil, false)
		if err != nil {
			return err
		}
		in, out, _, err := dg.DistGraphNeighborsCount()
		if err != nil || in != 1 || out != 1 {
			return fmt.Errorf("DistGraphNeighborsCount: %d %d %v", in, out, err)
		}
		v, err := mpi.NeighborAlltoall(dg, []string{fmt.Sprint("from ", r)})
		if err != nil || v[0] != fmt.Sprint("from ", (r+n-1)%n) {
			return fmt.Errorf("dist graph NeighborAlltoall: %v %v", v, err)
		}
		return nil
	})
}
