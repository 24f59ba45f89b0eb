//go:build cgo

/* Calls of the C callbacks of MPI_Register_datarep and
 * MPI_Register_datarep_c: the conversion functions (int or MPI_Count
 * count) and the extent function. Handles and the extra state cross as
 * uintptr_t so that Go never holds them as Go pointers. */

#include <stdint.h>
#include "mpi.h"

int mpigo_call_datarep_conv(void *fn, void *userbuf, uintptr_t dt, int count, void *filebuf, int64_t position, uintptr_t extra)
{
	return ((MPI_Datarep_conversion_function *)fn)(userbuf, (MPI_Datatype)dt, count, filebuf, (MPI_Offset)position, (void *)extra);
}

int mpigo_call_datarep_conv_c(void *fn, void *userbuf, uintptr_t dt, int64_t count, void *filebuf, int64_t position, uintptr_t extra)
{
	return ((MPI_Datarep_conversion_function_c *)fn)(userbuf, (MPI_Datatype)dt, (MPI_Count)count, filebuf, (MPI_Offset)position, (void *)extra);
}

int mpigo_call_datarep_extent(void *fn, uintptr_t dt, int64_t *extent, uintptr_t extra)
{
	MPI_Aint e = 0;
	int rc = ((MPI_Datarep_extent_function *)fn)((MPI_Datatype)dt, &e, (void *)extra);
	*extent = (int64_t)e;
	return rc;
}
