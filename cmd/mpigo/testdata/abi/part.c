/* part.c: partitioned communication of the ABI beyond one pair of
 * requests. Each rank sends to the next rank and receives from the
 * previous one (itself when alone).
 *
 * Matching: several partitioned requests active at once between one pair
 * of ranks are paired in the order of their Init calls, whatever the
 * order of their Starts, on one tag and on different tags; their
 * statuses carry the source and the tag.
 *
 * Datatypes: a strided datatype (a vector resized to cover its gaps) on
 * both sides, with different numbers of partitions, and a strided send
 * into contiguous doubles; each receive partition holds its elements
 * the moment MPI_Parrived says it has arrived, and the gaps are left
 * alone. A datatype that reaches below the buffer and MPI_BOTTOM with
 * absolute addresses; a message shorter than the receive, counted by
 * MPI_Get_count. */
#include <mpi.h>
#include "check.h"

enum { NREQ = 3, PARTS = 4, COUNT = 16, TOTAL = PARTS * COUNT };

static int sbufs[NREQ][TOTAL], rbufs[NREQ][TOTAL];

static int value(int run, int req, int i) { return 1000 * run + 100 * req + i; }

/* matching: sends initialised in sendInit's order with tags[i], started
 * in sendStart's order; receives initialised in the order 0, 1, 2. */
static void matching(const char *what, int next, int prev, const int *sendInit, const int *sendStart, const int *tags) {
	MPI_Request rs[2 * NREQ]; /* sends, then receives */
	for (int k = 0; k < NREQ; k++) {
		int i = sendInit[k];
		OK(MPI_Psend_init(sbufs[i], PARTS, COUNT, MPI_INT, next, tags[i], MPI_COMM_WORLD, MPI_INFO_NULL, &rs[i]));
	}
	for (int i = 0; i < NREQ; i++)
		OK(MPI_Precv_init(rbufs[i], PARTS, COUNT, MPI_INT, prev, tags[i], MPI_COMM_WORLD, MPI_INFO_NULL, &rs[NREQ + i]));
	for (int run = 0; run < 3; run++) {
		for (int i = 0; i < NREQ; i++) {
			for (int j = 0; j < TOTAL; j++)
				rbufs[i][j] = -1;
			OK(MPI_Start(&rs[NREQ + i]));
		}
		for (int k = 0; k < NREQ; k++) {
			int i = sendStart[k];
			OK(MPI_Start(&rs[i]));
			for (int j = 0; j < TOTAL; j++)
				sbufs[i][j] = value(run, i, j);
			OK(MPI_Pready_range(0, PARTS - 1, rs[i]));
		}
		MPI_Status st[2 * NREQ];
		OK(MPI_Waitall(2 * NREQ, rs, st));
		for (int i = 0; i < NREQ; i++) {
			MPI_Status *s = &st[NREQ + i];
			CHECK(s->MPI_SOURCE == prev && s->MPI_TAG == tags[i], "%s run %d: receive %d's status has source %d tag %d, want %d and %d",
			      what, run, i, s->MPI_SOURCE, s->MPI_TAG, prev, tags[i]);
			for (int j = 0; j < TOTAL; j++)
				CHECK(rbufs[i][j] == value(run, i, j), "%s run %d: receive %d has %d at %d, want %d", what, run, i, rbufs[i][j], j, value(run, i, j));
		}
	}
	for (int i = 0; i < 2 * NREQ; i++)
		OK(MPI_Request_free(&rs[i]));
}

/* strided makes a vector of n doubles stride apart, resized to n×stride
 * doubles; with stride 1, plain doubles. */
static MPI_Datatype strided(int n, int stride) {
	if (stride == 1)
		return MPI_DOUBLE;
	MPI_Datatype v, t;
	OK(MPI_Type_vector(n, 1, stride, MPI_DOUBLE, &v));
	OK(MPI_Type_create_resized(v, 0, (MPI_Aint)(n * stride * sizeof(double)), &t));
	OK(MPI_Type_free(&v));
	OK(MPI_Type_commit(&t));
	return t;
}

/* side is one side of a transfer of TOTALD doubles: parts partitions of
 * one element of strided(n, stride), or of n plain doubles (stride 1). */
struct side {
	int parts, n, stride;
};

enum { TOTALD = 561 };

/* at is where the k-th double of the message lies in a side's buffer. */
static int at(struct side s, int k) { return k * s.stride; }

static double dvalue(int run, int k) { return 10000.0 * (run + 1) + k; }

