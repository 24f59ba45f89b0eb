/* sessonly: a program of the Sessions model only, which never calls
 * MPI_Init or MPI_Finalize. It starts and finalizes a session several
 * times, each making a communicator of mpi://WORLD, then returns from
 * main: after the last MPI_Session_finalize that is a normal end, which
 * the launcher must not take for a rank leaving in the middle.
 *
 * With an argument, the last rank leaves while rank 0 still needs it:
 *   live   it returns from main with its session not finalized;
 *   early  it finalizes its session and returns, and rank 0 waits for a
 *          message it never sent.
 * Both must be reported by mpigo run, not pass as success. */
#include <mpi.h>
#include <unistd.h>
#include "check.h"

static MPI_Comm world_of(MPI_Session s, const char *tag)
{
	MPI_Group g;
	MPI_Comm c;
	OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
	OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
	OK(MPI_Group_free(&g));
	return c;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int rank = -1, size = -1;
	for (int round = 0; round < 3; round++) {
		MPI_Session s;
		OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
		MPI_Comm c = world_of(s, "org.mpigo.sessonly");
		OK(MPI_Comm_rank(c, &rank));
		OK(MPI_Comm_size(c, &size));
		int sum = -1, mine = rank + round;
		OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, c));
		CHECK(sum == size * (size - 1) / 2 + size * round, "round %d: sum %d over %d ranks", round, sum, size);
		OK(MPI_Comm_free(&c));
		OK(MPI_Session_finalize(&s));
		CHECK(s == MPI_SESSION_NULL, "finalize did not clear the handle");
	}
	int flag = 1;
	OK(MPI_Initialized(&flag));
	CHECK(!flag, "MPI_Initialized is true in a program that never called MPI_Init");

	if (strcmp(mode, "live") == 0 || strcmp(mode, "early") == 0) {
		CHECK(size >= 2, "mode %s needs 2 ranks or more", mode);
		MPI_Session s;
		OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
		MPI_Comm c = world_of(s, "org.mpigo.sessonly.leave");
		if (rank == size - 1) {
			if (strcmp(mode, "early") == 0) {
				OK(MPI_Comm_free(&c));
				OK(MPI_Session_finalize(&s));
			}
			printf("rank %d leaves\n", rank);
			fflush(stdout);
			return 0;
		}
		int v = -1;
		/* Never sent: the last rank has left (or is leaving). */
		int rc = MPI_Recv(&v, 1, MPI_INT, size - 1, 9, c, MPI_STATUS_IGNORE);
		printf("rank %d: receive from the rank that left returned %d\n", rank, rc);
		fflush(stdout);
		/* Let mpigo run see the rank that left before this one's exit:
		 * the culprit is the one it must name. */
		sleep(3);
		return 1;
	}
	if (rank == 0)
		printf("sessonly OK\n");
	return 0;
}
