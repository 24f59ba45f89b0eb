/* hang: each of two ranks receives from the other first, a deadlock. The
 * test runs it with a short hang report and checks that the report names
 * both receives: the blocked C threads are seen as mpigo's own waits. */
#include <mpi.h>
#include "check.h"

int main(int argc, char **argv)
{
	int rank, size, x = 0;
	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	CHECK(size == 2, "run me with -n 2 (size %d)", size);
	OK(MPI_Recv(&x, 1, MPI_INT, 1 - rank, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	printf("hang: not reached\n");
	OK(MPI_Finalize());
	return 0;
}
