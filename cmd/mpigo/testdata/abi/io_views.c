/* io_views: file views whose filetypes MPI allows but are easy to get
 * wrong, through the standard ABI. argv[1] is a directory every rank
 * sees. A filetype resized to a lower bound above its data is tiled
 * every extent bytes from the displacement, its data at the type map's
 * displacements (MPICH io/resized); negative or decreasing displacements
 * are MPI_ERR_IO (io/tst_fileview), overlapping regions too unless the
 * file is read-only, where a read brings them back; a filetype of
 * MPI_CHAR under an etype of MPI_BYTE is a view (io/i_hindexed); and
 * MPI_Wait completes non-blocking collective accesses through it. */
#include <mpi.h>
#include "check.h"

#define K 4 /* ints per rank */

int main(int argc, char **argv)
{
	int rank, size, i, n, cls, buf[K], *all, one = 1, three_one[2] = {3, 1}, d01[2] = {0, 1}, d30[2] = {3, 0};
	char name[1024], cbuf[2 * K], cref[2 * K];
	MPI_Aint disp;
	MPI_File fh;
	MPI_Datatype at, ft, dec, ovl, chars;
	MPI_Status st;
	MPI_Request req;

	OK(MPI_Init(&argc, &argv));
	CHECK(argc > 1, "usage: io_views DIR");
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	snprintf(name, sizeof name, "%s/views.dat", argv[1]);
	all = malloc(sizeof(int) * K * size);

	/* Rank r's int at byte 4r of a tile, the type resized to lower bound
	 * 4 (above rank 0's data) and extent 4*size: the file interleaves
	 * the ranks' ints, rank r's i-th at int i*size+r. */
	disp = (MPI_Aint)sizeof(int) * rank;
	OK(MPI_Type_create_hindexed(1, &one, &disp, MPI_INT, &at));
	OK(MPI_Type_create_resized(at, sizeof(int), (MPI_Aint)sizeof(int) * size, &ft));
	OK(MPI_Type_free(&at));
	OK(MPI_Type_commit(&ft));
	OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
	OK(MPI_File_set_size(fh, 0));
	OK(MPI_File_set_view(fh, 0, MPI_INT, ft, "native", MPI_INFO_NULL));
	for (i = 0; i < K; i++)
		buf[i] = rank * 100 + i;
	OK(MPI_File_iwrite_at_all(fh, 0, buf, K, MPI_INT, &req));
	OK(MPI_Wait(&req, &st));
	OK(MPI_Get_count(&st, MPI_INT, &n));
	CHECK(n == K, "iwrite_at_all count %d", n);
	OK(MPI_File_sync(fh));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	OK(MPI_File_sync(fh));
	memset(buf, 0, sizeof buf);
	OK(MPI_File_iread_at_all(fh, 0, buf, K, MPI_INT, &req));
	OK(MPI_Wait(&req, &st));
	for (i = 0; i < K; i++)
		CHECK(buf[i] == rank * 100 + i, "resized view read int %d is %d", i, buf[i]);
	OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
	OK(MPI_File_read_at_all(fh, 0, all, K * size, MPI_INT, &st));
	for (i = 0; i < K * size; i++)
		CHECK(all[i] == (i % size) * 100 + i / size, "file int %d is %d, want %d", i, all[i], (i % size) * 100 + i / size);
	OK(MPI_Type_free(&ft));

	/* Decreasing and overlapping filetypes on a writable file: MPI_ERR_IO. */
	OK(MPI_Type_indexed(2, (int[]){1, 1}, d30, MPI_INT, &dec));
	OK(MPI_Type_commit(&dec));
	OK(MPI_Type_indexed(2, three_one, d01, MPI_INT, &ovl));
	OK(MPI_Type_commit(&ovl));
	OK(MPI_Error_class(MPI_File_set_view(fh, 0, MPI_INT, dec, "native", MPI_INFO_NULL), &cls));
	CHECK(cls == MPI_ERR_IO, "decreasing filetype: class %d, want MPI_ERR_IO", cls);
	OK(MPI_Error_class(MPI_File_set_view(fh, 0, MPI_INT, ovl, "native", MPI_INFO_NULL), &cls));
	CHECK(cls == MPI_ERR_IO, "overlapping filetype on a writable file: class %d, want MPI_ERR_IO", cls);

	/* MPI_CHAR blocks under MPI_BYTE: rank r's 2-byte blocks every
	 * 2*size bytes, after the ints. */
	{
		int lens[K];
		MPI_Aint ds[K];
		for (i = 0; i < K; i++)
			lens[i] = 2, ds[i] = (MPI_Aint)(2 * (i * size + rank));
		OK(MPI_Type_create_hindexed(K, lens, ds, MPI_CHAR, &chars));
		OK(MPI_Type_commit(&chars));
	}
	OK(MPI_File_set_view(fh, (MPI_Offset)sizeof(int) * K * size, MPI_BYTE, chars, "native", MPI_INFO_NULL));
	for (i = 0; i < 2 * K; i++)
		cbuf[i] = (char)('a' + rank + i);
	OK(MPI_File_write_at_all(fh, 0, cbuf, 2 * K, MPI_BYTE, &st));
	memset(cref, 0, sizeof cref);
	OK(MPI_File_read_at_all(fh, 0, cref, 2 * K, MPI_BYTE, &st));
	CHECK(memcmp(cbuf, cref, sizeof cbuf) == 0, "MPI_CHAR view read back differs");
	OK(MPI_Type_free(&chars));
	OK(MPI_File_close(&fh));

	/* Read-only: the overlapping filetype (ints 0, 1, 2 and 1 again,
	 * extent 3 ints) is a view, and reads what the type map names. */
	OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
	OK(MPI_Error_class(MPI_File_set_view(fh, 0, MPI_INT, dec, "native", MPI_INFO_NULL), &cls));
	CHECK(cls == MPI_ERR_IO, "decreasing filetype on a read-only file: class %d, want MPI_ERR_IO", cls);
	OK(MPI_File_set_view(fh, 0, MPI_INT, ovl, "native", MPI_INFO_NULL));
	OK(MPI_File_read_at_all(fh, 0, buf, K, MPI_INT, &st));
	{
		int want[K] = {all[0], all[1], all[2], all[1]};
		for (i = 0; i < K; i++)
			CHECK(buf[i] == want[i], "overlapping view int %d is %d, want %d", i, buf[i], want[i]);
	}
	OK(MPI_File_close(&fh));
	OK(MPI_Type_free(&dec));
	OK(MPI_Type_free(&ovl));

	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("io_views OK\n");
	free(all);
	OK(MPI_Finalize());
	return 0;
}
