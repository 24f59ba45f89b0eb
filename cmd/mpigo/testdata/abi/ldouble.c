/* ldouble: C's long double types and the Fortran types of a fixed size.
 * Sizes and extents as the compiler lays them out (a struct of a char
 * and a long double too), long doubles sent and gathered unchanged, the
 * predefined reductions on them computed in long double precision
 * (MPI_SUM of values a double cannot tell apart), MINLOC and MAXLOC on
 * MPI_LONG_DOUBLE_INT, complex products, refusals of operations a type
 * does not have, and MPI_INTEGER8 / MPI_REAL8 / MPI_LOGICAL4 moving and
 * reducing as their C counterparts. */
#include <mpi.h>
#include <complex.h>
#include <stddef.h>
#include "check.h"

static int cls(int rc)
{
	int c = -1;
	OK(MPI_Error_class(rc, &c));
	return c;
}

struct ldi {
	long double v;
	int i;
};

struct cld {
	char c;
	long double x;
};

int main(int argc, char **argv)
{
	int rank, size;
	START(argc, argv, rank, size);

	/* Sizes and extents. */
	int sz;
	MPI_Aint lb, ext;
	OK(MPI_Type_size(MPI_LONG_DOUBLE, &sz));
	OK(MPI_Type_get_extent(MPI_LONG_DOUBLE, &lb, &ext));
	CHECK(sz == (int)sizeof(long double) && ext == (MPI_Aint)sizeof(long double), "long double size %d extent %ld", sz, (long)ext);
	OK(MPI_Type_get_extent(MPI_C_LONG_DOUBLE_COMPLEX, &lb, &ext));
	CHECK(ext == (MPI_Aint)sizeof(long double _Complex), "long double complex extent %ld", (long)ext);
	OK(MPI_Type_get_extent(MPI_LONG_DOUBLE_INT, &lb, &ext));
	CHECK(ext == (MPI_Aint)sizeof(struct ldi), "MPI_LONG_DOUBLE_INT extent %ld, want %zu", (long)ext, sizeof(struct ldi));
	/* MPI_Type_match_size finds long double by its size (MPICH's
	 * datatype/tmatchsize). */
	{
		MPI_Datatype m;
		int msz;
		OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, sizeof(long double), &m));
		OK(MPI_Type_size(m, &msz));
		CHECK(msz == (int)sizeof(long double), "match_size real %zu: size %d", sizeof(long double), msz);
		OK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, sizeof(long double _Complex), &m));
		OK(MPI_Type_size(m, &msz));
		CHECK(msz == (int)sizeof(long double _Complex), "match_size complex: size %d", msz);
	}
	char name[MPI_MAX_OBJECT_NAME];
	int n;
	OK(MPI_Type_get_name(MPI_LONG_DOUBLE, name, &n));
	CHECK(strcmp(name, "MPI_LONG_DOUBLE") == 0, "name %s", name);
	int blens[2] = {1, 1};
	MPI_Aint displs[2] = {offsetof(struct cld, c), offsetof(struct cld, x)};
	MPI_Datatype types[2] = {MPI_CHAR, MPI_LONG_DOUBLE}, st;
	OK(MPI_Type_create_struct(2, blens, displs, types, &st));
	OK(MPI_Type_get_extent(st, &lb, &ext));
	CHECK(ext == (MPI_Aint)sizeof(struct cld), "struct {char; long double} extent %ld, want %zu", (long)ext, sizeof(struct cld));
	OK(MPI_Type_free(&st));

	/* Moved unchanged. */
	long double mine = 1.0L / 3.0L + rank, all[64];
	OK(MPI_Allgather(&mine, 1, MPI_LONG_DOUBLE, all, 1, MPI_LONG_DOUBLE, MPI_COMM_WORLD));
	for (int r = 0; r < size; r++)
		CHECK(all[r] == 1.0L / 3.0L + r, "gathered long double from %d", r);

	/* Reductions in long double precision: 1 + r*2^-60 sums to a value a
	 * double would round to size. */
	long double tiny = 1.0L + (long double)rank * 0x1p-60L, sum = 0, want = 0;
	for (int r = 0; r < size; r++)
		want += 1.0L + (long double)r * 0x1p-60L;
	OK(MPI_Allreduce(&tiny, &sum, 1, MPI_LONG_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
	CHECK(sum == want, "MPI_SUM of long doubles %.21Lg, want %.21Lg", sum, want);
	long double mx = 0, mn = 0;
	OK(MPI_Allreduce(&tiny, &mx, 1, MPI_LONG_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
	OK(MPI_Allreduce(&tiny, &mn, 1, MPI_LONG_DOUBLE, MPI_MIN, MPI_COMM_WORLD));
	CHECK(mx == 1.0L + (long double)(size - 1) * 0x1p-60L && mn == 1.0L, "max %.21Lg min %.21Lg", mx, mn);
	long double two = 2.0L, prod = 0;
	OK(MPI_Reduce(&two, &prod, 1, MPI_LONG_DOUBLE, MPI_PROD, 0, MPI_COMM_WORLD));
	if (rank == 0)
		CHECK(prod == (long double)(1 << size), "prod %Lg", prod);
	long double _Complex z = 1.0L + 1.0L * I, zp = 0;
	OK(MPI_Allreduce(&z, &zp, 1, MPI_C_LONG_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD));
	long double _Complex zw = 1;
	for (int r = 0; r < size; r++)
		zw *= z;
	CHECK(zp == zw, "complex prod %Lg%+Lgi", creall(zp), cimagl(zp));
	struct ldi p = {(long double)(rank % 2), rank}, pmin, pmax;
	OK(MPI_Allreduce(&p, &pmin, 1, MPI_LONG_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD));
	OK(MPI_Allreduce(&p, &pmax, 1, MPI_LONG_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
	CHECK(pmin.v == 0 && pmin.i == 0, "minloc %Lg at %d", pmin.v, pmin.i);
	CHECK(size == 1 ? (pmax.v == 0 && pmax.i == 0) : (pmax.v == 1 && pmax.i == 1), "maxloc %Lg at %d", pmax.v, pmax.i);
	long double acc = 1.0L;
	OK(MPI_Reduce_local(&tiny, &acc, 1, MPI_LONG_DOUBLE, MPI_SUM));
	CHECK(acc == 1.0L + tiny, "Reduce_local %.21Lg", acc);

	/* Operations the types do not have. */
	CHECK(cls(MPI_Allreduce(&tiny, &sum, 1, MPI_LONG_DOUBLE, MPI_BAND, MPI_COMM_WORLD)) == MPI_ERR_OP, "MPI_BAND on long double");
	CHECK(cls(MPI_Allreduce(&z, &zp, 1, MPI_C_LONG_DOUBLE_COMPLEX, MPI_MAX, MPI_COMM_WORLD)) == MPI_ERR_OP, "MPI_MAX on complex");
	CHECK(cls(MPI_Allreduce(&p, &pmin, 1, MPI_LONG_DOUBLE_INT, MPI_SUM, MPI_COMM_WORLD)) == MPI_ERR_OP, "MPI_SUM on a pair");

	/* Fortran types of a fixed size. */
	long long i8 = rank + 1, i8s = 0;
	OK(MPI_Allreduce(&i8, &i8s, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD));
	CHECK(i8s == (long long)size * (size + 1) / 2, "MPI_INTEGER8 sum %lld", i8s);
	double r8 = 0.5, r8s = 0;
	OK(MPI_Allreduce(&r8, &r8s, 1, MPI_REAL8, MPI_SUM, MPI_COMM_WORLD));
	CHECK(r8s == 0.5 * size, "MPI_REAL8 sum %g", r8s);
	int l4 = 1, l4a = 0;
	OK(MPI_Allreduce(&l4, &l4a, 1, MPI_LOGICAL4, MPI_LAND, MPI_COMM_WORLD));
	CHECK(l4a == 1, "MPI_LOGICAL4 land %d", l4a);
	OK(MPI_Type_size(MPI_COMPLEX16, &sz));
	CHECK(sz == 16, "MPI_COMPLEX16 size %d", sz);

	OK(MPI_Finalize());
	if (rank == 0)
		printf("ldouble OK\n");
	return 0;
}
