/* part.c: partitioned communication of the ABI beyond one pair of
 * requests. Each rank sends to the next rank and receives from the
 * previous one (itself when alone).
 *
 * Matching: several partitioned requests active at once between one pair
 * of ranks are paired in the order of their Init calls, whatever the
 * order of their Starts, on one tag and on different tags; their
 * statuses carry the source and the tag. */
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

	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("part OK\n");
	OK(MPI_Finalize());
	return 0;
}
