/* p2pmodes: the send modes (synchronous, ready, buffered with an attached
 * buffer), their non-blocking and persistent forms, Sendrecv_replace,
 * the probes and matched receives, cancel, the status queries, the
 * large-count forms, and bad arguments. Runs on any number of ranks: each
 * rank talks to its right and left neighbours on a ring (itself alone). */
#include <mpi.h>
#include "check.h"

static void expect(int rc, int class, const char *what)
{
	int c = -1;
	CHECK(rc != MPI_SUCCESS, "%s succeeded", what);
	OK(MPI_Error_class(rc, &c));
	CHECK(c == class, "%s: class %d, want %d", what, c, class);
}

int main(int argc, char **argv)
{
	int rank, size, i, count, flag;
	MPI_Status st;
	MPI_Request rq[4];

	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	int right = (rank + 1) % size, left = (rank + size - 1) % size;

	/* Synchronous send: the receive is posted first (a ring of one sends
	 * to itself). */
	int in[4], out[4] = {rank, rank + 1, rank + 2, rank + 3};
	OK(MPI_Irecv(in, 4, MPI_INT, left, 1, MPI_COMM_WORLD, &rq[0]));
	OK(MPI_Ssend(out, 4, MPI_INT, right, 1, MPI_COMM_WORLD));
	OK(MPI_Wait(&rq[0], &st));
	CHECK(in[0] == left && in[3] == left + 3 && st.MPI_SOURCE == left && st.MPI_TAG == 1, "Ssend got %d %d from %d", in[0], in[3], st.MPI_SOURCE);

	/* Ready send: the receive is known to be posted (a barrier after it). */
	OK(MPI_Irecv(in, 4, MPI_INT, left, 2, MPI_COMM_WORLD, &rq[0]));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	OK(MPI_Rsend(out, 4, MPI_INT, right, 2, MPI_COMM_WORLD));
	OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
	CHECK(in[1] == left + 1, "Rsend got %d", in[1]);

	/* Buffered sends need an attached buffer; detach returns it. */
	int bsize = 4 * (16 * sizeof(int) + MPI_BSEND_OVERHEAD);
	char *buf = malloc(bsize);
	OK(MPI_Buffer_attach(buf, bsize));
	OK(MPI_Bsend(out, 4, MPI_INT, right, 3, MPI_COMM_WORLD));
	OK(MPI_Ibsend(out, 4, MPI_INT, right, 4, MPI_COMM_WORLD, &rq[1]));
	OK(MPI_Recv(in, 4, MPI_INT, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	CHECK(in[2] == left + 2, "Bsend got %d", in[2]);
	OK(MPI_Recv(in, 4, MPI_INT, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
	CHECK(rq[1] == MPI_REQUEST_NULL, "Wait left the request");
	void *back = NULL;
	int backsize = 0;
	OK(MPI_Buffer_detach(&back, &backsize));
	CHECK(back == buf && backsize == bsize, "Buffer_detach gave %p %d, want %p %d", back, backsize, (void *)buf, bsize);

	/* Non-blocking synchronous and ready sends. */
	OK(MPI_Irecv(in, 4, MPI_INT, left, 5, MPI_COMM_WORLD, &rq[0]));
	OK(MPI_Issend(out, 4, MPI_INT, right, 5, MPI_COMM_WORLD, &rq[1]));
	OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
	OK(MPI_Irecv(in, 4, MPI_INT, left, 6, MPI_COMM_WORLD, &rq[0]));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	OK(MPI_Irsend(out, 4, MPI_INT, right, 6, MPI_COMM_WORLD, &rq[1]));
	OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
	CHECK(in[3] == left + 3, "Irsend got %d", in[3]);

	/* Persistent requests: started many times; inactive between. */
	int pv = 0, pr = -1;
	MPI_Request ps[2];
	OK(MPI_Recv_init(&pr, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &ps[0]));
	OK(MPI_Send_init(&pv, 1, MPI_INT, right, 7, MPI_COMM_WORLD, &ps[1]));
	for (i = 0; i < 5; i++) {
		pv = 100 * rank + i;
		OK(MPI_Startall(2, ps));
		OK(MPI_Waitall(2, ps, MPI_STATUSES_IGNORE));
		CHECK(ps[0] != MPI_REQUEST_NULL && ps[1] != MPI_REQUEST_NULL, "persistent handles freed by Waitall");
		CHECK(pr == 100 * left + i, "persistent round %d got %d", i, pr);
	}
	/* Waiting on an inactive persistent request returns the empty status. */
	st.MPI_SOURCE = 12345;
	OK(MPI_Wait(&ps[0], &st));
	CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG && ps[0] != MPI_REQUEST_NULL, "inactive Wait: source %d", st.MPI_SOURCE);
	OK(MPI_Request_get_status(ps[0], &flag, MPI_STATUS_IGNORE));
	CHECK(flag, "get_status of an inactive request");
	pv = 7;
	OK(MPI_Start(&ps[0]));
	OK(MPI_Start(&ps[1]));
	OK(MPI_Wait(&ps[1], MPI_STATUS_IGNORE));
	OK(MPI_Wait(&ps[0], MPI_STATUS_IGNORE));
	CHECK(pr == 7, "Start got %d", pr);
	OK(MPI_Request_free(&ps[0]));
	OK(MPI_Request_free(&ps[1]));
	CHECK(ps[0] == MPI_REQUEST_NULL, "Request_free");

	/* Persistent synchronous, ready and buffered sends. */
	OK(MPI_Buffer_attach(buf, bsize));
	MPI_Request pm[3];
	OK(MPI_Ssend_init(&pv, 1, MPI_INT, right, 8, MPI_COMM_WORLD, &pm[0]));
	OK(MPI_Bsend_init(&pv, 1, MPI_INT, right, 9, MPI_COMM_WORLD, &pm[1]));
	OK(MPI_Rsend_init(&pv, 1, MPI_INT, right, 10, MPI_COMM_WORLD, &pm[2]));
	int r3[3];
	OK(MPI_Irecv(&r3[0], 1, MPI_INT, left, 8, MPI_COMM_WORLD, &rq[0]));
	OK(MPI_Irecv(&r3[1], 1, MPI_INT, left, 9, MPI_COMM_WORLD, &rq[1]));
	OK(MPI_Irecv(&r3[2], 1, MPI_INT, left, 10, MPI_COMM_WORLD, &rq[2]));
	OK(MPI_Barrier(MPI_COMM_WORLD));
	pv = rank + 50;
	OK(MPI_Startall(3, pm));
	OK(MPI_Waitall(3, pm, MPI_STATUSES_IGNORE));
	OK(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
	CHECK(r3[0] == left + 50 && r3[1] == left + 50 && r3[2] == left + 50, "persistent modes got %d %d %d", r3[0], r3[1], r3[2]);
	for (i = 0; i < 3; i++)
		OK(MPI_Request_free(&pm[i]));
	OK(MPI_Buffer_detach(&back, &backsize));
	free(buf);

	/* MPI-4.1's automatic buffers: Bsends with no buffer of the program's,
	 * on the process and on a communicator; detach hands back
	 * MPI_BUFFER_AUTOMATIC with size 0. */
	{
		enum { N = 8, LEN = 20000 };
		static int big[N][LEN], got[LEN];
		MPI_Comm dup;
		OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
		OK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
		OK(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
		OK(MPI_Comm_attach_buffer(dup, MPI_BUFFER_AUTOMATIC, 0));
		expect(MPI_Comm_attach_buffer(dup, MPI_BUFFER_AUTOMATIC, 0), MPI_ERR_BUFFER, "a second automatic buffer");
		for (int c = 0; c < 2; c++) {
			MPI_Comm comm = c ? dup : MPI_COMM_WORLD;
			for (i = 0; i < N; i++) {
				big[i][0] = i, big[i][LEN - 1] = rank;
				OK(MPI_Bsend(big[i], LEN, MPI_INT, right, 100 + i, comm));
			}
			for (i = 0; i < N; i++) {
				OK(MPI_Recv(got, LEN, MPI_INT, left, 100 + i, comm, MPI_STATUS_IGNORE));
				CHECK(got[0] == i && got[LEN - 1] == left, "automatic Bsend %d got %d %d", i, got[0], got[LEN - 1]);
			}
		}
		void *a = NULL;
		MPI_Count asize = -1;
		OK(MPI_Comm_detach_buffer_c(dup, &a, &asize));
		CHECK(a == MPI_BUFFER_AUTOMATIC && asize == 0, "Comm_detach_buffer_c gave %p, %ld", a, (long)asize);
		a = NULL;
		OK(MPI_Buffer_detach(&a, &backsize));
		CHECK(a == MPI_BUFFER_AUTOMATIC && backsize == 0, "Buffer_detach gave %p, %d", a, backsize);
		OK(MPI_Comm_free(&dup));
	}

	/* Sendrecv_replace around the ring. */
	int rep[2] = {rank, -rank};
	OK(MPI_Sendrecv_replace(rep, 2, MPI_INT, right, 11, left, 11, MPI_COMM_WORLD, &st));
	CHECK(rep[0] == left && rep[1] == -left && st.MPI_SOURCE == left, "Sendrecv_replace got %d %d", rep[0], rep[1]);

	/* Large-count forms. */
	double dv[3] = {rank + 0.5, 1, 2}, dr[3];
	MPI_Count cc = -1;
	OK(MPI_Irecv_c(dr, 3, MPI_DOUBLE, left, 12, MPI_COMM_WORLD, &rq[0]));
	OK(MPI_Send_c(dv, 3, MPI_DOUBLE, right, 12, MPI_COMM_WORLD));
	OK(MPI_Wait(&rq[0], &st));
	OK(MPI_Get_count_c(&st, MPI_DOUBLE, &cc));
	CHECK(cc == 3 && dr[0] == left + 0.5, "Send_c: count %lld value %g", (long long)cc, dr[0]);
	OK(MPI_Isend_c(dv, 2, MPI_DOUBLE, right, 13, MPI_COMM_WORLD, &rq[0]));
	OK(MPI_Recv_c(dr, 3, MPI_DOUBLE, left, 13, MPI_COMM_WORLD, &st));
	OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
	OK(MPI_Get_count(&st, MPI_DOUBLE, &count));
	CHECK(count == 2, "Recv_c count %d", count);
	OK(MPI_Sendrecv_c(dv, 1, MPI_DOUBLE, right, 14, dr, 1, MPI_DOUBLE, left, 14, MPI_COMM_WORLD, &st));
	CHECK(dr[0] == left + 0.5, "Sendrecv_c %g", dr[0]);

	/* Get_count and Get_elements on a derived type: 5 ints received as a
	 * vector of 2 blocks of 2 is 1 whole element and 5 basic elements. */
	MPI_Datatype vec;
	OK(MPI_Type_vector(2, 2, 3, MPI_INT, &vec));
	OK(MPI_Type_commit(&vec));
	int five[5] = {1, 2, 3, 4, 5}, big[12];
	OK(MPI_Sendrecv(five, 5, MPI_INT, right, 15, big, 2, vec, left, 15, MPI_COMM_WORLD, &st));
	OK(MPI_Get_count(&st, vec, &count));
	CHECK(count == MPI_UNDEFINED, "Get_count of a partial vector %d", count);
	OK(MPI_Get_elements(&st, vec, &count));
	CHECK(count == 5, "Get_elements %d", count);
	OK(MPI_Get_elements_x(&st, vec, &cc));
	CHECK(cc == 5, "Get_elements_x %lld", (long long)cc);
	OK(MPI_Get_elements_c(&st, MPI_INT, &cc));
	CHECK(cc == 5, "Get_elements_c %lld", (long long)cc);
	CHECK(big[0] == 1 && big[1] == 2 && big[3] == 3 && big[4] == 4 && big[5] == 5, "vector layout %d %d %d", big[3], big[4], big[5]);
	OK(MPI_Type_free(&vec));

	/* Probes: Iprobe until the message is there, Mprobe/Mrecv, Improbe/Imrecv. */
	int pm1 = rank * 3;
	OK(MPI_Send(&pm1, 1, MPI_INT, right, 20, MPI_COMM_WORLD));
	do {
		OK(MPI_Iprobe(left, 20, MPI_COMM_WORLD, &flag, &st));
	} while (!flag);
	CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 20, "Iprobe %d %d", st.MPI_SOURCE, st.MPI_TAG);
	MPI_Message msg;
	OK(MPI_Mprobe(left, 20, MPI_COMM_WORLD, &msg, &st));
	CHECK(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC, "Mprobe message");
	OK(MPI_Get_count(&st, MPI_INT, &count));
	CHECK(count == 1, "Mprobe count %d", count);
	int got = -1;
	OK(MPI_Mrecv(&got, 1, MPI_INT, &msg, &st));
	CHECK(got == left * 3 && msg == MPI_MESSAGE_NULL, "Mrecv %d", got);
	OK(MPI_Send(&pm1, 1, MPI_INT, right, 21, MPI_COMM_WORLD));
	do {
		OK(MPI_Improbe(left, 21, MPI_COMM_WORLD, &flag, &msg, &st));
	} while (!flag);
	OK(MPI_Imrecv(&got, 1, MPI_INT, &msg, &rq[0]));
	OK(MPI_Wait(&rq[0], &st));
	CHECK(got == left * 3 && st.MPI_TAG == 21, "Imrecv %d", got);
	/* From MPI_PROC_NULL: MPI_MESSAGE_NO_PROC, a receive of nothing. */
	OK(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st));
	CHECK(msg == MPI_MESSAGE_NO_PROC, "Mprobe from PROC_NULL");
	OK(MPI_Mrecv(&got, 1, MPI_INT, &msg, &st));
	CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "Mrecv NO_PROC source %d", st.MPI_SOURCE);

	/* Cancel a receive nobody sends to. */
	OK(MPI_Irecv(&got, 1, MPI_INT, left, 99, MPI_COMM_WORLD, &rq[0]));
	OK(MPI_Request_get_status(rq[0], &flag, &st));
	CHECK(!flag, "get_status of a pending receive");
	OK(MPI_Cancel(&rq[0]));
	OK(MPI_Wait(&rq[0], &st));
	OK(MPI_Test_cancelled(&st, &flag));
	CHECK(flag, "receive not cancelled");
	/* A completed send is not cancelled. */
	OK(MPI_Isend(&pm1, 1, MPI_INT, right, 22, MPI_COMM_WORLD, &rq[0]));
	OK(MPI_Recv(&got, 1, MPI_INT, left, 22, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	OK(MPI_Wait(&rq[0], &st));
	OK(MPI_Test_cancelled(&st, &flag));
	CHECK(!flag, "completed send reported cancelled");

	/* Bad arguments, under MPI_ERRORS_RETURN. */
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	expect(MPI_Ssend(NULL, 3, MPI_INT, right, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER, "Ssend of NULL");
	expect(MPI_Rsend(out, -2, MPI_INT, right, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "Rsend of a negative count");
	expect(MPI_Isend_c(out, -1, MPI_INT, right, 0, MPI_COMM_WORLD, &rq[0]), MPI_ERR_COUNT, "Isend_c of a negative count");
	expect(MPI_Send_init(out, 1, MPI_INT, right, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG, "Send_init without a request");
	expect(MPI_Bsend(out, 1, MPI_INT, right, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER, "Bsend without a buffer");
	expect(MPI_Buffer_attach(NULL, 100), MPI_ERR_BUFFER, "Buffer_attach of NULL");
	expect(MPI_Buffer_attach(out, -1), MPI_ERR_COUNT, "Buffer_attach of a negative size");
	expect(MPI_Iprobe(left, 0, MPI_COMM_WORLD, NULL, &st), MPI_ERR_ARG, "Iprobe without flag");
	rq[0] = MPI_REQUEST_NULL;
	expect(MPI_Start(&rq[0]), MPI_ERR_REQUEST, "Start of MPI_REQUEST_NULL");
	expect(MPI_Cancel(&rq[0]), MPI_ERR_REQUEST, "Cancel of MPI_REQUEST_NULL");
	expect(MPI_Request_free(&rq[0]), MPI_ERR_REQUEST, "Request_free of MPI_REQUEST_NULL");
	rq[0] = (MPI_Request)MPI_COMM_WORLD;
	expect(MPI_Wait(&rq[0], &st), MPI_ERR_REQUEST, "Wait on a communicator");
	OK(MPI_Isend(&pm1, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rq[0]));
	expect(MPI_Start(&rq[0]), MPI_ERR_REQUEST, "Start of a non-persistent request");
	OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
	msg = MPI_MESSAGE_NULL;
	expect(MPI_Mrecv(&got, 1, MPI_INT, &msg, &st), MPI_ERR_REQUEST, "Mrecv of MPI_MESSAGE_NULL");
	msg = (MPI_Message)MPI_INT;
	expect(MPI_Mrecv(&got, 1, MPI_INT, &msg, &st), MPI_ERR_REQUEST, "Mrecv of a datatype");
	expect(MPI_Get_count(&st, (MPI_Datatype)MPI_COMM_WORLD, &count), MPI_ERR_TYPE, "Get_count of a communicator");
	expect(MPI_Get_elements(NULL, MPI_INT, &count), MPI_ERR_ARG, "Get_elements of NULL");
	expect(MPI_Test_cancelled(NULL, &flag), MPI_ERR_ARG, "Test_cancelled of NULL");

	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("p2pmodes OK\n");
	OK(MPI_Finalize());
	return 0;
}
