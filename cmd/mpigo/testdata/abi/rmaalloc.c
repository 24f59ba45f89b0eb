/* rmaalloc.c: windows over MPI_Alloc_mem's memory, which the processes of
 * a node reach directly: a dynamic window whose ranks attach many small
 * blocks (as MPICH's rma/linked_list* do) and counters in them that every
 * rank bumps under exclusive and shared locks, with memory from malloc
 * attached beside them (reached by message); MPI_Win_create over
 * MPI_Alloc_mem's memory; an access to detached memory is
 * MPI_ERR_RMA_RANGE, not silently done. */
#include <mpi.h>
#include "check.h"

#define BLOCKS 64
#define ROUNDS 20

int main(int argc, char **argv) {
	OK(MPI_Init(&argc, &argv));
	int me, n;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &n);

	MPI_Win win;
	OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
	long *blocks[BLOCKS];
	MPI_Aint mine[BLOCKS + 1];
	for (int i = 0; i < BLOCKS; i++) {
		OK(MPI_Alloc_mem(2 * sizeof(long), MPI_INFO_NULL, &blocks[i]));
		blocks[i][0] = blocks[i][1] = 0;
		OK(MPI_Win_attach(win, blocks[i], 2 * sizeof(long)));
		OK(MPI_Get_address(blocks[i], &mine[i]));
	}
	long *plain = malloc(2 * sizeof(long));
	plain[0] = plain[1] = 0;
	OK(MPI_Win_attach(win, plain, 2 * sizeof(long)));
	OK(MPI_Get_address(plain, &mine[BLOCKS]));
	MPI_Aint *all = malloc(sizeof(MPI_Aint) * (BLOCKS + 1) * n);
	OK(MPI_Allgather(mine, BLOCKS + 1, MPI_AINT, all, BLOCKS + 1, MPI_AINT, MPI_COMM_WORLD));

	const long one = 1;
	for (int round = 0; round < ROUNDS; round++) {
		for (int t = 0; t < n; t++) {
			for (int b = 0; b <= BLOCKS; b += (b < BLOCKS - 1 ? 7 : 1)) {
				MPI_Aint d = all[t * (BLOCKS + 1) + b];
				long v;
				OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
				OK(MPI_Get(&v, 1, MPI_LONG, t, d, 1, MPI_LONG, win));
				OK(MPI_Win_flush(t, win));
				v++;
				OK(MPI_Put(&v, 1, MPI_LONG, t, d, 1, MPI_LONG, win));
				OK(MPI_Win_unlock(t, win));
				OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
				long old;
				OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, t, d + sizeof(long), MPI_SUM, win));
				OK(MPI_Win_unlock(t, win));
			}
		}
	}
	OK(MPI_Barrier(MPI_COMM_WORLD));
	OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win));
	for (int b = 0; b <= BLOCKS; b += (b < BLOCKS - 1 ? 7 : 1)) {
		long *p = b < BLOCKS ? blocks[b] : plain;
		CHECK(p[0] == (long) n * ROUNDS && p[1] == (long) n * ROUNDS, "rank %d block %d: %ld and %ld, want %d", me, b, p[0], p[1], n * ROUNDS);
	}
	OK(MPI_Win_unlock(me, win));
	OK(MPI_Barrier(MPI_COMM_WORLD));

	/* Detached memory is out of the window for every origin. */
	OK(MPI_Win_detach(win, blocks[0]));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	int next = (me + 1) % n;
	long v = 5;
	OK(MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win));
	int rc = MPI_Put(&v, 1, MPI_LONG, next, all[next * (BLOCKS + 1)], 1, MPI_LONG, win);
	int urc = MPI_Win_unlock(next, win);
	int cls = -1;
	if (rc == MPI_SUCCESS) {
		rc = urc;
	}
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_RMA_RANGE, "a put into detached memory gave class %d", cls);
	OK(MPI_Barrier(MPI_COMM_WORLD));
	CHECK(blocks[0][0] == (long) n * ROUNDS, "detached memory was written: %ld", blocks[0][0]);
	for (int i = 1; i < BLOCKS; i++) {
		OK(MPI_Win_detach(win, blocks[i]));
	}
	OK(MPI_Win_detach(win, plain));
	OK(MPI_Win_free(&win));

	/* MPI_Win_create over MPI_Alloc_mem's memory: a shared counter. */
	long *cnt;
	OK(MPI_Alloc_mem(sizeof(long), MPI_INFO_NULL, &cnt));
	*cnt = 0;
	OK(MPI_Win_create(cnt, sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	OK(MPI_Win_lock_all(0, win));
	for (int round = 0; round < ROUNDS; round++) {
		for (int t = 0; t < n; t++) {
			OK(MPI_Accumulate(&one, 1, MPI_LONG, t, 0, 1, MPI_LONG, MPI_SUM, win));
		}
	}
	OK(MPI_Win_unlock_all(win));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	OK(MPI_Win_free(&win));
	CHECK(*cnt == (long) n * ROUNDS, "counter %ld, want %d", *cnt, n * ROUNDS);

	for (int i = 0; i < BLOCKS; i++) {
		OK(MPI_Free_mem(blocks[i]));
	}
	OK(MPI_Free_mem(cnt));
	free(plain);
	free(all);
	OK(MPI_Finalize());
	if (me == 0) {
		printf("rmaalloc OK\n");
	}
	return 0;
}
