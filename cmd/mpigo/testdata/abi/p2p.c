/* p2p: blocking, synchronous and nonblocking point-to-point, statuses
 * and their absence, wildcards, MPI_PROC_NULL. Any even size. */
#include <mpi.h>
#include "check.h"

int main(int argc, char **argv)
{
	int rank, size, i, count, flag;
	MPI_Status st;

	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	int right = (rank + 1) % size, left = (rank + size - 1) % size;

	/* A ring: even ranks send first. A call that completes one
	 * operation leaves the status's MPI_ERROR alone (completion.c). */
	double d[5] = {rank, rank + 0.5, 2, 3, 4}, r[5];
	st.MPI_ERROR = MPI_SUCCESS;
	if (rank % 2 == 0) {
		OK(MPI_Send(d, 5, MPI_DOUBLE, right, 7, MPI_COMM_WORLD));
		OK(MPI_Recv(r, 5, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, &st));
	} else {
		OK(MPI_Recv(r, 5, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
		OK(MPI_Ssend(d, 5, MPI_DOUBLE, right, 7, MPI_COMM_WORLD));
	}
	CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 7 && st.MPI_ERROR == MPI_SUCCESS, "status %d %d %d", st.MPI_SOURCE, st.MPI_TAG, st.MPI_ERROR);
	CHECK(r[0] == left && r[1] == left + 0.5, "ring got %g %g", r[0], r[1]);
	OK(MPI_Get_count(&st, MPI_DOUBLE, &count));
	CHECK(count == 5, "Get_count %d", count);
	OK(MPI_Get_count(&st, MPI_INT, &count));
	CHECK(count == 10, "Get_count as int %d", count);
	OK(MPI_Get_count(&st, MPI_LONG_LONG, &count));
	CHECK(count == 5, "Get_count as long long %d", count);

	/* Isend/Irecv with Waitall and no statuses; a shorter message. */
	int out[4] = {rank, rank * 10, 0, 0}, in[4] = {-1, -1, -1, -1};
	MPI_Request reqs[2];
	OK(MPI_Irecv(in, 4, MPI_INT, left, 3, MPI_COMM_WORLD, &reqs[0]));
	OK(MPI_Isend(out, 2, MPI_INT, right, 3, MPI_COMM_WORLD, &reqs[1]));
	OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
	CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL, "requests not freed");
	CHECK(in[0] == left && in[1] == left * 10 && in[2] == -1, "Irecv got %d %d %d", in[0], in[1], in[2]);

	/* Wait and Test with statuses; Wait on MPI_REQUEST_NULL. */
	MPI_Status sts[2];
	OK(MPI_Irecv(in, 4, MPI_INT, left, 4, MPI_COMM_WORLD, &reqs[0]));
	OK(MPI_Isend(out, 3, MPI_INT, right, 4, MPI_COMM_WORLD, &reqs[1]));
	OK(MPI_Wait(&reqs[1], MPI_STATUS_IGNORE));
	for (flag = 0; !flag;)
		OK(MPI_Test(&reqs[0], &flag, &sts[0]));
	CHECK(sts[0].MPI_SOURCE == left && sts[0].MPI_TAG == 4, "Test status %d %d", sts[0].MPI_SOURCE, sts[0].MPI_TAG);
	OK(MPI_Get_count(&sts[0], MPI_INT, &count));
	CHECK(count == 3, "count %d", count);
	OK(MPI_Wait(&reqs[0], &st));
	CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG, "empty status %d %d", st.MPI_SOURCE, st.MPI_TAG);

	/* Sendrecv and Probe. */
	long lv = rank * 100L, lr = -1;
	OK(MPI_Sendrecv(&lv, 1, MPI_LONG, right, 5, &lr, 1, MPI_LONG, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	CHECK(lr == left * 100L, "Sendrecv got %ld", lr);
	OK(MPI_Send(&lv, 1, MPI_LONG, right, 6, MPI_COMM_WORLD));
	OK(MPI_Probe(left, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
	CHECK(st.MPI_TAG == 6 && st.MPI_SOURCE == left, "Probe %d %d", st.MPI_SOURCE, st.MPI_TAG);
	OK(MPI_Get_count(&st, MPI_LONG, &count));
	CHECK(count == 1, "Probe count %d", count);
	OK(MPI_Recv(&lr, 1, MPI_LONG, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));

	/* MPI_PROC_NULL: completes at once with its status. */
	OK(MPI_Send(d, 1, MPI_DOUBLE, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
	OK(MPI_Recv(r, 1, MPI_DOUBLE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
	CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "PROC_NULL status %d %d", st.MPI_SOURCE, st.MPI_TAG);

	/* No elements of MPI_DATATYPE_NULL: nothing to describe, accepted
	 * (MPICH's pt2pt/recvnull); one element of it is still an error. */
	{
		MPI_Request rq;
		int cls = -1, rc;
		OK(MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 10, MPI_COMM_WORLD, &rq));
		OK(MPI_Wait(&rq, &st));
		CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "Irecv of MPI_DATATYPE_NULL: source %d", st.MPI_SOURCE);
		OK(MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 10, MPI_COMM_WORLD, &st));
		OK(MPI_Send(NULL, 0, MPI_DATATYPE_NULL, right, 11, MPI_COMM_WORLD));
		OK(MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, left, 11, MPI_COMM_WORLD, &st));
		CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 11, "empty message of MPI_DATATYPE_NULL: %d %d", st.MPI_SOURCE, st.MPI_TAG);
		OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
		rc = MPI_Send(d, 1, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
		OK(MPI_Error_class(rc, &cls));
		CHECK(cls == MPI_ERR_TYPE, "one MPI_DATATYPE_NULL: class %d", cls);
		OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	}

	/* Many messages each way, in order. */
	for (i = 0; i < 100; i++) {
		int v = i;
		if (rank % 2 == 0) {
			OK(MPI_Send(&v, 1, MPI_INT, right, 9, MPI_COMM_WORLD));
			OK(MPI_Recv(&v, 1, MPI_INT, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		} else {
			OK(MPI_Recv(&v, 1, MPI_INT, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			CHECK(v == i, "message %d came as %d", i, v);
			OK(MPI_Send(&v, 1, MPI_INT, right, 9, MPI_COMM_WORLD));
		}
	}
	if (rank == 0)
		printf("p2p OK\n");
	OK(MPI_Finalize());
	return 0;
}
