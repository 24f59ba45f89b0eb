package mpi

import (
	"encoding/binary"
	"unsafe"

	"github.com/mpigo/mpi/internal/coll"
)

// Graph topologies (MPI-3.1 §7.5.3) and distributed graph topologies
// (§7.5.4).

// Unweighted, passed as the weights of a distributed graph, says that its
// edges have no weights (MPI_UNWEIGHTED). A nil slice means the same; an
// empty non-nil slice is a weighted rank without edges
// (MPI_WEIGHTS_EMPTY). Only the identity of Unweighted counts: do not
// modify or reslice it.
var Unweighted = make([]int, 0, 1)

func isUnweighted(w []int) bool {
	return w == nil || (len(w) == 0 && cap(w) == cap(Unweighted) && unsafe.SliceData(w) == unsafe.SliceData(Unweighted))
}

// graphNeighbors returns the neighbours of node r of a graph.
func graphNeighbors(index, edges []int, r int) []int {
	lo := 0
	if r > 0 {
		lo = index[r-1]
	}
	return edges[lo:index[r]]
}

// graphTopo builds the graph topology of rank: its neighbours are both
// its in- and out-neighbours, the k-th edge between two ranks using tag
// offset k.
func graphTopo(index, edges []int, rank int) *topology {
	t := &topology{kind: Graph, index: index, edges: edges}
	nb := graphNeighbors(index, edges, rank)
	t.in = append([]int(nil), nb...)
	t.out = t.in
	t.inTag, _ = occurrences(nb)
	t.outTag = append([]int(nil), t.inTag...)
	t.sendOrder = firstRanks(len(nb))
	// The tag span must be the same on every rank: the largest number of
	// edges between one pair anywhere in the graph.
	most := 1
	for r := range index {
		_, m := occurrences(graphNeighbors(index, edges, r))
		most = max(most, m)
	}
	t.setSpan(most)
	return t
}

// checkGraph validates the index and edges of a graph of at most size
// nodes.
func (c *Comm) checkGraph(op string, index, edges []int) error {
	if err := c.intraOnly(op); err != nil { // topologies are for intracommunicators
		return err
	}
	n := len(index)
	if n > len(c.group) {
		return c.argErr(op, ErrArg, "a graph of %d nodes needs more than the %d ranks of %s", n, len(c.group), c.Name())
	}
	prev := 0
	for i, x := range index {
		if x < prev {
			return c.argErr(op, ErrArg, "index[%d] = %d is below the previous entry %d (index holds cumulative degrees)", i, x, prev)
		}
		prev = x
	}
	if prev != len(edges) {
		return c.argErr(op, ErrArg, "index ends at %d but there are %d edges", prev, len(edges))
	}
	for i, e := range edges {
		if e < 0 || e >= n {
			return c.argErr(op, ErrRank, "edges[%d] = %d is not a node of the %d-node graph", i, e, n)
		}
	}
	return nil
}

// GraphCreate returns a new communicator whose first len(index) ranks
// form a graph (MPI_Graph_create): node i's neighbours are
// edges[index[i-1]:index[i]] (index[-1] being 0), so index holds the
// cumulative degrees. Edges may repeat and a node may be its own
// neighbour. Ranks beyond the graph get a nil *Comm, as do all ranks when
// index is empty. mpigo keeps the ranks of c whatever reorder says. It is
// collective over c; every rank passes the same graph.
func (c *Comm) GraphCreate(index, edges []int, reorder bool) (_ *Comm, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.GraphCreate", c, Undefined, Undefined), &err)
	}
	const op = "GraphCreate"
	if err := c.checkGraph(op, index, edges); err != nil {
		return nil, err
	}
	if len(index) == 0 {
		return nil, nil
	}
	ix := append([]int(nil), index...)
	ed := append([]int(nil), edges...)
	return c.topoComm(op, firstRanks(len(ix)), "graph", func(rank int) *topology { return graphTopo(ix, ed, rank) })
}

// GraphMap returns the rank the caller would have in the graph made by
// GraphCreate with reorder, or Undefined if it would not belong to it
// (MPI_Graph_map). mpigo does not reorder: this is the caller's rank in c
// when it is below the number of nodes.
func (c *Comm) GraphMap(index, edges []int) (_ int, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.GraphMap", c, Undefined, Undefined), &err)
	}
	if err := c.checkGraph("GraphMap", index, edges); err != nil {
		return Undefined, err
	}
	if c.rank < len(index) {
		return c.rank, nil
	}
	return Undefined, nil
}

