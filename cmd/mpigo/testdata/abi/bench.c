/* bench: the cost of the ABI layer. MPI_Comm_rank in a loop (of
 * MPI_COMM_WORLD, which the library answers in C, and of a duplicate,
 * which takes a call into Go: the cost of any call), an 8-byte
 * MPI_Send/MPI_Recv ping-pong between ranks 0 and 1, a 1 MiB one between
 * the same (bandwidth: 2 MiB per round trip), and an 8-byte MPI_Allreduce
 * over all ranks; the Go program testdata/abibench does the same through
 * mpigo's low-level API. Each timed loop runs twice and the second round
 * is reported. Not a test: nothing is committed that times anything. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* pingpong times iters round trips of n bytes between ranks 0 and 1 and
 * returns the seconds of the second of two rounds. */
static double pingpong(int rank, char *buf, int n, int iters)
{
	double t = 0;
	for (int round = 0; round < 2; round++) {
		MPI_Barrier(MPI_COMM_WORLD);
		t = MPI_Wtime();
		for (int i = 0; i < iters; i++) {
			if (rank == 0) {
				MPI_Send(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
				MPI_Recv(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else if (rank == 1) {
				MPI_Recv(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				MPI_Send(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
			}
		}
		t = MPI_Wtime() - t;
	}
	return t;
}

int main(int argc, char **argv)
{
	int rank, size, r, i, n = 2000000, iters = 100000;
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
	MPI_Comm dup;
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	t = MPI_Wtime();
	for (i = 0; i < n; i++) {
		MPI_Comm_rank(dup, &r);
		sum += r;
	}
	t = MPI_Wtime() - t;
	MPI_Comm_free(&dup);
	if (rank == 0)
		printf("C  Comm_rank of a duplicate (a call into Go): %.1f ns/call (%ld)\n", t / n * 1e9, sum);
	if (size > 1) {
		char *buf = calloc(1, 1 << 20);
		t = pingpong(rank, buf, 8, iters);
		if (rank == 0)
			printf("C  8-byte ping-pong: %.3f us one-way\n", t / iters / 2 * 1e6);
		int big = 1000;
		t = pingpong(rank, buf, 1 << 20, big);
		if (rank == 0)
			printf("C  1 MiB ping-pong: %.0f MB/s\n", 2.0 * big * (1 << 20) / t / 1e6);
		free(buf);
	}
	double in = rank, out = 0;
	for (int round = 0; round < 2; round++) {
		MPI_Barrier(MPI_COMM_WORLD);
		t = MPI_Wtime();
		for (i = 0; i < iters; i++)
			MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		t = MPI_Wtime() - t;
	}
	if (rank == 0)
		printf("C  8-byte Allreduce: %.3f us (%g)\n", t / iters * 1e6, out);
	MPI_Finalize();
	return 0;
}
