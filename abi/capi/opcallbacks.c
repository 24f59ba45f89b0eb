//go:build cgo

/* The large-count user operations of MPI_Op_create_c: the length is an
 * MPI_Count, passed by address as MPI_Op_create's int is. */

#include "mpi.h"

void mpigo_call_user_function_c(void *fn, void *in, void *inout, MPI_Count len, uintptr_t dt)
{
	MPI_Datatype d = (MPI_Datatype)dt;
	((MPI_User_function_c *)fn)(in, inout, &len, &d);
}
