/* hello: rank and size, versions, processor name, thread level. */
#include <mpi.h>
#include "check.h"

int main(int argc, char **argv)
{
	int rank, size, flag, v, sv, len, provided;
	char name[MPI_MAX_PROCESSOR_NAME], lib[MPI_MAX_LIBRARY_VERSION_STRING];

	OK(MPI_Initialized(&flag));
	CHECK(flag == 0, "Initialized before Init: %d", flag);
	OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
	CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
	OK(MPI_Query_thread(&v));
	CHECK(v == provided, "Query_thread %d", v);
	OK(MPI_Initialized(&flag));
	CHECK(flag == 1, "Initialized after Init: %d", flag);
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	OK(MPI_Get_version(&v, &sv));
	CHECK(v == MPI_VERSION && sv == MPI_SUBVERSION && v == 5, "version %d.%d", v, sv);
	OK(MPI_Get_library_version(lib, &len));
	CHECK(len == (int)strlen(lib) && strstr(lib, "mpigo") != NULL, "library version %s", lib);
	OK(MPI_Get_processor_name(name, &len));
	CHECK(len > 0 && len == (int)strlen(name), "processor name %s", name);
	CHECK(MPI_Wtime() > 0 && MPI_Wtick() > 0, "Wtime");
	printf("hello from rank %d of %d\n", rank, size);
	OK(MPI_Finalize());
	OK(MPI_Finalized(&flag));
	CHECK(flag == 1, "Finalized: %d", flag);
	return 0;
}
