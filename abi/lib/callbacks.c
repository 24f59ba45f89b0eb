//go:build cgo

/* What Go cannot export or call by itself: calls of C function pointers
 * (user reduction operations) and the ABI's global variables. */

#include "mpi.h"

/* mpigo_call_user_function calls a user operation of MPI_Op_create; the
 * standard passes the length and datatype by address. */
void mpigo_call_user_function(void *fn, void *in, void *inout, int len, uintptr_t dt)
{
	MPI_Datatype d = (MPI_Datatype)dt;
	((MPI_User_function *)fn)(in, inout, &len, &d);
}

MPI_Fint *MPI_F_STATUS_IGNORE = 0;
MPI_Fint *MPI_F_STATUSES_IGNORE = 0;
MPI_F08_status *MPI_F08_STATUS_IGNORE = 0;
MPI_F08_status *MPI_F08_STATUSES_IGNORE = 0;
