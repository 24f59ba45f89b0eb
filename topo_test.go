package mpi_test

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"testing"

	"github.com/mpigo/mpi"
)

// Topology tests, modelled on MPICH's test/mpi/topo (dims1-4, cartmap1,
// cartshift1, cartsuball, graphcr, graphmap1, distgraph1, neighb_coll).

func TestDimsCreate(t *testing.T) {
	cases := []struct {
		n    int
		dims []int
		want []int
	}{
		{1, []int{0}, []int{1}},
		{1, []int{0, 0, 0}, []int{1, 1, 1}},
		{1, []int{}, []int{}},
		{6, []int{0, 0}, []int{3, 2}},
		{7, []int{0, 0}, []int{7, 1}},
		{12, []int{0, 0, 0}, []int{3, 2, 2}},
		{16, []int{0, 0}, []int{4, 4}},
		{24, []int{0, 0, 0}, []int{4, 3, 2}},
		{24, []int{0, 3, 0}, []int{4, 3, 2}},
		{30, []int{0, 0, 0}, []int{5, 3, 2}},
		{36, []int{0, 0, 0, 0}, []int{3, 3, 2, 2}},
		{64, []int{0, 0, 0}, []int{4, 4, 4}},
		{72, []int{0, 0, 0}, []int{6, 4, 3}},
		{100, []int{0, 0}, []int{10, 10}},
		{10, []int{0, 0, 0, 0}, []int{5, 2, 1, 1}},
		{8, []int{2, 0, 0}, []int{2, 2, 2}},
		{6, []int{2, 0}, []int{2, 3}},
		{6, []int{0, 2}, []int{3, 2}},
		{6, []int{3, 2}, []int{3, 2}},
		{1 << 20, []int{0, 0, 0, 0}, []int{32, 32, 32, 32}},
		// Values MPICH's dims5 test expects (balanced, not greedy).
		{72, []int{0, 0}, []int{9, 8}},
		{1323, []int{0, 0}, []int{49, 27}},
		{2730, []int{0, 0}, []int{65, 42}},
		{6125, []int{0, 0}, []int{125, 49}},
		{453420, []int{0, 0, 0}, []int{229, 45, 44}},
		{453600, []int{0, 0, 0}, []int{81, 80, 70}},
		{454140, []int{0, 0, 0}, []int{87, 87, 60}},
		{459459, []int{0, 0, 0}, []int{99, 91, 51}},
		{461125, []int{0, 0, 0}, []int{125, 119, 31}},
		{472311, []int{0, 0, 0}, []int{119, 63, 63}},
		{1000 * 1000 * 1000, []int{0, 0, 0}, []int{1000, 1000, 1000}}, // dims4
	}
	for _, c := range cases {
		in := slices.Clone(c.dims)
		got, err := mpi.DimsCreate(c.n, c.dims)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("DimsCreate(%d, %v) = %v, %v; want %v", c.n, in, got, err, c.want)
		}
		if !slices.Equal(in, c.dims) {
			t.Errorf("DimsCreate(%d, %v) modified its argument to %v", c.n, in, c.dims)
		}
	}
	bad := []struct {
		n     int
		dims  []int
		class error
	}{
		{7, []int{2, 0}, mpi.ErrDims},
		{6, []int{4, 0}, mpi.ErrDims},
		{6, []int{-1, 0}, mpi.ErrDims},
		{6, []int{2, 2}, mpi.ErrDims},
		{5, []int{}, mpi.ErrDims},
		{0, []int{0}, mpi.ErrArg},
	}
	for _, c := range bad {
		if got, err := mpi.DimsCreate(c.n, c.dims); !errors.Is(err, c.class) {
			t.Errorf("DimsCreate(%d, %v) = %v, %v; want %v", c.n, c.dims, got, err, c.class)
		}
	}
	// Every result is a non-increasing factorisation no less balanced than
	// the exhaustive best.
	for n := 1; n <= 300; n++ {
		for k := 1; k <= 4; k++ {
			got, err := mpi.DimsCreate(n, make([]int, k))
			if err != nil {
				t.Fatalf("DimsCreate(%d, %d zeros): %v", n, k, err)
			}
			p := 1
			for i, d := range got {
				p *= d
				if i > 0 && d > got[i-1] {
					t.Fatalf("DimsCreate(%d, %d zeros) = %v is not non-increasing", n, k, got)
				}
			}
			if p != n {
				t.Fatalf("DimsCreate(%d, %d zeros) = %v has product %d", n, k, got, p)
			}
			if s, best := got[0]-got[k-1], bestSpread(n, k, n); s != best {
				t.Fatalf("DimsCreate(%d, %d zeros) = %v has spread %d, best is %d", n, k, got, s, best)
			}
		}
	}
}

