/* pcoll.c: the MPI-4.0 persistent collectives and partitioned
 * communication of the ABI. Persistent collectives are started many
 * times with new input and checked each time; partitioned sends are
 * readied out of order and received in other partitions. Bad input
 * returns the standard's classes. */
#include <mpi.h>
#include "check.h"

static int errclass(int rc) {
	int cls = -1;
	MPI_Error_class(rc, &cls);
	return cls;
}

int main(int argc, char **argv) {
	int rank, size;
	START(argc, argv, rank, size);
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

	/* Allreduce_init: one request, three runs, new input each run. */
	enum { N = 4 };
	int sb[N], rb[N];
	MPI_Request ar;
	OK(MPI_Allreduce_init(sb, rb, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &ar));
	CHECK(ar != MPI_REQUEST_NULL, "Allreduce_init gave MPI_REQUEST_NULL");
	for (int it = 0; it < 3; it++) {
		for (int i = 0; i < N; i++) {
			sb[i] = (it + 1) * (rank + 1) + i;
			rb[i] = -1;
		}
		OK(MPI_Start(&ar));
		MPI_Status st;
		OK(MPI_Wait(&ar, &st));
		CHECK(ar != MPI_REQUEST_NULL, "run %d: MPI_Wait freed a persistent request", it);
		for (int i = 0; i < N; i++) {
			int want = (it + 1) * size * (size + 1) / 2 + size * i;
			CHECK(rb[i] == want, "Allreduce run %d: rb[%d] = %d, want %d", it, i, rb[i], want);
		}
	}

	/* Bcast_init from the last rank. */
	int root = size - 1, bb[3];
	MPI_Request br;
	OK(MPI_Bcast_init(bb, 3, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &br));
	for (int it = 0; it < 3; it++) {
		for (int i = 0; i < 3; i++)
			bb[i] = rank == root ? 100 * it + i : -1;
		OK(MPI_Start(&br));
		OK(MPI_Wait(&br, MPI_STATUS_IGNORE));
		for (int i = 0; i < 3; i++)
			CHECK(bb[i] == 100 * it + i, "Bcast run %d: bb[%d] = %d", it, i, bb[i]);
	}

	/* Gather_init to rank 0. */
	int gs, gr[64];
	CHECK(size <= 64, "size %d", size);
	MPI_Request gq;
	OK(MPI_Gather_init(&gs, 1, MPI_INT, gr, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &gq));
	for (int it = 0; it < 3; it++) {
		gs = 10 * rank + it;
		for (int i = 0; i < size; i++)
			gr[i] = -1;
		OK(MPI_Start(&gq));
		OK(MPI_Wait(&gq, MPI_STATUS_IGNORE));
		if (rank == 0)
			for (int i = 0; i < size; i++)
				CHECK(gr[i] == 10 * i + it, "Gather run %d: gr[%d] = %d", it, i, gr[i]);
	}

	/* Startall on two persistent collectives (one a large-count form). */
	long long xs, xr;
	MPI_Request two[2];
	OK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &two[0]));
	OK(MPI_Allreduce_init_c(&xs, &xr, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &two[1]));
	for (int it = 0; it < 2; it++) {
		xs = 7 * rank + it;
		xr = -1;
		OK(MPI_Startall(2, two));
		OK(MPI_Waitall(2, two, MPI_STATUSES_IGNORE));
		CHECK(two[0] != MPI_REQUEST_NULL && two[1] != MPI_REQUEST_NULL, "Waitall freed persistent requests");
		CHECK(xr == 7 * (size - 1) + it, "Startall run %d: max %lld", it, xr);
	}

	/* Starting an active request is an error; the run still completes. */
	for (int i = 0; i < N; i++)
		sb[i] = 1;
	OK(MPI_Start(&ar));
	CHECK(errclass(MPI_Start(&ar)) == MPI_ERR_REQUEST, "MPI_Start of an active request: not MPI_ERR_REQUEST");
	OK(MPI_Wait(&ar, MPI_STATUS_IGNORE));
	CHECK(rb[0] == size, "after the refused Start: rb[0] = %d", rb[0]);

	/* Freeing inactive persistent collectives. */
	OK(MPI_Request_free(&ar));
	CHECK(ar == MPI_REQUEST_NULL, "Request_free left the handle");
	OK(MPI_Request_free(&br));
	OK(MPI_Request_free(&gq));
	OK(MPI_Request_free(&two[0]));
	OK(MPI_Request_free(&two[1]));

	/* More of the family, each started twice with new input: Scan,
	 * Reduce_c, Alltoall and, on a periodic ring, Neighbor_allgather. */
	int v, sc, a2s[64], a2r[64];
	long long rs, rr;
	MPI_Request more[3];
	OK(MPI_Scan_init(&v, &sc, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &more[0]));
	OK(MPI_Reduce_init_c(&rs, &rr, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &more[1]));
	OK(MPI_Alltoall_init(a2s, 1, MPI_INT, a2r, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &more[2]));
	for (int it = 0; it < 2; it++) {
		v = rank + 1 + it;
		rs = rank + it;
		rr = -1;
		for (int j = 0; j < size; j++) {
			a2s[j] = 100 * rank + j + it;
			a2r[j] = -1;
		}
		OK(MPI_Startall(3, more));
		OK(MPI_Waitall(3, more, MPI_STATUSES_IGNORE));
		CHECK(sc == (rank + 1) * (rank + 2) / 2 + (rank + 1) * it, "Scan run %d: %d", it, sc);
		if (rank == 0)
			CHECK(rr == (long long)size * (size - 1) / 2 + (long long)size * it, "Reduce_c run %d: %lld", it, rr);
		for (int j = 0; j < size; j++)
			CHECK(a2r[j] == 100 * j + rank + it, "Alltoall run %d: a2r[%d] = %d", it, j, a2r[j]);
	}
	for (int i = 0; i < 3; i++)
		OK(MPI_Request_free(&more[i]));
	int dims[1] = {size}, periods[1] = {1};
	MPI_Comm ring;
	if (MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring) == MPI_SUCCESS) {
		int r, me, got[2];
		OK(MPI_Comm_rank(ring, &r));
		int left = (r + size - 1) % size, right = (r + 1) % size;
		MPI_Request nq;
		OK(MPI_Neighbor_allgather_init(&me, 1, MPI_INT, got, 1, MPI_INT, ring, MPI_INFO_NULL, &nq));
		for (int it = 0; it < 2; it++) {
			me = 10 * r + it;
			got[0] = got[1] = -1;
			OK(MPI_Start(&nq));
			OK(MPI_Wait(&nq, MPI_STATUS_IGNORE));
			CHECK(got[0] == 10 * left + it && got[1] == 10 * right + it, "Neighbor_allgather run %d: %d %d", it, got[0], got[1]);
		}
		OK(MPI_Request_free(&nq));
		OK(MPI_Comm_free(&ring));
	}

	/* Bad input of the _init forms, the same on every rank. */
	CHECK(errclass(MPI_Allreduce_init(sb, rb, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, NULL)) == MPI_ERR_ARG, "NULL request");
	CHECK(errclass(MPI_Allreduce_init(sb, rb, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &ar)) == MPI_ERR_COUNT, "count -1");
	CHECK(errclass(MPI_Bcast_init(bb, 3, MPI_INT, size, MPI_COMM_WORLD, MPI_INFO_NULL, &br)) == MPI_ERR_ROOT, "root %d", size);
	CHECK(errclass(MPI_Barrier_init(MPI_COMM_NULL, MPI_INFO_NULL, &br)) == MPI_ERR_COMM, "MPI_COMM_NULL");

	/* Partitioned: 8 partitions of 4 ints to the next rank, readied in
	 * reverse order, received as 4 partitions of 8 from the previous. */
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	enum { P = 8, C = 4 };
	int ps[P * C], pr[P * C];
	MPI_Request sq, rq;
	OK(MPI_Psend_init(ps, P, C, MPI_INT, next, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &sq));
	OK(MPI_Precv_init(pr, P / 2, 2 * C, MPI_INT, prev, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &rq));
	CHECK(errclass(MPI_Pready(P, sq)) == MPI_ERR_ARG, "Pready(%d) of %d partitions", P, P);
	CHECK(errclass(MPI_Pready(-1, sq)) == MPI_ERR_ARG, "Pready(-1)");
	for (int it = 0; it < 2; it++) {
		for (int i = 0; i < P * C; i++) {
			ps[i] = 1000 * rank + 100 * it + i;
			pr[i] = -1;
		}
		OK(MPI_Start(&rq));
		OK(MPI_Start(&sq));
		if (it == 0) {
			for (int p = P - 1; p >= 0; p--)
				OK(MPI_Pready(p, sq));
		} else {
			int list[] = {7, 5, 6, 4};
			OK(MPI_Pready_range(0, 3, sq));
			OK(MPI_Pready_list(4, list, sq));
		}
		/* Each partition may be read as soon as it has arrived. */
		int seen[P / 2] = {0}, left = P / 2;
		while (left > 0) {
			for (int p = 0; p < P / 2; p++) {
				if (seen[p])
					continue;
				int flag = 0;
				OK(MPI_Parrived(rq, p, &flag));
				if (!flag)
					continue;
				for (int i = p * 2 * C; i < (p + 1) * 2 * C; i++)
					CHECK(pr[i] == 1000 * prev + 100 * it + i, "run %d partition %d: pr[%d] = %d", it, p, i, pr[i]);
				seen[p] = 1;
				left--;
			}
		}
		OK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
		OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
		CHECK(sq != MPI_REQUEST_NULL && rq != MPI_REQUEST_NULL, "Wait freed a partitioned request");
	}
	/* Bad partitioned calls. */
	int flag;
	CHECK(errclass(MPI_Pready(0, MPI_REQUEST_NULL)) == MPI_ERR_REQUEST, "Pready on MPI_REQUEST_NULL");
	CHECK(errclass(MPI_Parrived(sq, 0, &flag)) == MPI_ERR_REQUEST, "Parrived on a send");
	CHECK(errclass(MPI_Pready(0, rq)) == MPI_ERR_REQUEST, "Pready on a receive");
	CHECK(errclass(MPI_Parrived(rq, P, &flag)) == MPI_ERR_ARG, "Parrived(%d)", P);
	CHECK(errclass(MPI_Pready_range(3, 1, sq)) == MPI_ERR_ARG, "Pready_range(3, 1)");
	CHECK(errclass(MPI_Pready_list(-1, NULL, sq)) == MPI_ERR_ARG, "Pready_list length -1");
	CHECK(errclass(MPI_Psend_init(ps, 0, C, MPI_INT, next, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &sq)) == MPI_ERR_ARG, "0 partitions");
	CHECK(errclass(MPI_Precv_init(pr, P, -1, MPI_INT, prev, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &rq)) == MPI_ERR_COUNT, "count -1");
	CHECK(errclass(MPI_Precv_init(pr, P, C, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &rq)) == MPI_ERR_ARG, "ANY_SOURCE");
	OK(MPI_Request_free(&sq));
	OK(MPI_Request_free(&rq));
	CHECK(sq == MPI_REQUEST_NULL && rq == MPI_REQUEST_NULL, "Request_free left a partitioned handle");

	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("pcoll OK\n");
	OK(MPI_Finalize());
	return 0;
}
