/* mpi41: the MPI-4.1 calls of C: status getters and setters, the status
 * of many requests without completing them, removing added error
 * classes, codes and strings, pair types, and MPI_Info_create_env. */
#include <mpi.h>
#include "check.h"

static int cls(int rc)
{
	int c = -1;
	OK(MPI_Error_class(rc, &c));
	return c;
}

int main(int argc, char **argv)
{
	/* Before MPI_Init. */
	MPI_Info env;
	OK(MPI_Info_create_env(argc, argv, &env));
	char val[MPI_MAX_INFO_VAL];
	int len = MPI_MAX_INFO_VAL, flag = 0;
	OK(MPI_Info_get_string(env, "command", &len, val, &flag));
	CHECK(flag && strstr(val, "mpi41") != NULL, "command [%s] flag %d", val, flag);
	OK(MPI_Info_free(&env));

	int rank, size;
	START(argc, argv, rank, size);
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

	/* Status getters and setters. */
	MPI_Status st;
	OK(MPI_Status_set_source(&st, 3));
	OK(MPI_Status_set_tag(&st, 42));
	OK(MPI_Status_set_error(&st, MPI_ERR_TAG));
	int s = -1, t = -1, e = -1;
	OK(MPI_Status_get_source(&st, &s));
	OK(MPI_Status_get_tag(&st, &t));
	OK(MPI_Status_get_error(&st, &e));
	CHECK(s == 3 && t == 42 && e == MPI_ERR_TAG && st.MPI_SOURCE == 3 && st.MPI_TAG == 42,
	      "status %d %d %d", s, t, e);
	CHECK(cls(MPI_Status_get_tag(MPI_STATUS_IGNORE, &t)) == MPI_ERR_ARG, "get_tag of MPI_STATUS_IGNORE");

	/* Pair types. */
	MPI_Datatype p;
	OK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &p));
	CHECK(p == MPI_DOUBLE_INT, "double/int pair");
	OK(MPI_Type_get_value_index(MPI_INT, MPI_INT, &p));
	CHECK(p == MPI_2INT, "int/int pair");
	OK(MPI_Type_get_value_index(MPI_CHAR, MPI_INT, &p));
	CHECK(p == MPI_DATATYPE_NULL, "char/int has no pair type");
	OK(MPI_Type_get_value_index(MPI_LONG_DOUBLE, MPI_INT, &p));
	CHECK(p == MPI_LONG_DOUBLE_INT, "long double/int pair");
	CHECK(cls(MPI_Type_get_value_index(MPI_DATATYPE_NULL, MPI_INT, &p)) == MPI_ERR_TYPE, "value MPI_DATATYPE_NULL");
	CHECK(cls(MPI_Type_get_value_index(MPI_INT, MPI_DATATYPE_NULL, &p)) == MPI_ERR_TYPE, "index MPI_DATATYPE_NULL");

	/* Error classes, codes and strings added and removed. */
	int ec, code;
	OK(MPI_Add_error_class(&ec));
	OK(MPI_Add_error_code(ec, &code));
	OK(MPI_Add_error_string(code, "a code of mine"));
	CHECK(cls(MPI_Remove_error_class(ec)) == MPI_ERR_ARG, "removing a class that has a code");
	CHECK(cls(MPI_Remove_error_code(code)) == MPI_ERR_ARG, "removing a code that has a string");
	OK(MPI_Remove_error_string(code));
	OK(MPI_Remove_error_code(code));
	OK(MPI_Remove_error_class(ec));
	CHECK(cls(MPI_Remove_error_code(code)) == MPI_ERR_ARG, "removing a removed code");
	CHECK(cls(MPI_Remove_error_class(MPI_ERR_TAG)) == MPI_ERR_ARG, "removing a predefined class");
	CHECK(cls(MPI_Remove_error_class(ec)) == MPI_ERR_ARG, "removing a removed class");
	CHECK(cls(MPI_Add_error_code(ec, &code)) == MPI_ERR_ARG, "adding a code to a removed class");
	CHECK(cls(MPI_Remove_error_string(code)) == MPI_ERR_ARG, "removing the string of a removed code");
	/* A class with two codes goes once both are gone; a code of a
	   predefined class can be removed too. */
	int c1, c2, pc;
	OK(MPI_Add_error_class(&ec));
	OK(MPI_Add_error_code(ec, &c1));
	OK(MPI_Add_error_code(ec, &c2));
	OK(MPI_Remove_error_code(c1));
	CHECK(cls(MPI_Remove_error_class(ec)) == MPI_ERR_ARG, "removing a class that still has a second code");
	CHECK(cls(MPI_Remove_error_code(ec)) == MPI_ERR_ARG, "removing a class as a code");
	OK(MPI_Remove_error_code(c2));
	OK(MPI_Remove_error_class(ec));
	OK(MPI_Add_error_code(MPI_ERR_TAG, &pc));
	OK(MPI_Add_error_string(pc, "a tag code of mine"));
	OK(MPI_Remove_error_string(pc));
	OK(MPI_Remove_error_code(pc));

	/* The status of many requests, left to complete. */
	if (size >= 2 && rank < 2) {
		int peer = 1 - rank, in[2] = {-1, -1}, out[2] = {rank, rank + 10};
		MPI_Request rq[3];
		OK(MPI_Irecv(&in[0], 1, MPI_INT, peer, 1, MPI_COMM_WORLD, &rq[0]));
		OK(MPI_Irecv(&in[1], 1, MPI_INT, peer, 2, MPI_COMM_WORLD, &rq[1]));
		rq[2] = MPI_REQUEST_NULL;
		int all = 0, any = 0, idx = -2, n = -2, ids[3];
		MPI_Status sts[3];
		OK(MPI_Request_get_status_any(3, rq, &idx, &any, &st));
		CHECK(!any || idx == 0 || idx == 1, "any before the sends: %d %d", any, idx);
		OK(MPI_Send(&out[0], 1, MPI_INT, peer, 1, MPI_COMM_WORLD));
		OK(MPI_Send(&out[1], 1, MPI_INT, peer, 2, MPI_COMM_WORLD));
		/* Bounded by time, not by a count of calls: on a loaded machine the
		 * peer's sends may come many milliseconds later. */
		for (double t0 = MPI_Wtime(); !all && MPI_Wtime() - t0 < 60;)
			OK(MPI_Request_get_status_all(3, rq, &all, sts));
		CHECK(all, "the two receives never completed");
		CHECK(sts[0].MPI_TAG == 1 && sts[1].MPI_TAG == 2 && sts[0].MPI_SOURCE == peer, "statuses %d %d", sts[0].MPI_TAG, sts[1].MPI_TAG);
		/* Not freed: still there for get_status_some and Waitall. */
		OK(MPI_Request_get_status_some(3, rq, &n, ids, sts));
		CHECK(n == 2 && ids[0] == 0 && ids[1] == 1, "some: %d", n);
		OK(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
		CHECK(in[0] == peer && in[1] == peer + 10, "received %d %d", in[0], in[1]);
		OK(MPI_Request_get_status_any(3, rq, &idx, &any, &st));
		CHECK(any && idx == MPI_UNDEFINED, "any of null requests: %d %d", any, idx);
		OK(MPI_Request_get_status_some(3, rq, &n, ids, sts));
		CHECK(n == MPI_UNDEFINED, "some of null requests: %d", n);
		CHECK(cls(MPI_Request_get_status_all(-1, rq, &all, sts)) == MPI_ERR_COUNT, "negative count");
	}
	OK(MPI_Finalize());
	if (rank == 0)
		printf("mpi41 OK\n");
	return 0;
}
