/* coll: collectives with predefined operations and a user operation,
 * MPI_IN_PLACE, and communicators made by Comm_dup and Comm_split. */
#include <mpi.h>
#include "check.h"

static int user_calls;
static MPI_Datatype user_type;

/* absmax: elementwise maximum of absolute values of ints. */
static void absmax(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	int *a = in, *b = inout, i;
	user_calls++;
	user_type = *dt;
	for (i = 0; i < *len; i++) {
		int x = a[i] < 0 ? -a[i] : a[i], y = b[i] < 0 ? -b[i] : b[i];
		b[i] = x > y ? x : y;
	}
}

int main(int argc, char **argv)
{
	int rank, size, i;

	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	OK(MPI_Barrier(MPI_COMM_WORLD));

	int b[3] = {0, 0, 0};
	if (rank == 1 % size) { b[0] = 11; b[1] = 22; b[2] = 33; }
	OK(MPI_Bcast(b, 3, MPI_INT, 1 % size, MPI_COMM_WORLD));
	CHECK(b[0] == 11 && b[2] == 33, "Bcast %d %d", b[0], b[2]);

	int x = rank + 1, s = -1;
	OK(MPI_Reduce(&x, &s, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
	if (rank == 0)
		CHECK(s == size * (size + 1) / 2, "Reduce sum %d", s);
	double dx = rank + 0.25, dmax, dmin;
	OK(MPI_Allreduce(&dx, &dmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
	OK(MPI_Allreduce(&dx, &dmin, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD));
	CHECK(dmax == size - 1 + 0.25 && dmin == 0.25, "max %g min %g", dmax, dmin);
	long lp, lx = 2;
	OK(MPI_Allreduce(&lx, &lp, 1, MPI_LONG, MPI_PROD, MPI_COMM_WORLD));
	CHECK(lp == 1L << size, "prod %ld", lp);
	unsigned bits = 1u << rank, bor, band;
	OK(MPI_Allreduce(&bits, &bor, 1, MPI_UNSIGNED, MPI_BOR, MPI_COMM_WORLD));
	OK(MPI_Allreduce(&bits, &band, 1, MPI_UNSIGNED, MPI_BAND, MPI_COMM_WORLD));
	CHECK(bor == (1u << size) - 1 && band == (size == 1 ? 1u : 0u), "bor %u band %u", bor, band);
	int t = rank == 0, land, lor;
	OK(MPI_Allreduce(&t, &land, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD));
	OK(MPI_Allreduce(&t, &lor, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD));
	CHECK(land == (size == 1) && lor == 1, "land %d lor %d", land, lor);
	float fs = 1.5f, fsum;
	OK(MPI_Allreduce(&fs, &fsum, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
	CHECK(fsum == 1.5f * size, "float sum %g", fsum);

	/* In place. */
	int ip[2] = {rank, 1};
	OK(MPI_Allreduce(MPI_IN_PLACE, ip, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	CHECK(ip[0] == size * (size - 1) / 2 && ip[1] == size, "in place %d %d", ip[0], ip[1]);

	/* A user operation: it sees the datatype handle the caller passed. */
	MPI_Op op;
	OK(MPI_Op_create(absmax, 1, &op));
	CHECK(op != MPI_OP_NULL && (intptr_t)op > 4095, "user op handle %p", (void *)op);
	int u[2] = {rank % 2 ? -rank * 3 : rank, -1}, um[2];
	OK(MPI_Allreduce(u, um, 2, MPI_INT, op, MPI_COMM_WORLD));
	int want = 0;
	for (i = 0; i < size; i++)
		if (i * (i % 2 ? 3 : 1) > want)
			want = i * (i % 2 ? 3 : 1);
	/* One rank: the input, with no call of the operation. */
	CHECK(um[0] == want && um[1] == (size > 1 ? 1 : -1), "user op got %d %d, want %d", um[0], um[1], want);
	int calls = 0;
	OK(MPI_Allreduce(&user_calls, &calls, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	CHECK(size == 1 || calls > 0, "the user op was never called");
	if (user_calls > 0)
		CHECK(user_type == MPI_INT, "user op saw datatype %p, not MPI_INT", (void *)user_type);
	OK(MPI_Op_free(&op));
	CHECK(op == MPI_OP_NULL, "Op_free");

	/* Gather, Scatter, Allgather, Alltoall. */
	int *all = malloc(sizeof(int) * size * 2), *got = malloc(sizeof(int) * size * 2);
	int mine[2] = {rank, rank * rank};
	OK(MPI_Gather(mine, 2, MPI_INT, all, 2, MPI_INT, 0, MPI_COMM_WORLD));
	if (rank == 0)
		for (i = 0; i < size; i++)
			CHECK(all[2 * i] == i && all[2 * i + 1] == i * i, "Gather[%d] %d %d", i, all[2 * i], all[2 * i + 1]);
	if (rank == 0)
		for (i = 0; i < 2 * size; i++)
			all[i] = 1000 + i;
	OK(MPI_Scatter(all, 2, MPI_INT, mine, 2, MPI_INT, 0, MPI_COMM_WORLD));
	CHECK(mine[0] == 1000 + 2 * rank && mine[1] == 1001 + 2 * rank, "Scatter %d %d", mine[0], mine[1]);
	OK(MPI_Allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, MPI_COMM_WORLD));
	for (i = 0; i < size; i++)
		CHECK(got[i] == i, "Allgather[%d] %d", i, got[i]);
	for (i = 0; i < size; i++)
		all[i] = rank * 100 + i;
	OK(MPI_Alltoall(all, 1, MPI_INT, got, 1, MPI_INT, MPI_COMM_WORLD));
	for (i = 0; i < size; i++)
		CHECK(got[i] == i * 100 + rank, "Alltoall[%d] %d", i, got[i]);

	/* Communicators: dup, split by parity, free. */
	MPI_Comm dup, half;
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
	CHECK((intptr_t)dup > 4095, "user communicator handle %p in the predefined range", (void *)dup);
	OK(MPI_Comm_split(dup, rank % 2, -rank, &half));
	int hr, hs, hsum;
	OK(MPI_Comm_rank(half, &hr));
	OK(MPI_Comm_size(half, &hs));
	CHECK(hs == (size + 1 - rank % 2) / 2, "split size %d", hs);
	CHECK(hr == hs - 1 - rank / 2, "split rank %d (key -rank)", hr);
	OK(MPI_Allreduce(&rank, &hsum, 1, MPI_INT, MPI_SUM, half));
	MPI_Comm none;
	OK(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, 0, &none));
	CHECK((rank == 0) == (none != MPI_COMM_NULL), "MPI_UNDEFINED color gave a communicator");
	if (none != MPI_COMM_NULL)
		OK(MPI_Comm_free(&none));
	OK(MPI_Comm_free(&half));
	OK(MPI_Comm_free(&dup));
	CHECK(half == MPI_COMM_NULL && dup == MPI_COMM_NULL, "Comm_free did not reset the handles");
	free(all);
	free(got);
	if (rank == 0)
		printf("coll OK\n");
	OK(MPI_Finalize());
	return 0;
}
