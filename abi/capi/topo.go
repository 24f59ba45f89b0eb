//go:build cgo

package capi

import (
	"fmt"
	"unsafe"

	"github.com/mpigo/mpi"
)

// Process topologies: Cartesian grids, graphs and distributed graphs.

// topoIn resolves the communicator of a topology call and checks its
// output pointers.
func topoIn(fn string, comm uintptr, outs ...unsafe.Pointer) (*commEntry, int32) {
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return nil, rc
	}
	for _, p := range outs {
		if p == nil {
			return nil, raiseOn(fn, ce, classErr(MPI_ERR_ARG, "an output argument is NULL"))
		}
	}
	return ce, 0
}

func putInts(p unsafe.Pointer, vs []int) {
	if len(vs) == 0 {
		return
	}
	out := unsafe.Slice((*int32)(p), len(vs))
	for i, v := range vs {
		out[i] = int32(v)
	}
}

// gridArgs reads the dims and periods of a Cartesian call.
func gridArgs(fn string, ce *commEntry, ndims int32, dims, periods unsafe.Pointer) ([]int, []bool, int32) {
	if ndims < 0 {
		return nil, nil, raiseOn(fn, ce, classErr(MPI_ERR_DIMS, fmt.Sprintf("ndims %d is negative", ndims)))
	}
	d, ok := cInts(dims, int(ndims))
	ps, ok2 := cInts(periods, int(ndims))
	if !ok || !ok2 {
		return nil, nil, raiseOn(fn, ce, classErr(MPI_ERR_ARG, "dims or periods is NULL"))
	}
	p := make([]bool, len(ps))
	for i, v := range ps {
		p[i] = v != 0
	}
	return d, p, 0
}

func implCart_create(comm uintptr, ndims int32, dims, periods unsafe.Pointer, reorder int32, commCart unsafe.Pointer) int32 {
	const fn = "MPI_Cart_create"
	ce, rc := topoIn(fn, comm, commCart)
	if ce == nil {
		return rc
	}
	d, p, rc := gridArgs(fn, ce, ndims, dims, periods)
	if rc != 0 {
		return rc
	}
	c, err := ce.c.CartCreate(d, p, reorder != 0)
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	newComm(ce, c, commCart)
	return MPI_SUCCESS
}

func implCart_map(comm uintptr, ndims int32, dims, periods unsafe.Pointer, newrank unsafe.Pointer) int32 {
	const fn = "MPI_Cart_map"
	ce, rc := topoIn(fn, comm, newrank)
	if ce == nil {
		return rc
	}
	d, p, rc := gridArgs(fn, ce, ndims, dims, periods)
	if rc != 0 {
		return rc
	}
	r, err := ce.c.CartMap(d, p)
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	*(*int32)(newrank) = abiRank(r)
	return MPI_SUCCESS
}

func implCartdim_get(comm uintptr, ndims unsafe.Pointer) int32 {
	const fn = "MPI_Cartdim_get"
	ce, rc := topoIn(fn, comm, ndims)
	if ce == nil {
		return rc
	}
	n, err := ce.c.CartDim()
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	*(*int32)(ndims) = int32(n)
	return MPI_SUCCESS
}

func implCart_get(comm uintptr, maxdims int32, dims, periods, coords unsafe.Pointer) int32 {
	const fn = "MPI_Cart_get"
	ce, rc := topoIn(fn, comm)
	if ce == nil {
		return rc
	}
	d, p, co, err := ce.c.CartGet()
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	if int(maxdims) < len(d) {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, fmt.Sprintf("maxdims %d is less than the grid's %d dimensions", maxdims, len(d))))
	}
	if len(d) > 0 && (dims == nil || periods == nil || coords == nil) {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "dims, periods or coords is NULL"))
	}
	pi := make([]int, len(p))
	for i, b := range p {
		if b {
			pi[i] = 1
		}
	}
	putInts(dims, d)
	putInts(periods, pi)
	putInts(coords, co)
	return MPI_SUCCESS
}

