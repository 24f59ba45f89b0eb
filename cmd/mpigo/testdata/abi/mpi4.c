/* mpi4.c: the MPI-4.0 calls of the ABI: MPI_Isendrecv and
 * MPI_Isendrecv_replace (and their _c forms) around a ring, checked
 * element by element, and their bad input. */
#include <mpi.h>
#include "check.h"

int main(int argc, char **argv) {
	int rank, size;
	START(argc, argv, rank, size);
	/* Errors on MPI_COMM_NULL go to MPI_COMM_SELF's handler. */
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	enum { N = 5000 };
	static int out[N], in[N];
	for (int i = 0; i < N; i++) {
		out[i] = 1000 * rank + i;
		in[i] = -1;
	}
	MPI_Request req;
	MPI_Status st;
	OK(MPI_Isendrecv(out, N, MPI_INT, next, 1, in, N, MPI_INT, prev, 1, MPI_COMM_WORLD, &req));
	OK(MPI_Wait(&req, &st));
	CHECK(req == MPI_REQUEST_NULL, "request not freed by MPI_Wait");
	CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 1, "status source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
	int count;
	OK(MPI_Get_count(&st, MPI_INT, &count));
	CHECK(count == N, "count %d", count);
	for (int i = 0; i < N; i++)
		CHECK(in[i] == 1000 * prev + i, "in[%d] = %d", i, in[i]);

	OK(MPI_Isendrecv_c(out, 3, MPI_INT, next, 2, in, 3, MPI_INT, prev, 2, MPI_COMM_WORLD, &req));
	OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
	CHECK(in[2] == 1000 * prev + 2, "Isendrecv_c: in[2] = %d", in[2]);

	OK(MPI_Isendrecv_replace(out, N, MPI_INT, next, 3, prev, 3, MPI_COMM_WORLD, &req));
	OK(MPI_Wait(&req, &st));
	CHECK(st.MPI_SOURCE == prev, "replace: source %d", st.MPI_SOURCE);
	for (int i = 0; i < N; i++)
		CHECK(out[i] == 1000 * prev + i, "replace: out[%d] = %d", i, out[i]);

	OK(MPI_Isendrecv_replace_c(out, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &req));
	OK(MPI_Wait(&req, &st));
	CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "ProcNull: source %d", st.MPI_SOURCE);

	/* Bad input: the standard's classes, no crash. */
	int cls, rc;
	rc = MPI_Isendrecv(out, 1, MPI_INT, size, 0, in, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, &req);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_RANK, "dest %d: class %d", size, cls);
	rc = MPI_Isendrecv(out, 1, MPI_INT, next, 0, in, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, NULL);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_REQUEST, "NULL request: class %d", cls);
	rc = MPI_Isendrecv_c(out, -1, MPI_INT, next, 0, in, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, &req);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_COUNT, "count -1: class %d", cls);
	rc = MPI_Isendrecv_replace(out, 1, MPI_DATATYPE_NULL, next, 0, prev, 0, MPI_COMM_WORLD, &req);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_TYPE, "null datatype: class %d", cls);
	rc = MPI_Isendrecv_replace(out, 1, MPI_INT, next, 0, prev, 0, MPI_COMM_NULL, &req);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_COMM, "null comm: class %d", cls);

	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("mpi4 OK\n");
	OK(MPI_Finalize());
	return 0;
}
