/* ext32long: C's long and unsigned long in "external32" take 4 bytes, as
 * the standard's table says (MPICH's datatype/pack_external), while they
 * stay 64-bit integers everywhere else: MPI_Pack_external_size, the exact
 * bytes of MPI_Pack_external, sign- and zero-extension by
 * MPI_Unpack_external, MPI_ERR_CONVERSION for a value beyond 32 bits, an
 * external32 file view of MPI_LONG (4 bytes per element in the file), a
 * message and a reduction that mix MPI_LONG with MPI_INT64_T; and
 * MPI_LOGICAL16 in MPI_LAND, MPI_LOR and MPI_LXOR. Usage: ext32long DIR */
#include <mpi.h>
#include <stdint.h>
#include "check.h"

static int cls(int rc)
{
	int c = -1;
	if (rc == MPI_SUCCESS)
		return MPI_SUCCESS;
	OK(MPI_Error_class(rc, &c));
	return c;
}

static void packs(MPI_Datatype t, const char *what, const void *in, const unsigned char *want, int n)
{
	MPI_Aint size = -1, pos = 2;
	unsigned char out[64];
	long back[8];

	OK(MPI_Pack_external_size("external32", 2, t, &size));
	CHECK(size == n, "%s: MPI_Pack_external_size %ld, want %d", what, (long)size, n);
	memset(out, 0xee, sizeof out);
	OK(MPI_Pack_external("external32", in, 2, t, out, sizeof out, &pos));
	CHECK(pos == 2 + n, "%s: position %ld, want %d", what, (long)pos, 2 + n);
	for (int i = 0; i < n; i++)
		CHECK(out[2 + i] == want[i], "%s: byte %d is %#x, want %#x", what, i, out[2 + i], want[i]);
	CHECK(out[2 + n] == 0xee, "%s: wrote past its %d bytes", what, n);
	pos = 2;
	memset(back, 0x55, sizeof back);
	OK(MPI_Unpack_external("external32", out, sizeof out, &pos, back, 2, t));
	CHECK(pos == 2 + n, "%s: unpack position %ld", what, (long)pos);
	CHECK(memcmp(back, in, 2 * sizeof(long)) == 0, "%s: unpacked %#lx %#lx", what, back[0], back[1]);
}

