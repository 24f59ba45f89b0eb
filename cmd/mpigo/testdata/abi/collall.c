/* collall: every predefined operation on every predefined datatype it is
 * defined on (MPI_MINLOC/MAXLOC on the pair types), user operations
 * (MPI_Op_create and _c, a non-commutative one on a derived datatype),
 * MPI_Reduce_local, MPI_Op_commutative, and every blocking collective
 * with MPI_IN_PLACE where the standard allows it, the v and w forms and
 * the large-count forms; then bad arguments. */
#include <mpi.h>
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include "check.h"

static int rank, size;

static void expect(int rc, int class, const char *what)
{
	int c = -1;
	CHECK(rc != MPI_SUCCESS, "%s succeeded", what);
	OK(MPI_Error_class(rc, &c));
	CHECK(c == class, "%s: class %d, want %d", what, c, class);
}

#define ALL(x, r, dt, op) OK(MPI_Allreduce(&(x), &(r), 1, dt, op, MPI_COMM_WORLD))

/* The arithmetic, logical and bitwise operations on an integer type. */
#define INT_CASE(T, H) do { \
	T x, r; \
	x = (T)(rank + 1); ALL(x, r, H, MPI_SUM); CHECK(r == (T)(size * (size + 1) / 2), #H " sum %lld", (long long)r); \
	x = (T)(rank % 2 ? 2 : 1); ALL(x, r, H, MPI_PROD); CHECK(r == (T)(1 << (size / 2)), #H " prod %lld", (long long)r); \
	x = (T)(rank + 1); ALL(x, r, H, MPI_MIN); CHECK(r == 1, #H " min %lld", (long long)r); \
	ALL(x, r, H, MPI_MAX); CHECK(r == (T)size, #H " max %lld", (long long)r); \
	x = (T)(rank != 1); ALL(x, r, H, MPI_LAND); CHECK(r == (size == 1), #H " land %lld", (long long)r); \
	x = (T)(rank == 0 ? 5 : 0); ALL(x, r, H, MPI_LOR); CHECK(r == (size == 1 ? 5 : 1), #H " lor %lld", (long long)r); \
	x = (T)1; ALL(x, r, H, MPI_LXOR); CHECK(r == size % 2, #H " lxor %lld", (long long)r); \
	x = (T)(1 << rank); ALL(x, r, H, MPI_BOR); CHECK(r == (T)((1 << size) - 1), #H " bor %lld", (long long)r); \
	x = (T)(0x7f & ~(1 << rank)); ALL(x, r, H, MPI_BAND); CHECK(r == (T)(0x7f & ~((1 << size) - 1)), #H " band %lld", (long long)r); \
	x = (T)3; ALL(x, r, H, MPI_BXOR); CHECK(r == (T)(size % 2 ? 3 : 0), #H " bxor %lld", (long long)r); \
} while (0)

#define FLOAT_CASE(T, H) do { \
	T x, r; \
	x = (T)(rank + 1) / 2; ALL(x, r, H, MPI_SUM); CHECK(r == (T)(size * (size + 1)) / 4, #H " sum %g", (double)r); \
	x = (T)(rank % 2 ? 0.5 : 1); ALL(x, r, H, MPI_PROD); CHECK(r == (T)1 / (1 << (size / 2)), #H " prod %g", (double)r); \
	x = (T)rank - (T)0.25; ALL(x, r, H, MPI_MIN); CHECK(r == (T)-0.25, #H " min %g", (double)r); \
	ALL(x, r, H, MPI_MAX); CHECK(r == (T)(size - 1) - (T)0.25, #H " max %g", (double)r); \
	expect(MPI_Allreduce(&x, &r, 1, H, MPI_BAND, MPI_COMM_WORLD), MPI_ERR_OP, #H " band"); \
} while (0)

/* i to the power 0, 1, 2, 3. */
static const double ipow[4][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}};

#define COMPLEX_CASE(T, H) do { \
	T x, r; \
	x = (rank + 1) + 1.0 * I; ALL(x, r, H, MPI_SUM); \
	CHECK(creal(r) == size * (size + 1) / 2 && cimag(r) == size, #H " sum %g%+gi", creal(r), cimag(r)); \
	x = 1.0 * I; ALL(x, r, H, MPI_PROD); \
	CHECK(creal(r) == ipow[size % 4][0] && cimag(r) == ipow[size % 4][1], #H " prod %g%+gi", creal(r), cimag(r)); \
	expect(MPI_Allreduce(&x, &r, 1, H, MPI_MAX, MPI_COMM_WORLD), MPI_ERR_OP, #H " max"); \
} while (0)

/* MINLOC and MAXLOC on a pair type: the value of rank r is r%3 (ties
 * between ranks, the smaller rank wins) and r+10 for the second element. */
#define PAIR_CASE(V, H) do { \
	struct { V v; int loc; } x[2], r[2]; \
	x[0].v = (V)(rank % 3); x[0].loc = rank; x[1].v = (V)(rank + 10); x[1].loc = -rank; \
	OK(MPI_Allreduce(x, r, 2, H, MPI_MINLOC, MPI_COMM_WORLD)); \
	CHECK(r[0].v == 0 && r[0].loc == 0 && r[1].v == 10 && r[1].loc == 0, #H " minloc %g@%d %g@%d", (double)r[0].v, r[0].loc, (double)r[1].v, r[1].loc); \
	OK(MPI_Allreduce(x, r, 2, H, MPI_MAXLOC, MPI_COMM_WORLD)); \
	int m = size < 3 ? size - 1 : 2; \
	CHECK(r[0].v == m && r[0].loc == m && r[1].v == size + 9 && r[1].loc == -(size - 1), #H " maxloc %g@%d %g@%d", (double)r[0].v, r[0].loc, (double)r[1].v, r[1].loc); \
	expect(MPI_Allreduce(x, r, 2, H, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP, #H " sum"); \
} while (0)

/* cat: a non-commutative operation on (digits, 10^ndigits) pairs of
 * longs, a contiguous datatype of two: concatenation of digit strings. */
static MPI_Datatype cat_type, seen_type;
static int cat_calls;

static void cat(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	long *a = in, *b = inout;
	int i;
	cat_calls++;
	seen_type = *dt;
	for (i = 0; i < *len; i++) {
		b[2 * i] = a[2 * i] * b[2 * i + 1] + b[2 * i];
		b[2 * i + 1] *= a[2 * i + 1];
	}
}

static void cat_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
	int n = (int)*len;
	cat(in, inout, &n, dt);
}

/* The digits 0 1 ... size-1, as cat builds them. */
static long digits(int from, int to)
{
	long v = 0;
	for (int i = from; i < to; i++)
		v = v * 10 + i;
	return v;
}

int main(int argc, char **argv)
{
	int i, j;

	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	CHECK(size <= 8, "at most 8 ranks");
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

	/* Every predefined operation on every predefined type it applies to. */
	INT_CASE(signed char, MPI_SIGNED_CHAR);
	INT_CASE(unsigned char, MPI_UNSIGNED_CHAR);
	INT_CASE(short, MPI_SHORT);
	INT_CASE(unsigned short, MPI_UNSIGNED_SHORT);
	INT_CASE(int, MPI_INT);
	INT_CASE(unsigned, MPI_UNSIGNED);
	INT_CASE(long, MPI_LONG);
	INT_CASE(unsigned long, MPI_UNSIGNED_LONG);
	INT_CASE(long long, MPI_LONG_LONG);
	INT_CASE(unsigned long long, MPI_UNSIGNED_LONG_LONG);
	INT_CASE(int8_t, MPI_INT8_T);
	INT_CASE(uint8_t, MPI_UINT8_T);
	INT_CASE(int16_t, MPI_INT16_T);
	INT_CASE(uint16_t, MPI_UINT16_T);
	INT_CASE(int32_t, MPI_INT32_T);
	INT_CASE(uint32_t, MPI_UINT32_T);
	INT_CASE(int64_t, MPI_INT64_T);
	INT_CASE(uint64_t, MPI_UINT64_T);
	INT_CASE(MPI_Aint, MPI_AINT);
	INT_CASE(MPI_Count, MPI_COUNT);
	INT_CASE(MPI_Offset, MPI_OFFSET);
	FLOAT_CASE(float, MPI_FLOAT);
	FLOAT_CASE(double, MPI_DOUBLE);
	COMPLEX_CASE(float _Complex, MPI_C_FLOAT_COMPLEX);
	COMPLEX_CASE(double _Complex, MPI_C_DOUBLE_COMPLEX);
	{
		bool x, r;
		x = rank != 1; ALL(x, r, MPI_C_BOOL, MPI_LAND); CHECK(r == (size == 1), "bool land");
		x = rank == 0; ALL(x, r, MPI_C_BOOL, MPI_LOR); CHECK(r, "bool lor");
		x = true; ALL(x, r, MPI_C_BOOL, MPI_LXOR); CHECK(r == size % 2, "bool lxor");
		expect(MPI_Allreduce(&x, &r, 1, MPI_C_BOOL, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP, "bool sum");
	}
	{
		unsigned char x, r;
		x = 1 << rank; ALL(x, r, MPI_BYTE, MPI_BOR); CHECK(r == (1 << size) - 1, "byte bor %d", r);
		x = 0x7f & ~(1 << rank); ALL(x, r, MPI_BYTE, MPI_BAND); CHECK(r == (0x7f & ~((1 << size) - 1)), "byte band %d", r);
		x = 3; ALL(x, r, MPI_BYTE, MPI_BXOR); CHECK(r == (size % 2 ? 3 : 0), "byte bxor %d", r);
	}
	PAIR_CASE(int, MPI_2INT);
	PAIR_CASE(float, MPI_FLOAT_INT);
	PAIR_CASE(double, MPI_DOUBLE_INT);
	PAIR_CASE(long, MPI_LONG_INT);
	PAIR_CASE(short, MPI_SHORT_INT);
	{
		int sz;
		OK(MPI_Type_size(MPI_DOUBLE_INT, &sz));
		CHECK(sz == 12, "MPI_DOUBLE_INT size %d", sz);
		OK(MPI_Type_size(MPI_SHORT_INT, &sz));
		CHECK(sz == 6, "MPI_SHORT_INT size %d", sz);
	}

	/* Op_commutative. */
	int commute = -1;
	OK(MPI_Op_commutative(MPI_SUM, &commute));
	CHECK(commute == 1, "MPI_SUM commutative %d", commute);
	OK(MPI_Op_commutative(MPI_REPLACE, &commute));
	CHECK(commute == 0, "MPI_REPLACE commutative %d", commute);
	OK(MPI_Op_commutative(MPI_NO_OP, &commute));
	CHECK(commute == 0, "MPI_NO_OP commutative %d", commute);

	/* A non-commutative user operation on a derived datatype: the result
	 * is in rank order, and the function gets the datatype's handle. */
	MPI_Op catop, catop_c;
	OK(MPI_Type_contiguous(2, MPI_LONG, &cat_type));
	OK(MPI_Type_commit(&cat_type));
	OK(MPI_Op_create(cat, 0, &catop));
	OK(MPI_Op_create_c(cat_c, 0, &catop_c));
	OK(MPI_Op_commutative(catop, &commute));
	CHECK(commute == 0, "user op commutative %d", commute);
	long mine[4] = {rank, 10, rank, 10}, res[4];
	OK(MPI_Allreduce(mine, res, 2, cat_type, catop, MPI_COMM_WORLD));
	CHECK(res[0] == digits(0, size) && res[2] == digits(0, size), "cat allreduce %ld", res[0]);
	/* Some rank called the function (not every one does: that depends
	 * on the algorithm), with the datatype's handle. */
	CHECK(cat_calls == 0 || seen_type == cat_type, "user op saw datatype %p, want %p", (void *)seen_type, (void *)cat_type);
	int calls = 0;
	OK(MPI_Allreduce(&cat_calls, &calls, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	CHECK(size == 1 || calls > 0, "the user op was never called");
	OK(MPI_Reduce(mine, res, 2, cat_type, catop_c, size - 1, MPI_COMM_WORLD));
	if (rank == size - 1)
		CHECK(res[0] == digits(0, size), "cat_c reduce %ld", res[0]);
	OK(MPI_Scan(mine, res, 1, cat_type, catop, MPI_COMM_WORLD));
	CHECK(res[0] == digits(0, rank + 1), "cat scan %ld", res[0]);
	res[0] = -1;
	OK(MPI_Exscan(mine, res, 1, cat_type, catop, MPI_COMM_WORLD));
	if (rank > 0)
		CHECK(res[0] == digits(0, rank), "cat exscan %ld", res[0]);
	/* Reduce_local: in ⊕ inout, the operand order of the standard. */
	long a[2] = {12, 100}, b[2] = {34, 100};
	OK(MPI_Reduce_local(a, b, 1, cat_type, catop));
	CHECK(b[0] == 1234 && b[1] == 10000, "Reduce_local cat %ld %ld", b[0], b[1]);
	int la[3] = {1, 5, 3}, lb[3] = {4, 2, 3};
	OK(MPI_Reduce_local_c(la, lb, 3, MPI_INT, MPI_MAX));
	CHECK(lb[0] == 4 && lb[1] == 5 && lb[2] == 3, "Reduce_local max");

	/* Rooted collectives, each root in turn. */
	int n = size, *all = malloc(sizeof(int) * 4 * n), *cnt = malloc(sizeof(int) * n), *dsp = malloc(sizeof(int) * n);
	for (int root = 0; root < size; root++) {
		int v[2] = {rank * 10, rank * 10 + 1};
		for (i = 0; i < 4 * n; i++)
			all[i] = -1;
		OK(MPI_Gather(v, 2, MPI_INT, all, 2, MPI_INT, root, MPI_COMM_WORLD));
		if (rank == root)
			for (i = 0; i < n; i++)
				CHECK(all[2 * i] == i * 10 && all[2 * i + 1] == i * 10 + 1, "Gather root %d [%d] = %d", root, i, all[2 * i]);
		/* Gatherv: rank i gives i%2+1 ints, placed at 3i; in place at root. */
		for (i = 0; i < n; i++) {
			cnt[i] = i % 2 + 1;
			dsp[i] = 3 * i;
		}
		for (i = 0; i < 4 * n; i++)
			all[i] = -1;
		if (rank == root) {
			all[3 * root] = v[0];
			all[3 * root + 1] = v[1];
			OK(MPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, cnt, dsp, MPI_INT, root, MPI_COMM_WORLD));
			for (i = 0; i < n; i++)
				CHECK(all[3 * i] == i * 10 && (i % 2 == 0 || all[3 * i + 1] == i * 10 + 1) && all[3 * i + 2] == -1, "Gatherv root %d [%d]", root, i);
		} else {
			OK(MPI_Gatherv(v, rank % 2 + 1, MPI_INT, NULL, NULL, NULL, MPI_INT, root, MPI_COMM_WORLD));
		}
		/* Scatter and Scatterv (in place at root) send them back. */
		int w[2] = {-1, -1};
		for (i = 0; i < 4 * n; i++)
			all[i] = 100 + i;
		OK(MPI_Scatter(all, 2, MPI_INT, w, 2, MPI_INT, root, MPI_COMM_WORLD));
		CHECK(w[0] == 100 + 2 * rank && w[1] == 101 + 2 * rank, "Scatter root %d: %d %d", root, w[0], w[1]);
		w[0] = w[1] = -1;
		if (rank == root) {
			OK(MPI_Scatterv(all, cnt, dsp, MPI_INT, MPI_IN_PLACE, 0, MPI_INT, root, MPI_COMM_WORLD));
		} else {
			OK(MPI_Scatterv(NULL, NULL, NULL, MPI_INT, w, rank % 2 + 1, MPI_INT, root, MPI_COMM_WORLD));
			CHECK(w[0] == 100 + 3 * rank && (rank % 2 == 0 ? w[1] == -1 : w[1] == 101 + 3 * rank), "Scatterv root %d: %d %d", root, w[0], w[1]);
		}
		/* Bcast, Reduce (in place at root) and the large-count forms. */
		long bc[3] = {0, 0, 0};
		if (rank == root)
			bc[0] = 7, bc[2] = root;
		OK(MPI_Bcast_c(bc, 3, MPI_LONG, root, MPI_COMM_WORLD));
		CHECK(bc[0] == 7 && bc[2] == root, "Bcast_c root %d", root);
		int rv = rank + 1, rr = -1;
		if (rank == root) {
			rr = rv;
			OK(MPI_Reduce(MPI_IN_PLACE, &rr, 1, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
			CHECK(rr == n * (n + 1) / 2, "Reduce in place root %d: %d", root, rr);
		} else {
			OK(MPI_Reduce(&rv, NULL, 1, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
		}
		OK(MPI_Reduce_c(&rv, &rr, 1, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD));
		if (rank == root)
			CHECK(rr == n, "Reduce_c root %d: %d", root, rr);
		OK(MPI_Gather_c(v, 1, MPI_INT, all, 1, MPI_INT, root, MPI_COMM_WORLD));
		if (rank == root)
			CHECK(all[n - 1] == (n - 1) * 10, "Gather_c root %d", root);
	}

	/* Allgather (in place), Allgatherv (in place), Allgather_c. */
	for (i = 0; i < 2 * n; i++)
		all[i] = i / 2 == rank ? rank * 7 + i % 2 : -1;
	OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 2, MPI_INT, MPI_COMM_WORLD));
	for (i = 0; i < 2 * n; i++)
		CHECK(all[i] == (i / 2) * 7 + i % 2, "Allgather in place [%d] = %d", i, all[i]);
	for (i = 0; i < n; i++) {
		cnt[i] = i % 2 + 1;
		dsp[i] = 3 * (n - 1 - i);
	}
	for (i = 0; i < 3 * n; i++)
		all[i] = -1;
	int gv[2] = {rank, rank};
	OK(MPI_Allgatherv(gv, rank % 2 + 1, MPI_INT, all, cnt, dsp, MPI_INT, MPI_COMM_WORLD));
	for (i = 0; i < n; i++)
		CHECK(all[dsp[i]] == i && (i % 2 == 0 || all[dsp[i] + 1] == i), "Allgatherv [%d]", i);
	all[dsp[rank]] = 1000 + rank;
	OK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, cnt, dsp, MPI_INT, MPI_COMM_WORLD));
	for (i = 0; i < n; i++)
		CHECK(all[dsp[i]] == 1000 + i, "Allgatherv in place [%d] = %d", i, all[dsp[i]]);
	double dg = rank + 0.5, *dall = malloc(sizeof(double) * n);
	OK(MPI_Allgather_c(&dg, 1, MPI_DOUBLE, dall, 1, MPI_DOUBLE, MPI_COMM_WORLD));
	for (i = 0; i < n; i++)
		CHECK(dall[i] == i + 0.5, "Allgather_c [%d]", i);

	/* Alltoall (and in place), Alltoallv, Alltoallw. */
	int *sb = malloc(sizeof(int) * 4 * n), *rb = malloc(sizeof(int) * 4 * n);
	for (i = 0; i < n; i++)
		sb[i] = rank * 100 + i;
	OK(MPI_Alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, MPI_COMM_WORLD));
	for (i = 0; i < n; i++)
		CHECK(rb[i] == i * 100 + rank, "Alltoall [%d] = %d", i, rb[i]);
	OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, sb, 1, MPI_INT, MPI_COMM_WORLD));
	for (i = 0; i < n; i++)
		CHECK(sb[i] == i * 100 + rank, "Alltoall in place [%d] = %d", i, sb[i]);
	/* Alltoallv: rank r sends j+1 ints to rank j; they land reversed. */
	int *sc = malloc(sizeof(int) * n), *sd = malloc(sizeof(int) * n), *rc = malloc(sizeof(int) * n), *rd = malloc(sizeof(int) * n);
	int off = 0;
	for (j = 0; j < n; j++) {
		sc[j] = j + 1;
		sd[j] = off;
		for (i = 0; i <= j; i++)
			sb[off + i] = rank * 100 + j;
		off += j + 1;
	}
	for (j = 0; j < n; j++) {
		rc[j] = rank + 1;
		rd[j] = (n - 1 - j) * (rank + 1);
	}
	OK(MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD));
	for (j = 0; j < n; j++)
		for (i = 0; i <= rank; i++)
			CHECK(rb[rd[j] + i] == j * 100 + rank, "Alltoallv from %d [%d] = %d", j, i, rb[rd[j] + i]);
	{
		/* Alltoallw: an int to each rank, received as MPI_INT at byte
		 * offsets, with MPI_Count/MPI_Aint arrays in the _c form. */
		MPI_Datatype *ts = malloc(sizeof(MPI_Datatype) * n);
		MPI_Count *cc = malloc(sizeof(MPI_Count) * n);
		MPI_Aint *sdb = malloc(sizeof(MPI_Aint) * n), *rdb = malloc(sizeof(MPI_Aint) * n);
		for (j = 0; j < n; j++) {
			ts[j] = MPI_INT;
			cc[j] = 1;
			sb[j] = rank * 1000 + j;
			sdb[j] = j * sizeof(int);
			rdb[j] = (n - 1 - j) * sizeof(int);
		}
		OK(MPI_Alltoallw_c(sb, cc, sdb, ts, rb, cc, rdb, ts, MPI_COMM_WORLD));
		for (j = 0; j < n; j++)
			CHECK(rb[n - 1 - j] == j * 1000 + rank, "Alltoallw_c from %d = %d", j, rb[n - 1 - j]);
		int *ic = malloc(sizeof(int) * n), *isd = malloc(sizeof(int) * n), *ird = malloc(sizeof(int) * n);
		for (j = 0; j < n; j++) {
			ic[j] = 1;
			isd[j] = (int)sdb[j];
			ird[j] = (int)rdb[j];
		}
		OK(MPI_Alltoallw(sb, ic, isd, ts, rb, ic, ird, ts, MPI_COMM_WORLD));
		for (j = 0; j < n; j++)
			CHECK(rb[n - 1 - j] == j * 1000 + rank, "Alltoallw from %d = %d", j, rb[n - 1 - j]);
		free(ts); free(cc); free(sdb); free(rdb); free(ic); free(isd); free(ird);
	}

	/* Reduce_scatter (and in place), Reduce_scatter_block, Scan, Exscan. */
	for (i = 0; i < n; i++) {
		cnt[i] = i % 2 + 1;
	}
	int tot = 0;
	for (i = 0; i < n; i++)
		tot += cnt[i];
	for (i = 0; i < tot; i++)
		sb[i] = i + rank;
	int rsv[2] = {-1, -1};
	OK(MPI_Reduce_scatter(sb, rsv, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	int first = 0;
	for (i = 0; i < rank; i++)
		first += cnt[i];
	for (i = 0; i < cnt[rank]; i++)
		CHECK(rsv[i] == n * (first + i) + n * (n - 1) / 2, "Reduce_scatter [%d] = %d", i, rsv[i]);
	OK(MPI_Reduce_scatter(MPI_IN_PLACE, sb, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	for (i = 0; i < cnt[rank]; i++)
		CHECK(sb[i] == n * (first + i) + n * (n - 1) / 2, "Reduce_scatter in place [%d] = %d", i, sb[i]);
	for (i = 0; i < 2 * n; i++)
		sb[i] = i * rank;
	OK(MPI_Reduce_scatter_block(sb, rsv, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
	CHECK(rsv[0] == 2 * rank * (n - 1) && rsv[1] == (2 * rank + 1) * (n - 1), "Reduce_scatter_block %d %d", rsv[0], rsv[1]);
	OK(MPI_Reduce_scatter_block_c(MPI_IN_PLACE, sb, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
	CHECK(sb[0] == 2 * rank * (n - 1) && sb[1] == (2 * rank + 1) * (n - 1), "Reduce_scatter_block in place %d %d", sb[0], sb[1]);
	int sv = rank + 1, sr;
	OK(MPI_Scan(&sv, &sr, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	CHECK(sr == (rank + 1) * (rank + 2) / 2, "Scan %d", sr);
	sr = sv;
	OK(MPI_Scan(MPI_IN_PLACE, &sr, 1, MPI_INT, MPI_PROD, MPI_COMM_WORLD));
	{
		int f = 1;
		for (i = 1; i <= rank + 1; i++)
			f *= i;
		CHECK(sr == f, "Scan in place prod %d, want %d", sr, f);
	}
	OK(MPI_Exscan_c(&sv, &sr, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	if (rank > 0)
		CHECK(sr == rank * (rank + 1) / 2, "Exscan_c %d", sr);
	OK(MPI_Allreduce_c(MPI_IN_PLACE, &sv, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
	CHECK(sv == 1, "Allreduce_c in place %d", sv);

	/* Bad arguments. */
	int x = 1, y;
	expect(MPI_Bcast(NULL, 2, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER, "Bcast of NULL");
	expect(MPI_Bcast(&x, -1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "Bcast of a negative count");
	expect(MPI_Allreduce(&x, &y, 1, MPI_INT, (MPI_Op)MPI_COMM_WORLD, MPI_COMM_WORLD), MPI_ERR_OP, "a communicator as op");
	expect(MPI_Allreduce(&x, &y, 1, (MPI_Datatype)MPI_SUM, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_TYPE, "an op as datatype");
	expect(MPI_Allreduce(&x, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER, "MPI_IN_PLACE as recvbuf");
	expect(MPI_Allreduce(&x, &y, 1, MPI_CHARACTER, MPI_MAX, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_CHARACTER before MPI_Abi_set_fortran_info");
	expect(MPI_Gatherv(&x, 1, MPI_INT, all, NULL, dsp, MPI_INT, 0, MPI_COMM_SELF), MPI_ERR_ARG, "Gatherv without recvcounts");
	expect(MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, NULL, rd, MPI_INT, MPI_COMM_SELF), MPI_ERR_ARG, "Alltoallv without recvcounts");
	expect(MPI_Reduce_local(MPI_IN_PLACE, &y, 1, MPI_INT, MPI_SUM), MPI_ERR_BUFFER, "Reduce_local in place");
	expect(MPI_Reduce_local(&x, &y, -3, MPI_INT, MPI_SUM), MPI_ERR_COUNT, "Reduce_local of a negative count");
	expect(MPI_Reduce_local(&x, &y, 1, MPI_C_BOOL, MPI_SUM), MPI_ERR_OP, "Reduce_local sum of bools");
	MPI_Op sum = MPI_SUM;
	expect(MPI_Op_free(&sum), MPI_ERR_OP, "Op_free of MPI_SUM");
	expect(MPI_Op_create(NULL, 1, &sum), MPI_ERR_ARG, "Op_create of NULL");
	expect(MPI_Op_commutative((MPI_Op)MPI_INT, &commute), MPI_ERR_OP, "Op_commutative of a datatype");
	expect(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM, "Barrier on MPI_COMM_NULL");
	expect(MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, (MPI_Comm)MPI_INT), MPI_ERR_COMM, "Scan on a datatype");
	expect(MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, 1, MPI_COMM_SELF), MPI_ERR_ROOT, "Reduce to a bad root");

	OK(MPI_Op_free(&catop));
	OK(MPI_Op_free(&catop_c));
	CHECK(catop == MPI_OP_NULL, "Op_free");
	OK(MPI_Type_free(&cat_type));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("collall OK\n");
	OK(MPI_Finalize());
	return 0;
}
