/* ldrma: C's long double types in one-sided accumulates (MPICH's
 * rma/fetch_and_op_long_double, rma/acc_pairtype, rma/atomic_get with
 * MPI_LONG_DOUBLE_INT). Every rank adds to rank 0's window many times,
 * on a window of memory it created (reached by message) and on one
 * MPI_Win_allocate made (shared memory where the ranks share a node):
 * the sums are exact in long double precision only and come out whole
 * (no update lost), MPI_Fetch_and_op and MPI_Get_accumulate return the
 * values before, MAXLOC on a vector of MPI_LONG_DOUBLE_INT changes only
 * its blocks, a complex product and a derived datatype of long doubles
 * accumulate, and an operation long double does not have is
 * MPI_ERR_OP. */
#include <mpi.h>
#include <complex.h>
#include <stddef.h>
#include "check.h"

struct ldi {
	long double v;
	int i;
};

enum { ROUNDS = 25, NPAIR = 10 };

/* The window's layout, in long double slots. */
struct area {
	long double sum;       /* MPI_Accumulate MPI_SUM */
	long double fop;       /* MPI_Fetch_and_op MPI_SUM */
	long double gacc;      /* MPI_Get_accumulate MPI_SUM */
	long double two[2];    /* a contiguous pair of long doubles */
	long double _Complex z; /* MPI_PROD */
	struct ldi pairs[NPAIR];
};

static int cls(int rc)
{
	int c = -1;
	OK(MPI_Error_class(rc, &c));
	return c;
}

static void run(MPI_Win win, struct area *a, int rank, int size, const char *what)
{
	const long double eps = 0x1p-60L;
	if (rank == 0) {
		OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
		a->sum = a->fop = a->gacc = 1.0L;
		a->two[0] = a->two[1] = 0;
		a->z = 1;
		for (int i = 0; i < NPAIR; i++) {
			a->pairs[i].v = 0;
			a->pairs[i].i = -1;
		}
		OK(MPI_Win_unlock(0, win));
	}
	OK(MPI_Barrier(MPI_COMM_WORLD));

	MPI_Datatype two, every2;
	OK(MPI_Type_contiguous(2, MPI_LONG_DOUBLE, &two));
	OK(MPI_Type_commit(&two));
	OK(MPI_Type_vector(NPAIR / 2, 1, 2, MPI_LONG_DOUBLE_INT, &every2));
	OK(MPI_Type_commit(&every2));
	long double twoin[2] = {1.0L, eps};
	struct ldi mine[NPAIR];
	for (int i = 0; i < NPAIR; i++) {
		mine[i].v = (long double)rank + 1;
		mine[i].i = rank;
	}
	long double _Complex zi = I;

	OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
	for (int k = 0; k < ROUNDS; k++) {
		long double old = -1, old2 = -1;
		OK(MPI_Accumulate(&eps, 1, MPI_LONG_DOUBLE, 0, offsetof(struct area, sum), 1, MPI_LONG_DOUBLE, MPI_SUM, win));
		OK(MPI_Fetch_and_op(&eps, &old, MPI_LONG_DOUBLE, 0, offsetof(struct area, fop), MPI_SUM, win));
		OK(MPI_Get_accumulate(&eps, 1, MPI_LONG_DOUBLE, &old2, 1, MPI_LONG_DOUBLE, 0, offsetof(struct area, gacc), 1, MPI_LONG_DOUBLE, MPI_SUM, win));
		OK(MPI_Win_flush(0, win));
		CHECK(old >= 1.0L && old < 1.0L + size * ROUNDS * eps, "%s: fetched %.21Lg", what, old);
		CHECK(old2 >= 1.0L && old2 < 1.0L + size * ROUNDS * eps, "%s: get_accumulate returned %.21Lg", what, old2);
		OK(MPI_Accumulate(twoin, 1, two, 0, offsetof(struct area, two), 1, two, MPI_SUM, win));
	}
	if (rank < 4)
		OK(MPI_Accumulate(&zi, 1, MPI_C_LONG_DOUBLE_COMPLEX, 0, offsetof(struct area, z), 1, MPI_C_LONG_DOUBLE_COMPLEX, MPI_PROD, win));
	OK(MPI_Accumulate(mine, 1, every2, 0, offsetof(struct area, pairs), 1, every2, MPI_MAXLOC, win));
	/* An operation long double does not have. */
	CHECK(cls(MPI_Accumulate(&eps, 1, MPI_LONG_DOUBLE, 0, 0, 1, MPI_LONG_DOUBLE, MPI_BAND, win)) == MPI_ERR_OP, "%s: MPI_BAND on long double", what);
	CHECK(cls(MPI_Accumulate(mine, 1, MPI_LONG_DOUBLE_INT, 0, offsetof(struct area, pairs), 1, MPI_LONG_DOUBLE_INT, MPI_SUM, win)) == MPI_ERR_OP, "%s: MPI_SUM on MPI_LONG_DOUBLE_INT", what);
	OK(MPI_Win_unlock(0, win));
	OK(MPI_Barrier(MPI_COMM_WORLD));

	if (rank == 0) {
		OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
		long double want = 1.0L + (long double)(size * ROUNDS) * eps;
		CHECK(a->sum == want, "%s: MPI_Accumulate sum %.21Lg, want %.21Lg", what, a->sum, want);
		CHECK(a->fop == want, "%s: MPI_Fetch_and_op sum %.21Lg, want %.21Lg", what, a->fop, want);
		CHECK(a->gacc == want, "%s: MPI_Get_accumulate sum %.21Lg, want %.21Lg", what, a->gacc, want);
		CHECK(a->two[0] == (long double)(size * ROUNDS) && a->two[1] == (long double)(size * ROUNDS) * eps,
		      "%s: contiguous pair %Lg %Lg", what, a->two[0], a->two[1]);
		long double _Complex zw = 1;
		for (int r = 0; r < size && r < 4; r++)
			zw *= I;
		CHECK(a->z == zw, "%s: complex product %Lg%+Lgi", what, creall(a->z), cimagl(a->z));
		for (int i = 0; i < NPAIR; i++) {
			if (i % 2 == 0)
				CHECK(a->pairs[i].v == (long double)size && a->pairs[i].i == size - 1, "%s: pair %d is %Lg at %d", what, i, a->pairs[i].v, a->pairs[i].i);
			else
				CHECK(a->pairs[i].v == 0 && a->pairs[i].i == -1, "%s: pair %d outside the vector changed", what, i);
		}
		OK(MPI_Win_unlock(0, win));
	}
	OK(MPI_Type_free(&two));
	OK(MPI_Type_free(&every2));
	OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
	int rank, size;
	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	if (sizeof(long double) != 16) {
		OK(MPI_Finalize());
		if (rank == 0)
			printf("ldrma OK\n");
		return 0;
	}

	struct area *mem;
	MPI_Win win;
	OK(MPI_Alloc_mem(sizeof *mem, MPI_INFO_NULL, &mem));
	OK(MPI_Win_create(mem, sizeof *mem, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
	run(win, mem, rank, size, "MPI_Win_create");
	OK(MPI_Win_free(&win));
	OK(MPI_Free_mem(mem));

	OK(MPI_Win_allocate(sizeof *mem, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
	OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
	run(win, mem, rank, size, "MPI_Win_allocate");
	OK(MPI_Win_free(&win));

	OK(MPI_Finalize());
	if (rank == 0)
		printf("ldrma OK\n");
	return 0;
}