static void datatypes(const char *what, int next, int prev, struct side ss, struct side rs) {
	CHECK(ss.parts * ss.n == TOTALD && rs.parts * rs.n == TOTALD, "%s: the case is wrong", what);
	int slen = TOTALD * ss.stride, rlen = TOTALD * rs.stride;
	double *sb = malloc(slen * sizeof(double)), *rb = malloc(rlen * sizeof(double));
	MPI_Datatype st = strided(ss.n, ss.stride), rt = strided(rs.n, rs.stride);
	int scount = ss.stride == 1 ? ss.n : 1, rcount = rs.stride == 1 ? rs.n : 1;
	MPI_Request sq, rq;
	OK(MPI_Psend_init(sb, ss.parts, scount, st, next, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &sq));
	OK(MPI_Precv_init(rb, rs.parts, rcount, rt, prev, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &rq));
	/* The requests keep what they need of the datatypes. */
	if (st != MPI_DOUBLE)
		OK(MPI_Type_free(&st));
	if (rt != MPI_DOUBLE)
		OK(MPI_Type_free(&rt));
	char *seen = malloc(rs.parts);
	for (int run = 0; run < 2; run++) {
		for (int i = 0; i < rlen; i++)
			rb[i] = -1;
		for (int i = 0; i < slen; i++)
			sb[i] = -2;
		OK(MPI_Start(&rq));
		OK(MPI_Start(&sq));
		for (int p = ss.parts - 1; p >= 0; p--) {
			for (int k = p * ss.n; k < (p + 1) * ss.n; k++)
				sb[at(ss, k)] = dvalue(run, k);
			OK(MPI_Pready(p, sq));
		}
		for (int p = 0; p < rs.parts; p++)
			seen[p] = 0;
		for (int left = rs.parts; left > 0;) {
			for (int p = 0; p < rs.parts; p++) {
				int flag = 0;
				if (seen[p])
					continue;
				OK(MPI_Parrived(rq, p, &flag));
				if (!flag)
					continue;
				seen[p] = 1;
				left--;
				for (int k = p * rs.n; k < (p + 1) * rs.n; k++)
					CHECK(rb[at(rs, k)] == dvalue(run, k), "%s run %d: partition %d has arrived, but double %d of the message is %g, want %g",
					      what, run, p, k, rb[at(rs, k)], dvalue(run, k));
			}
		}
		MPI_Request both[2] = {sq, rq};
		OK(MPI_Waitall(2, both, MPI_STATUSES_IGNORE));
		for (int i = 0; i < rlen; i++)
			CHECK(i % rs.stride == 0 || rb[i] == -1, "%s run %d: rb[%d], a gap of the datatype, is %g", what, run, i, rb[i]);
	}
	OK(MPI_Request_free(&sq));
	OK(MPI_Request_free(&rq));
	free(seen);
	free(sb);
	free(rb);
}

/* below: from a datatype reaching one double below the buffer (doubles
 * at -1 and +1, extent 3 doubles: element e is arr[3e] and arr[3e+2] of
 * arr = buf-1) to MPI_BOTTOM (every other double of an array), and back,
 * in 4 and 2 partitions; then a message of 6 doubles into the 8 of the
 * MPI_BOTTOM receive. */
