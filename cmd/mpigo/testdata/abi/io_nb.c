/* io_nb: non-blocking MPI-IO, split collectives and the shared file
 * pointer through the standard ABI. argv[1] is a directory every rank
 * sees. Ordered writes land in rank order; iwrite_at requests complete
 * in MPI_Waitall; split collectives move the data of their begin. */
#include <mpi.h>
#include "check.h"

#define N 4

int main(int argc, char **argv)
{
	int rank, size, i, j, n, flag, done;
	char name[1024];
	MPI_File fh;
	MPI_Status st, sts[N];
	MPI_Request reqs[N], req;
	MPI_Offset off;
	int vals[N], back[N], *all, mine[N];

	OK(MPI_Init(&argc, &argv));
	CHECK(argc > 1, "usage: io_nb DIR");
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	all = malloc(sizeof(int) * N * size * 2);

	/* iwrite_at: N independent requests, completed together. */
	snprintf(name, sizeof name, "%s/nb.dat", argv[1]);
	OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
	for (i = 0; i < N; i++) {
		vals[i] = rank * 100 + i;
		OK(MPI_File_iwrite_at(fh, (MPI_Offset)(i * size + rank) * sizeof(int), &vals[i], 1, MPI_INT, &reqs[i]));
	}
	OK(MPI_Waitall(N, reqs, sts));
	for (i = 0; i < N; i++) {
		CHECK(reqs[i] == MPI_REQUEST_NULL, "request %d not freed", i);
		OK(MPI_Get_count(&sts[i], MPI_INT, &n));
		CHECK(n == 1, "iwrite_at %d count %d", i, n);
	}
	OK(MPI_Barrier(MPI_COMM_WORLD));
	OK(MPI_File_iread_at_c(fh, 0, all, N * size, MPI_INT, &req));
	OK(MPI_Wait(&req, &st));
	OK(MPI_Get_count(&st, MPI_INT, &n));
	CHECK(n == N * size, "iread_at count %d", n);
	for (i = 0; i < N; i++)
		for (j = 0; j < size; j++)
			CHECK(all[i * size + j] == j * 100 + i, "iwrite_at data [%d][%d] = %d", i, j, all[i * size + j]);

	/* Non-blocking collectives, completed by MPI_Test. */
	for (i = 0; i < N; i++)
		vals[i] = -(rank * 100 + i);
	OK(MPI_File_iwrite_at_all(fh, (MPI_Offset)rank * N * sizeof(int), vals, N, MPI_INT, &req));
	for (done = 0; !done;)
		OK(MPI_Test(&req, &done, &st));
	OK(MPI_File_seek(fh, (MPI_Offset)((rank + 1) % size) * N * sizeof(int), MPI_SEEK_SET));
	OK(MPI_File_iread_all(fh, back, N, MPI_INT, &req));
	OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
	for (i = 0; i < N; i++)
		CHECK(back[i] == -(((rank + 1) % size) * 100 + i), "iread_all [%d] = %d", i, back[i]);
	OK(MPI_File_get_position(fh, &off));
	CHECK(off == (MPI_Offset)((rank + 1) % size + 1) * N * sizeof(int), "position after iread_all %lld", (long long)off);

	/* Split collectives. */
	for (i = 0; i < N; i++)
		vals[i] = rank * 10 + i;
	OK(MPI_File_write_at_all_begin(fh, (MPI_Offset)rank * N * sizeof(int), vals, N, MPI_INT));
	OK(MPI_File_write_at_all_end(fh, vals, &st));
	OK(MPI_Get_count(&st, MPI_INT, &n));
	CHECK(n == N, "write_at_all_end count %d", n);
	memset(back, 0, sizeof back);
	OK(MPI_File_read_at_all_begin_c(fh, (MPI_Offset)((rank + 1) % size) * N * sizeof(int), back, N, MPI_INT));
	OK(MPI_File_read_at_all_end(fh, back, &st));
	for (i = 0; i < N; i++)
		CHECK(back[i] == ((rank + 1) % size) * 10 + i, "split read [%d] = %d", i, back[i]);
	OK(MPI_File_seek(fh, (MPI_Offset)rank * N * sizeof(int), MPI_SEEK_SET));
	OK(MPI_File_read_all_begin(fh, back, N, MPI_INT));
	OK(MPI_File_read_all_end(fh, back, &st));
	for (i = 0; i < N; i++)
		CHECK(back[i] == rank * 10 + i, "split read_all [%d] = %d", i, back[i]);
	OK(MPI_File_seek(fh, (MPI_Offset)rank * N * sizeof(int), MPI_SEEK_SET));
	OK(MPI_File_write_all_begin(fh, vals, N, MPI_INT));
	OK(MPI_File_write_all_end(fh, vals, &st));
	OK(MPI_File_close(&fh));

	/* The shared pointer: ordered writes land in rank order, with
	 * different lengths per rank. */
	snprintf(name, sizeof name, "%s/shared.dat", argv[1]);
	OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
	for (i = 0; i <= rank && i < N; i++)
		mine[i] = rank;
	OK(MPI_File_write_ordered(fh, mine, rank < N ? rank + 1 : N, MPI_INT, &st));
	OK(MPI_File_get_position_shared(fh, &off));
	{
		int total = 0;
		for (j = 0; j < size; j++)
			total += j < N ? j + 1 : N;
		CHECK(off == (MPI_Offset)total * sizeof(int), "shared position %lld, want %d ints", (long long)off, total);
		OK(MPI_File_read_at_all(fh, 0, all, total, MPI_INT, &st));
		for (i = 0, j = 0; j < size; j++) {
			int k, m = j < N ? j + 1 : N;
			for (k = 0; k < m; k++, i++)
				CHECK(all[i] == j, "ordered int %d is rank %d's, want %d's", i, all[i], j);
		}
		/* read_ordered from the start: every rank reads its own part back. */
		OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
		memset(back, 0xff, sizeof back);
		OK(MPI_File_read_ordered(fh, back, rank < N ? rank + 1 : N, MPI_INT, &st));
		for (i = 0; i <= rank && i < N; i++)
			CHECK(back[i] == rank, "read_ordered [%d] = %d", i, back[i]);
		/* Split ordered: the same again. */
		OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
		OK(MPI_File_write_ordered_begin(fh, mine, rank < N ? rank + 1 : N, MPI_INT));
		OK(MPI_File_write_ordered_end(fh, mine, &st));
		OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
		OK(MPI_File_read_ordered_begin(fh, back, rank < N ? rank + 1 : N, MPI_INT));
		OK(MPI_File_read_ordered_end(fh, back, &st));
		for (i = 0; i <= rank && i < N; i++)
			CHECK(back[i] == rank, "split read_ordered [%d] = %d", i, back[i]);
		/* Independent shared-pointer writes: each rank's int lands
		 * once, after the ordered part, in some order. */
		OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_END));
		n = 500 + rank;
		if (rank % 2)
			OK(MPI_File_write_shared(fh, &n, 1, MPI_INT, &st));
		else {
			OK(MPI_File_iwrite_shared(fh, &n, 1, MPI_INT, &req));
			OK(MPI_Wait(&req, &st));
		}
		OK(MPI_Barrier(MPI_COMM_WORLD));
		OK(MPI_File_read_at_all(fh, total * sizeof(int), all, size, MPI_INT, &st));
		for (j = 0; j < size; j++) {
			int seen = 0;
			for (i = 0; i < size; i++)
				seen += all[i] == 500 + j;
			CHECK(seen == 1, "rank %d's shared write seen %d times", j, seen);
		}
		OK(MPI_File_get_position_shared(fh, &off));
		CHECK(off == (MPI_Offset)(total + size) * sizeof(int), "shared position at the end %lld", (long long)off);
		/* read_shared and iread_shared take turns from a fresh start. */
		OK(MPI_File_seek_shared(fh, (MPI_Offset)total * sizeof(int), MPI_SEEK_SET));
		OK(MPI_File_iread_shared(fh, &n, 1, MPI_INT, &req));
		OK(MPI_Wait(&req, &st));
		CHECK(n >= 500 && n < 500 + size, "iread_shared got %d", n);
		OK(MPI_Barrier(MPI_COMM_WORLD));
		OK(MPI_File_seek_shared(fh, (MPI_Offset)total * sizeof(int), MPI_SEEK_SET));
		OK(MPI_File_read_shared(fh, &n, 1, MPI_INT, &st));
		CHECK(n >= 500 && n < 500 + size, "read_shared got %d", n);
	}
	OK(MPI_File_close(&fh));
	(void)flag;

	free(all);
	OK(MPI_Finalize());
	if (rank == 0)
		printf("io_nb OK\n");
	return 0;
}
