/* rma: one-sided communication. Windows over the program's memory
 * (MPI_Win_create), over the library's (MPI_Win_allocate, shared between
 * the processes of the node with MPI_Win_allocate_shared) and dynamic
 * ones; fence, lock/unlock, lock_all with flushes, PSCW; put, get,
 * accumulates with several operations, fetch-and-op and compare-and-swap
 * counters, request forms; attributes, names, error handlers; bad input. */
#include <mpi.h>
#include <stdint.h>
#include "check.h"

static int rank, size;

static void expect(int rc, int class, const char *what)
{
	int c = -1, len = 0;
	char s[MPI_MAX_ERROR_STRING];
	CHECK(rc != MPI_SUCCESS, "%s succeeded", what);
	OK(MPI_Error_class(rc, &c));
	OK(MPI_Error_string(rc, s, &len));
	CHECK(c == class, "%s: class %d, want %d (%s)", what, c, class, s);
}

static int deletes;
static int count_delete(MPI_Win w, int keyval, void *val, void *extra)
{
	(void)w;
	(void)keyval;
	CHECK(extra == (void *)&deletes, "extra_state %p", extra);
	deletes += (int)(intptr_t)val;
	return MPI_SUCCESS;
}

static int handled = -1;
static void win_handler(MPI_Win *w, int *code, ...)
{
	(void)w;
	MPI_Error_class(*code, &handled);
}

/* fence: every rank puts its rank into its right neighbour's slot [rank],
 * gets its left neighbour's slot [0], and accumulates into rank 0. */
