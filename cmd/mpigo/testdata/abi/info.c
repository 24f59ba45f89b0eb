/* info: MPI_Info_get, MPI_Info_get_valuelen, MPI_Info_dup and
 * MPI_Info_delete, which the MPICH test suite's info, attr and comm tests
 * call, with their truncation rules and error classes. */
#include <mpi.h>
#include "check.h"

int main(int argc, char **argv)
{
	MPI_Info info, dup;
	char value[64];
	int flag, len, rc, cls;

	/* MPI_Info_create_env answers the same before MPI_Init as after. */
	MPI_Info before, after;
	char v1[256], v2[256];
	OK(MPI_Info_create_env(argc, argv, &before));
	MPI_Init(&argc, &argv);
	OK(MPI_Info_create_env(argc, argv, &after));
	{
		const char *keys[] = {"command", "argv", "maxprocs", "host", "wdir", "thread_level"};
		int i, f1, f2, n1, n2;
		for (i = 0; i < 6; i++) {
			n1 = n2 = (int)sizeof v1;
			OK(MPI_Info_get_string(before, keys[i], &n1, v1, &f1));
			OK(MPI_Info_get_string(after, keys[i], &n2, v2, &f2));
			CHECK(f1 == f2 && (!f1 || strcmp(v1, v2) == 0), "MPI_Info_create_env's %s: %d \"%s\" before MPI_Init, %d \"%s\" after",
			      keys[i], f1, f1 ? v1 : "", f2, f2 ? v2 : "");
		}
		n1 = (int)sizeof v1;
		OK(MPI_Info_get_string(after, "maxprocs", &n1, v1, &f1));
		CHECK(f1 && strcmp(v1, "1") == 0, "maxprocs of a singleton: %d \"%s\"", f1, f1 ? v1 : "");
	}
	OK(MPI_Info_free(&before));
	OK(MPI_Info_free(&after));
	/* Errors not tied to a communicator go to MPI_COMM_SELF's handler. */
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	OK(MPI_Info_create(&info));
	OK(MPI_Info_set(info, "color", "blue-green"));
	OK(MPI_Info_set(info, "size", "7"));

	/* MPI_Info_get: at most valuelen characters and a NUL. */
	memset(value, 'x', sizeof value);
	OK(MPI_Info_get(info, "color", sizeof value - 1, value, &flag));
	CHECK(flag && strcmp(value, "blue-green") == 0, "flag %d value %s", flag, value);
	memset(value, 'x', sizeof value);
	OK(MPI_Info_get(info, "color", 4, value, &flag));
	CHECK(flag && strcmp(value, "blue") == 0, "truncated: flag %d value %.10s", flag, value);
	flag = 1;
	OK(MPI_Info_get(info, "shape", sizeof value - 1, value, &flag));
	CHECK(!flag, "missing key: flag %d", flag);

	/* MPI_Info_get_valuelen: the length without the NUL. */
	OK(MPI_Info_get_valuelen(info, "color", &len, &flag));
	CHECK(flag && len == 10, "valuelen: flag %d len %d", flag, len);
	OK(MPI_Info_get_valuelen(info, "shape", &len, &flag));
	CHECK(!flag, "valuelen of a missing key: flag %d", flag);

	/* MPI_Info_dup: a copy that does not follow the original. */
	OK(MPI_Info_dup(info, &dup));
	OK(MPI_Info_set(info, "size", "8"));
	OK(MPI_Info_get(dup, "size", sizeof value - 1, value, &flag));
	CHECK(flag && strcmp(value, "7") == 0, "dup: flag %d value %s", flag, value);
	OK(MPI_Info_get_nkeys(dup, &len));
	CHECK(len == 2, "dup has %d keys", len);

	/* MPI_Info_delete, and deleting a key that is not there. */
	OK(MPI_Info_delete(dup, "color"));
	OK(MPI_Info_get(dup, "color", sizeof value - 1, value, &flag));
	CHECK(!flag, "deleted key still there");
	rc = MPI_Info_delete(dup, "color");
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_INFO_NOKEY, "delete of a missing key: class %d", cls);

	/* Bad arguments. */
	rc = MPI_Info_get(info, "color", -1, value, &flag);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_ARG, "negative valuelen: class %d", cls);
	rc = MPI_Info_get(info, "", 10, value, &flag);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_INFO_KEY, "empty key: class %d", cls);
	rc = MPI_Info_get_valuelen(info, NULL, &len, &flag);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_INFO_KEY, "NULL key: class %d", cls);
	rc = MPI_Info_dup(MPI_INFO_NULL, &dup);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_INFO, "dup of MPI_INFO_NULL: class %d", cls);
	rc = MPI_Info_get(MPI_COMM_WORLD == MPI_COMM_SELF ? info : (MPI_Info)MPI_COMM_WORLD, "color", 10, value, &flag);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_INFO, "a communicator as info: class %d", cls);

	OK(MPI_Info_free(&dup));
	OK(MPI_Info_free(&info));
	MPI_Finalize();
	printf("info OK\n");
	return 0;
}
