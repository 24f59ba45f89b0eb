/* errh: user error handlers on communicators, called for errors of
 * other calls and by MPI_Comm_call_errhandler, and the error classes,
 * codes and strings a program adds. */
#include <mpi.h>
#include "check.h"

static int calls, last_code;
static MPI_Comm last_comm;

static void handler(MPI_Comm *comm, int *code, ...)
{
	calls++;
	last_comm = *comm;
	last_code = *code;
}

int main(int argc, char **argv)
{
	int rank, size, cls, code, code2, n, rc, last, flag;
	char s[MPI_MAX_ERROR_STRING];
	MPI_Errhandler eh, got;
	MPI_Comm c, d;

	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
	OK(MPI_Comm_create_errhandler(handler, &eh));
	OK(MPI_Comm_set_errhandler(c, eh));
	OK(MPI_Comm_get_errhandler(c, &got));
	CHECK(got == eh, "get_errhandler");

	/* An error of another call on c goes to the handler, with c and the
	 * code the call returns. */
	rc = MPI_Send(&n, 1, MPI_INT, size, 0, c);
	CHECK(rc != MPI_SUCCESS && calls == 1 && last_comm == c && last_code == rc, "handler: %d calls, comm ok %d, code %d rc %d",
	      calls, last_comm == c, last_code, rc);
	OK(MPI_Error_class(rc, &cls));
	CHECK(cls == MPI_ERR_RANK, "class %d", cls);
	/* New communicators inherit it. */
	OK(MPI_Comm_dup(c, &d));
	rc = MPI_Recv(&n, -1, MPI_INT, 0, 0, d, MPI_STATUS_IGNORE);
	CHECK(rc != MPI_SUCCESS && calls == 2 && last_comm == d, "inherited handler: %d calls", calls);
	OK(MPI_Comm_free(&d));

	/* Added classes, codes and strings. */
	OK(MPI_Add_error_class(&cls));
	CHECK(cls > MPI_ERR_LASTCODE, "new class %d", cls);
	OK(MPI_Add_error_code(cls, &code));
	OK(MPI_Add_error_code(cls, &code2));
	CHECK(code != code2 && code != cls, "codes %d %d", code, code2);
	OK(MPI_Add_error_string(cls, "my class"));
	OK(MPI_Add_error_string(code, "my code"));
	OK(MPI_Error_class(code, &n));
	CHECK(n == cls, "class of the new code %d", n);
	OK(MPI_Error_string(code, s, &n));
	CHECK(strcmp(s, "my code") == 0 && n == 7, "string %s", s);
	OK(MPI_Error_string(cls, s, &n));
	CHECK(strcmp(s, "my class") == 0, "class string %s", s);
	int *lp;
	OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &lp, &flag));
	last = *lp;
	CHECK(flag && last >= code2, "MPI_LASTUSEDCODE %d", last);

	/* Comm_call_errhandler calls the handler with the code given. */
	OK(MPI_Comm_call_errhandler(c, code));
	CHECK(calls == 3 && last_code == code && last_comm == c, "call_errhandler: %d calls, code %d", calls, last_code);
	/* Under MPI_ERRORS_RETURN it does nothing but succeed. */
	OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
	OK(MPI_Comm_call_errhandler(c, code));
	CHECK(calls == 3, "MPI_ERRORS_RETURN called the handler");
	OK(MPI_Errhandler_free(&eh));
	CHECK(eh == MPI_ERRHANDLER_NULL, "errhandler_free");

	/* Bad input. */
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	/* A new code of a predefined class (the standard allows any class,
	 * and MPICH and Open MPI take one). */
	int pcode = 0;
	OK(MPI_Add_error_code(MPI_ERR_ARG, &pcode));
	OK(MPI_Error_class(pcode, &n));
	CHECK(n == MPI_ERR_ARG && pcode != MPI_ERR_ARG, "code %d of a predefined class has class %d", pcode, n);
	rc = MPI_Add_error_code(12345, &n);
	OK(MPI_Error_class(rc, &n));
	CHECK(n == MPI_ERR_ARG, "code of an unknown class: %d", n);
	rc = MPI_Add_error_string(MPI_ERR_TRUNCATE, "x");
	OK(MPI_Error_class(rc, &n));
	CHECK(n == MPI_ERR_ARG, "string of a predefined class: %d", n);
	rc = MPI_Comm_create_errhandler(NULL, &eh);
	OK(MPI_Error_class(rc, &n));
	CHECK(n == MPI_ERR_ARG, "NULL function: %d", n);
	rc = MPI_Comm_set_errhandler(c, (MPI_Errhandler)MPI_COMM_WORLD);
	OK(MPI_Error_class(rc, &n));
	CHECK(n == MPI_ERR_ERRHANDLER, "communicator as errhandler: %d", n);

	OK(MPI_Comm_free(&c));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("errh OK\n");
	OK(MPI_Finalize());
	return 0;
}
