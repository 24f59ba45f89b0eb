/* spawn: MPI_Comm_spawn, MPI_Comm_spawn_multiple, MPI_Comm_get_parent
 * and MPI_Comm_disconnect. The program spawns copies of itself, which
 * find their parent with MPI_Comm_get_parent and act as children.
 *
 *   mpigo run -n 2 ./spawn   spawns 3 + 3 + 1 children; each prints
 *                            "spawn child OK", the parents' rank 0
 *                            "spawn OK"
 *   ./spawn nospawn          a singleton, which cannot spawn programs:
 *                            MPI_ERR_SPAWN at once
 *   mpigo run ./spawn appnum : ./spawn appnum
 *                            prints each rank's MPI_APPNUM */
#include <mpi.h>
#include <limits.h>
#include <unistd.h>
#include "check.h"

static void expect_err(int rc, int want, const char *what)
{
	int cls = -1;
	CHECK(rc != MPI_SUCCESS, "%s succeeded", what);
	MPI_Error_class(rc, &cls);
	CHECK(cls == want, "%s: class %d, want %d", what, cls, want);
}

/* The children's half of talk(): spec is "APPNUM|ARGS|CWD" from the
 * parents' root: the child's MPI_APPNUM, its arguments joined by ',',
 * the folder it should run in ("": not checked). */
static int child(int argc, char **argv, MPI_Comm parent)
{
	int rank, size, psize, flag, v, *attr;
	char spec[1024], args[1024] = "", cwd[PATH_MAX];
	MPI_Comm again, merged;
	MPI_Status st;

	OK(MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN));
	OK(MPI_Comm_get_parent(&again));
	CHECK(again == parent, "a second MPI_Comm_get_parent gave another handle");
	OK(MPI_Comm_test_inter(parent, &flag));
	CHECK(flag, "the parent is not an intercommunicator");
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	OK(MPI_Comm_remote_size(parent, &psize));
	OK(MPI_Comm_size(parent, &v));
	CHECK(v == size, "parent's local size %d, world %d", v, size);

	OK(MPI_Recv(spec, sizeof spec, MPI_CHAR, MPI_ANY_SOURCE, 1, parent, &st));
	int proot = st.MPI_SOURCE;
	char *a = strchr(spec, '|'), *c = a ? strchr(a + 1, '|') : NULL;
	CHECK(a && c, "spec %s", spec);
	*a = *c = 0;
	for (int i = 1; i < argc; i++) {
		if (i > 1)
			strcat(args, ",");
		strcat(args, argv[i]);
	}
	CHECK(strcmp(args, a + 1) == 0, "rank %d: arguments %s, want %s", rank, args, a + 1);
	OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &attr, &flag));
	CHECK(flag && *attr == atoi(spec), "rank %d: MPI_APPNUM %d (set %d), want %s", rank, *attr, flag, spec);
	OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &attr, &flag));
	CHECK(flag && *attr >= size, "MPI_UNIVERSE_SIZE %d (set %d), size %d", *attr, flag, size);
	if (c[1]) {
		CHECK(getcwd(cwd, sizeof cwd) && strcmp(cwd, c + 1) == 0, "rank %d runs in %s, want %s", rank, cwd, c + 1);
	}

	/* Point-to-point with the parents' root. */
	OK(MPI_Recv(&v, 1, MPI_INT, proot, 2, parent, MPI_STATUS_IGNORE));
	CHECK(v == 100 + rank, "rank %d got %d from the parent", rank, v);
	v = 2 * v + rank;
	OK(MPI_Send(&v, 1, MPI_INT, proot, 3, parent));
	/* Collectives across the intercommunicator. */
	OK(MPI_Bcast(&v, 1, MPI_INT, proot, parent));
	CHECK(v == 4242, "bcast from the parents gave %d", v);
	int mine = 1000 * (rank + 1), sum = 0;
	OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, parent));
	CHECK(sum == psize * (psize + 1) / 2, "allreduce over the parents %d", sum);
	/* Merged, the children come after the parents. */
	OK(MPI_Intercomm_merge(parent, 1, &merged));
	OK(MPI_Comm_rank(merged, &v));
	CHECK(v == psize + rank, "merged rank %d, want %d", v, psize + rank);
	OK(MPI_Comm_size(merged, &v));
	CHECK(v == psize + size, "merged size %d", v);
	mine = 1;
	OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, merged));
	CHECK(sum == psize + size, "allreduce over the merged %d", sum);
	OK(MPI_Comm_free(&merged));

	OK(MPI_Comm_disconnect(&parent));
	CHECK(parent == MPI_COMM_NULL, "MPI_Comm_disconnect left the handle");
	OK(MPI_Comm_get_parent(&again));
	CHECK(again == MPI_COMM_NULL, "a parent after its disconnect");
	printf("spawn child OK rank %d app %d\n", rank, atoi(spec));
	OK(MPI_Finalize());
	return 0;
}

/* The parents' half: inter is the intercommunicator of a spawn from
 * root; spec(i) the spec of child i. */
