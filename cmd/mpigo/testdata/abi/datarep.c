/* datarep: MPI_Register_datarep and MPI_Register_datarep_c. Registration
 * succeeds with conversion functions and with MPI_CONVERSION_FN_NULL(_C);
 * a name registered twice, or a predefined one, is MPI_ERR_DUP_DATAREP;
 * a NULL name or extent function is MPI_ERR_ARG. These errors belong to
 * no file: they return their code (MPI_FILE_NULL's handler is
 * MPI_ERRORS_RETURN) even though MPI_COMM_SELF's handler is still
 * MPI_ERRORS_ARE_FATAL here, unless the program gives MPI_FILE_NULL a
 * handler of its own, which is then called. A file written through a
 * registered representation that stores each int in 8 bytes holds those
 * bytes, and reads back through it; its extent function is asked about
 * MPI_INT, the kind the view holds. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

static int handled;

static void file_handler(MPI_File *f, int *code, ...)
{
	(void)f; (void)code;
	handled++;
}

/* wide: an int in 8 bytes of the file (native order, sign-extended). */
static int wide_write(void *userbuf, MPI_Datatype dt, int count, void *filebuf, MPI_Offset position, void *extra)
{
	(void)dt; (void)extra;
	for (int i = 0; i < count; i++) {
		int64_t v = ((int *)userbuf)[position + i];
		memcpy((char *)filebuf + 8 * i, &v, 8);
	}
	return MPI_SUCCESS;
}

static int wide_read(void *userbuf, MPI_Datatype dt, int count, void *filebuf, MPI_Offset position, void *extra)
{
	(void)dt; (void)extra;
	for (int i = 0; i < count; i++) {
		int64_t v;
		memcpy(&v, (char *)filebuf + 8 * i, 8);
		((int *)userbuf)[position + i] = (int)v;
	}
	return MPI_SUCCESS;
}

/* wide_asked counts the extent function's calls about a 4-byte integer,
 * wide_bad those about anything else (MPI_DATATYPE_NULL once). */
static int wide_asked, wide_bad;

static int wide_extent(MPI_Datatype dt, MPI_Aint *ext, void *extra)
{
	int size = -1;
	(void)extra;
	if (dt != MPI_DATATYPE_NULL && MPI_Type_size(dt, &size) == MPI_SUCCESS && size == 4 && dt == MPI_INT)
		wide_asked++;
	else
		wide_bad++;
	*ext = 8;
	return MPI_SUCCESS;
}

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

	/* A handler given to MPI_FILE_NULL is called for registration errors. */
	{
		MPI_Errhandler eh;
		OK(MPI_File_create_errhandler(file_handler, &eh));
		OK(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
		expect(MPI_Register_datarep("native", conv, conv, extent, NULL), MPI_ERR_DUP_DATAREP, "registering native with a handler");
		CHECK(handled == 1, "MPI_FILE_NULL's handler was called %d times, want 1", handled);
		OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
		OK(MPI_Errhandler_free(&eh));
	}

	/* A file through the wide representation. */
	{
		int size, buf[4], back[4];
		char name[256];
		long long raw[4];
		MPI_File fh;
		MPI_Offset fsize;
		MPI_Comm_size(MPI_COMM_WORLD, &size);
		OK(MPI_Register_datarep("mpigo-test-wide", wide_read, wide_write, wide_extent, NULL));
		if (rank == 0)
			snprintf(name, sizeof name, "/tmp/mpigo-datarep-%d.bin", (int)getpid());
		OK(MPI_Bcast(name, sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD));
		OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
		OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "mpigo-test-wide", MPI_INFO_NULL));
		for (int i = 0; i < 4; i++)
			buf[i] = -(rank * 100 + i);
		OK(MPI_File_write_at_all(fh, 4 * rank, buf, 4, MPI_INT, MPI_STATUS_IGNORE));
		OK(MPI_File_sync(fh));
		OK(MPI_Barrier(MPI_COMM_WORLD));
		OK(MPI_File_get_size(fh, &fsize));
		CHECK(fsize == (MPI_Offset)size * 4 * 8, "file size %lld, want %d", (long long)fsize, size * 32);
		OK(MPI_File_read_at_all(fh, 4 * rank, back, 4, MPI_INT, MPI_STATUS_IGNORE));
		for (int i = 0; i < 4; i++)
			CHECK(back[i] == buf[i], "read back %d at %d, want %d", back[i], i, buf[i]);
		OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
		OK(MPI_File_read_at(fh, 32 * rank, raw, 32, MPI_BYTE, MPI_STATUS_IGNORE));
		for (int i = 0; i < 4; i++)
			CHECK(raw[i] == buf[i], "file bytes of item %d: %lld, want %d in 8 bytes", i, raw[i], buf[i]);
		OK(MPI_File_close(&fh));
		CHECK(wide_asked > 0 && wide_bad == 0, "the extent function was asked about MPI_INT %d times and about something else %d times", wide_asked, wide_bad);
	}

	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("datarep OK\n");
	MPI_Finalize();
	return 0;
}
