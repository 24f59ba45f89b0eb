/* dtypes: the derived datatype constructors, their envelopes and
 * contents, extents, names, packing, and MPI_BOTTOM with absolute
 * addresses. Needs 2 ranks; ranks 0 and 1 talk. */
#include <mpi.h>
#include <stddef.h>
#include "check.h"

struct rec {
	int id;
	double val;
	char tag[3];
};

static void expect_err(int rc, int want, const char *what)
{
	int cls = -1;
	CHECK(rc != MPI_SUCCESS, "%s succeeded", what);
	MPI_Error_class(rc, &cls);
	CHECK(cls == want, "%s: class %d, want %d", what, cls, want);
}

int main(int argc, char **argv)
{
	int rank, i, n, ni, na, nt, comb;
	MPI_Datatype t, u, v, types[3];
	MPI_Aint lb, ext, addrs[4];
	MPI_Count clb, cext, csize;

	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

	/* indexed: blocks {2 at 0, 1 at 5, 3 at 7} of int. */
	int bl[3] = {2, 1, 3}, ds[3] = {0, 5, 7};
	OK(MPI_Type_indexed(3, bl, ds, MPI_INT, &t));
	OK(MPI_Type_commit(&t));
	OK(MPI_Type_size(t, &n));
	CHECK(n == 6 * (int)sizeof(int), "indexed size %d", n);
	OK(MPI_Type_get_extent(t, &lb, &ext));
	CHECK(lb == 0 && ext == 10 * (MPI_Aint)sizeof(int), "indexed lb %ld extent %ld", (long)lb, (long)ext);
	OK(MPI_Type_get_envelope(t, &ni, &na, &nt, &comb));
	CHECK(comb == MPI_COMBINER_INDEXED && ni == 7 && na == 0 && nt == 1, "indexed envelope %d %d %d %d", comb, ni, na, nt);
	{
		int ints[7];
		MPI_Datatype dt[1];
		OK(MPI_Type_get_contents(t, 7, 0, 1, ints, NULL, dt));
		CHECK(ints[0] == 3 && ints[1] == 2 && ints[3] == 3 && ints[4] == 0 && ints[6] == 7 && dt[0] == MPI_INT,
		      "indexed contents %d %d %d %d %d dt %p", ints[0], ints[1], ints[3], ints[4], ints[6], (void *)dt[0]);
	}
	OK(MPI_Type_get_envelope(MPI_INT, &ni, &na, &nt, &comb));
	CHECK(comb == MPI_COMBINER_NAMED && ni == 0, "MPI_INT envelope %d", comb);

	/* The indexed type sent and received lands in the right places. */
	{
		int a[10], b[10];
		for (i = 0; i < 10; i++) {
			a[i] = 100 + i;
			b[i] = -1;
		}
		if (rank == 0)
			OK(MPI_Send(a, 1, t, 1, 0, MPI_COMM_WORLD));
		else if (rank == 1) {
			OK(MPI_Recv(b, 1, t, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			int want[10] = {100, 101, -1, -1, -1, 105, -1, 107, 108, 109};
			for (i = 0; i < 10; i++)
				CHECK(b[i] == want[i], "indexed recv b[%d] = %d, want %d", i, b[i], want[i]);
		}
	}

	/* struct of a C struct, resized to its size; hvector, hindexed,
	 * indexed_block, subarray, dup; names. */
	{
		struct rec r[2];
		int sbl[3] = {1, 1, 3};
		MPI_Aint sds[3];
		MPI_Datatype sts[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, s0;
		OK(MPI_Get_address(&r[0].id, &addrs[0]));
		OK(MPI_Get_address(&r[0].val, &addrs[1]));
		OK(MPI_Get_address(&r[0].tag, &addrs[2]));
		OK(MPI_Get_address(&r[1], &addrs[3]));
		for (i = 0; i < 3; i++)
			sds[i] = MPI_Aint_diff(addrs[i], addrs[0]);
		OK(MPI_Type_create_struct(3, sbl, sds, sts, &s0));
		OK(MPI_Type_create_resized(s0, 0, MPI_Aint_diff(addrs[3], addrs[0]), &u));
		OK(MPI_Type_commit(&u));
		OK(MPI_Type_get_extent(u, &lb, &ext));
		CHECK(ext == (MPI_Aint)sizeof(struct rec), "struct extent %ld", (long)ext);
		OK(MPI_Type_get_true_extent(u, &lb, &ext));
		CHECK(lb == 0 && ext == (MPI_Aint)(offsetof(struct rec, tag) + 3), "struct true extent %ld", (long)ext);
		OK(MPI_Type_get_envelope(u, &ni, &na, &nt, &comb));
		CHECK(comb == MPI_COMBINER_RESIZED && na == 2 && nt == 1, "resized envelope %d", comb);
		OK(MPI_Type_get_contents(u, 0, 2, 1, NULL, addrs, types));
		CHECK(addrs[1] == (MPI_Aint)sizeof(struct rec), "resized contents");
		/* A derived datatype in the contents is a new handle the caller
		 * frees (MPI-4.1 5.1.13), equivalent to s0; freeing it frees
		 * neither s0 nor u. */
		CHECK(types[0] != s0 && types[0] != MPI_DATATYPE_NULL, "resized contents: the struct's handle %p, s0 %p", (void *)types[0], (void *)s0);
		OK(MPI_Type_get_envelope(types[0], &ni, &na, &nt, &comb));
		CHECK(comb == MPI_COMBINER_STRUCT && ni == 4 && na == 3 && nt == 3, "contents' struct envelope %d", comb);
		OK(MPI_Type_free(&types[0]));
		OK(MPI_Type_get_contents(u, 0, 2, 1, NULL, addrs, types));
		OK(MPI_Type_free(&types[0]));
		OK(MPI_Type_get_envelope(s0, &ni, &na, &nt, &comb));
		CHECK(comb == MPI_COMBINER_STRUCT && ni == 4 && na == 3 && nt == 3, "struct envelope %d %d %d %d", comb, ni, na, nt);
		OK(MPI_Type_get_contents(s0, 4, 3, 3, bl, addrs, types));
		CHECK(bl[0] == 3 && bl[3] == 3 && addrs[1] == sds[1] && types[1] == MPI_DOUBLE && types[2] == MPI_CHAR, "struct contents");
		OK(MPI_Type_free(&s0));
		char name[MPI_MAX_OBJECT_NAME];
		OK(MPI_Type_get_name(u, name, &n));
		CHECK(n == 0 && name[0] == 0, "a new datatype is named %s", name);
		OK(MPI_Type_set_name(u, "rec"));
		OK(MPI_Type_get_name(u, name, &n));
		CHECK(n == 3 && strcmp(name, "rec") == 0, "name %s", name);
		OK(MPI_Type_get_name(MPI_DOUBLE, name, &n));
		CHECK(strcmp(name, "MPI_DOUBLE") == 0, "predefined name %s", name);

		if (rank == 0) {
			r[0].id = 7; r[0].val = 2.5; memcpy(r[0].tag, "ab", 3);
			r[1].id = 8; r[1].val = 3.5; memcpy(r[1].tag, "cd", 3);
			OK(MPI_Send(r, 2, u, 1, 1, MPI_COMM_WORLD));
		} else if (rank == 1) {
			MPI_Status st;
			memset(r, 0, sizeof r);
			OK(MPI_Recv(r, 2, u, 0, 1, MPI_COMM_WORLD, &st));
			OK(MPI_Get_count(&st, u, &n));
			CHECK(n == 2, "struct count %d", n);
			CHECK(r[0].id == 7 && r[0].val == 2.5 && strcmp(r[0].tag, "ab") == 0 &&
			      r[1].id == 8 && r[1].val == 3.5 && strcmp(r[1].tag, "cd") == 0, "struct recv");
		}
	}

	/* subarray 2x2 at (1,1) of a 4x4 int matrix (C order). */
	{
		int sizes[2] = {4, 4}, sub[2] = {2, 2}, st[2] = {1, 1}, m[16];
		OK(MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_C, MPI_INT, &v));
		OK(MPI_Type_commit(&v));
		OK(MPI_Type_get_envelope(v, &ni, &na, &nt, &comb));
		CHECK(comb == MPI_COMBINER_SUBARRAY && ni == 8, "subarray envelope %d %d", comb, ni);
		int ints[8];
		OK(MPI_Type_get_contents(v, 8, 0, 1, ints, NULL, types));
		CHECK(ints[0] == 2 && ints[7] == MPI_ORDER_C && types[0] == MPI_INT, "subarray contents order %d", ints[7]);
		for (i = 0; i < 16; i++)
			m[i] = i;
		int packed[4], pos = 0;
		OK(MPI_Pack_size(1, v, MPI_COMM_WORLD, &n));
		CHECK(n >= 16, "pack size %d", n);
		OK(MPI_Pack(m, 1, v, packed, sizeof packed, &pos, MPI_COMM_WORLD));
		CHECK(pos == 16 && packed[0] == 5 && packed[1] == 6 && packed[2] == 9 && packed[3] == 10,
		      "pack pos %d: %d %d %d %d", pos, packed[0], packed[1], packed[2], packed[3]);
		int back[16];
		memset(back, 0, sizeof back);
		pos = 0;
		OK(MPI_Unpack(packed, sizeof packed, &pos, back, 1, v, MPI_COMM_WORLD));
		CHECK(pos == 16 && back[5] == 5 && back[10] == 10 && back[0] == 0 && back[7] == 0, "unpack");
		/* external32 is big-endian. */
		unsigned char ext32[16];
		MPI_Aint epos = 0, esize;
		OK(MPI_Pack_external_size("external32", 1, v, &esize));
		CHECK(esize == 16, "external size %ld", (long)esize);
		OK(MPI_Pack_external("external32", m, 1, v, ext32, sizeof ext32, &epos));
		CHECK(epos == 16 && ext32[3] == 5 && ext32[0] == 0 && ext32[7] == 6, "pack_external");
		memset(back, 0, sizeof back);
		epos = 0;
		OK(MPI_Unpack_external("external32", ext32, sizeof ext32, &epos, back, 1, v));
		CHECK(back[6] == 6 && back[9] == 9, "unpack_external");
		MPI_Count cpos = 0;
		OK(MPI_Pack_c(m, 1, v, packed, sizeof packed, &cpos, MPI_COMM_WORLD));
		CHECK(cpos == 16 && packed[3] == 10, "pack_c");
		OK(MPI_Type_free(&v));
	}

	/* hvector, indexed_block, hindexed_block, dup, large-count forms. */
	{
		OK(MPI_Type_create_hvector(3, 1, 2 * sizeof(double), MPI_DOUBLE, &v));
		OK(MPI_Type_get_extent_x(v, &clb, &cext));
		CHECK(clb == 0 && cext == 5 * (MPI_Count)sizeof(double), "hvector extent %lld", (long long)cext);
		OK(MPI_Type_get_contents(v, 2, 1, 1, bl, addrs, types));
		CHECK(bl[0] == 3 && bl[1] == 1 && addrs[0] == 2 * sizeof(double), "hvector contents");
		OK(MPI_Type_dup(v, &t));
		OK(MPI_Type_get_envelope(t, &ni, &na, &nt, &comb));
		CHECK(comb == MPI_COMBINER_DUP && nt == 1, "dup envelope %d", comb);
		OK(MPI_Type_get_contents(t, 0, 0, 1, NULL, NULL, types));
		OK(MPI_Type_get_envelope(types[0], &ni, &na, &nt, &comb));
		CHECK(types[0] != v && comb == MPI_COMBINER_HVECTOR, "dup contents: %d", comb);
		OK(MPI_Type_free(&types[0]));
		OK(MPI_Type_free(&t));
		OK(MPI_Type_free(&v));
		int dsp[2] = {1, 4};
		OK(MPI_Type_create_indexed_block(2, 2, dsp, MPI_SHORT, &v));
		OK(MPI_Type_size_x(v, &csize));
		CHECK(csize == 4 * sizeof(short), "indexed_block size %lld", (long long)csize);
		OK(MPI_Type_free(&v));
		MPI_Aint hd[2] = {0, 16};
		OK(MPI_Type_create_hindexed_block(2, 1, hd, MPI_INT, &v));
		OK(MPI_Type_get_true_extent_c(v, &clb, &cext));
		CHECK(clb == 0 && cext == 16 + sizeof(int), "hindexed_block true extent %lld", (long long)cext);
		OK(MPI_Type_free(&v));
		MPI_Count cbl[2] = {1, 2}, cds[2] = {8, 24};
		OK(MPI_Type_create_hindexed_c(2, cbl, cds, MPI_CHAR, &v));
		OK(MPI_Type_get_extent_c(v, &clb, &cext));
		CHECK(clb == 8 && cext == 18, "hindexed_c lb %lld extent %lld", (long long)clb, (long long)cext);
		{
			/* A large-count constructor's counts come back as large
			 * counts. */
			MPI_Count eni, ena, enl, ent, lc[5];
			OK(MPI_Type_get_envelope_c(v, &eni, &ena, &enl, &ent, &comb));
			CHECK(comb == MPI_COMBINER_HINDEXED && eni == 0 && ena == 0 && enl == 5 && ent == 1,
			      "hindexed_c envelope_c %lld %lld %lld %lld", (long long)eni, (long long)ena, (long long)enl, (long long)ent);
			OK(MPI_Type_get_contents_c(v, 0, 0, 5, 1, NULL, NULL, lc, types));
			CHECK(lc[0] == 2 && lc[1] == 1 && lc[2] == 2 && lc[3] == 8 && lc[4] == 24 && types[0] == MPI_CHAR, "hindexed_c contents_c");
			MPI_Count sz[2] = {4, 4}, ss[2] = {2, 2}, st0[2] = {1, 0};
			int ci[2];
			MPI_Datatype sa;
			OK(MPI_Type_create_subarray_c(2, sz, ss, st0, MPI_ORDER_FORTRAN, MPI_INT, &sa));
			OK(MPI_Type_get_envelope_c(sa, &eni, &ena, &enl, &ent, &comb));
			CHECK(comb == MPI_COMBINER_SUBARRAY && eni == 2 && enl == 6, "subarray_c envelope_c");
			MPI_Count l6[6];
			OK(MPI_Type_get_contents_c(sa, 2, 0, 6, 1, ci, NULL, l6, types));
			CHECK(ci[0] == 2 && ci[1] == MPI_ORDER_FORTRAN && l6[0] == 4 && l6[4] == 1 && l6[5] == 0, "subarray_c contents_c");
			OK(MPI_Type_free(&sa));
			/* A type of the int constructors has no large counts. */
			OK(MPI_Type_get_envelope_c(u, &eni, &ena, &enl, &ent, &comb));
			CHECK(comb == MPI_COMBINER_RESIZED && ena == 2 && enl == 0, "resized envelope_c");
		}
		OK(MPI_Type_free(&v));
		OK(MPI_Type_contiguous_c(5, MPI_INT, &v));
		OK(MPI_Type_size_c(v, &csize));
		CHECK(csize == 5 * sizeof(int), "contiguous_c size");
		OK(MPI_Type_free(&v));
		OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &v));
		CHECK(v == MPI_DOUBLE, "match_size real 8");
		OK(MPI_Type_create_f90_integer(10, &v));
		OK(MPI_Type_size(v, &n));
		CHECK(n == 8, "f90 integer r=10 size %d", n);
	}

	/* A type with a negative lower bound: the element before the
	 * buffer's address. */
	{
		int a[4] = {1, 2, 3, 4}, b[4] = {0, 0, 0, 0};
		int nbl[2] = {1, 1}, nds[2] = {-1, 1};
		OK(MPI_Type_indexed(2, nbl, nds, MPI_INT, &v));
		OK(MPI_Type_commit(&v));
		OK(MPI_Type_get_true_extent(v, &lb, &ext));
		CHECK(lb == -(MPI_Aint)sizeof(int), "negative lb %ld", (long)lb);
		if (rank == 0)
			OK(MPI_Send(&a[1], 1, v, 1, 2, MPI_COMM_WORLD));
		else if (rank == 1) {
			OK(MPI_Recv(&b[2], 1, v, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			CHECK(b[0] == 0 && b[1] == 1 && b[2] == 0 && b[3] == 3, "negative lb recv %d %d %d %d", b[0], b[1], b[2], b[3]);
		}
		OK(MPI_Type_free(&v));
	}

	/* MPI_BOTTOM: a struct of absolute addresses of two separate
	 * variables, sent and received. */
	{
		static long g = 0;
		double *h = malloc(sizeof(double));
		int sbl[2] = {1, 1};
		MPI_Aint sds[2];
		MPI_Datatype sts[2] = {MPI_LONG, MPI_DOUBLE};
		OK(MPI_Get_address(&g, &sds[0]));
		OK(MPI_Get_address(h, &sds[1]));
		OK(MPI_Type_create_struct(2, sbl, sds, sts, &v));
		OK(MPI_Type_commit(&v));
		if (rank == 0) {
			g = 123456789L;
			*h = 0.125;
			OK(MPI_Send(MPI_BOTTOM, 1, v, 1, 3, MPI_COMM_WORLD));
			int pos = 0;
			char pk[64];
			OK(MPI_Pack(MPI_BOTTOM, 1, v, pk, sizeof pk, &pos, MPI_COMM_WORLD));
			CHECK(pos == sizeof(long) + sizeof(double) && *(long *)pk == 123456789L, "pack of MPI_BOTTOM");
			MPI_Aint epos = 0;
			unsigned char ex[64];
			OK(MPI_Pack_external("external32", MPI_BOTTOM, 1, v, ex, sizeof ex, &epos));
			/* The long in 4 bytes (the standard's external32 size), the
			 * double in 8. */
			CHECK(epos == 12 && ex[3] == (123456789L & 0xff) && ex[2] == ((123456789L >> 8) & 0xff) && ex[0] == 0x07 && ex[4] == 0x3f && ex[5] == 0xc0,
			      "pack_external of MPI_BOTTOM: %ld bytes", (long)epos);
		} else if (rank == 1) {
			g = 0;
			*h = 0;
			MPI_Status st;
			OK(MPI_Recv(MPI_BOTTOM, 1, v, 0, 3, MPI_COMM_WORLD, &st));
			OK(MPI_Get_count(&st, v, &n));
			CHECK(n == 1 && g == 123456789L && *h == 0.125, "MPI_BOTTOM recv: count %d, g %ld, h %g", n, g, *h);
		}
		OK(MPI_Type_free(&v));
		free(h);
	}

	/* Bad input. */
	expect_err(MPI_Type_contiguous(-1, MPI_INT, &v), MPI_ERR_COUNT, "negative count");
	expect_err(MPI_Type_indexed(2, NULL, ds, MPI_INT, &v), MPI_ERR_ARG, "NULL blocklengths");
	expect_err(MPI_Type_vector(2, 1, 1, (MPI_Datatype)MPI_COMM_WORLD, &v), MPI_ERR_TYPE, "communicator as datatype");
	expect_err(MPI_Type_get_extent(t, &lb, &ext), MPI_ERR_TYPE, "freed datatype");
	expect_err(MPI_Type_size(MPI_INT, NULL), MPI_ERR_ARG, "NULL size");
	expect_err(MPI_Type_get_contents(MPI_INT, 0, 0, 0, NULL, NULL, NULL), MPI_ERR_ARG, "contents of a named type");
	expect_err(MPI_Pack_external("native", &i, 1, MPI_INT, bl, 8, &lb), MPI_ERR_UNSUPPORTED_DATAREP, "datarep");
	expect_err(MPI_Send(MPI_BOTTOM, 1, MPI_INT, rank, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER, "MPI_BOTTOM without addresses");

	OK(MPI_Type_free(&u));
	if (rank == 1)
		printf("dtypes OK\n");
	OK(MPI_Finalize());
	return 0;
}
