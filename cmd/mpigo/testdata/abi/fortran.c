/* fortran: the default-kind Fortran datatypes exist once a Fortran
 * binding gives their sizes with MPI_Abi_set_fortran_info (here as
 * gfortran's defaults with -fdefault-integer-8: an 8-byte INTEGER), with
 * reductions on them, MINLOC and MAXLOC on their pairs, and MPI_ERR_TYPE
 * with a reason before. */
#include <mpi.h>
#include <stdint.h>
#include "check.h"

static int classof(int rc)
{
	int c = -1;
	OK(MPI_Error_class(rc, &c));
	return c;
}

int main(int argc, char **argv)
{
	int rank, size, n;
	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

	/* Before: no size, so no type. */
	CHECK(classof(MPI_Type_size(MPI_INTEGER, &n)) == MPI_ERR_TYPE, "MPI_INTEGER before its size was set");
	int64_t i8 = rank;
	CHECK(classof(MPI_Bcast(&i8, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)) == MPI_ERR_TYPE, "Bcast of MPI_INTEGER before its size was set");

	/* A size mpigo cannot give is MPI_ERR_ABI, and sets nothing. */
	MPI_Info fi;
	OK(MPI_Info_create(&fi));
	OK(MPI_Info_set(fi, "mpi_integer_size", "8"));
	OK(MPI_Info_set(fi, "mpi_real_size", "4"));
	OK(MPI_Info_set(fi, "mpi_double_precision_size", "16"));
	OK(MPI_Info_set(fi, "mpi_logical_size", "4"));
	CHECK(classof(MPI_Abi_set_fortran_info(fi)) == MPI_ERR_ABI, "a 16-byte DOUBLE PRECISION");
	OK(MPI_Info_set(fi, "mpi_double_precision_size", "8"));
	OK(MPI_Abi_set_fortran_info(fi));
	OK(MPI_Info_free(&fi));

	struct {
		MPI_Datatype t;
		int size;
		const char *name;
	} want[] = {
		{MPI_INTEGER, 8, "MPI_INTEGER"}, {MPI_REAL, 4, "MPI_REAL"},
		{MPI_DOUBLE_PRECISION, 8, "MPI_DOUBLE_PRECISION"}, {MPI_LOGICAL, 4, "MPI_LOGICAL"},
		{MPI_COMPLEX, 8, "MPI_COMPLEX"}, {MPI_DOUBLE_COMPLEX, 16, "MPI_DOUBLE_COMPLEX"},
		{MPI_CHARACTER, 1, "MPI_CHARACTER"}, {MPI_2INTEGER, 16, "MPI_2INTEGER"},
		{MPI_2REAL, 8, "MPI_2REAL"}, {MPI_2DOUBLE_PRECISION, 16, "MPI_2DOUBLE_PRECISION"},
	};
	for (unsigned k = 0; k < sizeof want / sizeof want[0]; k++) {
		char name[MPI_MAX_OBJECT_NAME];
		int len, ni, na, nd, comb;
		OK(MPI_Type_size(want[k].t, &n));
		CHECK(n == want[k].size, "%s: size %d, want %d", want[k].name, n, want[k].size);
		OK(MPI_Type_get_name(want[k].t, name, &len));
		CHECK(strcmp(name, want[k].name) == 0, "name %s, want %s", name, want[k].name);
		OK(MPI_Type_get_envelope(want[k].t, &ni, &na, &nd, &comb));
		CHECK(comb == MPI_COMBINER_NAMED, "%s: combiner %d", want[k].name, comb);
	}

	/* Reductions on them. */
	int64_t isum = 0;
	OK(MPI_Allreduce(&i8, &isum, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD));
	CHECK(isum == (int64_t)size * (size - 1) / 2, "INTEGER sum %lld", (long long)isum);
	double d = rank + 0.5, dmax = 0;
	OK(MPI_Allreduce(&d, &dmax, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD));
	CHECK(dmax == size - 0.5, "DOUBLE PRECISION max %g", dmax);

	/* MINLOC and MAXLOC on the pairs: value and location of one kind. */
	float r2[2] = {(float)((rank * 7) % size), (float)rank}, r2out[2];
	OK(MPI_Allreduce(r2, r2out, 1, MPI_2REAL, MPI_MINLOC, MPI_COMM_WORLD));
	CHECK(r2out[0] == 0 && r2out[1] == 0, "2REAL minloc %g at %g", r2out[0], r2out[1]);
	double d2[2] = {rank == size - 1 ? -1.0 : (double)rank, (double)rank}, d2out[2];
	OK(MPI_Allreduce(d2, d2out, 1, MPI_2DOUBLE_PRECISION, MPI_MINLOC, MPI_COMM_WORLD));
	CHECK(d2out[0] == -1.0 && d2out[1] == size - 1, "2DOUBLE_PRECISION minloc %g at %g", d2out[0], d2out[1]);
	int64_t i2[2] = {5, (int64_t)rank}, i2out[2];
	OK(MPI_Allreduce(i2, i2out, 1, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD));
	CHECK(i2out[0] == 5 && i2out[1] == 0, "2INTEGER maxloc on ties: %lld at %lld", (long long)i2out[0], (long long)i2out[1]);
	i2[0] = (int64_t)rank << 40;
	OK(MPI_Allreduce(i2, i2out, 1, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD));
	CHECK(i2out[0] == (int64_t)(size - 1) << 40 && i2out[1] == size - 1, "2INTEGER maxloc %lld at %lld", (long long)i2out[0], (long long)i2out[1]);
	CHECK(classof(MPI_Allreduce(r2, r2out, 1, MPI_2REAL, MPI_SUM, MPI_COMM_WORLD)) == MPI_ERR_OP, "MPI_SUM on MPI_2REAL");
	OK(MPI_Reduce_local(r2, r2out, 1, MPI_2REAL, MPI_MAXLOC));

	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("fortran OK\n");
	OK(MPI_Finalize());
	return 0;
}
