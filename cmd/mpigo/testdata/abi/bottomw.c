/* bottomw.c: MPI_Alltoallw, MPI_Ialltoallw and MPI_Neighbor_alltoallw
 * with MPI_BOTTOM: every block's datatype holds the absolute address of a
 * variable of its own (MPI_Get_address), as mpi4py's tests and codes that
 * gather scattered fields do; and an alltoallw whose blocks start below
 * the buffer (a negative lower bound). */
#include <mpi.h>
#include "check.h"

#define MAXP 16

int main(int argc, char **argv)
{
	int rank, size;
	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	CHECK(size <= MAXP, "at most %d ranks", MAXP);

	/* One separate variable per peer on each side. */
	static int out[MAXP][3], in[MAXP][3];
	int scounts[MAXP], rcounts[MAXP], zeros[MAXP];
	MPI_Datatype stypes[MAXP], rtypes[MAXP];
	int ntypes = size < 2 ? 2 : size; /* the ring below has 2 neighbours */
	for (int i = 0; i < ntypes; i++) {
		MPI_Aint a;
		int len = 2;
		for (int k = 0; k < 3; k++)
			out[i][k] = 1000 * rank + 10 * i + k, in[i][k] = -1;
		OK(MPI_Get_address(&out[i][1], &a)); /* elements 1 and 2 */
		OK(MPI_Type_create_hindexed(1, &len, &a, MPI_INT, &stypes[i]));
		OK(MPI_Type_commit(&stypes[i]));
		OK(MPI_Get_address(&in[i][0], &a)); /* into elements 0 and 1 */
		OK(MPI_Type_create_hindexed(1, &len, &a, MPI_INT, &rtypes[i]));
		OK(MPI_Type_commit(&rtypes[i]));
		scounts[i] = rcounts[i] = 1, zeros[i] = 0;
	}
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < size; i++)
			in[i][0] = in[i][1] = in[i][2] = -1;
		if (round == 0) {
			OK(MPI_Alltoallw(MPI_BOTTOM, scounts, zeros, stypes, MPI_BOTTOM, rcounts, zeros, rtypes, MPI_COMM_WORLD));
		} else {
			MPI_Request req;
			OK(MPI_Ialltoallw(MPI_BOTTOM, scounts, zeros, stypes, MPI_BOTTOM, rcounts, zeros, rtypes, MPI_COMM_WORLD, &req));
			OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
		}
		for (int i = 0; i < size; i++) {
			CHECK(in[i][0] == 1000 * i + 10 * rank + 1 && in[i][1] == 1000 * i + 10 * rank + 2 && in[i][2] == -1,
			      "round %d: from %d got %d %d %d", round, i, in[i][0], in[i][1], in[i][2]);
		}
	}

	/* MPI_BOTTOM with the absolute addresses in the displacements and
	 * plain datatypes (as mpi4py's tests do), through the large-count
	 * form, whose displacements are MPI_Aint. */
	{
		MPI_Aint sd[MAXP], rd[MAXP];
		MPI_Count cs[MAXP];
		MPI_Datatype ints[MAXP];
		for (int i = 0; i < size; i++) {
			OK(MPI_Get_address(&out[i][2], &sd[i]));
			OK(MPI_Get_address(&in[i][2], &rd[i]));
			ints[i] = MPI_INT;
			cs[i] = 1;
			in[i][0] = in[i][1] = in[i][2] = -1;
		}
		OK(MPI_Alltoallw_c(MPI_BOTTOM, cs, sd, ints, MPI_BOTTOM, cs, rd, ints, MPI_COMM_WORLD));
		for (int i = 0; i < size; i++)
			CHECK(in[i][2] == 1000 * i + 10 * rank + 2 && in[i][0] == -1, "displacements: from %d got %d", i, in[i][2]);
	}

	/* A ring: each rank's two neighbours, by MPI_BOTTOM. */
	{
		MPI_Comm ring;
		int dims[1] = {size}, periods[1] = {1};
		OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
		int left, right;
		OK(MPI_Cart_shift(ring, 0, 1, &left, &right));
		for (int i = 0; i < 2; i++)
			in[i][0] = in[i][1] = in[i][2] = -1;
		MPI_Aint zd[2] = {0, 0};
		OK(MPI_Neighbor_alltoallw(MPI_BOTTOM, scounts, zd, stypes, MPI_BOTTOM, rcounts, zd, rtypes, ring));
		/* Block 0 comes from the left neighbour, which sent it its
		 * block 1 (to its right); block 1 from the right, its block 0. */
		CHECK(in[0][0] == 1000 * left + 10 * 1 + 1 && in[0][1] == 1000 * left + 10 * 1 + 2, "from the left %d: %d %d", left, in[0][0], in[0][1]);
		CHECK(in[1][0] == 1000 * right + 1 && in[1][1] == 1000 * right + 2, "from the right %d: %d %d", right, in[1][0], in[1][1]);
		OK(MPI_Comm_free(&ring));
	}

	/* MPI_BOTTOM with a datatype of relative displacements is an error
	 * (MPI_ERR_BUFFER), returned under MPI_ERRORS_RETURN. */
	{
		OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
		MPI_Datatype ints[MAXP];
		for (int i = 0; i < size; i++)
			ints[i] = MPI_INT;
		int rc = MPI_Alltoallw(MPI_BOTTOM, scounts, zeros, ints, MPI_BOTTOM, rcounts, zeros, ints, MPI_COMM_WORLD);
		int cls;
		OK(MPI_Error_class(rc, &cls));
		CHECK(cls == MPI_ERR_BUFFER, "MPI_BOTTOM with MPI_INT: class %d", cls);
	}

	for (int i = 0; i < ntypes; i++) {
		OK(MPI_Type_free(&stypes[i]));
		OK(MPI_Type_free(&rtypes[i]));
	}
	OK(MPI_Finalize());
	if (rank == 0)
		printf("bottomw OK\n");
	return 0;
}
