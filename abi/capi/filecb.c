//go:build cgo

/* Calls of the C error handlers of files (MPI_File_create_errhandler):
 * the standard passes the file handle and the code by address. */

#include <stdint.h>
#include "mpi.h"

void mpigo_call_file_errhandler(void *fn, uintptr_t file, int code)
{
	MPI_File f = (MPI_File)file;
	((MPI_File_errhandler_function *)fn)(&f, &code);
}
