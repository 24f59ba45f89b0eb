/* groups: the group calls on the world's group, checked against what
 * they must give for any number of ranks (run with 4). */
#include <mpi.h>
#include "check.h"

static void expect_err(int rc, int want, const char *what)
{
	int cls = -1;
	CHECK(rc != MPI_SUCCESS, "%s succeeded", what);
	MPI_Error_class(rc, &cls);
	CHECK(cls == want, "%s: class %d, want %d", what, cls, want);
}

int main(int argc, char **argv)
{
	int rank, size, n, r, res, i;
	MPI_Group world, evens, odds, u, x, d, g;

	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	CHECK(size >= 2, "needs 2 ranks");
	OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
	OK(MPI_Group_size(world, &n));
	OK(MPI_Group_rank(world, &r));
	CHECK(n == size && r == rank, "world group size %d rank %d", n, r);

	/* evens by range, odds by exclusion of the evens. */
	int rg[1][3] = {{0, size - 1, 2}};
	OK(MPI_Group_range_incl(world, 1, rg, &evens));
	OK(MPI_Group_range_excl(world, 1, rg, &odds));
	OK(MPI_Group_size(evens, &n));
	CHECK(n == (size + 1) / 2, "evens size %d", n);
	OK(MPI_Group_rank(odds, &r));
	CHECK(r == (rank % 2 ? rank / 2 : MPI_UNDEFINED), "rank in odds %d", r);
	OK(MPI_Group_union(odds, evens, &u));
	OK(MPI_Group_compare(u, world, &res));
	CHECK(res == (size > 2 ? MPI_SIMILAR : MPI_UNEQUAL) || (size == 2 && res == MPI_SIMILAR), "union vs world %d", res);
	OK(MPI_Group_intersection(odds, evens, &x));
	CHECK(x == MPI_GROUP_EMPTY, "odds and evens intersect");
	OK(MPI_Group_difference(world, odds, &d));
	OK(MPI_Group_compare(d, evens, &res));
	CHECK(res == MPI_IDENT, "world minus odds is not evens: %d", res);

	/* translate ranks: world rank i is i/2 in evens or undefined. */
	int in[8], out[8];
	for (i = 0; i < size && i < 8; i++)
		in[i] = i;
	in[0] = MPI_PROC_NULL;
	OK(MPI_Group_translate_ranks(world, size < 8 ? size : 8, in, evens, out));
	CHECK(out[0] == MPI_PROC_NULL, "PROC_NULL translated to %d", out[0]);
	for (i = 1; i < size && i < 8; i++)
		CHECK(out[i] == (i % 2 ? MPI_UNDEFINED : i / 2), "translate %d -> %d", i, out[i]);

	/* incl in reverse order, excl of rank 0. */
	int rev[8];
	for (i = 0; i < size && i < 8; i++)
		rev[i] = size - 1 - i;
	OK(MPI_Group_incl(world, size, rev, &g));
	OK(MPI_Group_rank(g, &r));
	CHECK(r == size - 1 - rank, "reversed rank %d", r);
	OK(MPI_Group_compare(g, world, &res));
	CHECK(res == MPI_SIMILAR, "reversed vs world %d", res);
	OK(MPI_Group_free(&g));
	CHECK(g == MPI_GROUP_NULL, "Group_free did not reset the handle");
	int zero = 0;
	OK(MPI_Group_excl(world, 1, &zero, &g));
	OK(MPI_Group_size(g, &n));
	CHECK(n == size - 1, "excl size %d", n);

	/* A communicator of the odd ranks, its group, comm_create_group. */
	MPI_Comm oc;
	OK(MPI_Comm_create(MPI_COMM_WORLD, odds, &oc));
	if (rank % 2) {
		MPI_Group og;
		OK(MPI_Comm_group(oc, &og));
		OK(MPI_Group_compare(og, odds, &res));
		CHECK(res == MPI_IDENT, "group of the odd communicator %d", res);
		OK(MPI_Group_free(&og));
		OK(MPI_Comm_free(&oc));
	} else
		CHECK(oc == MPI_COMM_NULL, "even rank got a communicator");
	if (rank % 2 == 0) {
		MPI_Comm ec;
		OK(MPI_Comm_create_group(MPI_COMM_WORLD, evens, 7, &ec));
		OK(MPI_Comm_size(ec, &n));
		CHECK(n == (size + 1) / 2, "create_group size %d", n);
		OK(MPI_Comm_free(&ec));
	}

	/* Bad input. */
	expect_err(MPI_Group_size(MPI_GROUP_NULL, &n), MPI_ERR_GROUP, "MPI_GROUP_NULL");
	expect_err(MPI_Group_size(g, NULL), MPI_ERR_ARG, "NULL size");
	MPI_Group dead = g;
	OK(MPI_Group_free(&g));
	expect_err(MPI_Group_rank(dead, &r), MPI_ERR_GROUP, "freed group");
	expect_err(MPI_Group_rank((MPI_Group)MPI_COMM_WORLD, &r), MPI_ERR_GROUP, "communicator as group");
	int bad = size;
	expect_err(MPI_Group_incl(world, 1, &bad, &g), MPI_ERR_RANK, "rank out of range");
	expect_err(MPI_Group_incl(world, -1, &bad, &g), MPI_ERR_ARG, "negative n");

	MPI_Group all[] = {world, evens, odds, u, d};
	for (i = 0; i < 5; i++)
		OK(MPI_Group_free(&all[i]));
	OK(MPI_Group_free(&x)); /* MPI_GROUP_EMPTY may be freed */
	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("groups OK\n");
	OK(MPI_Finalize());
	return 0;
}