// GraphdimsGet returns the number of nodes and edges of c's graph
// (MPI_Graphdims_get).
func (c *Comm) GraphdimsGet() (nnodes, nedges int, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.GraphdimsGet", c, Undefined, Undefined), &err)
	}
	t, err := c.topoOf("GraphdimsGet", Graph)
	if err != nil {
		return 0, 0, err
	}
	return len(t.index), len(t.edges), nil
}

// GraphGet returns the index and edges c's graph was created with
// (MPI_Graph_get). The slices are the caller's to keep.
func (c *Comm) GraphGet() (index, edges []int, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.GraphGet", c, Undefined, Undefined), &err)
	}
	t, err := c.topoOf("GraphGet", Graph)
	if err != nil {
		return nil, nil, err
	}
	return append([]int(nil), t.index...), append([]int(nil), t.edges...), nil
}

// GraphNeighborsCount returns the number of neighbours of rank in c's
// graph (MPI_Graph_neighbors_count).
func (c *Comm) GraphNeighborsCount(rank int) (_ int, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.GraphNeighborsCount", c, Undefined, Undefined), &err)
	}
	nb, err := c.graphNeighbors("GraphNeighborsCount", rank)
	return len(nb), err
}

// GraphNeighbors returns the neighbours of rank in c's graph, in the order
// they were given to GraphCreate (MPI_Graph_neighbors).
func (c *Comm) GraphNeighbors(rank int) (_ []int, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.GraphNeighbors", c, Undefined, Undefined), &err)
	}
	nb, err := c.graphNeighbors("GraphNeighbors", rank)
	return append([]int(nil), nb...), err
}

func (c *Comm) graphNeighbors(op string, rank int) ([]int, error) {
	t, err := c.topoOf(op, Graph)
	if err != nil {
		return nil, err
	}
	if rank < 0 || rank >= len(t.index) {
		return nil, c.argErr(op, ErrRank, "rank %d is not a node of the %d-node graph", rank, len(t.index))
	}
	return graphNeighbors(t.index, t.edges, rank), nil
}

// distTopo builds a distributed graph topology from this rank's in- and
// out-edges; most is the largest number of edges between one pair of
// ranks anywhere (agreed by all ranks).
func distTopo(sources, sw, dests, dw []int, weighted bool, most int) *topology {
	t := &topology{kind: DistGraph, sources: sources, dests: dests, weighted: weighted}
	if weighted {
		t.sourceWeights, t.destWeights = sw, dw
	}
	t.in, t.out = sources, dests
	t.inTag, _ = occurrences(sources)
	t.outTag, _ = occurrences(dests)
	t.sendOrder = firstRanks(len(dests))
	t.setSpan(most)
	return t
}

// checkRanks validates that every entry of rs is a rank of c.
func (c *Comm) checkRanks(op, what string, rs []int) error {
	for i, r := range rs {
		if r < 0 || r >= len(c.group) {
			return c.argErr(op, ErrRank, "%s[%d] = %d is not a rank of %s (size %d)", what, i, r, c.Name(), len(c.group))
		}
	}
	return nil
}

// weightsOf checks the weights of n edges; unweighted edges get weight 1.
func (c *Comm) weightsOf(op, what string, w []int, n int) ([]int, error) {
	if isUnweighted(w) {
		return fill(n, 1), nil
	}
	if len(w) != n {
		return nil, c.argErr(op, ErrArg, "%d %s for %d edges", len(w), what, n)
	}
	for i, x := range w {
		if x < 0 {
			return nil, c.argErr(op, ErrArg, "%s[%d] = %d is negative", what, i, x)
		}
	}
	return append([]int(nil), w...), nil
}

// agree is one allreduce over c that returns the largest of every rank's
// most, whether any rank is weighted, and whether any rank found its
// arguments invalid (so that a rank with bad arguments fails the call
// everywhere instead of leaving the others waiting for it).
func (c *Comm) agree(most int, weighted, bad bool) (int, bool, bool, error) {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:], uint64(most))
	if weighted {
		b[8] = 1
	}
	if bad {
		b[9] = 1
	}
	combine := func(acc, in []byte, _ bool) ([]byte, error) {
		a, x := binary.LittleEndian.Uint64(acc), binary.LittleEndian.Uint64(in)
		binary.LittleEndian.PutUint64(acc, max(a, x))
		acc[8] |= in[8]
		acc[9] |= in[9]
		return acc, nil
	}
	res, err := coll.Allreduce(c.coll(), b[:], combine, true, c.collTag())
	if err != nil {
		return 0, false, false, err
	}
	return int(binary.LittleEndian.Uint64(res)), res[8] != 0, res[9] != 0, nil
}