// bestSpread is the smallest max-min over all factorisations of n into k
// factors no larger than limit (exhaustive, for the test).
func bestSpread(n, k, limit int) int {
	best := -1
	var rec func(rem, k, hi, top int)
	rec = func(rem, k, hi, top int) {
		if k == 0 {
			return
		}
		for f := min(hi, rem); f >= 1; f-- {
			if rem%f != 0 {
				continue
			}
			t := top
			if t == 0 {
				t = f
			}
			if k == 1 {
				if rem == f && (best < 0 || t-f < best) {
					best = t - f
				}
				continue
			}
			rec(rem/f, k-1, f, t)
		}
	}
	rec(n, k, limit, 0)
	return best
}

// cartcreate, cartmap1, cartshift1: a 3x2 grid on 6 ranks, periodic in
// the first dimension.
func TestCartCreate(t *testing.T) {
	matrix(t, 6, func(world *mpi.Comm) error {
		r := world.Rank()
		if k := world.Topo(); k != mpi.Undefined {
			return check(world, false, "world has topology %v", k)
		}
		if _, err := world.CartCoords(0); !errors.Is(err, mpi.ErrTopology) {
			return check(world, false, "CartCoords on world: %v", err)
		}
		dims, err := mpi.DimsCreate(world.Size(), []int{0, 0})
		if err != nil {
			return err
		}
		periods := []bool{true, false}
		if nr, err := world.CartMap(dims, periods); err != nil || nr != r {
			return check(world, false, "CartMap = %d, %v", nr, err)
		}
		cart, err := world.CartCreate(dims, periods, true)
		if err != nil {
			return err
		}
		if k, err := mpi.TopoTest(cart); err != nil || k != mpi.Cart || k.String() != "Cart" {
			return check(world, false, "TopoTest = %v, %v", k, err)
		}
		if nd, err := cart.CartDim(); err != nil || nd != 2 {
			return check(world, false, "CartDim = %d, %v", nd, err)
		}
		gd, gp, gc, err := cart.CartGet()
		if err != nil || !slices.Equal(gd, []int{3, 2}) || !slices.Equal(gp, periods) || !slices.Equal(gc, []int{r / 2, r % 2}) {
			return check(world, false, "CartGet = %v %v %v %v", gd, gp, gc, err)
		}
		for q := range cart.Size() {
			co, err := cart.CartCoords(q)
			if err != nil {
				return err
			}
			back, err := cart.CartRank(co)
			if err != nil || back != q {
				return check(world, false, "CartRank(CartCoords(%d) = %v) = %d, %v", q, co, back, err)
			}
		}
		if q, err := cart.CartRank([]int{-1, 1}); err != nil || q != 5 {
			return check(world, false, "CartRank(-1, 1) = %d, %v; want 5 (periodic wrap)", q, err)
		}
		if q, err := cart.CartRank([]int{7, 0}); err != nil || q != 2 {
			return check(world, false, "CartRank(7, 0) = %d, %v; want 2", q, err)
		}
		if _, err := cart.CartRank([]int{0, 2}); !errors.Is(err, mpi.ErrArg) {
			return check(world, false, "CartRank outside a non-periodic dimension: %v", err)
		}
		if _, err := cart.CartCoords(6); !errors.Is(err, mpi.ErrRank) {
			return check(world, false, "CartCoords(6): %v", err)
		}
		// Shifts: dimension 0 wraps, dimension 1 has edges.
		x, y := r/2, r%2
		src, dst, err := cart.CartShift(0, 1)
		if err != nil || src != ((x+2)%3)*2+y || dst != ((x+1)%3)*2+y {
			return check(world, false, "CartShift(0, 1) = %d, %d, %v", src, dst, err)
		}
		src, dst, err = cart.CartShift(0, -4)
		if err != nil || src != ((x+4)%3)*2+y || dst != ((x+2)%3)*2+y {
			return check(world, false, "CartShift(0, -4) = %d, %d, %v", src, dst, err)
		}
		src, dst, err = cart.CartShift(1, 1)
		wantSrc, wantDst := mpi.ProcNull, x*2+1
		if y == 1 {
			wantSrc, wantDst = x*2, mpi.ProcNull
		}
		if err != nil || src != wantSrc || dst != wantDst {
			return check(world, false, "CartShift(1, 1) = %d, %d, %v; want %d, %d", src, dst, err, wantSrc, wantDst)
		}
		if src, dst, _ = cart.CartShift(1, 2); src != mpi.ProcNull || dst != mpi.ProcNull {
			return check(world, false, "CartShift(1, 2) = %d, %d", src, dst)
		}
		if _, _, err := cart.CartShift(2, 1); !errors.Is(err, mpi.ErrArg) {
			return check(world, false, "CartShift(2, 1): %v", err)
		}
		// The communicator works: pass ranks along dimension 1, ProcNull at
		// the edges included.
		src, dst, _ = cart.CartShift(1, 1)
		got, _, err := mpi.Sendrecv[int, int](cart, 100+r, dst, 3, src, 3)
		if err != nil {
			return err
		}
		want := 0
		if src != mpi.ProcNull {
			want = 100 + src
		}
		if got != want {
			return check(world, false, "shifted %d, want %d", got, want)
		}
		// A duplicate keeps the topology.
		dup, err := cart.Dup()
		if err != nil {
			return err
		}
		if _, _, dc, err := dup.CartGet(); err != nil || !slices.Equal(dc, gc) {
			return check(world, false, "Dup lost the topology: %v %v", dc, err)
		}
		// A grid smaller than the communicator leaves ranks out; a bigger one fails.
		small, err := world.CartCreate([]int{2, 2}, []bool{false, false}, false)
		if err != nil {
			return err
		}
		if (small == nil) != (r >= 4) {
			return check(world, false, "CartCreate 2x2 gave %v", small)
		}
		if small != nil && small.Size() != 4 {
			return check(world, false, "2x2 grid of size %d", small.Size())
		}
		if nr, _ := world.CartMap([]int{2, 2}, []bool{false, false}); (nr == mpi.Undefined) != (r >= 4) {
			return check(world, false, "CartMap 2x2 = %d", nr)
		}
		if _, err := world.CartCreate([]int{7}, []bool{false}, false); !errors.Is(err, mpi.ErrDims) {
			return check(world, false, "CartCreate of 7 on 6: %v", err)
		}
		if _, err := world.CartCreate([]int{2}, []bool{false, true}, false); !errors.Is(err, mpi.ErrArg) {
			return check(world, false, "CartCreate with 2 periods for 1 dim: %v", err)
		}
		// Zero dimensions: one rank.
		zero, err := world.CartCreate(nil, nil, false)
		if err != nil {
			return err
		}
		if (zero != nil) != (r == 0) || (zero != nil && zero.Size() != 1) {
			return check(world, false, "0-dim grid %v", zero)
		}
		if zero != nil { // cartzero
			nd, err1 := zero.CartDim()
			zr, err2 := zero.CartRank(nil)
			zc, err3 := zero.CartCoords(0)
			sub, err4 := zero.CartSub(nil)
			if err := errors.Join(err1, err2, err3, err4); err != nil || nd != 0 || zr != 0 || len(zc) != 0 || sub.Size() != 1 || sub.Topo() != mpi.Cart {
				return check(world, false, "0-dim grid: %d %d %v %v %v", nd, zr, zc, sub, err)
			}
			if got, err := mpi.NeighborAllgather(zero, 1); err != nil || len(got) != 0 {
				return check(world, false, "0-dim neighbours: %v %v", got, err)
			}
			if err := errors.Join(mpi.Barrier(zero), sub.Free()); err != nil {
				return err
			}
		}
		for _, c := range []*mpi.Comm{cart, dup, small, zero} {
			if c != nil {
				if err := c.Free(); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// cartsuball: the rows and columns of a 2x3 grid.
func TestCartSub(t *testing.T) {
	matrix(t, 6, func(world *mpi.Comm) error {
		cart, err := world.CartCreate([]int{2, 3}, []bool{false, true}, false)
		if err != nil {
			return err
		}
		r := cart.Rank()
		x, y := r/3, r%3
		row, err := cart.CartSub([]bool{false, true})
		if err != nil {
			return err
		}
		if row.Size() != 3 || row.Rank() != y {
			return check(world, false, "row: size %d rank %d", row.Size(), row.Rank())
		}
		d, p, co, err := row.CartGet()
		if err != nil || !slices.Equal(d, []int{3}) || !slices.Equal(p, []bool{true}) || !slices.Equal(co, []int{y}) {
			return check(world, false, "row CartGet %v %v %v %v", d, p, co, err)
		}
		sum, err := mpi.Allreduce(row, r, mpi.Sum[int]())
		if err != nil || sum != 3*x*3+3 {
			return check(world, false, "row sum %d, %v", sum, err)
		}
		col, err := cart.CartSub([]bool{true, false})
		if err != nil {
			return err
		}
		if col.Size() != 2 || col.Rank() != x {
			return check(world, false, "column: size %d rank %d", col.Size(), col.Rank())
		}
		sum, err = mpi.Allreduce(col, r, mpi.Sum[int]())
		if err != nil || sum != 2*y+3 {
			return check(world, false, "column sum %d, %v", sum, err)
		}
		if src, dst, _ := col.CartShift(0, 1); src != [2]int{mpi.ProcNull, 0}[x] || dst != [2]int{1, mpi.ProcNull}[x] {
			return check(world, false, "column shift %d %d", src, dst)
		}
		none, err := cart.CartSub([]bool{false, false})
		if err != nil {
			return err
		}
		if nd, _ := none.CartDim(); none.Size() != 1 || nd != 0 {
			return check(world, false, "no dimension kept: size %d, %d dims", none.Size(), nd)
		}
		all, err := cart.CartSub([]bool{true, true})
		if err != nil {
			return err
		}
		if all.Size() != 6 || all.Rank() != r {
			return check(world, false, "all kept: size %d rank %d", all.Size(), all.Rank())
		}
		if _, err := cart.CartSub([]bool{true}); !errors.Is(err, mpi.ErrArg) {
			return check(world, false, "CartSub with 1 flag: %v", err)
		}
		if _, err := world.CartSub([]bool{true}); !errors.Is(err, mpi.ErrTopology) {
			return check(world, false, "CartSub on world: %v", err)
		}
		return nil
	})
}

// graphcr, graphmap1: a 3-node graph with a repeated edge and a self loop
// on 4 ranks; rank 3 is left out.
func TestGraphCreate(t *testing.T) {
	index := []int{3, 6, 9}
	edges := []int{1, 1, 2, 0, 0, 2, 0, 1, 2}
	matrix(t, 4, func(world *mpi.Comm) error {
		r := world.Rank()
		if nr, err := world.GraphMap(index, edges); err != nil || nr != [4]int{0, 1, 2, mpi.Undefined}[r] {
			return check(world, false, "GraphMap = %d, %v", nr, err)
		}
		g, err := world.GraphCreate(index, edges, true)
		if err != nil {
			return err
		}
		if r == 3 {
			return check(world, g == nil, "rank 3 is in the graph")
		}
		if g.Topo() != mpi.Graph || g.Size() != 3 || g.Rank() != r {
			return check(world, false, "graph %v size %d rank %d", g.Topo(), g.Size(), g.Rank())
		}
		if nn, ne, err := g.GraphdimsGet(); err != nil || nn != 3 || ne != 9 {
			return check(world, false, "GraphdimsGet = %d %d %v", nn, ne, err)
		}
		gi, ge, err := g.GraphGet()
		if err != nil || !slices.Equal(gi, index) || !slices.Equal(ge, edges) {
			return check(world, false, "GraphGet = %v %v %v", gi, ge, err)
		}
		for q := range 3 {
			nb, err := g.GraphNeighbors(q)
			if err != nil || !slices.Equal(nb, edges[3*q:3*q+3]) {
				return check(world, false, "GraphNeighbors(%d) = %v %v", q, nb, err)
			}
			if n, err := g.GraphNeighborsCount(q); err != nil || n != 3 {
				return check(world, false, "GraphNeighborsCount(%d) = %d %v", q, n, err)
			}
		}
		if _, err := g.GraphNeighbors(3); !errors.Is(err, mpi.ErrRank) {
			return check(world, false, "GraphNeighbors(3): %v", err)
		}
		if _, err := g.CartDim(); !errors.Is(err, mpi.ErrTopology) {
			return check(world, false, "CartDim on a graph: %v", err)
		}
		// Neighbour alltoall: the k-th edge q->r pairs with the k-th r->q.
		nb := edges[3*r : 3*r+3]
		vs := make([][3]int, 3)
		for j, q := range nb {
			vs[j] = [3]int{r, q, occ(nb, j)}
		}
		got, err := mpi.NeighborAlltoall(g, vs)
		if err != nil {
			return err
		}
		for i, q := range nb {
			if want := [3]int{q, r, occ(nb, i)}; got[i] != want {
				return check(world, false, "slot %d: got %v, want %v", i, got[i], want)
			}
		}
		all, err := mpi.NeighborAllgather(g, fmt.Sprint("node ", r))
		if err != nil {
			return err
		}
		for i, q := range nb {
			if all[i] != fmt.Sprint("node ", q) {
				return check(world, false, "allgather slot %d: %q", i, all[i])
			}
		}
		return nil
	})
	err := mpi.Run(2, func(world *mpi.Comm) error {
		if _, err := world.GraphCreate([]int{1, 3}, []int{1, 0}, false); !errors.Is(err, mpi.ErrArg) {
			return fmt.Errorf("index past the edges: %v", err)
		}
		if _, err := world.GraphCreate([]int{1, 2}, []int{1, 2}, false); !errors.Is(err, mpi.ErrRank) {
			return fmt.Errorf("edge to node 2 of 2: %v", err)
		}
		if _, err := world.GraphCreate([]int{1, 2, 3}, []int{0, 0, 0}, false); !errors.Is(err, mpi.ErrArg) {
			return fmt.Errorf("3 nodes on 2 ranks: %v", err)
		}
		if g, err := world.GraphCreate(nil, nil, false); g != nil || err != nil {
			return fmt.Errorf("empty graph: %v %v", g, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// occ returns how many entries of s before i equal s[i].
func occ(s []int, i int) int {
	k := 0
	for _, x := range s[:i] {
		if x == s[i] {
			k++
		}
	}
	return k
}

type edge struct{ from, to, weight int }

// distgraph1: every rank specifies random edges between other ranks
// (repeats allowed, itself never involved); the graph each rank learns and
// a neighbour exchange are checked against the whole edge list.
func TestDistGraphRandom(t *testing.T) {
	matrix(t, 5, func(world *mpi.Comm) error {
		r, n := world.Rank(), world.Size()
		rng := rand.New(rand.NewSource(int64(r) + 11))
		var mine []edge
		var sources, degrees, dests, weights []int
		for range 1 + rng.Intn(4) {
			s := rng.Intn(n)
			if s == r {
				continue
			}
			deg := 0
			for range rng.Intn(4) {
				d := rng.Intn(n)
				if d == r {
					continue
				}
				w := rng.Intn(1000)
				mine = append(mine, edge{s, d, w})
				dests, weights = append(dests, d), append(weights, w)
				deg++
			}
			sources, degrees = append(sources, s), append(degrees, deg)
		}
		g, err := world.DistGraphCreate(sources, degrees, dests, weights, nil, false)
		if err != nil {
			return err
		}
		all, err := mpi.Allgather(world, mine)
		if err != nil {
			return err
		}
		var inWant, outWant [][2]int
		for _, es := range all {
			for _, e := range es {
				if e.to == r {
					inWant = append(inWant, [2]int{e.from, e.weight})
				}
				if e.from == r {
					outWant = append(outWant, [2]int{e.to, e.weight})
				}
			}
		}
		in, out, weighted, err := g.DistGraphNeighborsCount()
		if err != nil || in != len(inWant) || out != len(outWant) || !weighted {
			return check(world, false, "DistGraphNeighborsCount = %d %d %v %v; want %d %d", in, out, weighted, err, len(inWant), len(outWant))
		}
		src, sw, dst, dw, err := g.DistGraphNeighbors()
		if err != nil {
			return err
		}
		if !sameEdges(src, sw, inWant) || !sameEdges(dst, dw, outWant) {
			return check(world, false, "in %v %v (want %v), out %v %v (want %v)", src, sw, inWant, dst, dw, outWant)
		}
		// Exchange: out-slot j carries (me, dest, weight, occurrence); the
		// in-slot i must get the record of the same edge.
		vs := make([][4]int, len(dst))
		for j := range dst {
			vs[j] = [4]int{r, dst[j], dw[j], occ(dst, j)}
		}
		got, err := mpi.NeighborAlltoall(g, vs)
		if err != nil {
			return err
		}
		for i := range src {
			if want := [4]int{src[i], r, sw[i], occ(src, i)}; got[i] != want {
				return check(world, false, "slot %d: got %v, want %v", i, got[i], want)
			}
		}
		// A reduction over in-neighbours against the serial reference.
		vals, err := mpi.NeighborAllgather(g, r*r+1)
		if err != nil {
			return err
		}
		sum, want := 0, 0
		for _, v := range vals {
			sum += v
		}
		for _, e := range inWant {
			want += e[0]*e[0] + 1
		}
		if sum != want {
			return check(world, false, "sum over in-neighbours %d, want %d", sum, want)
		}
		return nil
	})
}

// sameEdges compares (peer, weight) lists as multisets.
func sameEdges(peers, weights []int, want [][2]int) bool {
	if len(peers) != len(want) || len(weights) != len(want) {
		return false
	}
	got := make([][2]int, len(peers))
	for i := range peers {
		got[i] = [2]int{peers[i], weights[i]}
	}
	less := func(s [][2]int) func(i, j int) bool {
		return func(i, j int) bool { return s[i][0] < s[j][0] || s[i][0] == s[j][0] && s[i][1] < s[j][1] }
	}
	w := slices.Clone(want)
	sort.Slice(got, less(got))
	sort.Slice(w, less(w))
	return slices.Equal(got, w)
}

// An adjacent distributed graph: a directed ring with a doubled edge and
// no weights.
func TestDistGraphAdjacent(t *testing.T) {
	matrix(t, 4, func(world *mpi.Comm) error {
		r, n := world.Rank(), world.Size()
		next, prev := (r+1)%n, (r+n-1)%n
		hints := mpi.NewInfo()
		hints.Set("mpigo_test", "ring")
		g, err := world.DistGraphCreateAdjacent([]int{prev, prev}, mpi.Unweighted, []int{next, next}, nil, hints, false)
		if err != nil {
			return err
		}
		if v, ok := g.Info().Get("mpigo_test"); !ok || v != "ring" {
			return check(world, false, "the info hints did not reach the new communicator: %q %v", v, ok)
		}
		in, out, weighted, err := g.DistGraphNeighborsCount()
		if err != nil || in != 2 || out != 2 || weighted {
			return check(world, false, "count %d %d %v %v", in, out, weighted, err)
		}
		src, sw, dst, dw, err := g.DistGraphNeighbors()
		if err != nil || !slices.Equal(src, []int{prev, prev}) || !slices.Equal(dst, []int{next, next}) || sw != nil || dw != nil {
			return check(world, false, "neighbours %v %v %v %v %v", src, sw, dst, dw, err)
		}
		got, err := mpi.NeighborAlltoall(g, []string{fmt.Sprint(r, "a"), fmt.Sprint(r, "b")})
		if err != nil {
			return err
		}
		if !slices.Equal(got, []string{fmt.Sprint(prev, "a"), fmt.Sprint(prev, "b")}) {
			return check(world, false, "got %v", got)
		}
		// Weighted, with a rank that has no in-edges (empty weights).
		var s, w []int
		if r != 0 {
			s, w = []int{0}, []int{r}
		} else {
			w = []int{}
		}
		var d, dwt []int
		if r == 0 {
			for q := 1; q < n; q++ {
				d, dwt = append(d, q), append(dwt, q)
			}
		} else {
			dwt = []int{}
		}
		star, err := world.DistGraphCreateAdjacent(s, w, d, dwt, nil, false)
		if err != nil {
			return err
		}
		if _, _, weighted, _ := star.DistGraphNeighborsCount(); !weighted {
			return check(world, false, "star is not weighted")
		}
		vals, err := mpi.NeighborAllgather(star, 10*r+7)
		if err != nil {
			return err
		}
		if r == 0 && len(vals) != 0 || r != 0 && !slices.Equal(vals, []int{7}) {
			return check(world, false, "star allgather %v", vals)
		}
		if _, err := world.DistGraphCreateAdjacent([]int{n}, nil, nil, nil, nil, false); !errors.Is(err, mpi.ErrRank) {
			return check(world, false, "source %d: %v", n, err)
		}
		// One rank's bad arguments fail the call everywhere, without a hang.
		bad := []int{(r + 1) % n}
		if r == 2 {
			bad = []int{-1}
		}
		_, err = world.DistGraphCreate([]int{r}, []int{1}, bad, nil, nil, false)
		if want := [2]error{mpi.ErrArg, mpi.ErrRank}[b2i(r == 2)]; !errors.Is(err, want) {
			return check(world, false, "DistGraphCreate with a bad edge on rank 2: %v, want %v", err, want)
		}
		_, err = world.DistGraphCreateAdjacent(nil, nil, bad, []int{1, 2}[:len(bad)+b2i(r == 1)], nil, false)
		if want := [2]error{mpi.ErrArg, mpi.ErrRank}[b2i(r == 2)]; r == 1 {
			if !errors.Is(err, mpi.ErrArg) {
				return check(world, false, "adjacent with bad weights: %v", err)
			}
		} else if !errors.Is(err, want) {
			return check(world, false, "adjacent with a bad edge on rank 2: %v, want %v", err, want)
		}
		if sum, err := mpi.Allreduce(world, 1, mpi.Sum[int]()); err != nil || sum != n {
			return check(world, false, "allreduce after the failed creations: %d %v", sum, err)
		}
		if _, _, _, _, err := world.DistGraphNeighbors(); !errors.Is(err, mpi.ErrTopology) {
			return check(world, false, "DistGraphNeighbors on world: %v", err)
		}
		return nil
	})
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
