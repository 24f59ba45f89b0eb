//go:build cgo

package capi

/*
int mpigo_fast_world_rank, mpigo_fast_world_size, mpigo_fast_ready;

static void mpigo_fast_set(int rank, int size)
{
	mpigo_fast_world_rank = rank;
	mpigo_fast_world_size = size;
	__atomic_store_n(&mpigo_fast_ready, 1, __ATOMIC_RELEASE);
}

static void mpigo_fast_clear(void) { __atomic_store_n(&mpigo_fast_ready, 0, __ATOMIC_RELEASE); }
*/
import "C"

// fastStart lets the shim answer MPI_Comm_rank and MPI_Comm_size of
// MPI_COMM_WORLD and MPI_COMM_SELF in C (fast.h): MPI_Init calls it once
// the world is known.
func fastStart(rank, size int) { C.mpigo_fast_set(C.int(rank), C.int(size)) }

// fastStop sends those calls to Go again, which refuses them after
// MPI_Finalize: MPI_Finalize calls it first.
func fastStop() { C.mpigo_fast_clear() }
