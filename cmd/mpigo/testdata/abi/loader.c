/* loader: what mpi4py's loader does: dlopen the library by path, look up
 * MPI_Abi_get_version and call it before anything else. No mpi.h. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: loader LIBRARY\n");
		return 2;
	}
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	int (*get)(int *, int *) = (int (*)(int *, int *))dlsym(h, "MPI_Abi_get_version");
	if (get == NULL) {
		fprintf(stderr, "dlsym: %s\n", dlerror());
		return 1;
	}
	int major = -1, minor = -1, rc = get(&major, &minor);
	printf("rc %d version %d.%d\n", rc, major, minor);
	return 0;
}
