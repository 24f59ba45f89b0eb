//go:build cgo

/* Calls of the C callbacks of windows: user error handlers and the delete
 * callbacks of window attributes. */

#include <stdint.h>
#include "mpi.h"

void mpigo_call_win_errhandler(void *fn, uintptr_t win, int code)
{
	MPI_Win w = (MPI_Win)win;
	((MPI_Win_errhandler_function *)fn)(&w, &code);
}

int mpigo_call_win_delete_attr(void *fn, uintptr_t win, int keyval, void *val, void *extra)
{
	return ((MPI_Win_delete_attr_function *)fn)((MPI_Win)win, keyval, val, extra);
}
