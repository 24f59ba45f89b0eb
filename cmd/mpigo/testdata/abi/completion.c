/* completion: MPI_Waitall, Waitany, Waitsome, Testall, Testany, Testsome
 * with MPI_REQUEST_NULL entries, inactive persistent requests,
 * MPI_STATUSES_IGNORE, MPI_ERR_IN_STATUS with each request's MPI_ERROR,
 * and bad arguments. Each rank receives from its left neighbour on a
 * ring (itself alone). */
#include <mpi.h>
#include "check.h"

static void expect(int rc, int class, const char *what)
{
	int c = -1;
	CHECK(rc != MPI_SUCCESS, "%s succeeded", what);
	OK(MPI_Error_class(rc, &c));
	CHECK(c == class, "%s: class %d, want %d", what, c, class);
}

static int classof(int code)
{
	int c = -1;
	OK(MPI_Error_class(code, &c));
	return c;
}

#define N 6

int main(int argc, char **argv)
{
	int rank, size, i, idx, flag, outcount, indices[N];
	MPI_Status sts[N], st;
	MPI_Request rq[N];
	int in[N], out[N];

	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	for (i = 0; i < N; i++)
		out[i] = rank * 100 + i;

	/* Waitall: receives and sends, with MPI_REQUEST_NULL between. */
	for (i = 0; i < N; i += 2) {
		OK(MPI_Irecv(&in[i], 1, MPI_INT, left, i, MPI_COMM_WORLD, &rq[i]));
		rq[i + 1] = MPI_REQUEST_NULL;
	}
	for (i = 0; i < N; i += 2)
		OK(MPI_Send(&out[i], 1, MPI_INT, right, i, MPI_COMM_WORLD));
	for (i = 0; i < N; i++)
		sts[i].MPI_SOURCE = sts[i].MPI_ERROR = 12345;
	OK(MPI_Waitall(N, rq, sts));
	for (i = 0; i < N; i++) {
		CHECK(rq[i] == MPI_REQUEST_NULL, "Waitall left request %d", i);
		if (i % 2 == 0) {
			CHECK(in[i] == left * 100 + i, "Waitall: in[%d] = %d", i, in[i]);
			CHECK(sts[i].MPI_SOURCE == left && sts[i].MPI_TAG == i, "Waitall status %d: %d %d", i, sts[i].MPI_SOURCE, sts[i].MPI_TAG);
		} else {
			CHECK(sts[i].MPI_SOURCE == MPI_ANY_SOURCE && sts[i].MPI_TAG == MPI_ANY_TAG, "null request %d: empty status, got %d", i, sts[i].MPI_SOURCE);
		}
	}
	OK(MPI_Waitall(0, NULL, MPI_STATUSES_IGNORE));

	/* An inactive persistent request in the array: skipped, kept. */
	int pv = -1;
	MPI_Request pr;
	OK(MPI_Recv_init(&pv, 1, MPI_INT, left, 50, MPI_COMM_WORLD, &pr));
	rq[0] = pr;
	OK(MPI_Irecv(&in[1], 1, MPI_INT, left, 51, MPI_COMM_WORLD, &rq[1]));
	OK(MPI_Send(&out[1], 1, MPI_INT, right, 51, MPI_COMM_WORLD));
	OK(MPI_Waitall(2, rq, sts));
	CHECK(rq[0] == pr && rq[1] == MPI_REQUEST_NULL, "Waitall changed the inactive request");
	CHECK(sts[0].MPI_SOURCE == MPI_ANY_SOURCE && in[1] == left * 100 + 1, "inactive: source %d", sts[0].MPI_SOURCE);
	/* Started, it completes in Waitany and stays allocated. */
	OK(MPI_Start(&rq[0]));
	rq[1] = MPI_REQUEST_NULL;
	OK(MPI_Send(&out[2], 1, MPI_INT, right, 50, MPI_COMM_WORLD));
	OK(MPI_Waitany(2, rq, &idx, &st));
	CHECK(idx == 0 && pv == left * 100 + 2 && rq[0] == pr && st.MPI_TAG == 50, "Waitany persistent: idx %d pv %d", idx, pv);
	/* Now every request is inactive or null: MPI_UNDEFINED. */
	OK(MPI_Waitany(2, rq, &idx, &st));
	CHECK(idx == MPI_UNDEFINED && st.MPI_SOURCE == MPI_ANY_SOURCE, "Waitany of none: %d", idx);
	OK(MPI_Testany(2, rq, &idx, &flag, MPI_STATUS_IGNORE));
	CHECK(flag && idx == MPI_UNDEFINED, "Testany of none: %d %d", flag, idx);
	OK(MPI_Waitsome(2, rq, &outcount, indices, MPI_STATUSES_IGNORE));
	CHECK(outcount == MPI_UNDEFINED, "Waitsome of none: %d", outcount);
	OK(MPI_Testsome(2, rq, &outcount, indices, MPI_STATUSES_IGNORE));
	CHECK(outcount == MPI_UNDEFINED, "Testsome of none: %d", outcount);
	OK(MPI_Testall(2, rq, &flag, MPI_STATUSES_IGNORE));
	CHECK(flag, "Testall of none");
	OK(MPI_Request_free(&pr));

	/* Waitany and Waitsome until all have come; the sends come after a
	 * barrier, so the Test forms see nothing first. */
	for (i = 0; i < N; i++)
		OK(MPI_Irecv(&in[i], 1, MPI_INT, left, 10 + i, MPI_COMM_WORLD, &rq[i]));
	OK(MPI_Testall(N, rq, &flag, sts));
	CHECK(!flag, "Testall before any send");
	OK(MPI_Testany(N, rq, &idx, &flag, &st));
	CHECK(!flag && idx == MPI_UNDEFINED, "Testany before any send: %d %d", flag, idx);
	OK(MPI_Testsome(N, rq, &outcount, indices, sts));
	CHECK(outcount == 0, "Testsome before any send: %d", outcount);
	OK(MPI_Barrier(MPI_COMM_WORLD));
	for (i = N - 1; i >= 0; i--)
		OK(MPI_Send(&out[i], 1, MPI_INT, right, 10 + i, MPI_COMM_WORLD));
	int seen[N] = {0}, done = 0;
	while (done < N / 2) {
		OK(MPI_Waitany(N, rq, &idx, &st));
		CHECK(idx >= 0 && idx < N && !seen[idx] && rq[idx] == MPI_REQUEST_NULL, "Waitany idx %d", idx);
		CHECK(st.MPI_TAG == 10 + idx && in[idx] == left * 100 + idx, "Waitany %d: tag %d value %d", idx, st.MPI_TAG, in[idx]);
		seen[idx] = 1;
		done++;
	}
	while (done < N) {
		OK(MPI_Waitsome(N, rq, &outcount, indices, sts));
		CHECK(outcount >= 1, "Waitsome outcount %d", outcount);
		for (i = 0; i < outcount; i++) {
			idx = indices[i];
			CHECK(!seen[idx] && sts[i].MPI_TAG == 10 + idx && in[idx] == left * 100 + idx, "Waitsome %d", idx);
			seen[idx] = 1;
			done++;
		}
	}

	/* Testany, Testsome and Testall loops. */
	for (i = 0; i < N; i++)
		OK(MPI_Irecv(&in[i], 1, MPI_INT, left, 20 + i, MPI_COMM_WORLD, &rq[i]));
	for (i = 0; i < N; i++)
		OK(MPI_Send(&out[i], 1, MPI_INT, right, 20 + i, MPI_COMM_WORLD));
	for (done = 0; done < 2;) {
		OK(MPI_Testany(N, rq, &idx, &flag, &st));
		if (flag) {
			CHECK(idx >= 0 && st.MPI_TAG == 20 + idx && rq[idx] == MPI_REQUEST_NULL, "Testany %d", idx);
			done++;
		}
	}
	for (; done < 4;) {
		OK(MPI_Testsome(N, rq, &outcount, indices, MPI_STATUSES_IGNORE));
		for (i = 0; i < outcount; i++)
			CHECK(rq[indices[i]] == MPI_REQUEST_NULL && in[indices[i]] == left * 100 + indices[i], "Testsome %d", indices[i]);
		done += outcount;
	}
	do {
		OK(MPI_Testall(N, rq, &flag, sts));
	} while (!flag);
	for (i = 0; i < N; i++)
		CHECK(rq[i] == MPI_REQUEST_NULL && in[i] == left * 100 + i, "Testall %d", i);

	/* MPI_ERR_IN_STATUS: one receive is truncated, the others are fine;
	 * each status says which. */
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	int two[2];
	for (int round = 0; round < 3; round++) {
		OK(MPI_Irecv(&in[0], 1, MPI_INT, left, 30, MPI_COMM_WORLD, &rq[0]));
		OK(MPI_Irecv(two, 1, MPI_INT, left, 31, MPI_COMM_WORLD, &rq[1]));
		OK(MPI_Irecv(&in[2], 1, MPI_INT, left, 32, MPI_COMM_WORLD, &rq[2]));
		OK(MPI_Send(&out[0], 1, MPI_INT, right, 30, MPI_COMM_WORLD));
		OK(MPI_Send(out, 2, MPI_INT, right, 31, MPI_COMM_WORLD));
		OK(MPI_Send(&out[2], 1, MPI_INT, right, 32, MPI_COMM_WORLD));
		for (i = 0; i < 3; i++)
			sts[i].MPI_ERROR = -1;
		int rc;
		if (round == 0) {
			rc = MPI_Waitall(3, rq, sts);
		} else if (round == 1) {
			do {
				rc = MPI_Testall(3, rq, &flag, sts);
			} while (rc == MPI_SUCCESS && !flag);
		} else {
			/* Waitsome until the truncated one is among those done. */
			int got = 0;
			rc = MPI_SUCCESS;
			while (got < 3 && rc == MPI_SUCCESS) {
				MPI_Status s3[3];
				rc = MPI_Waitsome(3, rq, &outcount, indices, s3);
				for (i = 0; i < outcount; i++)
					sts[indices[i]] = s3[i];
				got += outcount;
			}
			/* The others may complete later. */
			OK(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
			sts[0].MPI_ERROR = sts[0].MPI_ERROR == -1 ? MPI_SUCCESS : sts[0].MPI_ERROR;
			sts[2].MPI_ERROR = sts[2].MPI_ERROR == -1 ? MPI_SUCCESS : sts[2].MPI_ERROR;
		}
		expect(rc, MPI_ERR_IN_STATUS, "a truncated receive among others");
		CHECK(sts[0].MPI_ERROR == MPI_SUCCESS && sts[2].MPI_ERROR == MPI_SUCCESS, "round %d: good requests' MPI_ERROR %d %d", round, sts[0].MPI_ERROR, sts[2].MPI_ERROR);
		CHECK(classof(sts[1].MPI_ERROR) == MPI_ERR_TRUNCATE, "round %d: truncated request's class %d", round, classof(sts[1].MPI_ERROR));
		CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL && rq[2] == MPI_REQUEST_NULL, "round %d: requests not freed", round);
	}
	/* With MPI_STATUSES_IGNORE the class is still MPI_ERR_IN_STATUS. */
	OK(MPI_Irecv(two, 1, MPI_INT, left, 33, MPI_COMM_WORLD, &rq[0]));
	OK(MPI_Send(out, 2, MPI_INT, right, 33, MPI_COMM_WORLD));
	expect(MPI_Waitall(1, rq, MPI_STATUSES_IGNORE), MPI_ERR_IN_STATUS, "Waitall ignoring statuses");
	/* Waitany returns the request's own error. */
	OK(MPI_Irecv(two, 1, MPI_INT, left, 34, MPI_COMM_WORLD, &rq[0]));
	OK(MPI_Send(out, 2, MPI_INT, right, 34, MPI_COMM_WORLD));
	expect(MPI_Waitany(1, rq, &idx, &st), MPI_ERR_TRUNCATE, "Waitany of a truncated receive");
	CHECK(idx == 0 && rq[0] == MPI_REQUEST_NULL, "Waitany error: idx %d", idx);

	/* A call that completes one operation leaves MPI_ERROR alone (the
	 * return code says it all), for a message and MPI_PROC_NULL alike;
	 * only the calls of many statuses set it. The empty status of a null
	 * request has MPI_ERROR MPI_SUCCESS, as the standard defines it. */
	{
		MPI_Message msg;
		MPI_Request nul = MPI_REQUEST_NULL;
		OK(MPI_Irecv(in, 1, MPI_INT, left, 35, MPI_COMM_WORLD, &rq[0]));
		OK(MPI_Send(out, 1, MPI_INT, right, 35, MPI_COMM_WORLD));
		st.MPI_ERROR = MPI_ERR_DIMS;
		OK(MPI_Wait(&rq[0], &st));
		CHECK(st.MPI_ERROR == MPI_ERR_DIMS && st.MPI_TAG == 35, "Wait set MPI_ERROR to %d", st.MPI_ERROR);
		st.MPI_ERROR = MPI_ERR_DIMS;
		OK(MPI_Wait(&nul, &st));
		CHECK(st.MPI_ERROR == MPI_SUCCESS && st.MPI_SOURCE == MPI_ANY_SOURCE, "Wait(MPI_REQUEST_NULL): MPI_ERROR %d, want MPI_SUCCESS", st.MPI_ERROR);
		st.MPI_ERROR = MPI_ERR_DIMS;
		OK(MPI_Mprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &msg, &st));
		CHECK(st.MPI_ERROR == MPI_ERR_DIMS && st.MPI_SOURCE == MPI_PROC_NULL, "Mprobe(MPI_PROC_NULL) set MPI_ERROR to %d", st.MPI_ERROR);
		st.MPI_ERROR = MPI_ERR_TOPOLOGY;
		OK(MPI_Mrecv(in, 1, MPI_INT, &msg, &st));
		CHECK(st.MPI_ERROR == MPI_ERR_TOPOLOGY, "Mrecv(MPI_MESSAGE_NO_PROC) set MPI_ERROR to %d", st.MPI_ERROR);
		st.MPI_ERROR = MPI_ERR_DIMS;
		OK(MPI_Sendrecv(out, 1, MPI_INT, right, 36, in, 1, MPI_INT, left, 36, MPI_COMM_WORLD, &st));
		CHECK(st.MPI_ERROR == MPI_ERR_DIMS, "Sendrecv set MPI_ERROR to %d", st.MPI_ERROR);
	}

	/* Bad arguments. */
	expect(MPI_Waitall(-1, rq, sts), MPI_ERR_COUNT, "Waitall of a negative count");
	expect(MPI_Waitall(2, NULL, sts), MPI_ERR_ARG, "Waitall of NULL");
	rq[0] = MPI_REQUEST_NULL;
	rq[1] = (MPI_Request)MPI_COMM_WORLD;
	expect(MPI_Waitall(2, rq, sts), MPI_ERR_REQUEST, "Waitall of a communicator");
	expect(MPI_Testany(2, rq, &idx, &flag, &st), MPI_ERR_REQUEST, "Testany of a communicator");
	rq[1] = (MPI_Request)(intptr_t)0x4000123;
	expect(MPI_Waitsome(2, rq, &outcount, indices, sts), MPI_ERR_REQUEST, "Waitsome of garbage");
	expect(MPI_Testsome(2, rq, NULL, indices, sts), MPI_ERR_ARG, "Testsome without outcount");
	expect(MPI_Testall(2, rq, NULL, sts), MPI_ERR_ARG, "Testall without flag");
	expect(MPI_Waitany(2, rq, NULL, &st), MPI_ERR_ARG, "Waitany without index");
	expect(MPI_Startall(1, rq + 1), MPI_ERR_REQUEST, "Startall of garbage");

	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("completion OK\n");
	OK(MPI_Finalize());
	return 0;
}
