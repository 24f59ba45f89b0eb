/* errors: calls before MPI_Init and after MPI_Finalize, MPI_ERRORS_RETURN,
 * error classes and strings, bad handles, and a bad argument of a call
 * that belongs to no communicator. */
#include <mpi.h>
#include "check.h"

static void expect(int rc, int class, const char *what, const char *text)
{
	int c = -1, len = 0;
	char s[MPI_MAX_ERROR_STRING];
	CHECK(rc != MPI_SUCCESS, "%s succeeded", what);
	OK(MPI_Error_class(rc, &c));
	OK(MPI_Error_string(rc, s, &len));
	CHECK(c == class, "%s: class %d, want %d (%s)", what, c, class, s);
	CHECK(len == (int)strlen(s) && strstr(s, text) != NULL, "%s: string [%s] lacks %s", what, s, text);
}

int main(int argc, char **argv)
{
	int rank, size, x = 1, major, minor;
	MPI_Errhandler eh;

	/* Before MPI_Init: errors are returned; the ABI's version may be asked. */
	expect(MPI_Comm_rank(MPI_COMM_WORLD, &rank), MPI_ERR_OTHER, "Comm_rank before Init", "before MPI_Init");
	OK(MPI_Abi_get_version(&major, &minor));
	CHECK(major == 1 && minor == 0, "ABI version %d.%d", major, minor);

	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
	CHECK(eh == MPI_ERRORS_ARE_FATAL, "default handler %p", (void *)eh);
	OK(MPI_Errhandler_free(&eh));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
	CHECK(eh == MPI_ERRORS_RETURN, "handler %p", (void *)eh);

	expect(MPI_Send(&x, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD), MPI_ERR_RANK, "Send to a bad rank", "MPI_Send");
	expect(MPI_Send(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "negative count", "MPI_Send");
	expect(MPI_Send(&x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD), MPI_ERR_TAG, "negative tag", "MPI_Send");
	expect(MPI_Send(&x, 1, (MPI_Datatype)MPI_COMM_WORLD, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "a communicator as datatype", "MPI_Send");
	expect(MPI_Comm_size((MPI_Comm)MPI_INT, &x), MPI_ERR_COMM, "a datatype as communicator", "MPI_Comm_size");
	expect(MPI_Comm_size((MPI_Comm)(intptr_t)0x7654321, &x), MPI_ERR_COMM, "a garbage communicator", "MPI_Comm_size");
	expect(MPI_Comm_size(MPI_COMM_NULL, &x), MPI_ERR_COMM, "MPI_COMM_NULL", "MPI_Comm_size");
	expect(MPI_Allreduce(&x, &size, 1, MPI_INT, (MPI_Op)MPI_INT, MPI_COMM_WORLD), MPI_ERR_OP, "a datatype as op", "MPI_Allreduce");
	expect(MPI_Bcast(&x, 1, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT, "bad root", "MPI_Bcast");
	MPI_Comm c = MPI_COMM_WORLD;
	expect(MPI_Comm_free(&c), MPI_ERR_COMM, "freeing MPI_COMM_WORLD", "MPI_Comm_free");

	/* Not implemented yet: the standard's class, a string naming it. */
	/* Every function is implemented now: a bad argument of one that
	 * belongs to no communicator is returned the same way. */
	expect(MPI_Open_port(MPI_INFO_NULL, NULL), MPI_ERR_ARG, "Open_port with a NULL name", "port_name is NULL");
	expect(MPI_Win_fence(0, MPI_WIN_NULL), MPI_ERR_WIN, "Win_fence on MPI_WIN_NULL", "MPI_Win_fence");

	/* A bad pointer: the fault in the library is an error, not a crash. */
	expect(MPI_Comm_rank(MPI_COMM_WORLD, (int *)8), MPI_ERR_INTERN, "a bad pointer", "MPI_Comm_rank: internal error (Go panic)");

	/* A truncated message. */
	if (size >= 2 && rank < 2) {
		int two[2] = {1, 2};
		if (rank == 0) {
			OK(MPI_Send(two, 2, MPI_INT, 1, 3, MPI_COMM_WORLD));
		} else {
			MPI_Status st;
			expect(MPI_Recv(two, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, &st), MPI_ERR_TRUNCATE, "truncation", "MPI_Recv");
		}
	}

	/* Handle conversions keep the fixed values of predefined handles. */
	CHECK(MPI_Comm_toint(MPI_COMM_WORLD) == 0x101 && MPI_Comm_fromint(0x101) == MPI_COMM_WORLD, "Comm_toint");
	CHECK(MPI_Type_toint(MPI_DOUBLE) == 0x214, "Type_toint");

	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("errors OK\n");
	OK(MPI_Finalize());
	expect(MPI_Barrier(MPI_COMM_WORLD), MPI_ERR_OTHER, "Barrier after Finalize", "after MPI_Finalize");
	return 0;
}