int main(int argc, char **argv)
{
	int rank, size;
	char name[512];
	START(argc, argv, rank, size);
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	CHECK(argc > 1, "usage: ext32long DIR");
	snprintf(name, sizeof name, "%s/long.dat", argv[1]);

	/* Packing: 4 bytes each, big-endian, whatever sizeof(long). */
	long l[2] = {1, -2};
	unsigned long ul[2] = {0x01020304UL, 0xfffffffeUL};
	long long ll[2] = {1, -2};
	const unsigned char lwant[] = {0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe};
	const unsigned char ulwant[] = {1, 2, 3, 4, 0xff, 0xff, 0xff, 0xfe};
	const unsigned char llwant[] = {0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe};
	packs(MPI_LONG, "MPI_LONG", l, lwant, 8);
	packs(MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", ul, ulwant, 8); /* 0xfffffffe zero-extended */
	{
		MPI_Aint size8 = -1, pos = 0;
		unsigned char out[16];
		OK(MPI_Pack_external_size("external32", 2, MPI_LONG_LONG, &size8));
		CHECK(size8 == 16, "MPI_LONG_LONG: MPI_Pack_external_size %ld", (long)size8);
		OK(MPI_Pack_external("external32", ll, 2, MPI_LONG_LONG, out, sizeof out, &pos));
		CHECK(pos == 16 && memcmp(out, llwant, 16) == 0, "MPI_LONG_LONG packed differently");
	}
	/* A derived type of longs: a vector of 2 of every other one. */
	{
		MPI_Datatype vec;
		long v[3] = {-1, 99, 7};
		const unsigned char want[] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 7};
		unsigned char out[8];
		MPI_Aint sz = -1, pos = 0;
		OK(MPI_Type_vector(2, 1, 2, MPI_LONG, &vec));
		OK(MPI_Type_commit(&vec));
		OK(MPI_Pack_external_size("external32", 1, vec, &sz));
		CHECK(sz == 8, "vector of 2 MPI_LONG: %ld bytes", (long)sz);
		OK(MPI_Pack_external("external32", v, 1, vec, out, sizeof out, &pos));
		CHECK(pos == 8 && memcmp(out, want, 8) == 0, "vector of MPI_LONG packed differently");
		OK(MPI_Type_free(&vec));
	}
	if (sizeof(long) == 8) {
		long big[1] = {1L << 40};
		unsigned long ubig[1] = {1UL << 32};
		long neg[1] = {-(1L << 31) - 1};
		unsigned char out[8];
		MPI_Aint pos = 0;
		int c = cls(MPI_Pack_external("external32", big, 1, MPI_LONG, out, sizeof out, &pos));
		CHECK(c == MPI_ERR_CONVERSION, "packing 2^40 as MPI_LONG: class %d, want MPI_ERR_CONVERSION", c);
		pos = 0;
		c = cls(MPI_Pack_external("external32", neg, 1, MPI_LONG, out, sizeof out, &pos));
		CHECK(c == MPI_ERR_CONVERSION, "packing -2^31-1 as MPI_LONG: class %d", c);
		pos = 0;
		c = cls(MPI_Pack_external("external32", ubig, 1, MPI_UNSIGNED_LONG, out, sizeof out, &pos));
		CHECK(c == MPI_ERR_CONVERSION, "packing 2^32 as MPI_UNSIGNED_LONG: class %d", c);
	}

	/* Everywhere else a long is a 64-bit integer: a message and a
	 * reduction that mix MPI_LONG and MPI_INT64_T match. */
	if (sizeof(long) == 8) {
		int64_t got[2] = {0, 0};
		long mine[2] = {(long)(rank + 1) << 33, -3};
		if (size > 1 && rank == 0) {
			OK(MPI_Send(mine, 2, MPI_LONG, 1, 7, MPI_COMM_WORLD));
		} else if (size > 1 && rank == 1) {
			OK(MPI_Recv(got, 2, MPI_INT64_T, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			CHECK(got[0] == 1L << 33 && got[1] == -3, "MPI_INT64_T received %lld %lld", (long long)got[0], (long long)got[1]);
		}
		OK(MPI_Allreduce(mine, got, 2, rank % 2 ? MPI_INT64_T : MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
		CHECK(got[0] == ((int64_t)size * (size + 1) / 2) << 33 && got[1] == -3 * size, "Allreduce %lld %lld", (long long)got[0], (long long)got[1]);
	}

	/* An external32 view of MPI_LONG: 4 bytes an element in the file. */
	{
		MPI_File fh;
		MPI_Aint ext = -1;
		MPI_Offset fsize = -1;
		long w[2] = {rank * 256 + 1, -2}, *all = malloc(2 * size * sizeof(long));
		OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
		OK(MPI_File_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL));
		OK(MPI_File_get_type_extent(fh, MPI_LONG, &ext));
		CHECK(ext == 4, "MPI_File_get_type_extent of MPI_LONG in external32: %ld", (long)ext);
		OK(MPI_File_write_at_all(fh, 2 * rank, w, 2, MPI_LONG, MPI_STATUS_IGNORE));
		OK(MPI_File_sync(fh));
		OK(MPI_Barrier(MPI_COMM_WORLD));
		OK(MPI_File_sync(fh));
		OK(MPI_File_get_size(fh, &fsize));
		CHECK(fsize == 8 * size, "file size %lld, want %d", (long long)fsize, 8 * size);
		OK(MPI_File_read_at_all(fh, 0, all, 2 * size, MPI_LONG, MPI_STATUS_IGNORE));
		for (int r = 0; r < size; r++)
			CHECK(all[2 * r] == r * 256 + 1 && all[2 * r + 1] == -2, "read back %ld %ld for rank %d", all[2 * r], all[2 * r + 1], r);
		if (sizeof(long) == 8) {
			long big = 1L << 40;
			int c = cls(MPI_File_write_at(fh, 2 * size + rank, &big, 1, MPI_LONG, MPI_STATUS_IGNORE));
			CHECK(c == MPI_ERR_CONVERSION, "writing 2^40 through the view: class %d", c);
		}
		/* The bytes themselves, through a native view of bytes. */
		unsigned char raw[8];
		OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
		OK(MPI_File_read_at_all(fh, 8 * rank, raw, 8, MPI_BYTE, MPI_STATUS_IGNORE));
		const unsigned char rw[] = {0, 0, (unsigned char)rank, 1, 0xff, 0xff, 0xff, 0xfe};
		CHECK(memcmp(raw, rw, 8) == 0, "rank %d's bytes in the file: %02x%02x%02x%02x %02x%02x%02x%02x", rank,
		      raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7]);
		OK(MPI_File_close(&fh));
		free(all);
	}

	/* MPI_LOGICAL16: 16 bytes, any non-zero byte is true. */
	{
		int sz = -1, n;
		char tname[MPI_MAX_OBJECT_NAME];
		OK(MPI_Type_size(MPI_LOGICAL16, &sz));
		CHECK(sz == 16, "MPI_LOGICAL16 size %d", sz);
		OK(MPI_Type_get_name(MPI_LOGICAL16, tname, &n));
		CHECK(strcmp(tname, "MPI_LOGICAL16") == 0, "name %s", tname);
#ifdef __SIZEOF_INT128__
		/* Element 0 true on every rank (only in its last byte), 1 true on
		 * rank 0 only, 2 false everywhere. */
		unsigned char in[3][16], out[3][16];
		memset(in, 0, sizeof in);
		in[0][rank % 16] = 0x80;
		in[0][15 - rank % 16] |= 1;
		if (rank == 0)
			in[1][7] = 2;
		const MPI_Op ops[] = {MPI_LAND, MPI_LOR, MPI_LXOR};
		const int want[3][3] = {
			{1, 0, 0},            /* LAND */
			{1, 1, 0},            /* LOR */
			{size % 2, 1, 0},     /* LXOR */
		};
		for (int o = 0; o < 3; o++) {
			memset(out, 0x77, sizeof out);
			OK(MPI_Allreduce(in, out, 3, MPI_LOGICAL16, ops[o], MPI_COMM_WORLD));
			if (size == 1) { /* nothing to combine: the values as they were */
				CHECK(memcmp(out, in, sizeof in) == 0, "op %d on one rank changed the values", o);
				continue;
			}
			for (int e = 0; e < 3; e++) {
				__int128 v;
				memcpy(&v, out[e], 16);
				CHECK(v == want[o][e], "op %d element %d: %#llx %#llx, want %d", o, e,
				      (unsigned long long)(v >> 64), (unsigned long long)v, want[o][e]);
			}
		}
#endif
	}

	OK(MPI_Finalize());
	if (rank == 0)
		printf("ext32long OK\n");
	return 0;
}
