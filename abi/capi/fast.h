/* fast.h: the calls the shim (zshim.c) answers in C, without entering Go,
 * when it can (abi/generate.go's fastInC). A call from C into Go costs
 * about 60 ns of the Go runtime's; a rank or size of MPI_COMM_WORLD or
 * MPI_COMM_SELF, which never change between MPI_Init and MPI_Finalize,
 * costs a load here. Anything else (another communicator, a NULL or
 * first-page pointer, a call outside Init..Finalize) goes to Go as
 * before, which checks and raises errors. */
#ifndef MPIGO_FAST_H
#define MPIGO_FAST_H

#include <stdint.h>
#include "mpi.h"

/* mpigo_fast_out reports whether p may be written here. The first page
 * is left to Go: a store there is a nil dereference, which Go recovers
 * and the call returns MPI_ERR_INTERN (a store in C would end the
 * process); a store elsewhere faults the same in C as in Go. */
#define mpigo_fast_out(p) ((uintptr_t)(p) >= 4096)

/* mpigo_fast_world: the world's rank and size, and a nonzero ready while
 * the library runs (fast.go sets and clears them). */
extern int mpigo_fast_world_rank, mpigo_fast_world_size, mpigo_fast_ready;

static inline int mpigo_fast_MPI_Comm_rank(MPI_Comm comm, int *rank)
{
	if (!mpigo_fast_out(rank) || !__atomic_load_n(&mpigo_fast_ready, __ATOMIC_ACQUIRE))
		return 0;
	if (comm == MPI_COMM_WORLD) {
		*rank = mpigo_fast_world_rank;
		return 1;
	}
	if (comm == MPI_COMM_SELF) {
		*rank = 0;
		return 1;
	}
	return 0;
}

static inline int mpigo_fast_MPI_Comm_size(MPI_Comm comm, int *size)
{
	if (!mpigo_fast_out(size) || !__atomic_load_n(&mpigo_fast_ready, __ATOMIC_ACQUIRE))
		return 0;
	if (comm == MPI_COMM_WORLD) {
		*size = mpigo_fast_world_size;
		return 1;
	}
	if (comm == MPI_COMM_SELF) {
		*size = 1;
		return 1;
	}
	return 0;
}

#endif