enum { NB = 8 };
static void below(int next, int prev) {
	double sa[3 * NB / 2], ra[3 * NB / 2], sbot[2 * NB], rbot[2 * NB];
	MPI_Aint disp[2] = {-(MPI_Aint)sizeof(double), sizeof(double)};
	MPI_Datatype low, sabs, rabs;
	OK(MPI_Type_create_hindexed_block(2, 1, disp, MPI_DOUBLE, &low));
	OK(MPI_Type_commit(&low));
	MPI_Aint sad[NB], rad[NB];
	for (int k = 0; k < NB; k++) {
		OK(MPI_Get_address(&sbot[2 * k], &sad[k]));
		OK(MPI_Get_address(&rbot[2 * k], &rad[k]));
	}
	OK(MPI_Type_create_hindexed_block(NB, 1, sad, MPI_DOUBLE, &sabs));
	OK(MPI_Type_create_hindexed_block(NB, 1, rad, MPI_DOUBLE, &rabs));
	OK(MPI_Type_commit(&sabs));
	OK(MPI_Type_commit(&rabs));
	/* lowPos is where double k of a message lies in an array under low. */
#define lowPos(k) (3 * ((k) / 2) + 2 * ((k) % 2))
	for (int dir = 0; dir < 2; dir++) {
		MPI_Request sq, rq;
		for (int i = 0; i < 3 * NB / 2; i++)
			sa[i] = ra[i] = -1;
		for (int i = 0; i < 2 * NB; i++)
			sbot[i] = rbot[i] = -1;
		if (dir == 0) {
			OK(MPI_Psend_init(&sa[1], 4, 1, low, next, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &sq));
			OK(MPI_Precv_init(MPI_BOTTOM, 1, 1, rabs, prev, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &rq));
			for (int k = 0; k < NB; k++)
				sa[lowPos(k)] = 100 + k;
		} else {
			OK(MPI_Psend_init(MPI_BOTTOM, 1, 1, sabs, next, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &sq));
			OK(MPI_Precv_init(&ra[1], 2, 2, low, prev, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &rq));
			for (int k = 0; k < NB; k++)
				sbot[2 * k] = 100 + k;
		}
		OK(MPI_Start(&rq));
		OK(MPI_Start(&sq));
		OK(MPI_Pready_range(0, dir == 0 ? 3 : 0, sq));
		MPI_Status st;
		OK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
		OK(MPI_Wait(&rq, &st));
		int n = -1;
		OK(MPI_Get_count(&st, MPI_DOUBLE, &n));
		CHECK(n == NB, "below %d: MPI_Get_count says %d doubles, want %d", dir, n, NB);
		for (int k = 0; k < NB; k++) {
			double got = dir == 0 ? rbot[2 * k] : ra[lowPos(k)];
			CHECK(got == 100 + k, "below %d: double %d of the message is %g", dir, k, got);
		}
		for (int i = 0; i < 2 * NB; i += 2)
			CHECK(rbot[i + 1] == -1, "below %d: rbot[%d], a gap, is %g", dir, i + 1, rbot[i + 1]);
		for (int i = 0; i < 3 * NB / 2; i += 3)
			CHECK(ra[i + 1] == -1, "below %d: ra[%d], a gap, is %g", dir, i + 1, ra[i + 1]);
		OK(MPI_Request_free(&sq));
		OK(MPI_Request_free(&rq));
	}

	/* 6 doubles into the 8 at MPI_BOTTOM. */
	MPI_Request sq, rq;
	for (int i = 0; i < 2 * NB; i++)
		rbot[i] = -1;
	for (int k = 0; k < NB; k++)
		sa[lowPos(k)] = 100 + k;
	OK(MPI_Psend_init(&sa[1], 3, 1, low, next, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &sq));
	OK(MPI_Precv_init(MPI_BOTTOM, 1, 1, rabs, prev, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &rq));
	OK(MPI_Start(&rq));
	OK(MPI_Start(&sq));
	OK(MPI_Pready_range(0, 2, sq));
	MPI_Status st;
	OK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
	OK(MPI_Wait(&rq, &st));
	int n = -1;
	OK(MPI_Get_count(&st, MPI_DOUBLE, &n));
	CHECK(n == 6, "6 doubles sent: MPI_Get_count says %d", n);
	OK(MPI_Get_count(&st, rabs, &n));
	CHECK(n == MPI_UNDEFINED, "6 doubles sent: MPI_Get_count of the receive's type says %d, want MPI_UNDEFINED", n);
	for (int k = 0; k < NB; k++)
		CHECK(rbot[2 * k] == (k < 6 ? 100 + k : -1), "6 doubles sent: double %d is %g", k, rbot[2 * k]);
	OK(MPI_Request_free(&sq));
	OK(MPI_Request_free(&rq));
	OK(MPI_Type_free(&low));
	OK(MPI_Type_free(&sabs));
	OK(MPI_Type_free(&rabs));
}

int main(int argc, char **argv) {
	int rank, size;
	START(argc, argv, rank, size);
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;

	int inOrder[NREQ] = {0, 1, 2}, reversed[NREQ] = {2, 1, 0}, mixed[NREQ] = {2, 0, 1};
	int sameTag[NREQ] = {7, 7, 7}, ownTags[NREQ] = {0, 1, 2};
	matching("same tag", next, prev, inOrder, mixed, sameTag);
	matching("same tag, reversed starts", next, prev, inOrder, reversed, sameTag);
	matching("own tags", next, prev, reversed, inOrder, ownTags);

	/* 561 = 17 × 33 doubles. */
	datatypes("strided 17 to 33", next, prev, (struct side){17, 33, 2}, (struct side){33, 17, 2});
	datatypes("strided 33 to 17", next, prev, (struct side){33, 17, 2}, (struct side){17, 33, 2});
	datatypes("strided by 3 into doubles", next, prev, (struct side){11, 51, 3}, (struct side){3, 187, 1});
	datatypes("doubles into strided by 4", next, prev, (struct side){1, 561, 1}, (struct side){51, 11, 4});
	below(next, prev);

	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("part OK\n");
	OK(MPI_Finalize());
	return 0;
}
