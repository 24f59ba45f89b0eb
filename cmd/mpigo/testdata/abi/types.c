/* types: a column of a row-major matrix as an MPI_Type_vector, and a
 * contiguous type. Needs 2 ranks or more; ranks 0 and 1 talk. */
#include <mpi.h>
#include "check.h"

int main(int argc, char **argv)
{
	int rank, size, i, j, n;
	double m[4][5];
	MPI_Datatype col, pair;

	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	OK(MPI_Type_vector(4, 1, 5, MPI_DOUBLE, &col));
	CHECK((intptr_t)col > 4095, "user datatype handle %p", (void *)col);
	OK(MPI_Type_commit(&col));
	OK(MPI_Type_size(col, &n));
	CHECK(n == 4 * (int)sizeof(double), "vector size %d", n);
	OK(MPI_Type_contiguous(2, MPI_INT, &pair));
	OK(MPI_Type_commit(&pair));
	OK(MPI_Type_size(pair, &n));
	CHECK(n == 2 * (int)sizeof(int), "contiguous size %d", n);
	OK(MPI_Type_size(MPI_LONG, &n));
	CHECK(n == (int)sizeof(long), "MPI_LONG size %d", n);
	OK(MPI_Type_size(MPI_SHORT, &n));
	CHECK(n == (int)sizeof(short), "MPI_SHORT size %d", n);

	for (i = 0; i < 4; i++)
		for (j = 0; j < 5; j++)
			m[i][j] = rank == 0 ? i * 10 + j : -1;
	if (rank == 0) {
		/* Column 2 as a column of the receiver's matrix, column 3 as 4
		 * contiguous doubles. */
		OK(MPI_Send(&m[0][2], 1, col, 1, 0, MPI_COMM_WORLD));
		OK(MPI_Send(&m[0][3], 1, col, 1, 1, MPI_COMM_WORLD));
		int p[4] = {1, 2, 3, 4};
		OK(MPI_Send(p, 2, pair, 1, 2, MPI_COMM_WORLD));
	} else if (rank == 1) {
		double flat[4];
		MPI_Status st;
		OK(MPI_Recv(&m[0][4], 1, col, 0, 0, MPI_COMM_WORLD, &st));
		OK(MPI_Get_count(&st, col, &n));
		CHECK(n == 1, "count of col %d", n);
		OK(MPI_Recv(flat, 4, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		for (i = 0; i < 4; i++) {
			CHECK(m[i][4] == i * 10 + 2, "m[%d][4] = %g", i, m[i][4]);
			CHECK(m[i][3] == -1, "m[%d][3] overwritten", i);
			CHECK(flat[i] == i * 10 + 3, "flat[%d] = %g", i, flat[i]);
		}
		int p[4];
		OK(MPI_Recv(p, 4, MPI_INT, 0, 2, MPI_COMM_WORLD, &st));
		OK(MPI_Get_count(&st, pair, &n));
		CHECK(n == 2 && p[3] == 4, "pairs %d, p[3] %d", n, p[3]);
		printf("types OK\n");
	}
	OK(MPI_Type_free(&col));
	OK(MPI_Type_free(&pair));
	CHECK(col == MPI_DATATYPE_NULL && pair == MPI_DATATYPE_NULL, "Type_free did not reset the handles");
	OK(MPI_Finalize());
	return 0;
}
