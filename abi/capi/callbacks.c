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

/* Attribute callbacks of communicators and datatypes (window keyvals can
 * follow the same shape): the copy function gets the old object, the
 * keyval, the keyval's extra state, the value and where to put the
 * copy's value and flag; the delete function the object, keyval, value
 * and extra state. Values cross as uintptr_t so that Go never holds them
 * as pointers. */
int mpigo_call_comm_copy(void *fn, uintptr_t comm, int keyval, void *extra, uintptr_t in, uintptr_t *out, int *flag)
{
	void *o = 0;
	int rc = ((MPI_Comm_copy_attr_function *)fn)((MPI_Comm)comm, keyval, extra, (void *)in, &o, flag);
	*out = (uintptr_t)o;
	return rc;
}

int mpigo_call_comm_delete(void *fn, uintptr_t comm, int keyval, uintptr_t val, void *extra)
{
	return ((MPI_Comm_delete_attr_function *)fn)((MPI_Comm)comm, keyval, (void *)val, extra);
}

int mpigo_call_type_copy(void *fn, uintptr_t dt, int keyval, void *extra, uintptr_t in, uintptr_t *out, int *flag)
{
	void *o = 0;
	int rc = ((MPI_Type_copy_attr_function *)fn)((MPI_Datatype)dt, keyval, extra, (void *)in, &o, flag);
	*out = (uintptr_t)o;
	return rc;
}

int mpigo_call_type_delete(void *fn, uintptr_t dt, int keyval, uintptr_t val, void *extra)
{
	return ((MPI_Type_delete_attr_function *)fn)((MPI_Datatype)dt, keyval, (void *)val, extra);
}

/* mpigo_call_comm_errhandler calls a user error handler of
 * MPI_Comm_create_errhandler, which takes the communicator and the code
 * by address. */
void mpigo_call_comm_errhandler(void *fn, uintptr_t comm, int code)
{
	MPI_Comm c = (MPI_Comm)comm;
	((MPI_Comm_errhandler_function *)fn)(&c, &code);
}

/* mpigo_call_session_errhandler calls a user error handler of
 * MPI_Session_create_errhandler, which takes the session and the code by
 * address. */
void mpigo_call_session_errhandler(void *fn, uintptr_t session, int code)
{
	MPI_Session s = (MPI_Session)session;
	((MPI_Session_errhandler_function *)fn)(&s, &code);
}

/* The callbacks of a generalized request. */
int mpigo_call_grequest_query(void *fn, void *extra, void *status)
{
	return ((MPI_Grequest_query_function *)fn)(extra, (MPI_Status *)status);
}

int mpigo_call_grequest_free(void *fn, void *extra)
{
	return ((MPI_Grequest_free_function *)fn)(extra);
}

int mpigo_call_grequest_cancel(void *fn, void *extra, int complete)
{
	return ((MPI_Grequest_cancel_function *)fn)(extra, complete);
}