// agreeValid fails the call on every rank when one rank's arguments were
// invalid (verr is this rank's own validation error).
func (c *Comm) agreeValid(op string, verr error) error {
	_, _, bad, err := c.agree(0, false, verr != nil)
	switch {
	case verr != nil:
		return verr
	case err != nil:
		return c.collErr(op, err)
	case bad:
		return c.argErr(op, ErrArg, "another rank passed invalid arguments")
	}
	return nil
}

// DistGraphCreateAdjacent returns a new communicator with the same ranks
// as c and a distributed graph topology in which each rank names its own
// neighbours (MPI_Dist_graph_create_adjacent): the caller receives from
// sources and sends to destinations, in that order, with the given
// weights (Unweighted or nil for none; both or neither should be given).
// A rank may appear several times; the k-th edge from a to b in a's
// destinations pairs with the k-th edge from a in b's sources. The edges
// must be consistent: b lists a as a source as often as a lists b as a
// destination. info (nil for none) becomes the new communicator's hints
// (Comm.Info); mpigo keeps the ranks of c whatever reorder says. It is collective over c; if one rank's
// arguments are invalid the call fails on every rank (with ErrArg on the
// others).
func (c *Comm) DistGraphCreateAdjacent(sources, sourceWeights, destinations, destWeights []int, info *Info, reorder bool) (_ *Comm, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.DistGraphCreateAdjacent", c, Undefined, Undefined), &err)
	}
	const op = "DistGraphCreateAdjacent"
	if err := c.intraOnly(op); err != nil { // topologies are for intracommunicators
		return nil, err
	}
	var sw, dw []int
	verr := c.checkRanks(op, "sources", sources)
	if verr == nil {
		verr = c.checkRanks(op, "destinations", destinations)
	}
	if verr == nil {
		sw, verr = c.weightsOf(op, "source weights", sourceWeights, len(sources))
	}
	if verr == nil {
		dw, verr = c.weightsOf(op, "destination weights", destWeights, len(destinations))
	}
	weighted := !isUnweighted(sourceWeights) || !isUnweighted(destWeights)
	_, m1 := occurrences(sources)
	_, m2 := occurrences(destinations)
	most, _, bad, err := c.agree(max(m1, m2), weighted, verr != nil)
	switch {
	case verr != nil:
		return nil, verr
	case err != nil:
		return nil, c.collErr(op, err)
	case bad:
		return nil, c.argErr(op, ErrArg, "another rank passed invalid arguments")
	}
	src := append([]int(nil), sources...)
	dst := append([]int(nil), destinations...)
	d, err := c.topoComm(op, firstRanks(len(c.group)), "distgraph", func(int) *topology {
		return distTopo(src, sw, dst, dw, weighted, most)
	})
	return d.withInfo(info), err
}

// withInfo gives d, a communicator just made (or nil), the hints info.
func (d *Comm) withInfo(info *Info) *Comm {
	if d != nil && info != nil {
		d.info.Store(info.Dup())
	}
	return d
}

