/* session: MPI-4 Sessions from C. A session before MPI_Init and without
 * it: process sets and their info, a communicator and an
 * intercommunicator from groups, the session's error handlers, bad
 * input; then MPI_Init beside the session, MPI_Finalize, and the
 * session's communicator still working until MPI_Session_finalize. */
#include <mpi.h>
#include "check.h"

static int calls;

static void on_error(MPI_Session *s, int *code, ...)
{
	(void)s;
	(void)code;
	calls++;
}

static int cls(int rc)
{
	int c = -1;
	OK(MPI_Error_class(rc, &c));
	return c;
}

int main(int argc, char **argv)
{
	MPI_Session s;
	int rc;
	/* Bad input before anything runs. */
	CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, NULL) != MPI_SUCCESS, "NULL session accepted");

	MPI_Info hints;
	OK(MPI_Info_create(&hints));
	OK(MPI_Info_set(hints, "mpi_memory_alloc_kinds", "system"));
	OK(MPI_Session_init(hints, MPI_ERRORS_RETURN, &s));
	OK(MPI_Info_free(&hints));
	CHECK(s != MPI_SESSION_NULL, "no session");

	/* MPI_COMM_WORLD does not exist before MPI_Init. */
	int size = -1;
	CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size) != MPI_SUCCESS, "MPI_COMM_WORLD usable before MPI_Init");

	/* Process sets. */
	int n = 0;
	OK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
	CHECK(n >= 5, "%d process sets", n);
	int len = 0;
	OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, NULL));
	CHECK(len == (int)strlen("mpi://WORLD") + 1, "length of set 0: %d", len);
	char name[64];
	len = sizeof name;
	OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, name));
	CHECK(strcmp(name, "mpi://WORLD") == 0, "set 0 is %s", name);
	len = 5; /* cut to 4 bytes and a NUL */
	OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 1, &len, name));
	CHECK(strcmp(name, "mpi:") == 0 && len == (int)strlen("mpi://SELF") + 1, "set 1 cut: %s %d", name, len);
	MPI_Info pi;
	OK(MPI_Session_get_pset_info(s, "mpi://WORLD", &pi));
	char val[MPI_MAX_INFO_VAL];
	int vlen = sizeof val, flag = 0;
	OK(MPI_Info_get_string(pi, "mpi_size", &vlen, val, &flag));
	CHECK(flag, "no mpi_size");
	size = atoi(val);
	CHECK(size >= 1, "mpi_size %s", val);
	OK(MPI_Info_free(&pi));
	/* The caller's MPMD group (mpigo run's "-n 2 a : -n 1 b"). */
	OK(MPI_Session_get_pset_info(s, "mpigo://app", &pi));
	vlen = sizeof val;
	OK(MPI_Info_get_string(pi, "mpi_size", &vlen, val, &flag));
	CHECK(flag, "no mpi_size of mpigo://app");
	int appsize = atoi(val);
	OK(MPI_Info_free(&pi));
	MPI_Info used;
	OK(MPI_Session_get_info(s, &used));
	vlen = sizeof val;
	OK(MPI_Info_get_string(used, "mpi_memory_alloc_kinds", &vlen, val, &flag));
	CHECK(flag && strcmp(val, "system") == 0, "session info lost the hint: %d %s", flag, val);
	OK(MPI_Info_free(&used));

	/* A communicator of mpi://WORLD. */
	MPI_Group g;
	OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
	int gsize, rank;
	OK(MPI_Group_size(g, &gsize));
	OK(MPI_Group_rank(g, &rank));
	CHECK(gsize == size, "group of %d, set of %d", gsize, size);
	MPI_Comm c;
	OK(MPI_Comm_create_from_group(g, "org.mpigo.test", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
	int sum = -1;
	OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
	CHECK(sum == size * (size - 1) / 2, "sum %d over %d ranks", sum, size);

	/* MPI_GROUP_EMPTY makes the creation local: MPI_COMM_NULL, no error
	 * (MPI-4.1 7.4.2). The rank a MPI_Group_excl leaves out passes it
	 * while the others make a communicator of the smaller group. */
	{
		MPI_Comm e = MPI_COMM_WORLD;
		OK(MPI_Comm_create_from_group(MPI_GROUP_EMPTY, "org.mpigo.empty", MPI_INFO_NULL, MPI_ERRORS_RETURN, &e));
		CHECK(e == MPI_COMM_NULL, "MPI_GROUP_EMPTY gave %#lx, not MPI_COMM_NULL", (unsigned long)(uintptr_t)e);
		int out = size - 1, srank = -1;
		MPI_Group small;
		OK(MPI_Group_excl(g, 1, &out, &small));
		OK(MPI_Group_rank(small, &srank));
		MPI_Comm sc = MPI_COMM_WORLD;
		OK(MPI_Comm_create_from_group(srank == MPI_UNDEFINED ? MPI_GROUP_EMPTY : small, "org.mpigo.small", MPI_INFO_NULL, MPI_ERRORS_RETURN, &sc));
		if (rank == out) {
			CHECK(sc == MPI_COMM_NULL, "left-out rank got a communicator");
		} else {
			int ssize = -1;
			OK(MPI_Comm_size(sc, &ssize));
			CHECK(ssize == size - 1, "smaller communicator of %d", ssize);
			OK(MPI_Comm_free(&sc));
		}
		OK(MPI_Group_free(&small));
	}

	/* MPI-4.1 buffers: the communicator's own, then the session's. */
	{
		static char cbuf[4096], sbuf[4096];
		int nxt = (rank + 1) % size, prv = (rank + size - 1) % size, v = -1, x;
		OK(MPI_Comm_attach_buffer(c, cbuf, sizeof cbuf));
		x = 1000 + rank;
		OK(MPI_Bsend(&x, 1, MPI_INT, nxt, 1, c));
		OK(MPI_Comm_flush_buffer(c));
		OK(MPI_Recv(&v, 1, MPI_INT, prv, 1, c, MPI_STATUS_IGNORE));
		CHECK(v == 1000 + prv, "Bsend through the communicator's buffer: %d", v);
		void *addr;
		int bsize;
		OK(MPI_Comm_detach_buffer(c, &addr, &bsize));
		CHECK(addr == cbuf && bsize == sizeof cbuf, "detached %p %d", addr, bsize);
		rc = MPI_Comm_detach_buffer(c, &addr, &bsize);
		CHECK(rc != MPI_SUCCESS && cls(rc) == MPI_ERR_BUFFER, "second detach: %d", rc);
		rc = MPI_Comm_attach_buffer(c, cbuf, -1);
		CHECK(rc != MPI_SUCCESS && cls(rc) == MPI_ERR_COUNT, "negative size: %d", rc);
		/* Without the communicator's, the session's buffer is used. */
		OK(MPI_Session_attach_buffer(s, sbuf, sizeof sbuf));
		x = 2000 + rank;
		OK(MPI_Bsend(&x, 1, MPI_INT, nxt, 2, c));
		MPI_Request fr;
		OK(MPI_Session_iflush_buffer(s, &fr));
		OK(MPI_Recv(&v, 1, MPI_INT, prv, 2, c, MPI_STATUS_IGNORE));
		OK(MPI_Wait(&fr, MPI_STATUS_IGNORE));
		CHECK(v == 2000 + prv, "Bsend through the session's buffer: %d", v);
		OK(MPI_Session_flush_buffer(s));
		OK(MPI_Session_detach_buffer(s, &addr, &bsize));
		CHECK(addr == sbuf && bsize == sizeof sbuf, "session detached %p %d", addr, bsize);
		OK(MPI_Buffer_flush());
		/* The process's buffer needs no MPI_Init (MPI-4.1): without the
		 * communicator's and the session's, Bsend takes room from it. */
		static char pbuf[4096];
		OK(MPI_Buffer_attach(pbuf, sizeof pbuf));
		rc = MPI_Buffer_attach(pbuf, sizeof pbuf);
		CHECK(rc != MPI_SUCCESS && cls(rc) == MPI_ERR_BUFFER, "second MPI_Buffer_attach: %d", rc);
		x = 3000 + rank;
		OK(MPI_Bsend(&x, 1, MPI_INT, nxt, 3, c));
		OK(MPI_Buffer_iflush(&fr));
		OK(MPI_Recv(&v, 1, MPI_INT, prv, 3, c, MPI_STATUS_IGNORE));
		OK(MPI_Wait(&fr, MPI_STATUS_IGNORE));
		CHECK(v == 3000 + prv, "Bsend through the process's buffer: %d", v);
		OK(MPI_Buffer_detach(&addr, &bsize));
		CHECK(addr == pbuf && bsize == sizeof pbuf, "process buffer detached %p %d", addr, bsize);
		rc = MPI_Buffer_detach(&addr, &bsize);
		CHECK(rc != MPI_SUCCESS && cls(rc) == MPI_ERR_BUFFER, "second MPI_Buffer_detach: %d", rc);
		OK(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
		x = 4000 + rank;
		OK(MPI_Bsend(&x, 1, MPI_INT, nxt, 4, c));
		OK(MPI_Recv(&v, 1, MPI_INT, prv, 4, c, MPI_STATUS_IGNORE));
		CHECK(v == 4000 + prv, "Bsend through the automatic process buffer: %d", v);
		MPI_Count csize = -1;
		OK(MPI_Buffer_detach_c(&addr, &csize));
		CHECK(addr == MPI_BUFFER_AUTOMATIC && csize == 0, "automatic process buffer detached %p %ld", addr, (long)csize);
	}

	/* An intercommunicator of the even and the odd ranks. */
	if (size >= 2) {
		int evens[64], odds[64], ne = 0, no = 0;
		for (int i = 0; i < size && i < 128; i++) {
			if (i % 2 == 0)
				evens[ne++] = i;
			else
				odds[no++] = i;
		}
		MPI_Group ge, go;
		OK(MPI_Group_incl(g, ne, evens, &ge));
		OK(MPI_Group_incl(g, no, odds, &go));
		MPI_Comm ic;
		if (rank % 2 == 0)
			OK(MPI_Intercomm_create_from_groups(ge, 0, go, 0, "pairs", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
		else
			OK(MPI_Intercomm_create_from_groups(go, 0, ge, 0, "pairs", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
		int inter = 0, rsize = 0;
		OK(MPI_Comm_test_inter(ic, &inter));
		OK(MPI_Comm_remote_size(ic, &rsize));
		CHECK(inter && rsize == (rank % 2 == 0 ? no : ne), "inter %d remote %d", inter, rsize);
		int theirs = -1, mine = rank;
		OK(MPI_Allreduce(&mine, &theirs, 1, MPI_INT, MPI_MAX, ic));
		CHECK(theirs == (rank % 2 == 0 ? odds[no - 1] : evens[ne - 1]), "max of the other side %d", theirs);
		OK(MPI_Comm_free(&ic));
		OK(MPI_Group_free(&ge));
		OK(MPI_Group_free(&go));
	}

	/* Bad input, errors returned and seen by the session's handler. */
	rc = MPI_Group_from_session_pset(s, "mpi://nowhere", &g);
	CHECK(rc != MPI_SUCCESS && cls(rc) == MPI_ERR_ARG, "unknown set: %d", rc);
	MPI_Errhandler eh, got;
	OK(MPI_Session_create_errhandler(on_error, &eh));
	OK(MPI_Session_set_errhandler(s, eh));
	OK(MPI_Session_get_errhandler(s, &got));
	CHECK(got == eh, "get_errhandler");
	rc = MPI_Session_get_pset_info(s, "mpigo://app/99", &pi);
	CHECK(rc != MPI_SUCCESS && cls(rc) == MPI_ERR_ARG && calls == 1, "unknown set under a handler: %d, %d calls", rc, calls);
	rc = MPI_Session_get_num_psets(s, MPI_INFO_NULL, NULL);
	CHECK(rc != MPI_SUCCESS && cls(rc) == MPI_ERR_ARG && calls == 2, "NULL count: %d", rc);
	OK(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
	CHECK(calls == 3, "call_errhandler: %d calls", calls);
	MPI_Errhandler ceh;
	OK(MPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)on_error, &ceh));
	rc = MPI_Session_set_errhandler(s, ceh);
	CHECK(rc != MPI_SUCCESS && cls(rc) == MPI_ERR_ERRHANDLER, "a communicator's handler on a session: %d", rc);
	OK(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN));
	rc = MPI_Comm_create_from_group(g, NULL, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
	CHECK(rc != MPI_SUCCESS && cls(rc) == MPI_ERR_ARG, "NULL tag: %d", rc);
	rc = MPI_Comm_create_from_group(g, "x", MPI_INFO_NULL, eh, &c);
	CHECK(rc != MPI_SUCCESS && cls(rc) == MPI_ERR_ERRHANDLER, "a session's handler on a communicator: %d", rc);
	/* A session's handler is freed with MPI_Errhandler_free, as any. */
	OK(MPI_Errhandler_free(&eh));
	CHECK(eh == MPI_ERRHANDLER_NULL, "Errhandler_free of a session's handler");
	OK(MPI_Errhandler_free(&ceh));
	MPI_Session bogus = (MPI_Session)(uintptr_t)0x7777;
	rc = MPI_Session_get_num_psets(bogus, MPI_INFO_NULL, &n);
	CHECK(rc != MPI_SUCCESS && cls(rc) == MPI_ERR_SESSION, "garbage session: %d", rc);
	rc = MPI_Session_get_num_psets(MPI_SESSION_NULL, MPI_INFO_NULL, &n);
	CHECK(rc != MPI_SUCCESS && cls(rc) == MPI_ERR_SESSION, "MPI_SESSION_NULL: %d", rc);

	/* MPI-4.1's hardware info. */
	MPI_Info hw;
	OK(MPI_Get_hw_resource_info(&hw));
	vlen = sizeof val;
	OK(MPI_Info_get_string(hw, "mpi_hw_resource_type", &vlen, val, &flag));
	CHECK(flag && strcmp(val, "mpi_shared_memory") == 0, "hw resource type %d %s", flag, val);
	OK(MPI_Info_free(&hw));
	CHECK(MPI_Get_hw_resource_info(NULL) != MPI_SUCCESS, "NULL hw_info accepted");

	/* A second session, finalized at once; then the world model beside. */
	MPI_Session s2;
	OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2));
	MPI_Session s2copy = s2;
	OK(MPI_Session_finalize(&s2));
	CHECK(s2 == MPI_SESSION_NULL, "finalize did not clear the handle");
	rc = MPI_Session_get_num_psets(s2copy, MPI_INFO_NULL, &n);
	CHECK(rc != MPI_SUCCESS && cls(rc) == MPI_ERR_SESSION, "finalized session: %d", rc);

	OK(MPI_Init(&argc, &argv));
	int wrank, wsize;
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &wsize));
	CHECK(wrank == rank && wsize == size, "world %d/%d, session %d/%d", wrank, wsize, rank, size);
	/* Traffic on world and on the session's communicator stays apart. */
	int a = 100 + rank, b = 200 + rank, ra = -1, rb = -1;
	int peer = (rank + 1) % size, from = (rank + size - 1) % size;
	MPI_Request rq[2];
	OK(MPI_Isend(&a, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &rq[0]));
	OK(MPI_Isend(&b, 1, MPI_INT, peer, 5, c, &rq[1]));
	OK(MPI_Recv(&rb, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c, MPI_STATUS_IGNORE));
	OK(MPI_Recv(&ra, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
	CHECK(ra == 100 + from && rb == 200 + from, "world got %d, session comm got %d", ra, rb);
	OK(MPI_Finalize());

	/* The session outlives MPI_Finalize. */
	OK(MPI_Barrier(c));
	OK(MPI_Comm_free(&c));
	OK(MPI_Group_free(&g));
	OK(MPI_Session_finalize(&s));
	printf("rank %d app size %d\n", rank, appsize);
	if (rank == 0)
		printf("session OK\n");
	return 0;
}