func implCart_coords(comm uintptr, rank, maxdims int32, coords unsafe.Pointer) int32 {
	const fn = "MPI_Cart_coords"
	ce, rc := topoIn(fn, comm)
	if ce == nil {
		return rc
	}
	co, err := ce.c.CartCoords(int(rank))
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	if int(maxdims) < len(co) || (len(co) > 0 && coords == nil) {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, fmt.Sprintf("maxdims %d or coords too small for %d dimensions", maxdims, len(co))))
	}
	putInts(coords, co)
	return MPI_SUCCESS
}

func implCart_rank(comm uintptr, coords, rank unsafe.Pointer) int32 {
	const fn = "MPI_Cart_rank"
	ce, rc := topoIn(fn, comm, rank)
	if ce == nil {
		return rc
	}
	n, err := ce.c.CartDim()
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	co, ok := cInts(coords, n)
	if !ok {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "coords is NULL"))
	}
	r, err := ce.c.CartRank(co)
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	*(*int32)(rank) = abiRank(r)
	return MPI_SUCCESS
}

func implCart_shift(comm uintptr, direction, disp int32, source, dest unsafe.Pointer) int32 {
	const fn = "MPI_Cart_shift"
	ce, rc := topoIn(fn, comm, source, dest)
	if ce == nil {
		return rc
	}
	s, d, err := ce.c.CartShift(int(direction), int(disp))
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	*(*int32)(source), *(*int32)(dest) = abiRank(s), abiRank(d)
	return MPI_SUCCESS
}

func implCart_sub(comm uintptr, remain, newcomm unsafe.Pointer) int32 {
	const fn = "MPI_Cart_sub"
	ce, rc := topoIn(fn, comm, newcomm)
	if ce == nil {
		return rc
	}
	n, err := ce.c.CartDim()
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	r, ok := cInts(remain, n)
	if !ok {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "remain_dims is NULL"))
	}
	rb := make([]bool, n)
	for i, v := range r {
		rb[i] = v != 0
	}
	c, err := ce.c.CartSub(rb)
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	newComm(ce, c, newcomm)
	return MPI_SUCCESS
}

func implDims_create(nnodes, ndims int32, dims unsafe.Pointer) int32 {
	const fn = "MPI_Dims_create"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if ndims < 0 {
		return raise(fn, noComm, classErr(MPI_ERR_DIMS, fmt.Sprintf("ndims %d is negative", ndims)))
	}
	d, ok := cInts(dims, int(ndims))
	if !ok {
		return nullArray(fn, "dims")
	}
	out, err := mpi.DimsCreate(int(nnodes), d)
	if err != nil {
		return raise(fn, noComm, err)
	}
	putInts(dims, out)
	return MPI_SUCCESS
}

// graphArgs reads the index and edges arrays of nnodes nodes.
func graphArgs(fn string, ce *commEntry, nnodes int32, index, edges unsafe.Pointer) ([]int, []int, int32) {
	if nnodes < 0 {
		return nil, nil, raiseOn(fn, ce, classErr(MPI_ERR_ARG, fmt.Sprintf("nnodes %d is negative", nnodes)))
	}
	ix, ok := cInts(index, int(nnodes))
	if !ok {
		return nil, nil, raiseOn(fn, ce, classErr(MPI_ERR_ARG, "index is NULL"))
	}
	ne := 0
	if nnodes > 0 {
		ne = ix[nnodes-1]
	}
	if ne < 0 {
		return nil, nil, raiseOn(fn, ce, classErr(MPI_ERR_ARG, fmt.Sprintf("index[%d] = %d is negative", nnodes-1, ne)))
	}
	es, ok := cInts(edges, ne)
	if !ok {
		return nil, nil, raiseOn(fn, ce, classErr(MPI_ERR_ARG, "edges is NULL"))
	}
	return ix, es, 0
}

func implGraph_create(comm uintptr, nnodes int32, index, edges unsafe.Pointer, reorder int32, commGraph unsafe.Pointer) int32 {
	const fn = "MPI_Graph_create"
	ce, rc := topoIn(fn, comm, commGraph)
	if ce == nil {
		return rc
	}
	ix, es, rc := graphArgs(fn, ce, nnodes, index, edges)
	if rc != 0 {
		return rc
	}
	c, err := ce.c.GraphCreate(ix, es, reorder != 0)
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	newComm(ce, c, commGraph)
	return MPI_SUCCESS
}

