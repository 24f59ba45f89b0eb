/* errworld: an error tied to no communicator goes to MPI_COMM_SELF's
 * handler (MPI-4); while the program has set none there but has set one
 * on MPI_COMM_WORLD, to world's, which MPI-3.1 named for such errors (as
 * in MPICH, for programs written before MPI-4). */
#include <mpi.h>
#include "check.h"

static int self_calls;

static void on_self(MPI_Comm *c, int *code, ...)
{
	(void)c, (void)code;
	self_calls++;
}

int main(int argc, char **argv)
{
	int rank, cls = -1;
	char port[MPI_MAX_PORT_NAME];
	MPI_Datatype t = MPI_INT;
	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));

	/* World returns errors, self is untouched: errors of no communicator
	 * come back as codes. */
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Error_class(MPI_Lookup_name("errworld-nothing", MPI_INFO_NULL, port), &cls));
	CHECK(cls == MPI_ERR_NAME, "Lookup_name of nothing: class %d", cls);
	OK(MPI_Error_class(MPI_Type_free(&t), &cls));
	CHECK(cls == MPI_ERR_TYPE, "Type_free of MPI_INT: class %d", cls);

	/* Once self has a handler of the program's, it takes them. */
	MPI_Errhandler eh;
	OK(MPI_Comm_create_errhandler(on_self, &eh));
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, eh));
	OK(MPI_Error_class(MPI_Type_free(&t), &cls));
	CHECK(cls == MPI_ERR_TYPE && self_calls == 1, "Type_free under self's handler: class %d, %d calls", cls, self_calls);
	OK(MPI_Errhandler_free(&eh));

	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("errworld OK\n");
	OK(MPI_Finalize());
	return 0;
}
