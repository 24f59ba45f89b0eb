/* fatal: under the default handler, MPI_ERRORS_ARE_FATAL, an error ends
 * the job with a message naming the call. */
#include <mpi.h>
#include "check.h"

int main(int argc, char **argv)
{
	int rank, size, x = 0;
	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	if (rank == size - 1)
		MPI_Send(&x, 1, MPI_INT, size + 7, 0, MPI_COMM_WORLD);
	else
		MPI_Recv(&x, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	printf("not reached\n");
	return 0;
}