static void talk(MPI_Comm inter, int root, int nkids, const char *(*spec)(int))
{
	int rank, size, flag, v, sum, mine;
	MPI_Comm merged;

	OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	OK(MPI_Comm_test_inter(inter, &flag));
	CHECK(flag, "the spawn's communicator is not an intercommunicator");
	OK(MPI_Comm_remote_size(inter, &v));
	CHECK(v == nkids, "remote size %d, want %d", v, nkids);
	OK(MPI_Comm_size(inter, &v));
	CHECK(v == size, "local size %d, want %d", v, size);
	OK(MPI_Comm_rank(inter, &v));
	CHECK(v == rank, "local rank %d, want %d", v, rank);
	if (rank == root) {
		for (int i = 0; i < nkids; i++) {
			const char *s = spec(i);
			OK(MPI_Send(s, (int)strlen(s) + 1, MPI_CHAR, i, 1, inter));
			v = 100 + i;
			OK(MPI_Send(&v, 1, MPI_INT, i, 2, inter));
		}
		for (int i = 0; i < nkids; i++) {
			OK(MPI_Recv(&v, 1, MPI_INT, i, 3, inter, MPI_STATUS_IGNORE));
			CHECK(v == 2 * (100 + i) + i, "child %d answered %d", i, v);
		}
		v = 4242;
		OK(MPI_Bcast(&v, 1, MPI_INT, MPI_ROOT, inter));
	} else {
		OK(MPI_Bcast(&v, 1, MPI_INT, MPI_PROC_NULL, inter));
	}
	mine = rank + 1;
	OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter));
	CHECK(sum == 1000 * nkids * (nkids + 1) / 2, "allreduce over the children %d", sum);
	OK(MPI_Intercomm_merge(inter, 0, &merged));
	OK(MPI_Comm_rank(merged, &v));
	CHECK(v == rank, "merged rank %d, want %d", v, rank);
	mine = 1;
	OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, merged));
	CHECK(sum == size + nkids, "allreduce over the merged %d", sum);
	OK(MPI_Comm_free(&merged));
	OK(MPI_Comm_disconnect(&inter));
	CHECK(inter == MPI_COMM_NULL, "MPI_Comm_disconnect left the handle");
}

static char cwd[PATH_MAX];
static char spec1[64], specm0[64], specm1[PATH_MAX + 64], spec3[PATH_MAX + 64];
static const char *first(int i) { return spec1; }
static const char *multi(int i) { return i == 0 ? specm0 : specm1; }
static const char *plain(int i) { return spec3; }

