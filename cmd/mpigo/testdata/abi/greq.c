/* greq: generalized requests with C callbacks, and the Fortran status
 * conversions. */
#include <mpi.h>
#include "check.h"

struct state {
	int queried, freed, cancelled;
};

static int query(void *extra, MPI_Status *st)
{
	struct state *s = extra;
	s->queried++;
	st->MPI_SOURCE = 3;
	st->MPI_TAG = 77;
	MPI_Status_set_elements(st, MPI_INT, 5);
	MPI_Status_set_cancelled(st, 0);
	return MPI_SUCCESS;
}

static int freefn(void *extra)
{
	((struct state *)extra)->freed++;
	return MPI_SUCCESS;
}

static int cancelfn(void *extra, int complete)
{
	((struct state *)extra)->cancelled++;
	return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
	int rank, flag, n;
	struct state s = {0, 0, 0};
	MPI_Request r;
	MPI_Status st;

	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	OK(MPI_Grequest_start(query, freefn, cancelfn, &s, &r));
	OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
	CHECK(!flag, "generalized request complete before Grequest_complete");
	OK(MPI_Grequest_complete(r));
	OK(MPI_Wait(&r, &st));
	CHECK(r == MPI_REQUEST_NULL, "request not freed");
	CHECK(s.queried == 1 && s.freed == 1, "query %d free %d", s.queried, s.freed);
	CHECK(st.MPI_SOURCE == 3 && st.MPI_TAG == 77, "status %d %d", st.MPI_SOURCE, st.MPI_TAG);
	OK(MPI_Get_count(&st, MPI_INT, &n));
	CHECK(n == 5, "count %d", n);

	/* Fortran statuses hold the same eight integers. */
	MPI_Fint f[8];
	MPI_F08_status f08;
	MPI_Status back;
	OK(MPI_Status_c2f(&st, f));
	CHECK(f[0] == 3 && f[1] == 77, "c2f %d %d", f[0], f[1]);
	OK(MPI_Status_f2f08(f, &f08));
	CHECK(f08.MPI_SOURCE == 3 && f08.MPI_TAG == 77, "f2f08");
	OK(MPI_Status_f082c(&f08, &back));
	OK(MPI_Get_count(&back, MPI_INT, &n));
	CHECK(back.MPI_TAG == 77 && n == 5, "f082c: count %d", n);
	OK(MPI_Status_c2f08(&back, &f08));
	OK(MPI_Status_f082f(&f08, f));
	OK(MPI_Status_f2c(f, &back));
	CHECK(back.MPI_SOURCE == 3, "f2c");

	/* Bad input. */
	int rc = MPI_Grequest_complete(MPI_REQUEST_NULL), cls;
	OK(MPI_Error_class(rc, &cls));
	CHECK(cls == MPI_ERR_REQUEST, "complete of MPI_REQUEST_NULL: class %d", cls);
	rc = MPI_Grequest_start(query, freefn, cancelfn, &s, NULL);
	OK(MPI_Error_class(rc, &cls));
	CHECK(cls == MPI_ERR_ARG, "NULL request: class %d", cls);
	rc = MPI_Status_c2f(MPI_STATUS_IGNORE, f);
	OK(MPI_Error_class(rc, &cls));
	CHECK(cls == MPI_ERR_ARG, "c2f of MPI_STATUS_IGNORE: class %d", cls);

	if (rank == 0)
		printf("greq OK\n");
	OK(MPI_Finalize());
	return 0;
}
