package mpi

import (
	"errors"
	"fmt"
)

// Process topologies (MPI-3.1 chapter 7): a communicator may carry a
// Cartesian grid (cart.go), a graph or a distributed graph (graph.go).
// The topology describes who a rank's neighbours are; the neighbourhood
// collectives (neighbor.go) exchange data with exactly those neighbours.
//
// A topology is built once, when its communicator is created, and never
// changes, so communicators (a Dup, a pinned non-blocking view) share it.
// Besides what the MPI query functions return, it holds the neighbour
// plan of the neighbourhood collectives: the in- and out-neighbours in
// MPI's order and the tag offset of each slot.

// Error classes of the topology functions.
var (
	// ErrTopology: the communicator has no topology, or not the one the
	// call needs (MPI_ERR_TOPOLOGY).
	ErrTopology = errors.New("invalid topology")
	// ErrDims: invalid dimensions for a Cartesian grid (MPI_ERR_DIMS).
	ErrDims = errors.New("invalid dimensions")
)

// TopoKind is the kind of topology a communicator has (the status of
// MPI_Topo_test): Cart, Graph, DistGraph, or Undefined for none.
type TopoKind int

// Topology kinds. A communicator without a topology reports Undefined.
const (
	// Cart is a Cartesian grid topology (MPI_CART).
	Cart TopoKind = 1
	// Graph is a graph topology (MPI_GRAPH).
	Graph TopoKind = 2
	// DistGraph is a distributed graph topology (MPI_DIST_GRAPH).
	DistGraph TopoKind = 3
)

// String returns "Cart", "Graph", "DistGraph" or "Undefined".
func (k TopoKind) String() string {
	switch k {
	case Cart:
		return "Cart"
	case Graph:
		return "Graph"
	case DistGraph:
		return "DistGraph"
	case Undefined:
		return "Undefined"
	}
	return fmt.Sprintf("TopoKind(%d)", int(k))
}

// topology is the immutable description of a communicator's topology, as
// seen by one rank.
type topology struct {
	kind TopoKind

	// Cartesian.
	dims    []int
	periods []bool
	coords  []int // this rank's

	// Graph (the whole graph, as given to GraphCreate).
	index, edges []int

	// Distributed graph (this rank's edges).
	sources, sourceWeights []int
	dests, destWeights     []int
	weighted               bool

	// Neighbour plan. in and out list the ranks this rank receives from and
	// sends to, in MPI's order (ProcNull at the edge of a non-periodic
	// grid). A message for out-slot j carries tag base+outTag[j] and is
	// received by the slot i of the destination with inTag[i] equal to it.
	// Sends are started in sendOrder; receives are posted in slot order.
	// A call takes units*8 tags from the communicator's collective
	// sequence, the same number on every rank.
	in, out       []int
	inTag, outTag []int
	sendOrder     []int
	units         int
}

// maxNbrTags bounds the tags one neighbourhood collective takes. Slots
// whose tags coincide modulo this bound are still paired correctly: the
// sender starts them and the receiver posts them in the same relative
// order, and messages between two ranks on one tag match in order.
const maxNbrTags = 256

// setSpan sets the number of tag units a call takes, from the number of
// distinct tags the plan uses on any rank (the same on every rank).
func (t *topology) setSpan(tags int) {
	tags = min(max(tags, 1), maxNbrTags)
	t.units = (tags + 7) / 8
	for i := range t.inTag {
		t.inTag[i] %= tags
	}
	for i := range t.outTag {
		t.outTag[i] %= tags
	}
}

// occurrences returns, for each entry of ranks, how many earlier entries
// hold the same rank: the k-th edge between two ranks gets tag offset k.
func occurrences(ranks []int) (occ []int, most int) {
	seen := map[int]int{}
	occ = make([]int, len(ranks))
	for i, r := range ranks {
		occ[i] = seen[r]
		seen[r]++
		most = max(most, seen[r])
	}
	return occ, most
}

// Topo returns the kind of topology c has: Cart, Graph, DistGraph, or
// Undefined (MPI_Topo_test). A nil communicator has none.
func (c *Comm) Topo() TopoKind {
	if c == nil || c.topo == nil {
		return Undefined
	}
	return c.topo.kind
}

// TopoTest returns the kind of topology c has (MPI_Topo_test); it fails
// with ErrComm for a nil or freed communicator.
func TopoTest(c *Comm) (_ TopoKind, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("TopoTest", c, Undefined, Undefined), &err)
	}
	if err := c.check("TopoTest"); err != nil {
		return Undefined, err
	}
	return c.Topo(), nil
}

// topoOf returns c's topology, checking that it is of kind want (0: any).
func (c *Comm) topoOf(op string, want TopoKind) (*topology, error) {
	if err := c.check(op); err != nil {
		return nil, err
	}
	if c.topo == nil {
		return nil, c.argErr(op, ErrTopology, "%s has no topology", c.Name())
	}
	if want != 0 && c.topo.kind != want {
		return nil, c.argErr(op, ErrTopology, "%s has a %v topology, not %v", c.Name(), c.topo.kind, want)
	}
	return c.topo, nil
}

// nbrTag returns the tag base of the next neighbourhood collective on c,
// reserving units sequence numbers (8 tags each); a pinned view returns
// its own base.
func (c *Comm) nbrTag(units int) int {
	if c.pinned != 0 {
		return c.pinned - 1
	}
	u := uint32(units)
	first := c.seq.Add(u) - u + 1
	return int(first%(1<<24)) * 8
}