int main(int argc, char **argv)
{
	int rank, size, flag, *attr, rc, cls, codes[4];
	MPI_Comm parent, inter = MPI_COMM_NULL, c;
	char self[PATH_MAX];

	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	OK(MPI_Comm_get_parent(&parent));
	if (parent != MPI_COMM_NULL)
		return child(argc, argv, parent);
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &attr, &flag));
	CHECK(flag && *attr >= size, "MPI_UNIVERSE_SIZE %d (set %d)", *attr, flag);
	OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &attr, &flag));
	if (argc > 1 && strcmp(argv[1], "appnum") == 0) {
		/* mpigo run A : B: the index of the rank's program. */
		CHECK(flag, "MPI_APPNUM not set");
		printf("rank %d appnum %d\n", rank, *attr);
		OK(MPI_Finalize());
		return 0;
	}
	CHECK(flag && *attr == 0, "MPI_APPNUM %d (set %d)", *attr, flag);
	CHECK(realpath(argv[0], self) != NULL, "realpath %s", argv[0]);
	CHECK(getcwd(cwd, sizeof cwd) != NULL, "getcwd");

	/* Bad arguments: the standard's classes, never a crash or a hang. */
	expect_err(MPI_Comm_get_parent(NULL), MPI_ERR_ARG, "get_parent(NULL)");
	expect_err(MPI_Comm_spawn(self, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_NULL, &c, codes), MPI_ERR_COMM, "spawn on MPI_COMM_NULL");
	expect_err(MPI_Comm_spawn(self, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, NULL, codes), MPI_ERR_ARG, "spawn to NULL");
	expect_err(MPI_Comm_spawn(self, MPI_ARGV_NULL, 1, MPI_INFO_NULL, size, MPI_COMM_WORLD, &c, codes), MPI_ERR_ROOT, "spawn from root size");
	expect_err(MPI_Comm_spawn(self, MPI_ARGV_NULL, 1, MPI_INFO_NULL, -1, MPI_COMM_WORLD, &c, codes), MPI_ERR_ROOT, "spawn from root -1");
	/* A fault of a root-only argument: the root says which, the others
	 * learn that the spawn failed. */
	rc = MPI_Comm_spawn(self, MPI_ARGV_NULL, -1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &c, codes);
	expect_err(rc, rank == 0 ? MPI_ERR_ARG : MPI_ERR_SPAWN, "spawn of -1 processes");
	rc = MPI_Comm_spawn(NULL, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &c, codes);
	expect_err(rc, rank == 0 ? MPI_ERR_ARG : MPI_ERR_SPAWN, "spawn of a NULL command");
	MPI_Info gone;
	OK(MPI_Info_create(&gone));
	MPI_Info stale = gone;
	OK(MPI_Info_free(&gone));
	rc = MPI_Comm_spawn(self, MPI_ARGV_NULL, 1, stale, 0, MPI_COMM_WORLD, &c, codes);
	expect_err(rc, rank == 0 ? MPI_ERR_INFO : MPI_ERR_SPAWN, "spawn with a freed info");
	rc = MPI_Comm_spawn_multiple(0, NULL, MPI_ARGVS_NULL, NULL, NULL, 0, MPI_COMM_WORLD, &c, codes);
	expect_err(rc, rank == 0 ? MPI_ERR_ARG : MPI_ERR_SPAWN, "spawn_multiple of 0 commands");
	/* Only the root's arguments count: the others' are garbage. */
	codes[0] = codes[1] = -1;
	rc = MPI_Comm_spawn(rank == 0 ? "/no/such/program" : NULL, MPI_ARGV_NULL, rank == 0 ? 2 : -7, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &c, codes);
	expect_err(rc, MPI_ERR_SPAWN, "spawn of a missing program");
	if (rank == 0) {
		for (int i = 0; i < 2; i++) {
			MPI_Error_class(codes[i], &cls);
			CHECK(cls == MPI_ERR_SPAWN, "errcodes[%d] of class %d", i, cls);
		}
	}
	expect_err(MPI_Comm_disconnect(NULL), MPI_ERR_ARG, "disconnect(NULL)");
	c = MPI_COMM_WORLD;
	expect_err(MPI_Comm_disconnect(&c), MPI_ERR_COMM, "disconnect of MPI_COMM_WORLD");
	c = MPI_COMM_NULL;
	expect_err(MPI_Comm_disconnect(&c), MPI_ERR_COMM, "disconnect of MPI_COMM_NULL");

	if (argc > 1 && strcmp(argv[1], "nospawn") == 0) {
		/* No launcher to start processes: MPI_ERR_SPAWN, promptly. */
		double t = MPI_Wtime();
		rc = MPI_Comm_spawn(self, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &c, MPI_ERRCODES_IGNORE);
		expect_err(rc, MPI_ERR_SPAWN, "spawn without a launcher");
		CHECK(MPI_Wtime() - t < 5, "the refusal took %.1f s", MPI_Wtime() - t);
		OK(MPI_Finalize());
		if (rank == 0)
			printf("spawn OK (cannot spawn)\n");
		return 0;
	}

	/* 1. Three children with arguments; every code MPI_SUCCESS. */
	char *cargv[] = {"one", "two words", NULL};
	snprintf(spec1, sizeof spec1, "0|one,two words|");
	for (int i = 0; i < 4; i++)
		codes[i] = -1;
	OK(MPI_Comm_spawn(self, cargv, 3, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes));
	for (int i = 0; i < 3; i++)
		CHECK(codes[i] == MPI_SUCCESS, "errcodes[%d] = %d", i, codes[i]);
	CHECK(codes[3] == -1, "errcodes written past maxprocs");
	talk(inter, 0, 3, first);

	/* 2. Two commands in one job: the first by its path, run in "/"
	 * (info wdir); the second by its name, found in the info key path.
	 * MPI_APPNUM tells the children apart. */
	char dir[PATH_MAX], *base;
	strcpy(dir, self);
	base = strrchr(dir, '/');
	*base++ = 0;
	char *cmds[] = {self, base};
	char *av0[] = {"multi", "a", NULL}, *av1[] = {"multi", "b", NULL};
	char **avs[] = {av0, av1};
	int np[] = {1, 2};
	MPI_Info infos[2];
	OK(MPI_Info_create(&infos[0]));
	OK(MPI_Info_set(infos[0], "wdir", "/"));
	OK(MPI_Info_set(infos[0], "soft", "1"));
	OK(MPI_Info_create(&infos[1]));
	OK(MPI_Info_set(infos[1], "path", dir));
	snprintf(specm0, sizeof specm0, "0|multi,a|/");
	snprintf(specm1, sizeof specm1, "1|multi,b|%s", cwd); /* wdir is command 0's alone */
	OK(MPI_Comm_spawn_multiple(2, cmds, avs, np, infos, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE));
	OK(MPI_Info_free(&infos[0]));
	OK(MPI_Info_free(&infos[1]));
	talk(inter, 0, 3, multi);

	/* 3. One child without arguments, from the last rank. */
	snprintf(spec3, sizeof spec3, "0||%s", cwd);
	OK(MPI_Comm_spawn(rank == size - 1 ? self : NULL, MPI_ARGV_NULL, rank == size - 1 ? 1 : 0, MPI_INFO_NULL, size - 1, MPI_COMM_WORLD, &inter, codes));
	CHECK(codes[0] == MPI_SUCCESS, "errcodes[0] = %d", codes[0]);
	talk(inter, size - 1, 1, plain);

	OK(MPI_Comm_get_parent(&parent));
	CHECK(parent == MPI_COMM_NULL, "the parents have a parent");
	OK(MPI_Finalize());
	if (rank == 0)
		printf("spawn OK\n");
	return 0;
}
