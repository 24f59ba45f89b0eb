/* A C "library" that uses MPI, linked into the Go program of main.go:
 * it runs on the program's own MPI (abi/capi). */
#include <mpi.h>
#include <stdio.h>
#include "lib.h"

int lib_check(MPI_Comm comm, int gorank, int gosize)
{
	int flag = 0, rank = -1, size = -1, sum = 0, level = -1;
	MPI_Initialized(&flag);
	if (!flag) {
		fprintf(stderr, "lib_check: MPI_Initialized says no\n");
		return -1;
	}
	MPI_Query_thread(&level);
	if (level != MPI_THREAD_MULTIPLE) {
		fprintf(stderr, "lib_check: thread level %d\n", level);
		return -1;
	}
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	if (rank != gorank || size != gosize) {
		fprintf(stderr, "lib_check: rank %d of %d, Go says %d of %d\n", rank, size, gorank, gosize);
		return -1;
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank != gorank) {
		fprintf(stderr, "lib_check: world rank %d, Go says %d\n", rank, gorank);
		return -1;
	}
	int one = rank + 1;
	MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
	return sum;
}

int lib_send(MPI_Comm comm, int dest, int value)
{
	return MPI_Send(&value, 1, MPI_INT, dest, 7, comm);
}

int lib_split(MPI_Comm comm, MPI_Comm *out)
{
	int rank;
	MPI_Comm_rank(comm, &rank);
	return MPI_Comm_split(comm, rank % 2, -rank, out);
}

int lib_finalize_refused(void)
{
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	int rc = MPI_Finalize();
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	return rc;
}

int lib_finalized(void)
{
	int flag = 0;
	MPI_Finalized(&flag);
	return flag;
}

int lib_init(void)
{
	int provided = -1;
	return MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
}

int lib_finalize(void)
{
	return MPI_Finalize();
}

int lib_world(void)
{
	return MPI_Comm_toint(MPI_COMM_WORLD);
}
