/* datarep: MPI_Register_datarep and MPI_Register_datarep_c. Registration
 * succeeds with conversion functions and with MPI_CONVERSION_FN_NULL(_C);
 * a name registered twice, or a predefined one, is MPI_ERR_DUP_DATAREP;
 * a NULL name or extent function is MPI_ERR_ARG. These errors belong to
 * no file: they return their code (MPI_FILE_NULL's handler is
 * MPI_ERRORS_RETURN) even though MPI_COMM_SELF's handler is still
 * MPI_ERRORS_ARE_FATAL here. A file written through a registered
 * representation waits for the MPI_File bindings. */
#include <mpi.h>
#include "check.h"

static int calls;

static int conv(void *userbuf, MPI_Datatype dt, int count, void *filebuf, MPI_Offset position, void *extra)
{
	(void)userbuf; (void)dt; (void)count; (void)filebuf; (void)position; (void)extra;
	calls++;
	return MPI_SUCCESS;
}

static int conv_c(void *userbuf, MPI_Datatype dt, MPI_Count count, void *filebuf, MPI_Offset position, void *extra)
{
	(void)userbuf; (void)dt; (void)count; (void)filebuf; (void)position; (void)extra;
	calls++;
	return MPI_SUCCESS;
}

static int extent(MPI_Datatype dt, MPI_Aint *ext, void *extra)
{
	int size;
	(void)extra;
	MPI_Type_size(dt, &size);
	*ext = 2 * (MPI_Aint)size;
	calls++;
	return MPI_SUCCESS;
}

static void expect(int rc, int want, const char *what)
{
	int cls = -1;
	CHECK(rc != MPI_SUCCESS, "%s succeeded", what);
	OK(MPI_Error_class(rc, &cls));
	CHECK(cls == want, "%s: class %d, want %d", what, cls, want);
}

int main(int argc, char **argv)
{
	int rank, state = 7;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);

	OK(MPI_Register_datarep("mpigo-test-doubled", conv, conv, extent, &state));
	OK(MPI_Register_datarep_c("mpigo-test-doubled-c", conv_c, conv_c, extent, &state));
	OK(MPI_Register_datarep("mpigo-test-null", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, extent, NULL));
	OK(MPI_Register_datarep_c("mpigo-test-null-c", MPI_CONVERSION_FN_NULL_C, MPI_CONVERSION_FN_NULL_C, extent, NULL));
	CHECK(calls == 0, "registering called the user functions %d times", calls);

	expect(MPI_Register_datarep("mpigo-test-doubled", conv, conv, extent, &state), MPI_ERR_DUP_DATAREP, "a second registration");
	expect(MPI_Register_datarep_c("mpigo-test-doubled", conv_c, conv_c, extent, &state), MPI_ERR_DUP_DATAREP, "the same name through _c");
	expect(MPI_Register_datarep("native", conv, conv, extent, NULL), MPI_ERR_DUP_DATAREP, "registering native");
	expect(MPI_Register_datarep("external32", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, extent, NULL), MPI_ERR_DUP_DATAREP, "registering external32");
	expect(MPI_Register_datarep(NULL, conv, conv, extent, NULL), MPI_ERR_ARG, "a NULL name");
	expect(MPI_Register_datarep_c(NULL, conv_c, conv_c, extent, NULL), MPI_ERR_ARG, "a NULL name through _c");
	expect(MPI_Register_datarep("mpigo-test-noext", conv, conv, NULL, NULL), MPI_ERR_ARG, "a NULL extent function");
	expect(MPI_Register_datarep("", conv, conv, extent, NULL), MPI_ERR_ARG, "an empty name");
	{
		char err[MPI_MAX_ERROR_STRING];
		int len, rc = MPI_Register_datarep("mpigo-test-doubled", conv, conv, extent, NULL);
		OK(MPI_Error_string(rc, err, &len));
		CHECK(strstr(err, "mpigo-test-doubled") != NULL, "the error string names the representation: %s", err);
	}
	/* A failed registration left the name free. */
	OK(MPI_Register_datarep("mpigo-test-noext", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, extent, NULL));

	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("datarep OK\n");
	MPI_Finalize();
	return 0;
}
