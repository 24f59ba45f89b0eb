/* spawn.c: the Open MPI side of the spawn measurement (bench/spawn.sh),
 * written for this project. The parent (one process) spawns N copies of
 * this program and times MPI_Comm_spawn until the first message of every
 * child has arrived; each child sends its rank to the parent and
 * disconnects. Prints "spawn N MILLISECONDS". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Comm parent, inter;
    MPI_Init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        int rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Send(&rank, 1, MPI_INT, 0, 1, parent);
        MPI_Comm_disconnect(&parent);
        MPI_Finalize();
        return 0;
    }
    int n = argc > 1 ? atoi(argv[1]) : 4;
    if (n < 1)
        n = 4;
    double t0 = MPI_Wtime();
    int *codes = malloc(n * sizeof(int));
    MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, n, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter, codes);
    for (int i = 0; i < n; i++) {
        int v;
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 1, inter, MPI_STATUS_IGNORE);
    }
    double t1 = MPI_Wtime();
    printf("spawn %d %.1f\n", n, (t1 - t0) * 1e3);
    MPI_Comm_disconnect(&inter);
    free(codes);
    MPI_Finalize();
    return 0;
}
