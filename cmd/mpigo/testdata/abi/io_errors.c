/* io_errors: the error classes of MPI-IO through the standard ABI, and
 * file error handlers: MPI_ERRORS_RETURN is the default of files, errors
 * with no file (MPI_File_open, bad handles) go to MPI_FILE_NULL's
 * handler, which new files inherit, and a handler of
 * MPI_File_create_errhandler is called with the file and the code.
 * argv[1] is a directory every rank sees. */
#include <mpi.h>
#include "check.h"

static int calls, last_code;
static MPI_File last_file;

static void handler(MPI_File *f, int *code, ...)
{
	calls++;
	last_file = *f;
	last_code = *code;
}

static int class_of(int rc)
{
	int cls;
	OK(MPI_Error_class(rc, &cls));
	return cls;
}

#define WANT(call, want) do { \
	int rc_ = (call); \
	CHECK(rc_ != MPI_SUCCESS && class_of(rc_) == (want), "%s: rc %d class %d, want class %d (%s)", #call, rc_, \
	      rc_ == MPI_SUCCESS ? 0 : class_of(rc_), (want), #want); \
} while (0)

int main(int argc, char **argv)
{
	int rank, size, n, rc, len, amode;
	char name[1024], missing[1024], s[MPI_MAX_ERROR_STRING];
	MPI_File fh, old, fh2;
	MPI_Errhandler eh, got;
	MPI_Offset off;
	MPI_Status st;
	MPI_Request req;

	OK(MPI_Init(&argc, &argv));
	CHECK(argc > 1, "usage: io_errors DIR");
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	snprintf(name, sizeof name, "%s/errors.dat", argv[1]);
	snprintf(missing, sizeof missing, "%s/no/such/file", argv[1]);

	if (argc > 2 && strcmp(argv[2], "fatal") == 0) {
		/* MPI_ERRORS_ARE_FATAL on a file ends the job with the class
		 * of the error as its status. */
		OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
		OK(MPI_File_set_errhandler(fh, MPI_ERRORS_ARE_FATAL));
		MPI_File_read_at(fh, 0, &n, 1, MPI_INT, &st);
		printf("not reached\n");
		return 0;
	}

	/* MPI_FILE_NULL's handler is MPI_ERRORS_RETURN. */
	OK(MPI_File_get_errhandler(MPI_FILE_NULL, &got));
	CHECK(got == MPI_ERRORS_RETURN, "MPI_FILE_NULL's handler is %p", (void *)got);

	/* Opening. */
	rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
	CHECK(rc != MPI_SUCCESS && class_of(rc) == MPI_ERR_NO_SUCH_FILE, "open missing: class %d", class_of(rc));
	OK(MPI_Error_string(rc, s, &len));
	CHECK(strstr(s, "MPI_File_open") != NULL, "error string %s does not name the call", s);
	OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
	WANT(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR, MPI_INFO_NULL, &fh2), MPI_ERR_FILE_EXISTS);
	WANT(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh2), MPI_ERR_AMODE);
	WANT(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR | 0x40000, MPI_INFO_NULL, &fh2), MPI_ERR_AMODE);

	/* A new file's handler is MPI_ERRORS_RETURN. */
	OK(MPI_File_get_errhandler(fh, &got));
	CHECK(got == MPI_ERRORS_RETURN, "a file's default handler is %p", (void *)got);

	/* Access against the mode. */
	WANT(MPI_File_read_at(fh, 0, &n, 1, MPI_INT, &st), MPI_ERR_ACCESS);
	/* A non-blocking call may report its error at completion, as
	 * mpigo's do. */
	rc = MPI_File_iread(fh, &n, 1, MPI_INT, &req);
	if (rc == MPI_SUCCESS) {
		WANT(MPI_Wait(&req, &st), MPI_ERR_ACCESS);
		CHECK(req == MPI_REQUEST_NULL, "the failed request is freed");
	} else
		CHECK(class_of(rc) == MPI_ERR_ACCESS, "iread on a write-only file: class %d", class_of(rc));
	n = rank;
	OK(MPI_File_write_at(fh, rank * sizeof(int), &n, 1, MPI_INT, &st));
	WANT(MPI_File_write_at(fh, 0, &n, -1, MPI_INT, &st), MPI_ERR_COUNT);
	WANT(MPI_File_write_at(fh, 0, &n, 1, MPI_DATATYPE_NULL, &st), MPI_ERR_TYPE);
	WANT(MPI_File_write_at(fh, 0, &n, 1, (MPI_Datatype)MPI_COMM_WORLD, &st), MPI_ERR_TYPE);
	WANT(MPI_File_seek(fh, 0, 12345), MPI_ERR_ARG);
	WANT(MPI_File_seek(fh, -1, MPI_SEEK_SET), MPI_ERR_ARG);
	WANT(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "no-such-rep", MPI_INFO_NULL), MPI_ERR_UNSUPPORTED_DATAREP);
	/* NULL out-pointers. */
	WANT(MPI_File_get_size(fh, NULL), MPI_ERR_ARG);
	WANT(MPI_File_get_amode(fh, NULL), MPI_ERR_ARG);
	WANT(MPI_File_get_position(fh, NULL), MPI_ERR_ARG);
	WANT(MPI_File_get_view(fh, &off, NULL, NULL, NULL), MPI_ERR_ARG);
	WANT(MPI_File_iwrite_at(fh, 0, &n, 1, MPI_INT, NULL), MPI_ERR_ARG);
	/* No split collective active. */
	WANT(MPI_File_write_all_end(fh, &n, &st), MPI_ERR_ARG);

	/* A collective call refused on one rank fails on every rank: none
	 * waits for the refused one. */
	{
		int bad = rank == size - 1, v[2] = {rank, rank};
		MPI_Datatype t = bad ? MPI_DATATYPE_NULL : MPI_INT;
		rc = MPI_File_write_at_all(fh, 64 + 8 * rank, v, 2, t, &st);
		CHECK(rc != MPI_SUCCESS && (!bad || class_of(rc) == MPI_ERR_TYPE), "write_at_all refused on rank %d: rc %d", size - 1, rc);
		rc = MPI_File_set_view(fh, 0, MPI_INT, t, "native", MPI_INFO_NULL);
		CHECK(rc != MPI_SUCCESS && (!bad || class_of(rc) == MPI_ERR_TYPE), "set_view refused on rank %d: rc %d", size - 1, rc);
		rc = MPI_File_iwrite_all(fh, v, 2, MPI_INT, bad ? NULL : &req);
		if (rc == MPI_SUCCESS)
			rc = MPI_Wait(&req, &st);
		CHECK(rc != MPI_SUCCESS && (!bad || class_of(rc) == MPI_ERR_ARG), "iwrite_all refused on rank %d: rc %d", size - 1, rc);
		rc = MPI_File_write_all_begin(fh, v, 2, t);
		if (rc == MPI_SUCCESS)
			rc = MPI_File_write_all_end(fh, v, &st);
		CHECK(rc != MPI_SUCCESS && (!bad || class_of(rc) == MPI_ERR_TYPE), "write_all_begin refused on rank %d: rc %d", size - 1, rc);
		/* No split collective stays active on the refused rank. */
		OK(MPI_File_write_at_all_begin(fh, 64 + 8 * rank, v, 2, MPI_INT));
		OK(MPI_File_write_at_all_end(fh, v, &st));
	}

	/* Bad handles: MPI_FILE_NULL, another kind, garbage, closed. */
	WANT(MPI_File_read(MPI_FILE_NULL, &n, 1, MPI_INT, &st), MPI_ERR_FILE);
	WANT(MPI_File_get_size(MPI_FILE_NULL, &off), MPI_ERR_FILE);
	WANT(MPI_File_write_all(MPI_FILE_NULL, &n, 1, MPI_INT, &st), MPI_ERR_FILE);
	WANT(MPI_File_get_amode((MPI_File)MPI_COMM_WORLD, &amode), MPI_ERR_FILE);
	WANT(MPI_File_sync((MPI_File)(uintptr_t)0x7777777), MPI_ERR_FILE);
	WANT(MPI_File_close(NULL), MPI_ERR_ARG);
	{
		MPI_File nul = MPI_FILE_NULL;
		WANT(MPI_File_close(&nul), MPI_ERR_FILE);
	}

	/* A user handler: called with the file and the code of the call. */
	OK(MPI_File_create_errhandler(handler, &eh));
	OK(MPI_File_set_errhandler(fh, eh));
	OK(MPI_File_get_errhandler(fh, &got));
	CHECK(got == eh, "get_errhandler gives %p, want %p", (void *)got, (void *)eh);
	rc = MPI_File_read(fh, &n, 1, MPI_INT, &st);
	CHECK(rc != MPI_SUCCESS && class_of(rc) == MPI_ERR_ACCESS, "read on write-only file: class %d", class_of(rc));
	CHECK(calls == 1 && last_file == fh && last_code == rc, "handler: %d calls, file ok %d, code %d rc %d", calls, last_file == fh, last_code, rc);
	OK(MPI_File_call_errhandler(fh, MPI_ERR_IO));
	CHECK(calls == 2 && last_code == MPI_ERR_IO, "call_errhandler: %d calls, code %d", calls, last_code);
	/* A request's error, reported at completion, goes to the file's
	 * handler too. */
	rc = MPI_File_iread_at(fh, 0, &n, 1, MPI_INT, &req);
	if (rc == MPI_SUCCESS)
		rc = MPI_Wait(&req, &st);
	CHECK(class_of(rc) == MPI_ERR_ACCESS && calls == 3 && last_file == fh && last_code == rc,
	      "iread_at on a write-only file: class %d, %d calls, code %d rc %d", class_of(rc), calls, last_code, rc);
	/* A communicator's handler is not a file's. */
	WANT(MPI_File_set_errhandler(fh, (MPI_Errhandler)MPI_COMM_WORLD), MPI_ERR_ERRHANDLER);
	CHECK(calls == 4, "the refused set_errhandler went to the file's handler (%d calls)", calls);
	OK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
	old = fh;
	OK(MPI_File_close(&fh));
	/* A closed file's handle is no file; the error goes to MPI_FILE_NULL's
	 * handler, which now is the user's. */
	OK(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
	rc = MPI_File_get_size(old, &off);
	CHECK(rc != MPI_SUCCESS && class_of(rc) == MPI_ERR_FILE, "closed handle: class %d", class_of(rc));
	CHECK(calls == 5 && last_file == MPI_FILE_NULL && last_code == rc, "MPI_FILE_NULL's handler: %d calls, code %d rc %d", calls, last_code, rc);
	rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
	CHECK(calls == 6 && last_file == MPI_FILE_NULL && class_of(last_code) == MPI_ERR_NO_SUCH_FILE, "open's error on MPI_FILE_NULL's handler: %d calls", calls);
	/* Files opened now inherit it. */
	OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
	OK(MPI_File_get_errhandler(fh, &got));
	CHECK(got == eh, "a new file's handler is MPI_FILE_NULL's");
	rc = MPI_File_write(fh, &n, 1, MPI_INT, &st);
	CHECK(class_of(rc) == MPI_ERR_READ_ONLY && calls == 7 && last_file == fh, "write on read-only file: class %d, %d calls", class_of(rc), calls);
	OK(MPI_File_read_at(fh, ((rank + 1) % size) * sizeof(int), &n, 1, MPI_INT, &st));
	CHECK(n == (rank + 1) % size, "read back %d", n);
	OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
	OK(MPI_Errhandler_free(&eh));
	CHECK(eh == MPI_ERRHANDLER_NULL, "errhandler_free");
	/* The file keeps the handler it was given. */
	rc = MPI_File_write(fh, &n, 1, MPI_INT, &st);
	CHECK(rc != MPI_SUCCESS && calls == 8, "freed handler still called by its file: %d calls", calls);
	OK(MPI_File_close(&fh));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		OK(MPI_File_delete(name, MPI_INFO_NULL));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	WANT(MPI_File_delete(name, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);

	OK(MPI_Finalize());
	if (rank == 0)
		printf("io_errors OK\n");
	return 0;
}
