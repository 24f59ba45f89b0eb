/* comms: comparison, names, info, split_type, dup_with_info, idup and
 * intercommunicators. Needs an even number of ranks (run with 4). */
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
	int rank, size, n, res, flag;
	MPI_Comm dup, half, inter, merged, shared, c;
	MPI_Request req;
	char name[MPI_MAX_OBJECT_NAME];

	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	CHECK(size % 2 == 0, "needs an even number of ranks");

	OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &n));
	CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && n == 14, "world's name %s", name);
	/* As in MPICH and Open MPI, the null handle has a name. */
	OK(MPI_Comm_get_name(MPI_COMM_NULL, name, &n));
	CHECK(strcmp(name, "MPI_COMM_NULL") == 0 && n == 13, "MPI_COMM_NULL's name %s", name);
	OK(MPI_Win_get_name(MPI_WIN_NULL, name, &n));
	CHECK(strcmp(name, "MPI_WIN_NULL") == 0 && n == 12, "MPI_WIN_NULL's name %s", name);
	OK(MPI_Type_get_name(MPI_DATATYPE_NULL, name, &n));
	CHECK(strcmp(name, "MPI_DATATYPE_NULL") == 0 && n == 17, "MPI_DATATYPE_NULL's name %s", name);
	OK(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &res));
	CHECK(res == MPI_IDENT, "world vs world %d", res);

	MPI_Info info, used;
	OK(MPI_Info_create(&info));
	OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
	OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &dup));
	OK(MPI_Comm_compare(MPI_COMM_WORLD, dup, &res));
	CHECK(res == MPI_CONGRUENT, "world vs dup %d", res);
	OK(MPI_Comm_get_info(dup, &used));
	char v[16];
	OK(MPI_Info_get(used, "mpi_assert_no_any_tag", sizeof v, v, &flag));
	CHECK(flag && strcmp(v, "true") == 0, "dup_with_info hint %d %s", flag, v);
	OK(MPI_Info_free(&used));
	OK(MPI_Comm_set_info(dup, info));
	OK(MPI_Info_free(&info));
	OK(MPI_Comm_get_name(dup, name, &n));
	CHECK(n == 0 && name[0] == 0, "a new communicator is named %s", name);
	OK(MPI_Comm_set_name(dup, "dup of world"));
	OK(MPI_Comm_get_name(dup, name, &n));
	CHECK(strcmp(name, "dup of world") == 0, "name %s", name);
	OK(MPI_Comm_test_inter(dup, &flag));
	CHECK(!flag, "dup is an intercommunicator");

	OK(MPI_Comm_idup(dup, &c, &req));
	OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
	OK(MPI_Comm_compare(dup, c, &res));
	CHECK(res == MPI_CONGRUENT, "idup vs dup %d", res);
	OK(MPI_Allreduce(&rank, &n, 1, MPI_INT, MPI_SUM, c));
	CHECK(n == size * (size - 1) / 2, "allreduce on idup %d", n);
	OK(MPI_Comm_free(&c));
	MPI_Info hints;
	OK(MPI_Info_create(&hints));
	OK(MPI_Info_set(hints, "mpi_assert_exact_length", "true"));
	OK(MPI_Comm_idup_with_info(MPI_COMM_WORLD, hints, &c, &req));
	OK(MPI_Info_free(&hints));
	OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
	OK(MPI_Comm_get_info(c, &used));
	OK(MPI_Info_get(used, "mpi_assert_exact_length", sizeof v, v, &flag));
	CHECK(flag && strcmp(v, "true") == 0, "idup_with_info hint %d", flag);
	OK(MPI_Info_free(&used));
	OK(MPI_Comm_free(&c));

	OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared));
	OK(MPI_Comm_size(shared, &n));
	CHECK(n >= 1 && n <= size, "shared size %d", n);
	OK(MPI_Comm_free(&shared));
	/* MPI-4's guided split to shared memory is the node; the unguided
	 * split gives a strict subset of the communicator or nothing. */
	int nshared = n, m;
	MPI_Info hw;
	OK(MPI_Info_create(&hw));
	OK(MPI_Info_set(hw, "mpi_hw_resource_type", "mpi_shared_memory"));
	OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, rank, hw, &shared));
	OK(MPI_Comm_size(shared, &m));
	CHECK(m == nshared, "guided split size %d, shared %d", m, nshared);
	OK(MPI_Comm_free(&shared));
	OK(MPI_Info_set(hw, "mpi_hw_resource_type", "no such thing"));
	OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, rank, hw, &shared));
	CHECK(shared == MPI_COMM_NULL, "guided split to an unknown resource gave a communicator");
	/* MPI-4.1's resource-guided split reads the same key. */
	OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, rank, hw, &shared));
	CHECK(shared == MPI_COMM_NULL, "resource-guided split to an unknown resource gave a communicator");
	OK(MPI_Info_set(hw, "mpi_hw_resource_type", "mpi_shared_memory"));
	OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, rank, hw, &shared));
	OK(MPI_Comm_size(shared, &m));
	CHECK(m == nshared, "resource-guided split size %d, shared %d", m, nshared);
	OK(MPI_Comm_free(&shared));
	OK(MPI_Info_free(&hw));
	OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, rank, MPI_INFO_NULL, &shared));
	if (shared != MPI_COMM_NULL) {
		OK(MPI_Comm_size(shared, &m));
		CHECK(m < size, "unguided split is not a strict subset: %d of %d", m, size);
		OK(MPI_Comm_free(&shared));
	} else
		CHECK(nshared == size, "unguided split gave nothing though the node is a strict subset");
	OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, rank, MPI_INFO_NULL, &shared));
	CHECK(shared == MPI_COMM_NULL, "MPI_UNDEFINED split type gave a communicator");

	/* Two halves joined by an intercommunicator, then merged. */
	OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
	OK(MPI_Comm_compare(half, MPI_COMM_WORLD, &res));
	CHECK(res == MPI_UNEQUAL, "half vs world %d", res);
	OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 5, &inter));
	OK(MPI_Comm_test_inter(inter, &flag));
	CHECK(flag, "not an intercommunicator");
	OK(MPI_Comm_remote_size(inter, &n));
	CHECK(n == size / 2, "remote size %d", n);
	MPI_Group rg;
	OK(MPI_Comm_remote_group(inter, &rg));
	OK(MPI_Group_size(rg, &n));
	CHECK(n == size / 2, "remote group size %d", n);
	OK(MPI_Group_free(&rg));
	OK(MPI_Intercomm_merge(inter, rank % 2, &merged));
	OK(MPI_Comm_rank(merged, &n));
	/* The evens (low) come first. */
	CHECK(n == (rank % 2 ? size / 2 + rank / 2 : rank / 2), "merged rank %d", n);
	OK(MPI_Comm_free(&merged));
	expect_err(MPI_Comm_remote_size(half, &n), MPI_ERR_COMM, "remote size of an intracommunicator");
	OK(MPI_Comm_free(&inter));
	OK(MPI_Comm_free(&half));

	/* Bad input. */
	expect_err(MPI_Comm_compare(MPI_COMM_NULL, MPI_COMM_WORLD, &res), MPI_ERR_COMM, "MPI_COMM_NULL");
	MPI_Comm dead = dup;
	OK(MPI_Comm_free(&dup));
	expect_err(MPI_Comm_get_name(dead, name, &n), MPI_ERR_COMM, "freed communicator");
	expect_err(MPI_Comm_test_inter(MPI_COMM_WORLD, NULL), MPI_ERR_ARG, "NULL flag");
	expect_err(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &c), MPI_ERR_GROUP, "MPI_GROUP_NULL");
	expect_err(MPI_Comm_set_info(MPI_COMM_WORLD, MPI_INFO_NULL), MPI_ERR_INFO, "MPI_INFO_NULL");

	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("comms OK\n");
	OK(MPI_Finalize());
	return 0;
}
