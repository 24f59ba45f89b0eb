/* abortcode.c MODE: ends the job with a code whose low 8 bits are zero,
 * which an exit status would turn into success: "abort" calls
 * MPI_Abort(MPI_COMM_WORLD, 512); "class" raises a code of a class of
 * MPI_Add_error_class on MPI_COMM_WORLD, whose handler is
 * MPI_ERRORS_ARE_FATAL. Either way the job must not exit with status 0. */
#include <mpi.h>
#include "check.h"

int main(int argc, char **argv) {
	int rank;
	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	CHECK(argc == 2, "usage: abortcode abort|class");
	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0) {
		if (strcmp(argv[1], "abort") == 0) {
			MPI_Abort(MPI_COMM_WORLD, 512);
		} else {
			/* Classes until one has zero low bits, as the first one
			 * has in mpigo (16384). */
			int class = 0, code, i;
			for (i = 0; i < 300; i++) {
				OK(MPI_Add_error_class(&class));
				if ((class & 0xff) == 0)
					break;
			}
			CHECK((class & 0xff) == 0, "no class with zero low bits among 300");
			OK(MPI_Add_error_code(class, &code));
			MPI_Comm_call_errhandler(MPI_COMM_WORLD, code);
		}
		printf("not reached\n");
		return 0;
	}
	/* The other ranks wait to be taken down. */
	MPI_Barrier(MPI_COMM_WORLD);
	printf("not reached either\n");
	return 0;
}
