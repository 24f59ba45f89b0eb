/* waits: blocking waits of C threads. Ranks pair up (r with r^1) and
 * ping-pong 8-byte messages, each checked; then each pair's receiver
 * waits for a sender that comes 200 ms late, long past the time a wait
 * polls before it parks, so the C thread must be woken; then every rank
 * runs checked MPI_Allreduce calls. Run with more ranks than cores
 * (-n 8 on a small machine), it checks that polling waits give the
 * cores away and the job ends promptly. First, the ranks and sizes of
 * MPI_COMM_WORLD and MPI_COMM_SELF, which the library answers in C, agree
 * with those of a duplicate, answered in Go, and a NULL pointer is still
 * an error. */
#include <mpi.h>
#include <unistd.h>
#include "check.h"

int main(int argc, char **argv)
{
	int rank, size;
	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	MPI_Comm dup;
	int drank = -1, dsize = -1, srank = -1, ssize = -1;
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
	OK(MPI_Comm_rank(dup, &drank));
	OK(MPI_Comm_size(dup, &dsize));
	OK(MPI_Comm_rank(MPI_COMM_SELF, &srank));
	OK(MPI_Comm_size(MPI_COMM_SELF, &ssize));
	CHECK(drank == rank && dsize == size && srank == 0 && ssize == 1,
	      "world %d/%d, its duplicate %d/%d, self %d/%d", rank, size, drank, dsize, srank, ssize);
	OK(MPI_Comm_free(&dup));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	int cls = -1;
	OK(MPI_Error_class(MPI_Comm_rank(MPI_COMM_WORLD, NULL), &cls));
	CHECK(cls == MPI_ERR_ARG, "MPI_Comm_rank to NULL: class %d", cls);
	OK(MPI_Error_class(MPI_Comm_size(MPI_COMM_SELF, NULL), &cls));
	CHECK(cls == MPI_ERR_ARG, "MPI_Comm_size to NULL: class %d", cls);
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
	int peer = rank ^ 1;
	if (peer >= size)
		peer = MPI_PROC_NULL;
	long x = 0;
	for (long i = 0; i < 2000 && peer != MPI_PROC_NULL; i++) {
		if (rank % 2 == 0) {
			x = i;
			OK(MPI_Send(&x, 1, MPI_LONG, peer, 0, MPI_COMM_WORLD));
			OK(MPI_Recv(&x, 1, MPI_LONG, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			CHECK(x == i + 1, "round %ld: got %ld back", i, x);
		} else {
			OK(MPI_Recv(&x, 1, MPI_LONG, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			CHECK(x == i, "round %ld: got %ld", i, x);
			x++;
			OK(MPI_Send(&x, 1, MPI_LONG, peer, 0, MPI_COMM_WORLD));
		}
	}
	if (peer != MPI_PROC_NULL) {
		MPI_Status st;
		if (rank % 2 == 0) {
			usleep(200000);
			x = 4242 + rank;
			OK(MPI_Send(&x, 1, MPI_LONG, peer, 1, MPI_COMM_WORLD));
		} else {
			OK(MPI_Recv(&x, 1, MPI_LONG, peer, 1, MPI_COMM_WORLD, &st));
			CHECK(x == 4242 + peer && st.MPI_SOURCE == peer && st.MPI_TAG == 1,
			      "late message: %ld from %d tag %d", x, st.MPI_SOURCE, st.MPI_TAG);
		}
	}
	for (int i = 0; i < 500; i++) {
		long in = rank + i, out = -1;
		OK(MPI_Allreduce(&in, &out, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
		CHECK(out == (long)size * (size - 1) / 2 + (long)size * i, "allreduce %d: %ld", i, out);
	}
	OK(MPI_Finalize());
	int r = -1;
	CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &r) != MPI_SUCCESS && r == -1, "MPI_Comm_rank after MPI_Finalize succeeded");
	if (rank == 0)
		printf("waits OK\n");
	return 0;
}