func implGraph_map(comm uintptr, nnodes int32, index, edges, newrank unsafe.Pointer) int32 {
	const fn = "MPI_Graph_map"
	ce, rc := topoIn(fn, comm, newrank)
	if ce == nil {
		return rc
	}
	ix, es, rc := graphArgs(fn, ce, nnodes, index, edges)
	if rc != 0 {
		return rc
	}
	r, err := ce.c.GraphMap(ix, es)
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	*(*int32)(newrank) = abiRank(r)
	return MPI_SUCCESS
}

func implGraphdims_get(comm uintptr, nnodes, nedges unsafe.Pointer) int32 {
	const fn = "MPI_Graphdims_get"
	ce, rc := topoIn(fn, comm, nnodes, nedges)
	if ce == nil {
		return rc
	}
	n, e, err := ce.c.GraphdimsGet()
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	*(*int32)(nnodes), *(*int32)(nedges) = int32(n), int32(e)
	return MPI_SUCCESS
}

func implGraph_get(comm uintptr, maxindex, maxedges int32, index, edges unsafe.Pointer) int32 {
	const fn = "MPI_Graph_get"
	ce, rc := topoIn(fn, comm)
	if ce == nil {
		return rc
	}
	ix, es, err := ce.c.GraphGet()
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	if int(maxindex) < len(ix) || int(maxedges) < len(es) || (len(ix) > 0 && index == nil) || (len(es) > 0 && edges == nil) {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, fmt.Sprintf("the arrays are too small for %d nodes and %d edges", len(ix), len(es))))
	}
	putInts(index, ix)
	putInts(edges, es)
	return MPI_SUCCESS
}

func implGraph_neighbors_count(comm uintptr, rank int32, n unsafe.Pointer) int32 {
	const fn = "MPI_Graph_neighbors_count"
	ce, rc := topoIn(fn, comm, n)
	if ce == nil {
		return rc
	}
	k, err := ce.c.GraphNeighborsCount(int(rank))
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	*(*int32)(n) = int32(k)
	return MPI_SUCCESS
}

func implGraph_neighbors(comm uintptr, rank, maxneighbors int32, neighbors unsafe.Pointer) int32 {
	const fn = "MPI_Graph_neighbors"
	ce, rc := topoIn(fn, comm)
	if ce == nil {
		return rc
	}
	nb, err := ce.c.GraphNeighbors(int(rank))
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	if int(maxneighbors) < len(nb) || (len(nb) > 0 && neighbors == nil) {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, fmt.Sprintf("maxneighbors %d is less than the %d neighbours", maxneighbors, len(nb))))
	}
	putInts(neighbors, nb)
	return MPI_SUCCESS
}

// weightsArg reads n weights: MPI_UNWEIGHTED is mpi.Unweighted and
// MPI_WEIGHTS_EMPTY an empty weighted list.
func weightsArg(p unsafe.Pointer, n int) ([]int, bool) {
	switch uintptr(p) {
	case 10: // MPI_UNWEIGHTED
		return mpi.Unweighted, true
	case 11: // MPI_WEIGHTS_EMPTY
		if n == 0 {
			return []int{}, true
		}
		return nil, false
	}
	return cInts(p, n)
}

