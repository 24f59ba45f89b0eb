/* io_basic: MPI-IO through the standard ABI. argv[1] is a directory
 * every rank sees. Each rank writes its blocks of a file interleaved
 * by a vector view collectively, every rank reads the whole file back
 * through a plain view and checks it; external32 writes big-endian
 * ints; explicit offsets, file pointers, sizes, modes, groups, info,
 * positions, extents and atomicity answer what the standard says. */
#include <mpi.h>
#include <stdint.h>
#include "check.h"

#define B 3 /* ints per block */
#define K 4 /* blocks per rank */

int main(int argc, char **argv)
{
	int rank, size, i, n, amode, flag, cmp, cls;
	char name[1024], name2[1024], rep[MPI_MAX_DATAREP_STRING];
	MPI_File fh;
	MPI_Datatype vec, et, ft;
	MPI_Status st;
	MPI_Offset off, sz, disp;
	MPI_Aint ext;
	MPI_Count cext, cnt;
	MPI_Group g, wg;
	MPI_Info info;
	int buf[B * K], *all;

	OK(MPI_Init(&argc, &argv));
	CHECK(argc > 1, "usage: io_basic DIR");
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	snprintf(name, sizeof name, "%s/basic.dat", argv[1]);
	snprintf(name2, sizeof name2, "%s/ext32.dat", argv[1]);
	all = malloc(sizeof(int) * B * K * size);

	/* Vector view: rank r owns block r of every row of size blocks. */
	OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
	OK(MPI_File_get_amode(fh, &amode));
	CHECK(amode == (MPI_MODE_CREATE | MPI_MODE_RDWR), "amode %#x", amode);
	OK(MPI_File_get_group(fh, &g));
	OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
	OK(MPI_Group_compare(g, wg, &cmp));
	CHECK(cmp == MPI_IDENT, "file group compare %d", cmp);
	OK(MPI_Group_free(&g));
	OK(MPI_Group_free(&wg));
	OK(MPI_File_get_info(fh, &info));
	OK(MPI_Info_get_nkeys(info, &n));
	CHECK(n > 0, "info has %d keys, want the hints in effect", n);
	OK(MPI_Info_free(&info));

	/* Resized to a row of every rank's K blocks, so that the view's
	 * next tile starts past the other ranks' last blocks. */
	OK(MPI_Type_vector(K, B, B * size, MPI_INT, &ft));
	OK(MPI_Type_create_resized(ft, 0, (MPI_Aint)sizeof(int) * B * K * size, &vec));
	OK(MPI_Type_free(&ft));
	OK(MPI_Type_commit(&vec));
	OK(MPI_File_set_view(fh, (MPI_Offset)rank * B * sizeof(int), MPI_INT, vec, "native", MPI_INFO_NULL));
	OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
	CHECK(disp == (MPI_Offset)rank * B * (MPI_Offset)sizeof(int) && et == MPI_INT && strcmp(rep, "native") == 0,
	      "get_view disp %lld etype %s rep %s", (long long)disp, et == MPI_INT ? "MPI_INT" : "other", rep);
	OK(MPI_Type_size_c(ft, &cnt));
	CHECK(cnt == B * K * (MPI_Count)sizeof(int), "filetype size %lld", (long long)cnt);
	OK(MPI_Type_free(&ft)); /* a derived filetype comes back as a new handle */
	for (i = 0; i < B * K; i++)
		buf[i] = rank * 1000 + i;
	OK(MPI_File_write_all(fh, buf, B * K, MPI_INT, &st));
	OK(MPI_Get_count(&st, MPI_INT, &n));
	CHECK(n == B * K, "write_all count %d", n);
	OK(MPI_File_get_position(fh, &off));
	CHECK(off == B * K, "position after write_all %lld", (long long)off);
	OK(MPI_File_get_byte_offset(fh, B, &off)); /* etype B is the second block */
	CHECK(off == ((MPI_Offset)rank * B + (MPI_Offset)B * size) * (MPI_Offset)sizeof(int), "byte offset %lld", (long long)off);
	OK(MPI_File_sync(fh));

	/* Read the whole file back through the plain view and check every
	 * rank's blocks are where the view put them. */
	OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
	OK(MPI_File_get_size(fh, &sz));
	CHECK(sz == (MPI_Offset)sizeof(int) * B * K * size, "size %lld", (long long)sz);
	OK(MPI_File_read_at_all(fh, 0, all, B * K * size, MPI_INT, &st));
	OK(MPI_Get_count(&st, MPI_INT, &n));
	CHECK(n == B * K * size, "read_at_all count %d", n);
	for (i = 0; i < B * K * size; i++) {
		int row = i / (B * size), r = (i / B) % size, j = row * B + i % B;
		CHECK(all[i] == r * 1000 + j, "int %d is %d, want %d", i, all[i], r * 1000 + j);
	}
	/* The vector view read: each rank gets its own blocks back. */
	OK(MPI_File_set_view(fh, (MPI_Offset)rank * B * sizeof(int), MPI_INT, vec, "native", MPI_INFO_NULL));
	memset(buf, 0, sizeof buf);
	OK(MPI_File_read_all_c(fh, buf, B * K, MPI_INT, &st));
	for (i = 0; i < B * K; i++)
		CHECK(buf[i] == rank * 1000 + i, "read_all int %d is %d", i, buf[i]);
	/* Seek and the individual pointer: the second block again. */
	OK(MPI_File_seek(fh, B, MPI_SEEK_SET));
	OK(MPI_File_read(fh, buf, B, MPI_INT, &st));
	CHECK(buf[0] == rank * 1000 + B, "read after seek %d", buf[0]);
	OK(MPI_File_seek(fh, -B, MPI_SEEK_CUR));
	OK(MPI_File_get_position(fh, &off));
	CHECK(off == B, "position after SEEK_CUR %lld", (long long)off);
	OK(MPI_File_seek(fh, 0, MPI_SEEK_END));
	OK(MPI_File_get_position(fh, &off));
	CHECK(off == B * K, "position at SEEK_END %lld", (long long)off);
	OK(MPI_File_get_type_extent(fh, vec, &ext));
	OK(MPI_File_get_type_extent_c(fh, MPI_DOUBLE, &cext));
	CHECK(ext == (MPI_Aint)(K * B * size) * (MPI_Aint)sizeof(int) && cext == 8, "type extents %ld %lld", (long)ext, (long long)cext);
	OK(MPI_File_set_atomicity(fh, 1));
	OK(MPI_File_get_atomicity(fh, &flag));
	CHECK(flag == 1, "atomicity %d", flag);
	OK(MPI_File_set_atomicity(fh, 0));
	OK(MPI_File_get_atomicity(fh, &flag));
	CHECK(flag == 0, "atomicity %d", flag);
	OK(MPI_File_close(&fh));
	CHECK(fh == MPI_FILE_NULL, "close leaves the handle %p", (void *)fh);

	/* Explicit offsets, independent, and the size calls. */
	OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
	OK(MPI_File_set_size(fh, 0));
	OK(MPI_File_get_size(fh, &sz));
	CHECK(sz == 0, "size after set_size(0) %lld", (long long)sz);
	OK(MPI_File_preallocate(fh, 4096));
	OK(MPI_File_get_size(fh, &sz));
	CHECK(sz == 4096, "size after preallocate %lld", (long long)sz);
	n = 7000 + rank;
	OK(MPI_File_write_at_c(fh, (MPI_Offset)rank * sizeof(int), &n, 1, MPI_INT, &st));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	OK(MPI_File_read_at(fh, (MPI_Offset)((rank + 1) % size) * sizeof(int), &n, 1, MPI_INT, &st));
	CHECK(n == 7000 + (rank + 1) % size, "read_at neighbour %d", n);
	OK(MPI_File_close(&fh));

	/* A subarray view: rank r owns columns 2r and 2r+1 of a 4 x 2*size
	 * array of ints; a strided memory type reads them back. */
	{
		int gs[2] = {4, 2 * size}, ss[2] = {4, 2}, st0[2] = {0, 2 * rank}, mem[16], r, c;
		MPI_Datatype sub, strided;
		OK(MPI_Type_create_subarray(2, gs, ss, st0, MPI_ORDER_C, MPI_INT, &sub));
		OK(MPI_Type_commit(&sub));
		OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
		OK(MPI_File_set_size(fh, 0));
		OK(MPI_File_set_view(fh, 0, MPI_INT, sub, "native", MPI_INFO_NULL));
		for (i = 0; i < 8; i++)
			buf[i] = rank * 100 + i; /* row i/2, column 2*rank + i%2 */
		OK(MPI_File_write_all(fh, buf, 8, MPI_INT, &st));
		OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
		OK(MPI_File_read_all(fh, all, 8 * size, MPI_INT, &st));
		for (r = 0; r < 4; r++)
			for (c = 0; c < 2 * size; c++)
				CHECK(all[r * 2 * size + c] == (c / 2) * 100 + r * 2 + c % 2, "subarray [%d][%d] = %d", r, c, all[r * 2 * size + c]);
		/* Memory side: every other int of mem, from the view again. */
		OK(MPI_Type_vector(8, 1, 2, MPI_INT, &strided));
		OK(MPI_Type_commit(&strided));
		OK(MPI_File_set_view(fh, 0, MPI_INT, sub, "native", MPI_INFO_NULL));
		memset(mem, 0xff, sizeof mem);
		OK(MPI_File_read_all(fh, mem, 1, strided, &st));
		OK(MPI_Get_count(&st, MPI_INT, &n));
		CHECK(n == 8, "strided read count %d ints", n);
		for (i = 0; i < 16; i++)
			CHECK(mem[i] == (i % 2 ? -1 : rank * 100 + i / 2), "strided mem[%d] = %d", i, mem[i]);
		OK(MPI_File_close(&fh));
		OK(MPI_Type_free(&strided));
		OK(MPI_Type_free(&sub));
	}

	/* external32: big-endian ints on disk; reading back converts. */
	OK(MPI_File_open(MPI_COMM_WORLD, name2, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
	OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
	OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
	CHECK(strcmp(rep, "external32") == 0 && ft == MPI_INT, "get_view rep %s", rep);
	n = 0x01020304 + rank;
	OK(MPI_File_write_at_all(fh, rank, &n, 1, MPI_INT, &st));
	n = 0;
	OK(MPI_File_read_at_all(fh, rank, &n, 1, MPI_INT, &st));
	CHECK(n == 0x01020304 + rank, "external32 read back %#x", n);
	OK(MPI_File_close(&fh));
	if (rank == 0) {
		unsigned char raw[4];
		FILE *f = fopen(name2, "rb");
		CHECK(f != NULL, "fopen %s", name2);
		for (i = 0; i < size; i++) {
			CHECK(fread(raw, 1, 4, f) == 4, "short file");
			CHECK(raw[0] == 1 && raw[1] == 2 && raw[2] == 3 && raw[3] == 4 + i,
			      "int %d on disk is %02x %02x %02x %02x, want big-endian", i, raw[0], raw[1], raw[2], raw[3]);
		}
		fclose(f);
	}
	OK(MPI_Barrier(MPI_COMM_WORLD));

	/* Delete: the file goes, and opening it again without CREATE fails. */
	if (rank == 0)
		OK(MPI_File_delete(name2, MPI_INFO_NULL));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	cls = MPI_File_open(MPI_COMM_WORLD, name2, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
	OK(MPI_Error_class(cls, &cls));
	CHECK(cls == MPI_ERR_NO_SUCH_FILE, "open of a deleted file: class %d", cls);

	OK(MPI_Type_free(&vec));
	free(all);
	OK(MPI_Finalize());
	if (rank == 0)
		printf("io_basic OK\n");
	return 0;
}
