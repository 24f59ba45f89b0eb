/* icoll: the non-blocking collectives, many in flight at once on the same
 * communicator and completed together (MPI_Waitall) or one by one
 * (MPI_Test loops, MPI_Waitany), with MPI_IN_PLACE, a user operation and
 * the large-count forms; then bad arguments. */
#include <mpi.h>
#include "check.h"

static void expect(int rc, int class, const char *what)
{
	int c = -1;
	CHECK(rc != MPI_SUCCESS, "%s succeeded", what);
	OK(MPI_Error_class(rc, &c));
	CHECK(c == class, "%s: class %d, want %d", what, c, class);
}

/* cat: concatenation of decimal digit strings held as (digits,
 * 10^ndigits) pairs of longs: associative, not commutative. */
static void cat(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	long *a = in, *b = inout;
	for (int i = 0; i < *len; i++) {
		b[2 * i] = a[2 * i] * b[2 * i + 1] + b[2 * i];
		b[2 * i + 1] *= a[2 * i + 1];
	}
}

#define MAXR 8

int main(int argc, char **argv)
{
	int rank, size, i, j, flag;
	MPI_Request rq[16];

	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	CHECK(size <= MAXR, "at most %d ranks", MAXR);
	int n = size, root = n - 1;

	/* Round 1: eight collectives in flight, one Waitall. */
	int bc[2] = {0, 0};
	if (rank == root)
		bc[0] = 42, bc[1] = 43;
	int gv = rank * 3, gath[MAXR], scat[MAXR], sv = -1, ag[MAXR], a2as[MAXR], a2ar[MAXR];
	int red = rank + 1, redr = -1, ared = rank, aredr = -1, scan = 1, scanr = -1, exr = -1;
	for (i = 0; i < n; i++) {
		scat[i] = 500 + i;
		a2as[i] = rank * 10 + i;
	}
	OK(MPI_Ibarrier(MPI_COMM_WORLD, &rq[0]));
	OK(MPI_Ibcast(bc, 2, MPI_INT, root, MPI_COMM_WORLD, &rq[1]));
	OK(MPI_Igather(&gv, 1, MPI_INT, gath, 1, MPI_INT, root, MPI_COMM_WORLD, &rq[2]));
	OK(MPI_Iscatter(scat, 1, MPI_INT, &sv, 1, MPI_INT, root, MPI_COMM_WORLD, &rq[3]));
	OK(MPI_Iallgather(&gv, 1, MPI_INT, ag, 1, MPI_INT, MPI_COMM_WORLD, &rq[4]));
	OK(MPI_Ialltoall(a2as, 1, MPI_INT, a2ar, 1, MPI_INT, MPI_COMM_WORLD, &rq[5]));
	OK(MPI_Ireduce(&red, &redr, 1, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &rq[6]));
	OK(MPI_Iallreduce(&ared, &aredr, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &rq[7]));
	OK(MPI_Iscan(&scan, &scanr, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[8]));
	OK(MPI_Iexscan(&scan, &exr, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[9]));
	OK(MPI_Waitall(10, rq, MPI_STATUSES_IGNORE));
	for (i = 0; i < 10; i++)
		CHECK(rq[i] == MPI_REQUEST_NULL, "request %d not freed", i);
	CHECK(bc[0] == 42 && bc[1] == 43, "Ibcast %d %d", bc[0], bc[1]);
	if (rank == root) {
		for (i = 0; i < n; i++)
			CHECK(gath[i] == i * 3, "Igather [%d] = %d", i, gath[i]);
		CHECK(redr == n * (n + 1) / 2, "Ireduce %d", redr);
	}
	CHECK(sv == 500 + rank, "Iscatter %d", sv);
	for (i = 0; i < n; i++) {
		CHECK(ag[i] == i * 3, "Iallgather [%d] = %d", i, ag[i]);
		CHECK(a2ar[i] == i * 10 + rank, "Ialltoall [%d] = %d", i, a2ar[i]);
	}
	CHECK(aredr == n - 1, "Iallreduce %d", aredr);
	CHECK(scanr == rank + 1, "Iscan %d", scanr);
	if (rank > 0)
		CHECK(exr == rank, "Iexscan %d", exr);

	/* Round 2: the v and w forms and in-place ones, completed by Test
	 * loops and Waitany. */
	int cnt[MAXR], dsp[MAXR], vbuf[4 * MAXR], vrecv[2] = {-1, -1}, mine[2] = {rank, rank};
	for (i = 0; i < n; i++) {
		cnt[i] = i % 2 + 1;
		dsp[i] = 2 * i;
	}
	for (i = 0; i < 4 * MAXR; i++)
		vbuf[i] = -1;
	int agv[2 * MAXR], inpl[MAXR];
	for (i = 0; i < 2 * MAXR; i++)
		agv[i] = -1;
	for (i = 0; i < n; i++)
		inpl[i] = i == rank ? rank * 11 : -1;
	int ata[MAXR], atr[MAXR], one[MAXR], odsp[MAXR];
	for (i = 0; i < n; i++) {
		ata[i] = rank * 100 + i;
		one[i] = 1;
		odsp[i] = n - 1 - i;
	}
	MPI_Datatype ts[MAXR];
	int wsd[MAXR], wrd[MAXR], atw[MAXR];
	for (i = 0; i < n; i++) {
		ts[i] = MPI_INT;
		wsd[i] = i * (int)sizeof(int);
		wrd[i] = i * (int)sizeof(int);
	}
	int rsin[2 * MAXR], rsout[2] = {-1, -1}, rsbin[2 * MAXR], rsbout = -1;
	int tot = 0;
	for (i = 0; i < n; i++)
		tot += cnt[i];
	for (i = 0; i < tot; i++)
		rsin[i] = i;
	for (i = 0; i < n; i++)
		rsbin[i] = rank + i;
	OK(MPI_Igatherv(mine, rank % 2 + 1, MPI_INT, vbuf, cnt, dsp, MPI_INT, 0, MPI_COMM_WORLD, &rq[0]));
	if (rank == 0) {
		for (i = 0; i < n; i++)
			vbuf[2 * MAXR + 2 * i] = 700 + i, vbuf[2 * MAXR + 2 * i + 1] = 800 + i;
		OK(MPI_Iscatterv(vbuf + 2 * MAXR, cnt, dsp, MPI_INT, MPI_IN_PLACE, 0, MPI_INT, 0, MPI_COMM_WORLD, &rq[1]));
	} else {
		OK(MPI_Iscatterv(NULL, NULL, NULL, MPI_INT, vrecv, rank % 2 + 1, MPI_INT, 0, MPI_COMM_WORLD, &rq[1]));
	}
	OK(MPI_Iallgatherv(mine, rank % 2 + 1, MPI_INT, agv, cnt, dsp, MPI_INT, MPI_COMM_WORLD, &rq[2]));
	OK(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, inpl, 1, MPI_INT, MPI_COMM_WORLD, &rq[3]));
	OK(MPI_Ialltoallv(ata, one, odsp, MPI_INT, atr, one, odsp, MPI_INT, MPI_COMM_WORLD, &rq[4]));
	OK(MPI_Ialltoallw(ata, one, wsd, ts, atw, one, wrd, ts, MPI_COMM_WORLD, &rq[5]));
	OK(MPI_Ireduce_scatter(rsin, rsout, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[6]));
	OK(MPI_Ireduce_scatter_block(rsbin, &rsbout, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &rq[7]));
	int pending = 8;
	for (j = 0; j < 4; j++) { /* four by Test on each in turn */
		for (;;) {
			int k;
			for (k = 0; k < 8; k++)
				if (rq[k] != MPI_REQUEST_NULL)
					break;
			OK(MPI_Test(&rq[k], &flag, MPI_STATUS_IGNORE));
			if (flag) {
				CHECK(rq[k] == MPI_REQUEST_NULL, "Test left request %d", k);
				pending--;
				break;
			}
		}
	}
	while (pending > 0) {
		int idx;
		OK(MPI_Waitany(8, rq, &idx, MPI_STATUS_IGNORE));
		CHECK(idx >= 0 && idx < 8, "Waitany idx %d", idx);
		pending--;
	}
	if (rank == 0)
		for (i = 0; i < n; i++)
			CHECK(vbuf[2 * i] == i && (i % 2 == 0 || vbuf[2 * i + 1] == i), "Igatherv [%d] = %d", i, vbuf[2 * i]);
	else
		CHECK(vrecv[0] == 700 + rank && (rank % 2 == 0 || vrecv[1] == 800 + rank), "Iscatterv %d %d", vrecv[0], vrecv[1]);
	for (i = 0; i < n; i++) {
		CHECK(agv[2 * i] == i && (i % 2 == 0 || agv[2 * i + 1] == i), "Iallgatherv [%d]", i);
		CHECK(inpl[i] == i * 11, "Iallgather in place [%d] = %d", i, inpl[i]);
		CHECK(atr[n - 1 - i] == i * 100 + (n - 1 - rank), "Ialltoallv from %d = %d", i, atr[n - 1 - i]);
		CHECK(atw[i] == i * 100 + rank, "Ialltoallw [%d] = %d", i, atw[i]);
	}
	int first = 0;
	for (i = 0; i < rank; i++)
		first += cnt[i];
	for (i = 0; i < cnt[rank]; i++)
		CHECK(rsout[i] == n * (first + i), "Ireduce_scatter [%d] = %d", i, rsout[i]);
	CHECK(rsbout == rank, "Ireduce_scatter_block %d", rsbout);

	/* Round 3: a user operation, in place, and the large-count forms. */
	MPI_Op catop;
	MPI_Datatype pair;
	OK(MPI_Type_contiguous(2, MPI_LONG, &pair));
	OK(MPI_Type_commit(&pair));
	OK(MPI_Op_create(cat, 0, &catop));
	long cx[2] = {rank + 1, 10}, cr[2] = {0, 0};
	int sx = 1, sr;
	OK(MPI_Ireduce(cx, cr, 1, pair, catop, 0, MPI_COMM_WORLD, &rq[0]));
	int ip = rank;
	OK(MPI_Iallreduce(MPI_IN_PLACE, &ip, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[1]));
	long lc[3] = {0, 0, 0};
	if (rank == 0)
		lc[0] = lc[1] = lc[2] = 9;
	OK(MPI_Ibcast_c(lc, 3, MPI_LONG, 0, MPI_COMM_WORLD, &rq[2]));
	double dsum = 0.5, dr = 0;
	OK(MPI_Iallreduce_c(&dsum, &dr, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[3]));
	OK(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
	if (rank == 0) {
		long want = 0;
		for (i = 1; i <= n; i++)
			want = want * 10 + i;
		CHECK(cr[0] == want, "Ireduce with a non-commutative op: %ld, want %ld", cr[0], want);
	}
	CHECK(ip == n * (n - 1) / 2, "Iallreduce in place %d", ip);
	CHECK(lc[2] == 9, "Ibcast_c %ld", lc[2]);
	CHECK(dr == 0.5 * n, "Iallreduce_c %g", dr);
	OK(MPI_Op_free(&catop));
	OK(MPI_Type_free(&pair));

	/* Bad arguments. */
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	expect(MPI_Ibarrier(MPI_COMM_WORLD, NULL), MPI_ERR_ARG, "Ibarrier without request");
	expect(MPI_Ibcast(NULL, 4, MPI_INT, 0, MPI_COMM_WORLD, &rq[0]), MPI_ERR_BUFFER, "Ibcast of NULL");
	expect(MPI_Iallreduce(&sx, &sr, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[0]), MPI_ERR_COUNT, "Iallreduce of a negative count");
	expect(MPI_Iallreduce(&sx, &sr, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD, &rq[0]), MPI_ERR_OP, "Iallreduce with MPI_OP_NULL");
	expect(MPI_Ialltoall(&sx, 1, MPI_DATATYPE_NULL, &sr, 1, MPI_INT, MPI_COMM_WORLD, &rq[0]), MPI_ERR_TYPE, "Ialltoall of MPI_DATATYPE_NULL");
	expect(MPI_Iscan(&sx, &sr, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL, &rq[0]), MPI_ERR_COMM, "Iscan on MPI_COMM_NULL");

	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("icoll OK\n");
	OK(MPI_Finalize());
	return 0;
}
