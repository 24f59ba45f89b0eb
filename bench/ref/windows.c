/* windows.c: bench/windows (the Go program) for Open MPI. Times each
 * window of the 8-byte message-rate test (rank 0 sends 64 non-blocking
 * 8-byte messages, rank 1 posts a receive per message into a buffer of
 * its own and acknowledges the window) and prints how the times are
 * spread, in the Go program's words. bench/windows.sh builds and runs it.
 *
 *   mpirun -np 2 ./windows [ITERS]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { WINDOW = 64, WARM = 100 };

static int cmp(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int iters = argc > 1 ? atoi(argv[1]) : 20000;
	if (size != 2 || iters < 1) {
		if (rank == 0)
			fprintf(stderr, "windows: needs 2 ranks and a positive number of windows\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	double bufs[WINDOW + 1];
	char ack[4];
	MPI_Request reqs[WINDOW];
	double *t = malloc(sizeof(double) * iters), *s = malloc(sizeof(double) * iters);
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < WARM + iters; i++) {
		double t0 = MPI_Wtime();
		for (int w = 0; w < WINDOW; w++) {
			if (rank == 0)
				MPI_Isend(&bufs[WINDOW], 1, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD, &reqs[w]);
			else
				MPI_Irecv(&bufs[w], 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, &reqs[w]);
		}
		MPI_Waitall(WINDOW, reqs, MPI_STATUSES_IGNORE);
		if (rank == 0) {
			MPI_Recv(ack, 4, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			if (i >= WARM)
				t[i - WARM] = MPI_Wtime() - t0;
		} else {
			MPI_Send(ack, 4, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
		}
	}
	if (rank == 0) {
		double sum = 0, slow = 0;
		int n = 0;
		for (int i = 0; i < iters; i++) {
			sum += t[i];
			s[i] = t[i];
		}
		qsort(s, iters, sizeof(double), cmp);
		double med = s[iters / 2];
		for (int i = 0; i < iters; i++)
			if (t[i] > 2 * med) {
				slow += t[i];
				n++;
			}
		printf("Open MPI: %d windows, %.1f MB/s; window median %.2f us, p90 %.2f, p99 %.2f, mean %.2f; "
		       "%.1f%% of the windows over twice the median, taking %.0f%% of the time\n",
		       iters, 8.0 * WINDOW * iters / sum / 1e6, med * 1e6, s[iters * 9 / 10] * 1e6,
		       s[iters * 99 / 100] * 1e6, sum / iters * 1e6, 100.0 * n / iters, 100 * slow / sum);
	}
	free(t);
	free(s);
	MPI_Finalize();
	return 0;
}
