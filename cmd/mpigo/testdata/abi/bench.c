/* bench: the cost of the ABI layer. MPI_Comm_rank in a loop, and an
 * 8-byte MPI_Send/MPI_Recv ping-pong between ranks 0 and 1; the Go
 * program testdata/abibench does the same through mpigo's low-level API. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, r, i, n = 2000000, iters = 100000;
	char buf[8] = {0};
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	double t = MPI_Wtime();
	long sum = 0;
	for (i = 0; i < n; i++) {
		MPI_Comm_rank(MPI_COMM_WORLD, &r);
		sum += r;
	}
	t = MPI_Wtime() - t;
	if (rank == 0)
		printf("C  Comm_rank: %.1f ns/call (%ld)\n", t / n * 1e9, sum);
	for (int round = 0; round < 2 && size > 1; round++) {
		MPI_Barrier(MPI_COMM_WORLD);
		t = MPI_Wtime();
		for (i = 0; i < iters; i++) {
			if (rank == 0) {
				MPI_Send(buf, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
				MPI_Recv(buf, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else if (rank == 1) {
				MPI_Recv(buf, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				MPI_Send(buf, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
			}
		}
		t = MPI_Wtime() - t;
		if (rank == 0 && round == 1)
			printf("C  8-byte ping-pong: %.3f us one-way\n", t / iters / 2 * 1e6);
	}
	MPI_Finalize();
	return 0;
}
