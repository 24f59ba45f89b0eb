/* ftypes16: Fortran's optional types that C and Go have no standard
 * numbers of: MPI_INTEGER16, MPI_REAL2, MPI_REAL16, MPI_COMPLEX4 and
 * MPI_COMPLEX32 (MPICH's datatype/sizedtypes). Their sizes and extents,
 * data moved unchanged by point-to-point and MPI_Pack, external32 in
 * big-endian order, the predefined reductions and an accumulate computed
 * in their precision (with GCC's __int128, __float128 and _Float16), and
 * operations they do not have refused with MPI_ERR_OP. */
#include <mpi.h>
#include <stdint.h>
#include "check.h"

#if !defined(__SIZEOF_INT128__) || !defined(__SIZEOF_FLOAT128__) || !defined(__FLT16_MANT_DIG__)
/* A compiler without these numbers: nothing to compare with. */
int main(void)
{
	printf("ftypes16 OK\n");
	return 0;
}
#else

static int cls(int rc)
{
	int c = -1;
	OK(MPI_Error_class(rc, &c));
	return c;
}

typedef __int128 i128;
typedef __float128 f128;
typedef _Float16 f16;
typedef struct { f128 re, im; } c256;
typedef struct { f16 re, im; } c32;

int main(int argc, char **argv)
{
	int rank, size;
	START(argc, argv, rank, size);

	struct {
		MPI_Datatype t;
		const char *name;
		int size;
	} types[] = {
		{MPI_INTEGER16, "MPI_INTEGER16", 16}, {MPI_REAL2, "MPI_REAL2", 2}, {MPI_REAL16, "MPI_REAL16", 16},
		{MPI_COMPLEX4, "MPI_COMPLEX4", 4}, {MPI_COMPLEX32, "MPI_COMPLEX32", 32},
	};
	for (int i = 0; i < 5; i++) {
		int sz = -1, n;
		MPI_Aint lb = -1, ext = -1;
		char name[MPI_MAX_OBJECT_NAME];
		OK(MPI_Type_size(types[i].t, &sz));
		OK(MPI_Type_get_extent(types[i].t, &lb, &ext));
		CHECK(sz == types[i].size && lb == 0 && ext == sz, "%s: size %d lb %ld extent %ld", types[i].name, sz, (long)lb, (long)ext);
		OK(MPI_Type_get_name(types[i].t, name, &n));
		CHECK(strcmp(name, types[i].name) == 0, "name %s, want %s", name, types[i].name);
		/* Packed as they are, in external32 with each number (each part
		 * of a complex) big-endian. */
		unsigned char in[64], out[64], packed[64];
		for (int k = 0; k < 64; k++)
			in[k] = (unsigned char)(k + 1);
		int pos = 0;
		OK(MPI_Pack(in, 2, types[i].t, packed, sizeof packed, &pos, MPI_COMM_WORLD));
		CHECK(pos == 2 * sz, "%s: MPI_Pack wrote %d bytes", types[i].name, pos);
		memset(out, 0, sizeof out);
		pos = 0;
		OK(MPI_Unpack(packed, sizeof packed, &pos, out, 2, types[i].t, MPI_COMM_WORLD));
		CHECK(memcmp(in, out, 2 * sz) == 0, "%s: MPI_Unpack", types[i].name);
		MPI_Aint epos = 0, esz = 0;
		OK(MPI_Pack_external_size("external32", 2, types[i].t, &esz));
		CHECK(esz == 2 * sz, "%s: external32 size %ld", types[i].name, (long)esz);
		OK(MPI_Pack_external("external32", in, 2, types[i].t, packed, sizeof packed, &epos));
		int word = (types[i].t == MPI_COMPLEX4 || types[i].t == MPI_REAL2) ? 2 : 16;
		for (int k = 0; k < 2 * sz; k++)
			CHECK(packed[k] == in[(k / word) * word + word - 1 - k % word], "%s: external32 byte %d is %d", types[i].name, k, packed[k]);
		memset(out, 0, sizeof out);
		epos = 0;
		OK(MPI_Unpack_external("external32", packed, esz, &epos, out, 2, types[i].t));
		CHECK(memcmp(in, out, 2 * sz) == 0, "%s: MPI_Unpack_external", types[i].name);
		/* Moved unchanged between ranks. */
		if (size > 1) {
			int to = (rank + 1) % size, from = (rank + size - 1) % size;
			in[0] = (unsigned char)rank;
			OK(MPI_Sendrecv(in, 2, types[i].t, to, i, out, 2, types[i].t, from, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			CHECK(out[0] == from && memcmp(in + 1, out + 1, 2 * sz - 1) == 0, "%s: Sendrecv", types[i].name);
		}
	}

	/* Reductions in their own precision. */
	i128 big = ((i128)1 << 64) - 1 + rank, isum = 0, iwant = 0;
	for (int r = 0; r < size; r++)
		iwant += ((i128)1 << 64) - 1 + r;
	OK(MPI_Allreduce(&big, &isum, 1, MPI_INTEGER16, MPI_SUM, MPI_COMM_WORLD));
	CHECK(isum == iwant, "MPI_INTEGER16 sum %llx:%llx", (unsigned long long)(isum >> 64), (unsigned long long)isum);
	i128 imax = 0;
	OK(MPI_Allreduce(&big, &imax, 1, MPI_INTEGER16, MPI_MAX, MPI_COMM_WORLD));
	CHECK(imax == ((i128)1 << 64) - 1 + (size - 1), "MPI_INTEGER16 max");
	f128 q = 1 + (f128)rank * 0x1p-100Q, qsum = 0, qwant = 0;
	for (int r = 0; r < size; r++)
		qwant += 1 + (f128)r * 0x1p-100Q;
	OK(MPI_Allreduce(&q, &qsum, 1, MPI_REAL16, MPI_SUM, MPI_COMM_WORLD));
	CHECK(qsum == qwant, "MPI_REAL16 sum lost precision");
	f16 h = (f16)(rank + 1), hsum = 0;
	OK(MPI_Allreduce(&h, &hsum, 1, MPI_REAL2, MPI_SUM, MPI_COMM_WORLD));
	CHECK((double)hsum == size * (size + 1) / 2.0, "MPI_REAL2 sum %g", (double)hsum);
	c256 z = {0, 1}, zp = {0, 0};
	OK(MPI_Allreduce(&z, &zp, 1, MPI_COMPLEX32, MPI_PROD, MPI_COMM_WORLD));
	c256 zw = {1, 0};
	for (int r = 0; r < size; r++) {
		c256 t = {-zw.im, zw.re}; /* zw * i */
		zw = t;
	}
	CHECK(zp.re == zw.re && zp.im == zw.im, "MPI_COMPLEX32 product");
	c32 y = {1, (f16)rank}, ys = {0, 0};
	OK(MPI_Allreduce(&y, &ys, 1, MPI_COMPLEX4, MPI_SUM, MPI_COMM_WORLD));
	CHECK((double)ys.re == size && (double)ys.im == size * (size - 1) / 2.0, "MPI_COMPLEX4 sum");

	/* Operations they do not have. */
	CHECK(cls(MPI_Allreduce(&q, &qsum, 1, MPI_REAL16, MPI_BAND, MPI_COMM_WORLD)) == MPI_ERR_OP, "MPI_BAND on MPI_REAL16");
	CHECK(cls(MPI_Allreduce(&big, &isum, 1, MPI_INTEGER16, MPI_MAXLOC, MPI_COMM_WORLD)) == MPI_ERR_OP, "MPI_MAXLOC on MPI_INTEGER16");
	CHECK(cls(MPI_Allreduce(&z, &zp, 1, MPI_COMPLEX32, MPI_MAX, MPI_COMM_WORLD)) == MPI_ERR_OP, "MPI_MAX on MPI_COMPLEX32");

	/* An accumulate: every rank adds 2^64 - 1 to rank 0's INTEGER16. */
	i128 *cell;
	MPI_Win win;
	OK(MPI_Win_allocate(sizeof *cell, sizeof *cell, MPI_INFO_NULL, MPI_COMM_WORLD, &cell, &win));
	*cell = 0;
	OK(MPI_Barrier(MPI_COMM_WORLD));
	i128 add = ((i128)1 << 64) - 1;
	OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
	OK(MPI_Accumulate(&add, 1, MPI_INTEGER16, 0, 0, 1, MPI_INTEGER16, MPI_SUM, win));
	OK(MPI_Win_unlock(0, win));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0) {
		OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
		CHECK(*cell == add * size, "accumulated MPI_INTEGER16");
		OK(MPI_Win_unlock(0, win));
	}
	OK(MPI_Win_free(&win));

	OK(MPI_Finalize());
	if (rank == 0)
		printf("ftypes16 OK\n");
	return 0;
}
#endif
