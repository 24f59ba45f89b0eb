/* ulfm: the MPIX_ fault-tolerance calls under mpigo run --ft -n 4. The
 * last rank kills itself; the survivors see MPIX_ERR_PROC_FAILED, rank 0
 * revokes MPI_COMM_WORLD, all see it revoked, acknowledge the failure,
 * agree, and shrink to a communicator of the three of them. */
#include <mpi.h>
#include <signal.h>
#include <unistd.h>
#include "check.h"

static int cls(int rc)
{
	int c = -1;
	OK(MPI_Error_class(rc, &c));
	return c;
}

int main(int argc, char **argv)
{
	int rank, size, x = 0;
	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	CHECK(cls(MPIX_Comm_revoke(MPI_COMM_NULL)) == MPI_ERR_COMM, "revoke of MPI_COMM_NULL");
	CHECK(size == 4, "run me with -n 4 (size %d)", size);
	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == size - 1)
		raise(SIGKILL);

	/* Each survivor learns of the failure on its own; rank 0's revoke may
	 * reach a survivor first, whose receive then ends revoked. */
	int rc = MPI_Recv(&x, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	CHECK(cls(rc) == MPIX_ERR_PROC_FAILED || (rank != 0 && cls(rc) == MPIX_ERR_REVOKED),
	      "receive from the dead rank: class %d", cls(rc));
	char s[MPI_MAX_ERROR_STRING];
	int len;
	OK(MPI_Error_string(rc, s, &len));
	CHECK((strstr(s, "MPIX_ERR_PROC_FAILED") != NULL || strstr(s, "MPIX_ERR_REVOKED") != NULL) &&
	      strstr(s, "MPI_Recv") != NULL, "error string [%s]", s);

	if (rank == 0)
		OK(MPIX_Comm_revoke(MPI_COMM_WORLD));
	int flag = 0;
	for (int i = 0; i < 1000 && !flag; i++) {
		OK(MPIX_Comm_is_revoked(MPI_COMM_WORLD, &flag));
		if (!flag)
			usleep(10000);
	}
	CHECK(flag, "MPI_COMM_WORLD not seen revoked");
	rc = MPI_Barrier(MPI_COMM_WORLD);
	CHECK(cls(rc) == MPIX_ERR_REVOKED, "barrier on a revoked communicator: class %d", cls(rc));

	/* A survivor whose receive ended revoked may not know of the failure
	 * yet: wait until it does (its transport or the heartbeats tell). */
	MPI_Group failed, acked;
	OK(MPIX_Comm_get_failed(MPI_COMM_WORLD, &failed));
	for (int i = 0; i < 1000 && failed == MPI_GROUP_EMPTY; i++) {
		usleep(10000);
		OK(MPIX_Comm_get_failed(MPI_COMM_WORLD, &failed));
	}
	CHECK(failed != MPI_GROUP_EMPTY && failed != MPI_GROUP_NULL, "no failed process");
	OK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
	OK(MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &acked));
	CHECK(acked != MPI_GROUP_EMPTY, "no acknowledged failure");
	int n = -1;
	OK(MPIX_Comm_ack_failed(MPI_COMM_WORLD, 10, &n));
	CHECK(n == 1, "%d failures acknowledged", n);

	/* Agreement: a bitwise AND of the survivors' flags. */
	int f = 0x10 | (1 << rank);
	OK(MPIX_Comm_agree(MPI_COMM_WORLD, &f));
	CHECK(f == 0x10, "agreed %#x", f);
	MPI_Request req;
	int g = 0x3 | (rank == 1 ? 0 : 0x4);
	OK(MPIX_Comm_iagree(MPI_COMM_WORLD, &g, &req));
	OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
	CHECK(g == 0x3, "iagreed %#x", g);

	MPI_Comm shrunk;
	OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &shrunk));
	int nsize, nrank, one = 1, sum = 0;
	OK(MPI_Comm_size(shrunk, &nsize));
	OK(MPI_Comm_rank(shrunk, &nrank));
	CHECK(nsize == size - 1 && nrank == rank, "shrunk: rank %d of %d", nrank, nsize);
	OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, shrunk));
	CHECK(sum == size - 1, "sum %d on the shrunk communicator", sum);
	printf("ulfm OK: survivor %d of %d\n", nrank, nsize);
	OK(MPI_Comm_free(&shrunk));
	OK(MPI_Finalize());
	return 0;
}
