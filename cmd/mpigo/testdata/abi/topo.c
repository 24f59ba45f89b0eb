/* topo: Cartesian grids, graphs and distributed graphs (run with 4). */
#include <mpi.h>
#include "check.h"

static void expect_err(int rc, int want, const char *what)
{
	int cls = -1;
	CHECK(rc != MPI_SUCCESS, "%s succeeded", what);
	MPI_Error_class(rc, &cls);
	CHECK(cls == want, "%s: class %d, want %d", what, cls, want);
}

/* unweighted hides MPI_UNWEIGHTED's value from the compiler, which
 * otherwise warns that the address 10 has no room for an int. */
static int *unweighted(void)
{
	volatile intptr_t v = (intptr_t)MPI_UNWEIGHTED;
	return (int *)v;
}

int main(int argc, char **argv)
{
	int rank, size, n, i, st, one = 1;
	MPI_Comm cart, row, graph, dg;

	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	CHECK(size == 4, "needs 4 ranks");

	int dims[2] = {0, 0}, periods[2] = {1, 0}, coords[2];
	OK(MPI_Dims_create(size, 2, dims));
	CHECK(dims[0] == 2 && dims[1] == 2, "dims %d %d", dims[0], dims[1]);
	int d3[3] = {0, 3, 0};
	OK(MPI_Dims_create(24, 3, d3));
	CHECK(d3[0] == 4 && d3[1] == 3 && d3[2] == 2, "dims of 24: %d %d %d", d3[0], d3[1], d3[2]);

	OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
	OK(MPI_Topo_test(cart, &st));
	CHECK(st == MPI_CART, "topo %d", st);
	OK(MPI_Topo_test(MPI_COMM_WORLD, &st));
	CHECK(st == MPI_UNDEFINED, "world's topo %d", st);
	OK(MPI_Cartdim_get(cart, &n));
	CHECK(n == 2, "cartdim %d", n);
	OK(MPI_Cart_coords(cart, rank, 2, coords));
	CHECK(coords[0] == rank / 2 && coords[1] == rank % 2, "coords of %d: %d %d", rank, coords[0], coords[1]);
	OK(MPI_Cart_rank(cart, coords, &n));
	CHECK(n == rank, "cart rank %d", n);
	int gd[2], gp[2], gc[2];
	OK(MPI_Cart_get(cart, 2, gd, gp, gc));
	CHECK(gd[0] == 2 && gp[0] == 1 && gp[1] == 0 && gc[0] == coords[0], "cart_get");
	int src, dst;
	/* Dimension 0 is periodic: shifting by 1 wraps. */
	OK(MPI_Cart_shift(cart, 0, 1, &src, &dst));
	CHECK(src == (rank + 2) % 4 && dst == (rank + 2) % 4, "shift 0: %d %d", src, dst);
	/* Dimension 1 is not: the edges get MPI_PROC_NULL. */
	OK(MPI_Cart_shift(cart, 1, 1, &src, &dst));
	CHECK(src == (rank % 2 ? rank - 1 : MPI_PROC_NULL) && dst == (rank % 2 ? MPI_PROC_NULL : rank + 1), "shift 1: %d %d", src, dst);
	int remain[2] = {0, 1};
	OK(MPI_Cart_sub(cart, remain, &row));
	OK(MPI_Comm_size(row, &n));
	CHECK(n == 2, "row size %d", n);
	OK(MPI_Comm_rank(row, &n));
	CHECK(n == rank % 2, "row rank %d", n);
	OK(MPI_Comm_free(&row));
	OK(MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &n));
	CHECK(n == rank, "cart_map %d", n);
	expect_err(MPI_Cart_shift(cart, 5, 1, &src, &dst), MPI_ERR_ARG, "bad direction");
	expect_err(MPI_Cart_coords(MPI_COMM_WORLD, 0, 2, coords), MPI_ERR_TOPOLOGY, "coords without a topology");
	OK(MPI_Comm_free(&cart));

	/* A ring as a graph. */
	int index[4] = {2, 4, 6, 8}, edges[8] = {1, 3, 0, 2, 1, 3, 2, 0};
	OK(MPI_Graph_create(MPI_COMM_WORLD, 4, index, edges, 0, &graph));
	OK(MPI_Topo_test(graph, &st));
	CHECK(st == MPI_GRAPH, "graph topo %d", st);
	int nn, ne;
	OK(MPI_Graphdims_get(graph, &nn, &ne));
	CHECK(nn == 4 && ne == 8, "graphdims %d %d", nn, ne);
	int gi[4], ge[8];
	OK(MPI_Graph_get(graph, 4, 8, gi, ge));
	CHECK(gi[3] == 8 && ge[7] == 0, "graph_get");
	OK(MPI_Graph_neighbors_count(graph, rank, &n));
	CHECK(n == 2, "neighbours count %d", n);
	int nb[2];
	OK(MPI_Graph_neighbors(graph, rank, 2, nb));
	CHECK(nb[0] == edges[2 * rank] && nb[1] == edges[2 * rank + 1], "neighbours %d %d", nb[0], nb[1]);
	OK(MPI_Graph_map(MPI_COMM_WORLD, 4, index, edges, &n));
	CHECK(n == rank, "graph_map %d", n);
	OK(MPI_Comm_free(&graph));

	/* A directed ring as a distributed graph, weighted, adjacent form. */
	int from = (rank + 3) % 4, to = (rank + 1) % 4, wf = 10 + from, wt = 10 + rank;
	OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &from, &wf, 1, &to, &wt, MPI_INFO_NULL, 0, &dg));
	OK(MPI_Topo_test(dg, &st));
	CHECK(st == MPI_DIST_GRAPH, "dist graph topo %d", st);
	int indeg, outdeg, weighted;
	OK(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted));
	CHECK(indeg == 1 && outdeg == 1 && weighted, "counts %d %d %d", indeg, outdeg, weighted);
	int s1, sw1, d1, dw1;
	OK(MPI_Dist_graph_neighbors(dg, 1, &s1, &sw1, 1, &d1, &dw1));
	CHECK(s1 == from && d1 == to && sw1 == 10 + from && dw1 == 10 + rank, "neighbours %d %d %d %d", s1, sw1, d1, dw1);
	OK(MPI_Comm_free(&dg));
	/* The same ring, each rank giving its outgoing edge, unweighted. */
	OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, &one, &to, unweighted(), MPI_INFO_NULL, 0, &dg));
	OK(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted));
	CHECK(indeg == 1 && outdeg == 1 && !weighted, "counts %d %d %d", indeg, outdeg, weighted);
	OK(MPI_Dist_graph_neighbors(dg, 1, &s1, unweighted(), 1, &d1, unweighted()));
	CHECK(s1 == from && d1 == to, "neighbours %d %d", s1, d1);
	OK(MPI_Comm_free(&dg));

	/* Bad input. */
	expect_err(MPI_Dims_create(7, 2, (int[]){2, 0}), MPI_ERR_DIMS, "7 nodes in a grid of width 2");
	expect_err(MPI_Cart_create(MPI_COMM_WORLD, 2, NULL, periods, 0, &cart), MPI_ERR_ARG, "NULL dims");
	expect_err(MPI_Topo_test(MPI_COMM_WORLD, NULL), MPI_ERR_ARG, "NULL status");
	for (i = 0; i < 1; i++)
		expect_err(MPI_Graph_neighbors_count(MPI_COMM_WORLD, 0, &n), MPI_ERR_TOPOLOGY, "graph call without a graph");

	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("topo OK\n");
	OK(MPI_Finalize());
	return 0;
}
