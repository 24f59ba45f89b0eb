#include <mpi.h>
int lib_check(MPI_Comm comm, int gorank, int gosize);
int lib_send(MPI_Comm comm, int dest, int value);
int lib_split(MPI_Comm comm, MPI_Comm *out);
int lib_finalize_refused(void);
int lib_finalized(void);
int lib_init(void);
int lib_finalize(void);
int lib_world(void);
