//go:build cgo

/* The end of a program of the Sessions model (session.go): one that never
 * called MPI_Init has no MPI_Finalize to end its rank, so the library ends
 * it when the program exits (atexit), after its last
 * MPI_Session_finalize. */

#include <stdlib.h>

extern void mpigoSessionsAtExit(void);

static void mpigo_sessions_at_exit(void)
{
	mpigoSessionsAtExit();
}

/* mpigo_register_sessions_at_exit is called once, by the first
 * MPI_Session_init that succeeds. It returns atexit's result. */
int mpigo_register_sessions_at_exit(void)
{
	return atexit(mpigo_sessions_at_exit);
}
