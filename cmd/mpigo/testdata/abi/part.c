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
 * alone. */
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

int main(int argc, char **argv) {
	OK(MPI_Init(&argc, &argv));
	int rank, size;
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
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

	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("part OK\n");
	OK(MPI_Finalize());
	return 0;
}
