/* neighbor: the neighbour collectives, blocking and non-blocking, on a
 * periodic ring made by MPI_Cart_create (in- and out-neighbours: left,
 * then right). Without a topology they are MPI_ERR_TOPOLOGY. Where
 * MPI_Cart_create is not implemented (it belongs to another part of the
 * ABI) only that part runs. */
#include <mpi.h>
#include "check.h"

static void expect(int rc, int class, const char *what)
{
	int c = -1;
	CHECK(rc != MPI_SUCCESS, "%s succeeded", what);
	OK(MPI_Error_class(rc, &c));
	CHECK(c == class, "%s: class %d, want %d", what, c, class);
}

int main(int argc, char **argv)
{
	int rank, size, x = 1, y[2];
	MPI_Request rq[8];

	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

	expect(MPI_Neighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TOPOLOGY, "Neighbor_allgather without a topology");
	expect(MPI_Ineighbor_alltoall(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD, &rq[0]), MPI_ERR_TOPOLOGY, "Ineighbor_alltoall without a topology");

	int dims[1] = {size}, periods[1] = {1};
	MPI_Comm ring;
	int rc = MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
	if (rc != MPI_SUCCESS) {
		int c;
		OK(MPI_Error_class(rc, &c));
		CHECK(c == MPI_ERR_UNSUPPORTED_OPERATION, "Cart_create: class %d", c);
		OK(MPI_Barrier(MPI_COMM_WORLD));
		if (rank == 0)
			printf("neighbor OK (no MPI_Cart_create: the neighbour collectives ran on no topology)\n");
		OK(MPI_Finalize());
		return 0;
	}
	OK(MPI_Comm_rank(ring, &rank));
	int left = (rank + size - 1) % size, right = (rank + 1) % size;

	/* Allgather: a value from each in-neighbour. */
	int me = rank * 10, got[2] = {-1, -1};
	OK(MPI_Neighbor_allgather(&me, 1, MPI_INT, got, 1, MPI_INT, ring));
	CHECK(got[0] == left * 10 && got[1] == right * 10, "Neighbor_allgather %d %d", got[0], got[1]);

	/* Allgatherv: the blocks land reversed, one int from each. */
	int cnt[2] = {1, 1}, dsp[2] = {2, 0}, gv[3] = {-1, -1, -1};
	OK(MPI_Neighbor_allgatherv(&me, 1, MPI_INT, gv, cnt, dsp, MPI_INT, ring));
	CHECK(gv[2] == left * 10 && gv[0] == right * 10 && gv[1] == -1, "Neighbor_allgatherv %d %d", gv[2], gv[0]);

	/* Alltoall: block 0 goes left, block 1 right; the block from the left
	 * neighbour is what it sent right. */
	int sb[2] = {rank * 10, rank * 10 + 1}, rb[2] = {-1, -1};
	OK(MPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, ring));
	CHECK(rb[0] == left * 10 + 1 && rb[1] == right * 10, "Neighbor_alltoall %d %d", rb[0], rb[1]);

	/* Alltoallv and alltoallw with reversed receive blocks. */
	int one[2] = {1, 1}, sd[2] = {0, 1}, rd[2] = {1, 0};
	rb[0] = rb[1] = -1;
	OK(MPI_Neighbor_alltoallv(sb, one, sd, MPI_INT, rb, one, rd, MPI_INT, ring));
	CHECK(rb[1] == left * 10 + 1 && rb[0] == right * 10, "Neighbor_alltoallv %d %d", rb[1], rb[0]);
	MPI_Datatype ts[2] = {MPI_INT, MPI_INT};
	MPI_Aint sdb[2] = {0, sizeof(int)}, rdb[2] = {sizeof(int), 0};
	MPI_Count cc[2] = {1, 1};
	rb[0] = rb[1] = -1;
	OK(MPI_Neighbor_alltoallw_c(sb, cc, sdb, ts, rb, cc, rdb, ts, ring));
	CHECK(rb[1] == left * 10 + 1 && rb[0] == right * 10, "Neighbor_alltoallw_c %d %d", rb[1], rb[0]);

	/* The non-blocking forms, all in flight. */
	int g2[2], a2[2] = {-1, -1}, v2[3] = {-1, -1, -1}, w2[2] = {-1, -1}, av[2] = {-1, -1};
	MPI_Aint sdw[2] = {0, sizeof(int)}, rdw[2] = {sizeof(int), 0};
	OK(MPI_Ineighbor_allgather(&me, 1, MPI_INT, g2, 1, MPI_INT, ring, &rq[0]));
	OK(MPI_Ineighbor_alltoall(sb, 1, MPI_INT, a2, 1, MPI_INT, ring, &rq[1]));
	OK(MPI_Ineighbor_allgatherv(&me, 1, MPI_INT, v2, cnt, dsp, MPI_INT, ring, &rq[2]));
	OK(MPI_Ineighbor_alltoallv(sb, one, sd, MPI_INT, av, one, rd, MPI_INT, ring, &rq[3]));
	OK(MPI_Ineighbor_alltoallw(sb, one, sdw, ts, w2, one, rdw, ts, ring, &rq[4]));
	OK(MPI_Waitall(5, rq, MPI_STATUSES_IGNORE));
	CHECK(g2[0] == left * 10 && g2[1] == right * 10, "Ineighbor_allgather %d %d", g2[0], g2[1]);
	CHECK(a2[0] == left * 10 + 1 && a2[1] == right * 10, "Ineighbor_alltoall %d %d", a2[0], a2[1]);
	CHECK(v2[2] == left * 10 && v2[0] == right * 10, "Ineighbor_allgatherv %d %d", v2[2], v2[0]);
	CHECK(av[1] == left * 10 + 1 && av[0] == right * 10, "Ineighbor_alltoallv %d %d", av[1], av[0]);
	CHECK(w2[1] == left * 10 + 1 && w2[0] == right * 10, "Ineighbor_alltoallw %d %d", w2[1], w2[0]);

	/* Bad arguments on the ring. */
	expect(MPI_Neighbor_alltoall(NULL, 1, MPI_INT, rb, 1, MPI_INT, ring), MPI_ERR_BUFFER, "Neighbor_alltoall of NULL");
	expect(MPI_Neighbor_allgather(&me, -1, MPI_INT, rb, 1, MPI_INT, ring), MPI_ERR_COUNT, "Neighbor_allgather of a negative count");
	expect(MPI_Neighbor_alltoallv(sb, one, sd, MPI_INT, rb, NULL, rd, MPI_INT, ring), MPI_ERR_ARG, "Neighbor_alltoallv without recvcounts");
	expect(MPI_Ineighbor_allgather(&me, 1, MPI_INT, g2, 1, MPI_INT, ring, NULL), MPI_ERR_ARG, "Ineighbor_allgather without request");

	OK(MPI_Comm_free(&ring));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("neighbor OK\n");
	OK(MPI_Finalize());
	return 0;
}