// DistGraphCreate returns a new communicator with the same ranks as c and
// a distributed graph topology whose edges any rank may specify
// (MPI_Dist_graph_create): for each i, edges go from sources[i] to the
// next degrees[i] entries of destinations, with the matching entries of
// weights (Unweighted or nil for none; the graph is weighted if any rank
// gives weights, and unweighted edges then weigh 1). Every edge is delivered to the
// two ranks it joins (an exchange of edge lists among all ranks), so each
// learns its in- and out-neighbours. A rank's neighbours are listed by the
// rank that specified the edge and then in the order it gave them; the
// k-th edge from a to b among a's destinations is the k-th edge from a
// among b's sources. info (nil for none) becomes the new communicator's
// hints (Comm.Info); mpigo keeps the ranks of c whatever reorder says. It
// is collective over c; if one rank's arguments are invalid the call
// fails on every rank (with ErrArg on the others).
func (c *Comm) DistGraphCreate(sources, degrees, destinations, weights []int, info *Info, reorder bool) (_ *Comm, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.DistGraphCreate", c, Undefined, Undefined), &err)
	}
	const op = "DistGraphCreate"
	if err := c.intraOnly(op); err != nil { // topologies are for intracommunicators
		return nil, err
	}
	w, verr := c.distGraphArgs(op, sources, degrees, destinations, weights)
	if err := c.agreeValid(op, verr); err != nil {
		return nil, err
	}
	// Each edge becomes two records of three little-endian int64s
	// (direction, peer, weight): an out-edge for its source, an in-edge
	// for its destination.
	p := len(c.group)
	parts := make([][]byte, p)
	put := func(to, dir, peer, weight int) {
		parts[to] = binary.LittleEndian.AppendUint64(parts[to], uint64(dir))
		parts[to] = binary.LittleEndian.AppendUint64(parts[to], uint64(peer))
		parts[to] = binary.LittleEndian.AppendUint64(parts[to], uint64(int64(weight)))
	}
	e := 0
	for i, s := range sources {
		for range degrees[i] {
			d := destinations[e]
			put(s, 0, d, w[e])
			put(d, 1, s, w[e])
			e++
		}
	}
	for i := range parts {
		if parts[i] == nil {
			parts[i] = []byte{}
		}
	}
	got, err := coll.Alltoall(c.coll(), parts, c.collTag())
	if err != nil {
		return nil, c.collErr(op, err)
	}
	// Records arrive grouped by the rank that specified them, each group in
	// its order: both ends of an edge see it at the same place relative to
	// the other edges between them.
	var src, sw, dst, dw []int
	for r, b := range got {
		if len(b)%24 != 0 {
			return nil, c.argErr(op, ErrIntern, "rank %d sent a %d-byte edge list", r, len(b))
		}
		for ; len(b) > 0; b = b[24:] {
			dir := binary.LittleEndian.Uint64(b)
			peer := int(binary.LittleEndian.Uint64(b[8:]))
			weight := int(int64(binary.LittleEndian.Uint64(b[16:])))
			if dir == 0 {
				dst, dw = append(dst, peer), append(dw, weight)
			} else {
				src, sw = append(src, peer), append(sw, weight)
			}
		}
	}
	_, m1 := occurrences(src)
	_, m2 := occurrences(dst)
	most, weighted, _, err := c.agree(max(m1, m2), !isUnweighted(weights), false)
	if err != nil {
		return nil, c.collErr(op, err)
	}
	d, err := c.topoComm(op, firstRanks(p), "distgraph", func(int) *topology {
		return distTopo(src, sw, dst, dw, weighted, most)
	})
	return d.withInfo(info), err
}

// DistGraphNeighborsCount returns the number of in-neighbours (sources)
// and out-neighbours (destinations) of the caller in c's distributed graph,
// and whether its edges are weighted (MPI_Dist_graph_neighbors_count).
func (c *Comm) DistGraphNeighborsCount() (indegree, outdegree int, weighted bool, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.DistGraphNeighborsCount", c, Undefined, Undefined), &err)
	}
	t, err := c.topoOf("DistGraphNeighborsCount", DistGraph)
	if err != nil {
		return 0, 0, false, err
	}
	return len(t.sources), len(t.dests), t.weighted, nil
}

// DistGraphNeighbors returns the caller's in-neighbours (sources) and
// out-neighbours (destinations) in c's distributed graph, in the order the
// neighbourhood collectives use, with their weights (nil when the graph
// is unweighted) (MPI_Dist_graph_neighbors). The slices are the caller's
// to keep.
func (c *Comm) DistGraphNeighbors() (sources, sourceWeights, destinations, destWeights []int, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.DistGraphNeighbors", c, Undefined, Undefined), &err)
	}
	t, err := c.topoOf("DistGraphNeighbors", DistGraph)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	sources = append([]int{}, t.sources...)
	destinations = append([]int{}, t.dests...)
	if t.weighted {
		sourceWeights = append([]int{}, t.sourceWeights...)
		destWeights = append([]int{}, t.destWeights...)
	}
	return sources, sourceWeights, destinations, destWeights, nil
}

// distGraphArgs validates the arguments of DistGraphCreate and returns the
// edges' weights.
func (c *Comm) distGraphArgs(op string, sources, degrees, destinations, weights []int) ([]int, error) {
	if len(degrees) != len(sources) {
		return nil, c.argErr(op, ErrArg, "%d degrees for %d sources", len(degrees), len(sources))
	}
	if err := c.checkRanks(op, "sources", sources); err != nil {
		return nil, err
	}
	if err := c.checkRanks(op, "destinations", destinations); err != nil {
		return nil, err
	}
	total := 0
	for i, d := range degrees {
		if d < 0 {
			return nil, c.argErr(op, ErrArg, "degrees[%d] = %d is negative", i, d)
		}
		total += d
	}
	if total != len(destinations) {
		return nil, c.argErr(op, ErrArg, "the degrees add up to %d but there are %d destinations", total, len(destinations))
	}
	return c.weightsOf(op, "weights", weights, total)
}