// topoComm makes the communicator of a new topology: members lists the
// ranks of c that belong to it, in their new rank order; the others get
// nil. It is collective over c (every rank takes part in agreeing on the
// context). build makes the topology for the caller's new rank.
func (c *Comm) topoComm(op string, members []int, name string, build func(rank int) *topology) (*Comm, error) {
	id, err := c.newContext()
	if err != nil {
		return nil, c.ctxFail(op, err)
	}
	rank := -1
	group := make([]int, len(members))
	for i, m := range members {
		group[i] = c.group[m]
		if m == c.rank {
			rank = i
		}
	}
	if rank < 0 {
		c.p.ctx.release(id)
		return nil, nil
	}
	n := newComm(c.p, id*2, rank, group, c.name+"."+name)
	n.errh.Store(c.errh.Load())
	n.topo = build(rank)
	return n, nil
}

// firstRanks returns 0..n-1.
func firstRanks(n int) []int {
	r := make([]int, n)
	for i := range r {
		r[i] = i
	}
	return r
}

// DimsCreate returns a balanced grid of nnodes ranks in len(dims)
// dimensions (MPI_Dims_create). Entries of dims that are positive are
// kept; zeros are filled so that the product of all is nnodes, the filled
// entries are as close to each other as possible (the difference between
// the largest and the smallest is minimal; among such grids the one whose
// filled entries are lexicographically smallest is chosen) and they are in
// non-increasing order. dims is not modified. It fails with ErrDims when
// an entry is negative or the fixed entries' product does not divide
// nnodes, and with ErrArg when nnodes < 1.
//
//	DimsCreate(6, []int{0, 0})     // [3 2]
//	DimsCreate(24, []int{0, 3, 0}) // [4 3 2]
func DimsCreate(nnodes int, dims []int) (_ []int, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("DimsCreate", nil, Undefined, Undefined), &err)
	}
	fail := func(class error, format string, args ...any) ([]int, error) {
		return nil, &Error{Class: class, Op: "DimsCreate", Rank: NoRank, Msg: fmt.Sprintf(format, args...)}
	}
	if nnodes < 1 {
		return fail(ErrArg, "nnodes %d is not positive", nnodes)
	}
	fixed, free := 1, 0
	for i, d := range dims {
		switch {
		case d < 0:
			return fail(ErrDims, "dims[%d] = %d is negative", i, d)
		case d == 0:
			free++
		default:
			fixed *= d
			if fixed > nnodes {
				return fail(ErrDims, "the fixed dimensions %v need more than %d ranks", dims, nnodes)
			}
		}
	}
	if nnodes%fixed != 0 {
		return fail(ErrDims, "the fixed dimensions %v (product %d) do not divide %d", dims, fixed, nnodes)
	}
	rest := nnodes / fixed
	if free == 0 {
		if rest != 1 {
			return fail(ErrDims, "the dimensions %v have product %d, not %d", dims, fixed, nnodes)
		}
		return append([]int(nil), dims...), nil
	}
	f := balancedFactors(rest, free)
	out := append([]int(nil), dims...)
	k := 0
	for i := range out {
		if out[i] == 0 {
			out[i] = f[k]
			k++
		}
	}
	return out, nil
}

// balancedFactors returns k factors of n in non-increasing order whose
// largest and smallest differ least (then: lexicographically smallest),
// by a depth-first search over the divisors of n.
func balancedFactors(n, k int) []int {
	var divs []int
	for d := 1; d*d <= n; d++ {
		if n%d == 0 {
			divs = append(divs, d)
			if d*d != n {
				divs = append(divs, n/d)
			}
		}
	}
	best := []int(nil)
	bestSpread := n
	cur := make([]int, 0, k)
	var search func(rem, slots, limit int)
	search = func(rem, slots, limit int) {
		if slots == 0 {
			if rem != 1 {
				return
			}
			spread := cur[0] - cur[len(cur)-1]
			if best == nil || spread < bestSpread || spread == bestSpread && lexLess(cur, best) {
				best, bestSpread = append(best[:0], cur...), spread
			}
			return
		}
		for _, f := range divs {
			if f > limit || rem%f != 0 {
				continue
			}
			// The remaining slots-1 factors are at most f.
			if !fitsBelow(rem/f, f, slots-1) {
				continue
			}
			top := f
			if len(cur) > 0 {
				top = cur[0]
			}
			// The smallest factor is at most the slots-th root of rem.
			if best != nil && top-rootFloor(rem, slots) > bestSpread {
				continue
			}
			cur = append(cur, f)
			search(rem/f, slots-1, f)
			cur = cur[:len(cur)-1]
		}
	}
	search(n, k, n)
	return best
}

func lexLess(a, b []int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// fitsBelow reports whether n <= f^k.
func fitsBelow(n, f, k int) bool {
	p := 1
	for range k {
		if p >= n {
			return true
		}
		p *= f
	}
	return p >= n
}

// rootFloor returns the largest r with r^k <= n (k >= 1).
func rootFloor(n, k int) int {
	if k == 1 {
		return n
	}
	r := 1
	for powAtMost(r+1, k, n) {
		r++
	}
	return r
}

// powAtMost reports whether b^k <= n (b >= 2), without overflowing.
func powAtMost(b, k, n int) bool {
	p := 1
	for range k {
		p *= b
		if p > n {
			return false
		}
	}
	return true
}