static void fence(void)
{
	int n = size + 12;
	int *mem = malloc(n * sizeof(int));
	MPI_Win win;
	for (int i = 0; i < n; i++)
		mem[i] = -1;
	mem[0] = 100 + rank;
	mem[size + 1] = 0, mem[size + 2] = 1 << 30, mem[size + 3] = -1, mem[size + 4] = 0, mem[size + 5] = 7;
	OK(MPI_Win_create(mem, n * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	int right = (rank + 1) % size, left = (rank + size - 1) % size, got = -1;
	OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
	OK(MPI_Put(&rank, 1, MPI_INT, right, 1 + rank, 1, MPI_INT, win));
	OK(MPI_Get(&got, 1, MPI_INT, left, 0, 1, MPI_INT, win));
	int one = rank + 1, bit = 1 << rank;
	OK(MPI_Accumulate(&one, 1, MPI_INT, 0, size + 1, 1, MPI_INT, MPI_SUM, win));
	OK(MPI_Accumulate(&rank, 1, MPI_INT, 0, size + 2, 1, MPI_INT, MPI_MIN, win));
	OK(MPI_Accumulate(&rank, 1, MPI_INT, 0, size + 3, 1, MPI_INT, MPI_MAX, win));
	OK(MPI_Accumulate(&bit, 1, MPI_INT, 0, size + 4, 1, MPI_INT, MPI_BXOR, win));
	if (rank == size - 1)
		OK(MPI_Accumulate(&one, 1, MPI_INT, 0, size + 5, 1, MPI_INT, MPI_REPLACE, win));
	OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
	CHECK(got == 100 + left, "got %d from rank %d", got, left);
	CHECK(mem[1 + left] == left, "slot %d holds %d", 1 + left, mem[1 + left]);
	if (rank == 0) {
		CHECK(mem[size + 1] == size * (size + 1) / 2, "sum %d", mem[size + 1]);
		CHECK(mem[size + 2] == 0 && mem[size + 3] == size - 1, "min %d max %d", mem[size + 2], mem[size + 3]);
		CHECK(mem[size + 4] == (1 << size) - 1, "bxor %#x", mem[size + 4]);
		CHECK(mem[size + 5] == size, "replace %d", mem[size + 5]);
	}

	/* Origin buffers at MPI_BOTTOM with a datatype of absolute addresses
	 * (MPICH's rma/put_bottom). */
	{
		static int src, dst = -1;
		MPI_Aint a;
		MPI_Datatype abs_src, abs_dst;
		int one_len = 1;
		src = 500 + rank;
		OK(MPI_Get_address(&src, &a));
		OK(MPI_Type_create_hindexed(1, &one_len, &a, MPI_INT, &abs_src));
		OK(MPI_Type_commit(&abs_src));
		OK(MPI_Get_address(&dst, &a));
		OK(MPI_Type_create_hindexed(1, &one_len, &a, MPI_INT, &abs_dst));
		OK(MPI_Type_commit(&abs_dst));
		OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
		OK(MPI_Put(MPI_BOTTOM, 1, abs_src, right, size + 6, 1, MPI_INT, win));
		OK(MPI_Win_fence(0, win));
		CHECK(mem[size + 6] == 500 + left, "Put from MPI_BOTTOM: %d", mem[size + 6]);
		OK(MPI_Get(MPI_BOTTOM, 1, abs_dst, left, size + 6, 1, MPI_INT, win));
		OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
		CHECK(dst == 500 + (left + size - 1) % size, "Get into MPI_BOTTOM: %d", dst);
		OK(MPI_Type_free(&abs_src));
		OK(MPI_Type_free(&abs_dst));
	}

	/* MPI_MAXLOC on MPI_2INT in an accumulate (MPICH's rma/acc_loc), a
	 * fetch of MPI_SHORT_INT, whose 6 bytes of data span 8 (rma/atomic_get),
	 * and a get-accumulate of zero elements whose datatypes differ
	 * (rma/badrma): empty signatures match. */
	{
		struct si {
			short s;
			int i;
		} *pair = (struct si *)&mem[size + 10], got_si = {-1, -1};
		int loc[2] = {rank * 10, rank}, none = 0;
		double dnone = 0;
		pair->s = 7, pair->i = 9;
		OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
		OK(MPI_Accumulate(loc, 1, MPI_2INT, 0, size + 8, 1, MPI_2INT, MPI_MAXLOC, win));
		OK(MPI_Fetch_and_op(NULL, &got_si, MPI_SHORT_INT, right, size + 10, MPI_NO_OP, win));
		OK(MPI_Get_accumulate(&none, 0, MPI_INT, &dnone, 0, MPI_DOUBLE, right, 0, 0, MPI_DOUBLE, MPI_SUM, win));
		OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
		CHECK(got_si.s == 7 && got_si.i == 9, "MPI_SHORT_INT fetched as %d %d", got_si.s, got_si.i);
		if (rank == 0)
			CHECK(mem[size + 8] == (size - 1) * 10 && mem[size + 9] == size - 1, "MAXLOC on MPI_2INT: %d at %d", mem[size + 8], mem[size + 9]);
	}

	/* MPI-4.1: shared_query on a window of user memory answers for every
	 * rank; memory this process cannot address (the other ranks' here)
	 * is size 0 and NULL, not an error. */
	{
		MPI_Aint sz = -1;
		int unit = -1;
		int *p = (int *)&sz;
		OK(MPI_Win_shared_query(win, right, &sz, &unit, &p));
		CHECK((sz == 0 && p == NULL) || (sz == (MPI_Aint)(n * sizeof(int)) && unit == sizeof(int) && p != NULL),
		      "shared_query of rank %d: size %ld unit %d base %p", right, (long)sz, unit, (void *)p);
		OK(MPI_Win_shared_query(win, rank, &sz, &unit, &p));
		CHECK(sz == (MPI_Aint)(n * sizeof(int)) && unit == sizeof(int) && p == mem,
		      "shared_query of my own part: size %ld unit %d", (long)sz, unit);
		/* MPI_PROC_NULL: rank 0's part (the lowest with memory), or
		 * nothing where rank 0's is out of reach; never another's. */
		OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &unit, &p));
		CHECK((sz == 0 && p == NULL) || (sz == (MPI_Aint)(n * sizeof(int)) && (rank == 0 ? p == mem : p != mem)),
		      "shared_query of MPI_PROC_NULL: size %ld", (long)sz);
	}

	/* Outside an epoch, beyond the window, bad ranks and displacements. */
	expect(MPI_Put(&rank, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC, "put outside an epoch");
	OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
	expect(MPI_Put(&rank, 1, MPI_INT, right, n, 1, MPI_INT, win), MPI_ERR_RMA_RANGE, "put beyond the window");
	expect(MPI_Put(&rank, 1, MPI_INT, right, -1, 1, MPI_INT, win), MPI_ERR_DISP, "negative displacement");
	expect(MPI_Put(&rank, 1, MPI_INT, size + 2, 0, 1, MPI_INT, win), MPI_ERR_RANK, "put to a bad rank");
	expect(MPI_Put(&rank, -1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_COUNT, "negative count");
	expect(MPI_Put(&rank, 1, (MPI_Datatype)MPI_COMM_WORLD, right, 0, 1, MPI_INT, win), MPI_ERR_TYPE, "a communicator as datatype");
	expect(MPI_Accumulate(&rank, 1, MPI_INT, right, 0, 1, MPI_INT, (MPI_Op)MPI_INT, win), MPI_ERR_OP, "a datatype as op");
	OK(MPI_Put(&rank, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win));
	OK(MPI_Win_unlock(right, win));
	expect(MPI_Win_unlock(right, win), MPI_ERR_RMA_SYNC, "unlock without lock");
	expect(MPI_Win_lock(7, right, 0, win), MPI_ERR_LOCKTYPE, "bad lock type");
	expect(MPI_Win_lock(MPI_LOCK_SHARED, right, MPI_MODE_NOPUT, win), MPI_ERR_ASSERT, "lock with MPI_MODE_NOPUT");
	expect(MPI_Win_flush(size, win), MPI_ERR_RANK, "flush of a bad rank");
	MPI_Win bad = (MPI_Win)(intptr_t)0x7654321;
	expect(MPI_Win_fence(0, bad), MPI_ERR_WIN, "a garbage window");
	expect(MPI_Win_fence(0, (MPI_Win)MPI_COMM_WORLD), MPI_ERR_WIN, "a communicator as window");

	/* Attributes, names, info. */
	void *base;
	MPI_Aint *wsize;
	int *unit, *flavor, *model, flag = 0;
	OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
	CHECK(flag && base == mem, "MPI_WIN_BASE %p, want %p", base, (void *)mem);
	OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &wsize, &flag));
	CHECK(flag && *wsize == (MPI_Aint)(n * sizeof(int)), "MPI_WIN_SIZE %ld", (long)*wsize);
	OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag));
	CHECK(flag && *unit == sizeof(int), "MPI_WIN_DISP_UNIT %d", *unit);
	OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
	CHECK(flag && *flavor == MPI_WIN_FLAVOR_CREATE, "flavor %d", *flavor);
	OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
	CHECK(flag && *model == MPI_WIN_UNIFIED, "model %d", *model);
	int key;
	OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, &key, &deletes));
	OK(MPI_Win_get_attr(win, key, &base, &flag));
	CHECK(!flag, "attribute set before set_attr");
	OK(MPI_Win_set_attr(win, key, (void *)(intptr_t)1));
	OK(MPI_Win_set_attr(win, key, (void *)(intptr_t)10)); /* deletes 1 */
	OK(MPI_Win_get_attr(win, key, &base, &flag));
	CHECK(flag && base == (void *)(intptr_t)10 && deletes == 1, "attribute %p, deletes %d", base, deletes);
	expect(MPI_Win_set_attr(win, MPI_WIN_BASE, NULL), MPI_ERR_KEYVAL, "setting MPI_WIN_BASE");
	expect(MPI_Win_get_attr(win, 12345, &base, &flag), MPI_ERR_KEYVAL, "a keyval never created");
	char name[MPI_MAX_OBJECT_NAME];
	int len;
	OK(MPI_Win_set_name(win, "fence window"));
	OK(MPI_Win_get_name(win, name, &len));
	CHECK(strcmp(name, "fence window") == 0 && len == 12, "name [%s] %d", name, len);
	MPI_Info info;
	OK(MPI_Info_create(&info));
	OK(MPI_Info_set(info, "no_locks", "false"));
	OK(MPI_Win_set_info(win, info));
	OK(MPI_Info_free(&info));
	OK(MPI_Win_get_info(win, &info));
	OK(MPI_Info_free(&info));

	/* A user error handler sees the class of the error. */
	MPI_Errhandler eh, got_eh;
	OK(MPI_Win_create_errhandler(win_handler, &eh));
	OK(MPI_Win_set_errhandler(win, eh));
	OK(MPI_Win_get_errhandler(win, &got_eh));
	CHECK(got_eh == eh, "get_errhandler %p, want %p", (void *)got_eh, (void *)eh);
	/* Freed, the handler stays with the window that uses it. */
	OK(MPI_Errhandler_free(&eh));
	CHECK(eh == MPI_ERRHANDLER_NULL, "errhandler after free");
	expect(MPI_Win_unlock(right, win), MPI_ERR_RMA_SYNC, "unlock without lock, user handler");
	CHECK(handled == MPI_ERR_RMA_SYNC, "the handler saw class %d", handled);
	handled = -1;
	OK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
	CHECK(handled == MPI_ERR_OTHER, "call_errhandler: the handler saw class %d", handled);
	OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));

	OK(MPI_Win_free(&win)); /* deletes 10 */
	CHECK(win == MPI_WIN_NULL && deletes == 11, "after free: win %p, deletes %d", (void *)win, deletes);
	OK(MPI_Win_free_keyval(&key));
	CHECK(key == MPI_KEYVAL_INVALID, "keyval %d after free", key);
	expect(MPI_Win_free(&win), MPI_ERR_WIN, "freeing MPI_WIN_NULL");
	free(mem);

	/* Collective creation with bad arguments fails on every rank. */
	int x;
	expect(MPI_Win_create(&x, sizeof x, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_DISP, "displacement unit 0");
	expect(MPI_Win_create(&x, -4, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_SIZE, "negative size");
}

/* Counters: fetch-and-op and compare-and-swap on rank 0's memory under
 * lock_all, from every rank at once. */
static void counters(void)
{
	long *mem;
	MPI_Win win;
	const int rounds = 20;
	OK(MPI_Win_allocate(2 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
	mem[0] = 0, mem[1] = -1;
	OK(MPI_Win_fence(0, win));
	OK(MPI_Win_lock_all(0, win));
	long one = 1, prev, tickets[20];
	for (int i = 0; i < rounds; i++) {
		OK(MPI_Fetch_and_op(&one, &prev, MPI_LONG, 0, 0, MPI_SUM, win));
		tickets[i] = prev;
	}
	/* The first to swap -1 for its rank wins. */
	long me = rank, minus = -1, old;
	OK(MPI_Compare_and_swap(&me, &minus, &old, MPI_LONG, 0, 1, win));
	OK(MPI_Win_flush_all(win));
	long now;
	OK(MPI_Fetch_and_op(NULL, &now, MPI_LONG, 0, 0, MPI_NO_OP, win));
	OK(MPI_Win_unlock_all(win));
	CHECK(now >= rounds, "counter %ld after my %d increments", now, rounds);
	for (int i = 1; i < rounds; i++)
		CHECK(tickets[i] > tickets[i - 1], "tickets %ld then %ld", tickets[i - 1], tickets[i]);
	long *all = malloc(rounds * size * sizeof(long));
	OK(MPI_Gather(tickets, rounds, MPI_LONG, all, rounds, MPI_LONG, 0, MPI_COMM_WORLD));
	int won = old == -1, winners = 0;
	OK(MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	CHECK(winners == 1, "%d ranks won the compare-and-swap", winners);
	OK(MPI_Win_fence(0, win));
	if (rank == 0) {
		char *seen = calloc(rounds * size, 1);
		for (int i = 0; i < rounds * size; i++) {
			CHECK(all[i] >= 0 && all[i] < rounds * size && !seen[all[i]], "ticket %ld twice or out of range", all[i]);
			seen[all[i]] = 1;
		}
		free(seen);
		CHECK(mem[0] == rounds * size, "counter %ld, want %d", mem[0], rounds * size);
		CHECK(mem[1] >= 0 && mem[1] < size, "winner %ld", mem[1]);
	}
	free(all);

	/* Get_accumulate and the request forms under an exclusive lock. */
	int right = (rank + 1) % size;
	OK(MPI_Win_fence(0, win));
	OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
	long v = 5, before = -7, back = -7;
	OK(MPI_Get_accumulate(&v, 1, MPI_LONG, &before, 1, MPI_LONG, right, 1, 1, MPI_LONG, MPI_REPLACE, win));
	MPI_Request rq[3];
	long add = 2, after = -1, was = -1;
	OK(MPI_Raccumulate(&add, 1, MPI_LONG, right, 1, 1, MPI_LONG, MPI_SUM, win, &rq[0]));
	OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
	OK(MPI_Win_flush(right, win));
	OK(MPI_Rget(&after, 1, MPI_LONG, right, 1, 1, MPI_LONG, win, &rq[1]));
	OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
	OK(MPI_Rget_accumulate(NULL, 0, MPI_LONG, &was, 1, MPI_LONG, right, 1, 1, MPI_LONG, MPI_NO_OP, win, &rq[2]));
	OK(MPI_Wait(&rq[2], MPI_STATUS_IGNORE));
	long nine = 9;
	OK(MPI_Rput(&nine, 1, MPI_LONG, right, 1, 1, MPI_LONG, win, &rq[0]));
	OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
	OK(MPI_Win_flush_local(right, win));
	OK(MPI_Get(&back, 1, MPI_LONG, right, 1, 1, MPI_LONG, win));
	OK(MPI_Win_unlock(right, win));
	CHECK(after == 7 && was == 7 && back == 9, "after %ld, was %ld, back %ld", after, was, back);
	(void)before;
	OK(MPI_Win_free(&win));
}

/* PSCW: every rank exposes its memory to all and accesses all. */
static void pscw(void)
{
	int *mem;
	MPI_Win win;
	MPI_Group g;
	OK(MPI_Alloc_mem(size * sizeof(int), MPI_INFO_NULL, &mem));
	for (int i = 0; i < size; i++)
		mem[i] = -1;
	OK(MPI_Win_create(mem, size * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	OK(MPI_Win_get_group(win, &g));
	OK(MPI_Win_post(g, 0, win));
	OK(MPI_Win_start(g, 0, win));
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	OK(MPI_Put(&rank, 1, MPI_INT, right, rank, 1, MPI_INT, win));
	OK(MPI_Win_complete(win));
	int flag = 0;
	for (int i = 0; i < 1000000 && !flag; i++)
		OK(MPI_Win_test(win, &flag));
	if (!flag)
		OK(MPI_Win_wait(win));
	CHECK(mem[left] == left, "PSCW: slot %d holds %d", left, mem[left]);
	expect(MPI_Win_post((MPI_Group)MPI_COMM_WORLD, 0, win), MPI_ERR_GROUP, "a communicator as group");
	OK(MPI_Win_free(&win));
	OK(MPI_Free_mem(mem));
	expect(MPI_Free_mem(mem), MPI_ERR_BASE, "freeing memory twice");
}

/* Shared memory: each rank stores into its own part; the others load it
 * through the pointer MPI_Win_shared_query gives, without MPI calls. */
static void shared(void)
{
	double *mine;
	MPI_Win win;
	OK(MPI_Win_allocate_shared((rank + 1) * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win));
	OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
	for (int i = 0; i <= rank; i++)
		mine[i] = rank * 10.0 + i;
	OK(MPI_Win_sync(win));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	OK(MPI_Win_sync(win));
	for (int r = 0; r < size; r++) {
		MPI_Aint sz;
		int unit;
		double *p;
		OK(MPI_Win_shared_query(win, r, &sz, &unit, &p));
		CHECK(sz == (MPI_Aint)((r + 1) * sizeof(double)) && unit == sizeof(double), "rank %d: size %ld unit %d", r, (long)sz, unit);
		for (int i = 0; i <= r; i++)
			CHECK(p[i] == r * 10.0 + i, "rank %d's [%d] reads %g", r, i, p[i]);
	}
	/* The parts are contiguous (the standard's default, without
	 * alloc_shared_noncontig): from the base MPI_PROC_NULL's query gives,
	 * a rank walks through every rank's part (MPICH's rma/win_shared). */
	{
		MPI_Aint sz;
		int unit;
		double *all;
		OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &unit, &all));
		CHECK(sz == sizeof(double) && unit == sizeof(double), "shared_query of MPI_PROC_NULL: size %ld unit %d", (long)sz, unit);
		CHECK(rank != 0 || all == mine, "rank 0's base %p, mine %p", (void *)all, (void *)mine);
		for (int r = 0, i = 0; r < size; r++)
			for (int j = 0; j <= r; j++, i++)
				CHECK(all[i] == r * 10.0 + j, "element %d (rank %d's [%d]) reads %g, want %g", i, r, j, all[i], r * 10.0 + j);
		CHECK(mine == all + rank * (rank + 1) / 2, "my part at %p, want %p", (void *)mine, (void *)(all + rank * (rank + 1) / 2));
	}
	/* A store into the neighbour's memory is seen by it. */
	int right = (rank + 1) % size;
	double *rp;
	MPI_Aint sz;
	int unit;
	OK(MPI_Win_shared_query(win, right, &sz, &unit, &rp));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	rp[0] = 1000.0 + rank;
	OK(MPI_Win_sync(win));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	OK(MPI_Win_sync(win));
	int left = (rank + size - 1) % size;
	CHECK(mine[0] == 1000.0 + left, "my first element %g, want %d", mine[0], 1000 + left);
	int *flavor, flag;
	OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
	CHECK(flag && *flavor == MPI_WIN_FLAVOR_SHARED, "flavor %d", *flavor);
	expect(MPI_Win_shared_query(win, size, &sz, &unit, &rp), MPI_ERR_RANK, "shared_query of a bad rank");
	OK(MPI_Win_unlock_all(win));
	OK(MPI_Win_free(&win));
}

/* Dynamic windows: memory attached at its address. */
static void dynamic(void)
{
	MPI_Win win;
	int *mem = malloc(4 * sizeof(int));
	OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	for (int i = 0; i < 4; i++)
		mem[i] = -1;
	OK(MPI_Win_attach(win, mem, 4 * sizeof(int)));
	MPI_Aint addr = (MPI_Aint)(intptr_t)mem, *addrs = malloc(size * sizeof(MPI_Aint));
	OK(MPI_Allgather(&addr, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD));
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
	OK(MPI_Put(&rank, 1, MPI_INT, right, addrs[right] + 2 * sizeof(int), 1, MPI_INT, win));
	expect(MPI_Put(&rank, 2, MPI_INT, right, addrs[right] + 3 * sizeof(int), 2, MPI_INT, win), MPI_ERR_RMA_RANGE, "put across the end of attached memory");
	OK(MPI_Win_unlock(right, win));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	CHECK(mem[2] == left && mem[0] == -1, "dynamic: %d %d", mem[0], mem[2]);
	int x;
	expect(MPI_Win_detach(win, &x), MPI_ERR_BASE, "detaching memory never attached");
	OK(MPI_Win_detach(win, mem));
	OK(MPI_Win_free(&win));
	free(addrs);
	free(mem);
}

/* Two halves of one array attached one after the other are one range of
 * addresses: a single operation may cross from one into the other (MPICH's
 * rma/win_dynamic_rma_flush_get puts 9216 ints over two attachments of
 * 8192). Two attachments with a gap between them are not. */
static void dynamic_halves(void)
{
	enum { HALF = 64, N = 2 * HALF };
	MPI_Win win;
	int *mem = calloc(N + 1, sizeof(int)), *src = malloc(N * sizeof(int)), *got = malloc(N * sizeof(int));
	OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	OK(MPI_Win_attach(win, mem, HALF * sizeof(int)));
	OK(MPI_Win_attach(win, mem + HALF, HALF * sizeof(int)));
	MPI_Aint addr, *addrs = malloc(size * sizeof(MPI_Aint));
	OK(MPI_Get_address(mem, &addr));
	OK(MPI_Allgather(&addr, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD));
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	int n = HALF + HALF / 2; /* from the first half well into the second */
	OK(MPI_Win_lock_all(0, win));
	for (int i = 0; i < n; i++)
		src[i] = rank * 1000 + i;
	OK(MPI_Put(src, n, MPI_INT, right, addrs[right], n, MPI_INT, win));
	OK(MPI_Win_flush(right, win));
	OK(MPI_Accumulate(src, n, MPI_INT, right, addrs[right] + sizeof(int), n, MPI_INT, MPI_SUM, win));
	OK(MPI_Win_flush(right, win));
	OK(MPI_Get(got, N, MPI_INT, right, addrs[right], N, MPI_INT, win));
	OK(MPI_Win_flush(right, win));
	for (int i = 0; i < N; i++) {
		int want = (i < n ? rank * 1000 + i : 0) + (i >= 1 && i <= n ? rank * 1000 + i - 1 : 0);
		CHECK(got[i] == want, "get across the halves: [%d] = %d, want %d", i, got[i], want);
	}
	OK(MPI_Win_unlock_all(win));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	CHECK(mem[HALF + 1] == 2 * (left * 1000 + HALF) + 1, "my array [%d] = %d", HALF + 1, mem[HALF + 1]);
	OK(MPI_Win_detach(win, mem + HALF));
	/* Attached again with one int between: no longer adjacent. */
	OK(MPI_Win_attach(win, mem + HALF + 1, HALF * sizeof(int)));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
	OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
	int rc = MPI_Put(src, n, MPI_INT, right, addrs[right], n, MPI_INT, win);
	if (rc == MPI_SUCCESS)
		rc = MPI_Win_flush(right, win);
	int class;
	OK(MPI_Error_class(rc, &class));
	CHECK(class == MPI_ERR_RMA_RANGE, "put across a gap between attachments: class %d, want MPI_ERR_RMA_RANGE", class);
	OK(MPI_Win_unlock(right, win));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	OK(MPI_Win_detach(win, mem));
	OK(MPI_Win_detach(win, mem + HALF + 1));
	OK(MPI_Win_free(&win));
	free(addrs);
	free(got);
	free(src);
	free(mem);
}

int main(int argc, char **argv)
{
	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	fence();
	counters();
	pscw();
	shared();
	dynamic();
	dynamic_halves();
	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("rma OK\n");
	OK(MPI_Finalize());
	return 0;
}