func implDist_graph_create_adjacent(comm uintptr, indegree int32, sources, sourceweights unsafe.Pointer, outdegree int32, destinations, destweights unsafe.Pointer, info uintptr, reorder int32, out unsafe.Pointer) int32 {
	const fn = "MPI_Dist_graph_create_adjacent"
	ce, rc := topoIn(fn, comm, out)
	if ce == nil {
		return rc
	}
	in, rc := infoOrNull(fn, info)
	if rc != 0 {
		return rc
	}
	if indegree < 0 || outdegree < 0 {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, fmt.Sprintf("indegree %d or outdegree %d is negative", indegree, outdegree)))
	}
	src, ok1 := cInts(sources, int(indegree))
	sw, ok2 := weightsArg(sourceweights, int(indegree))
	dst, ok3 := cInts(destinations, int(outdegree))
	dw, ok4 := weightsArg(destweights, int(outdegree))
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "a NULL array of sources, destinations or weights"))
	}
	c, err := ce.c.DistGraphCreateAdjacent(src, sw, dst, dw, in, reorder != 0)
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	newComm(ce, c, out)
	return MPI_SUCCESS
}

func implDist_graph_create(comm uintptr, n int32, sources, degrees, destinations, weights unsafe.Pointer, info uintptr, reorder int32, out unsafe.Pointer) int32 {
	const fn = "MPI_Dist_graph_create"
	ce, rc := topoIn(fn, comm, out)
	if ce == nil {
		return rc
	}
	in, rc := infoOrNull(fn, info)
	if rc != 0 {
		return rc
	}
	if n < 0 {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, fmt.Sprintf("n %d is negative", n)))
	}
	src, ok1 := cInts(sources, int(n))
	deg, ok2 := cInts(degrees, int(n))
	if !ok1 || !ok2 {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "sources or degrees is NULL"))
	}
	ne := 0
	for i, d := range deg {
		if d < 0 {
			return raiseOn(fn, ce, classErr(MPI_ERR_ARG, fmt.Sprintf("degrees[%d] = %d is negative", i, d)))
		}
		ne += d
	}
	dst, ok3 := cInts(destinations, ne)
	w, ok4 := weightsArg(weights, ne)
	if !ok3 || !ok4 {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "destinations or weights is NULL"))
	}
	c, err := ce.c.DistGraphCreate(src, deg, dst, w, in, reorder != 0)
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	newComm(ce, c, out)
	return MPI_SUCCESS
}

func implDist_graph_neighbors_count(comm uintptr, indegree, outdegree, weighted unsafe.Pointer) int32 {
	const fn = "MPI_Dist_graph_neighbors_count"
	ce, rc := topoIn(fn, comm, indegree, outdegree, weighted)
	if ce == nil {
		return rc
	}
	i, o, w, err := ce.c.DistGraphNeighborsCount()
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	*(*int32)(indegree), *(*int32)(outdegree) = int32(i), int32(o)
	setFlag(weighted, w)
	return MPI_SUCCESS
}

func implDist_graph_neighbors(comm uintptr, maxin int32, sources, sourceweights unsafe.Pointer, maxout int32, destinations, destweights unsafe.Pointer) int32 {
	const fn = "MPI_Dist_graph_neighbors"
	ce, rc := topoIn(fn, comm)
	if ce == nil {
		return rc
	}
	src, sw, dst, dw, err := ce.c.DistGraphNeighbors()
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	if int(maxin) < len(src) || int(maxout) < len(dst) || (len(src) > 0 && sources == nil) || (len(dst) > 0 && destinations == nil) {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, fmt.Sprintf("the arrays are too small for %d sources and %d destinations", len(src), len(dst))))
	}
	putInts(sources, src)
	putInts(destinations, dst)
	// Weights go only where the caller gave an array.
	if sw != nil && uintptr(sourceweights) > 11 {
		putInts(sourceweights, sw)
	}
	if dw != nil && uintptr(destweights) > 11 {
		putInts(destweights, dw)
	}
	return MPI_SUCCESS
}

func implTopo_test(comm uintptr, status unsafe.Pointer) int32 {
	const fn = "MPI_Topo_test"
	ce, rc := topoIn(fn, comm, status)
	if ce == nil {
		return rc
	}
	k, err := mpi.TopoTest(ce.c)
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	v := int32(MPI_UNDEFINED)
	switch k {
	case mpi.Cart:
		v = MPI_CART
	case mpi.Graph:
		v = MPI_GRAPH
	case mpi.DistGraph:
		v = MPI_DIST_GRAPH
	}
	*(*int32)(status) = v
	return MPI_SUCCESS
}
