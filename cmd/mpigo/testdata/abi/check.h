/* check.h: a failed CHECK prints where and exits with status 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
		fprintf(stderr, __VA_ARGS__); \
		fprintf(stderr, "\n"); \
		exit(1); \
	} \
} while (0)

#define OK(call) do { int rc_ = (call); CHECK(rc_ == MPI_SUCCESS, "%s returned %d", #call, rc_); } while (0)

/* START initializes MPI and sets rank and size of MPI_COMM_WORLD, whose
 * errors then return (the program checks each call). */
#define START(argc, argv, rank, size) do { \
	OK(MPI_Init(&(argc), &(argv))); \
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &(rank))); \
	OK(MPI_Comm_size(MPI_COMM_WORLD, &(size))); \
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)); \
} while (0)
