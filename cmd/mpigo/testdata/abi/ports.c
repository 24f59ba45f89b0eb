/* ports: MPI_Open_port, MPI_Close_port, MPI_Comm_accept,
 * MPI_Comm_connect, the name service (MPI_Publish_name, MPI_Lookup_name,
 * MPI_Unpublish_name), MPI_Comm_join and MPI_Comm_disconnect. A job of
 * 2 or more ranks splits into a server half and a client half, which
 * join through a published port, then through a port sent as a message;
 * ranks 0 and 1 then join over a tcp socket. A singleton checks the
 * local calls. */
#include <mpi.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include "check.h"

static void expect_err(int rc, int want, const char *what)
{
	int cls = -1;
	CHECK(rc != MPI_SUCCESS, "%s succeeded", what);
	MPI_Error_class(rc, &cls);
	CHECK(cls == want, "%s: class %d, want %d", what, cls, want);
}

/* check checks an intercommunicator between halves of nlocal and
 * nremote ranks (this one rank hrank of its half, low: the first half
 * of a merge), with traffic, and disconnects it. */
static void check(MPI_Comm inter, int hrank, int nlocal, int nremote, int low)
{
	int v, flag, sum, mine;
	MPI_Comm merged;

	OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
	OK(MPI_Comm_test_inter(inter, &flag));
	CHECK(flag, "not an intercommunicator");
	OK(MPI_Comm_remote_size(inter, &v));
	CHECK(v == nremote, "remote size %d, want %d", v, nremote);
	OK(MPI_Comm_size(inter, &v));
	CHECK(v == nlocal, "local size %d, want %d", v, nlocal);
	OK(MPI_Comm_rank(inter, &v));
	CHECK(v == hrank, "rank %d, want %d", v, hrank);
	/* Rank i of each half swaps with rank i of the other, if any. */
	if (hrank < nremote) {
		mine = 1000 * low + hrank;
		OK(MPI_Sendrecv(&mine, 1, MPI_INT, hrank, 5, &v, 1, MPI_INT, hrank, 5, inter, MPI_STATUS_IGNORE));
		CHECK(v == 1000 * !low + hrank, "rank %d got %d", hrank, v);
	}
	mine = low ? 1 : 100;
	OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter));
	CHECK(sum == nremote * (low ? 100 : 1), "allreduce %d", sum);
	OK(MPI_Intercomm_merge(inter, !low, &merged));
	OK(MPI_Comm_rank(merged, &v));
	CHECK(v == (low ? hrank : nremote + hrank), "merged rank %d", v);
	OK(MPI_Comm_size(merged, &v));
	CHECK(v == nlocal + nremote, "merged size %d", v);
	OK(MPI_Comm_free(&merged));
	OK(MPI_Comm_disconnect(&inter));
	CHECK(inter == MPI_COMM_NULL, "MPI_Comm_disconnect left the handle");
}

int main(int argc, char **argv)
{
	int rank, size, rc, v;
	char port[MPI_MAX_PORT_NAME], got[MPI_MAX_PORT_NAME], svc[64];
	MPI_Comm c, half, inter;
	MPI_Info info;

	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

	/* Bad arguments. */
	expect_err(MPI_Open_port(MPI_INFO_NULL, NULL), MPI_ERR_ARG, "open_port(NULL)");
	expect_err(MPI_Close_port(NULL), MPI_ERR_ARG, "close_port(NULL)");
	expect_err(MPI_Close_port("mpigo-port:none"), MPI_ERR_PORT, "close of a port never opened");
	expect_err(MPI_Publish_name(NULL, MPI_INFO_NULL, "x"), MPI_ERR_ARG, "publish of NULL");
	expect_err(MPI_Publish_name("abidyn-x", MPI_INFO_NULL, "not a port"), MPI_ERR_PORT, "publish of no port");
	expect_err(MPI_Lookup_name("abidyn-nobody", MPI_INFO_NULL, NULL), MPI_ERR_ARG, "lookup into NULL");
	expect_err(MPI_Lookup_name("abidyn-nobody", MPI_INFO_NULL, got), MPI_ERR_NAME, "lookup of a name nobody published");
	expect_err(MPI_Unpublish_name("abidyn-nobody", MPI_INFO_NULL, "mpigo-port:none"), MPI_ERR_SERVICE, "unpublish of a name nobody published");
	expect_err(MPI_Comm_connect("not a port", MPI_INFO_NULL, 0, MPI_COMM_SELF, &c), MPI_ERR_PORT, "connect to no port");
	expect_err(MPI_Comm_connect(NULL, MPI_INFO_NULL, 0, MPI_COMM_SELF, &c), MPI_ERR_ARG, "connect to NULL at the root");
	expect_err(MPI_Comm_accept("mpigo-port:none", MPI_INFO_NULL, 0, MPI_COMM_SELF, &c), MPI_ERR_PORT, "accept on a port never opened");
	expect_err(MPI_Comm_accept("x", MPI_INFO_NULL, 0, MPI_COMM_NULL, &c), MPI_ERR_COMM, "accept on MPI_COMM_NULL");
	expect_err(MPI_Comm_accept("x", MPI_INFO_NULL, 1, MPI_COMM_SELF, &c), MPI_ERR_ROOT, "accept from root 1 of 1");
	expect_err(MPI_Comm_accept("x", MPI_INFO_NULL, 0, MPI_COMM_SELF, NULL), MPI_ERR_ARG, "accept into NULL");
	expect_err(MPI_Comm_join(-1, &c), MPI_ERR_ARG, "join on fd -1");
	int pfd[2];
	CHECK(pipe(pfd) == 0, "pipe");
	expect_err(MPI_Comm_join(pfd[0], &c), MPI_ERR_ARG, "join on a pipe");
	close(pfd[0]);
	close(pfd[1]);

	/* A port of this rank, published under a name of its own. */
	OK(MPI_Open_port(MPI_INFO_NULL, port));
	CHECK(strncmp(port, "mpigo-port:", 11) == 0 && strlen(port) < MPI_MAX_PORT_NAME, "port %s", port);
	snprintf(svc, sizeof svc, "abidyn-%d", rank);
	OK(MPI_Publish_name(svc, MPI_INFO_NULL, port));
	expect_err(MPI_Publish_name(svc, MPI_INFO_NULL, port), MPI_ERR_SERVICE, "publish twice");
	OK(MPI_Lookup_name(svc, MPI_INFO_NULL, got));
	CHECK(strcmp(got, port) == 0, "lookup gave %s, want %s", got, port);
	OK(MPI_Unpublish_name(svc, MPI_INFO_NULL, port));
	expect_err(MPI_Lookup_name(svc, MPI_INFO_NULL, got), MPI_ERR_NAME, "lookup after unpublish");
	OK(MPI_Close_port(port));
	expect_err(MPI_Close_port(port), MPI_ERR_PORT, "close twice");
	expect_err(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &c), MPI_ERR_PORT, "connect to a closed port");
	/* A freed info at the root of an accept: the root's class. */
	OK(MPI_Info_create(&info));
	MPI_Info stale = info;
	OK(MPI_Info_free(&info));
	expect_err(MPI_Comm_accept("x", stale, 0, MPI_COMM_SELF, &c), MPI_ERR_INFO, "accept with a freed info");

	if (size >= 2) {
		int nserv = size / 2, ncli = size - nserv, server = rank < nserv;
		int hrank = server ? rank : rank - nserv, nlocal = server ? nserv : ncli, nremote = server ? ncli : nserv;
		OK(MPI_Comm_split(MPI_COMM_WORLD, !server, rank, &half));
		OK(MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN));

		/* A root-only fault fails the whole half at once. */
		rc = MPI_Comm_connect(NULL, MPI_INFO_NULL, 0, half, &c);
		expect_err(rc, hrank == 0 ? MPI_ERR_ARG : MPI_ERR_PORT, "connect of a half to NULL");

		/* 1. Through the name service; port_name counts at the root
		 * only (the others pass NULL). */
		if (rank == 0) {
			OK(MPI_Open_port(MPI_INFO_NULL, port));
			OK(MPI_Publish_name("abidyn-service", MPI_INFO_NULL, port));
		}
		OK(MPI_Barrier(MPI_COMM_WORLD));
		if (server) {
			OK(MPI_Info_create(&info));
			OK(MPI_Info_set(info, "timeout", "10"));
			OK(MPI_Comm_accept(hrank == 0 ? port : NULL, info, 0, half, &inter));
			OK(MPI_Info_free(&info));
		} else {
			if (hrank == 0)
				OK(MPI_Lookup_name("abidyn-service", MPI_INFO_NULL, got));
			OK(MPI_Comm_connect(hrank == 0 ? got : NULL, MPI_INFO_NULL, 0, half, &inter));
		}
		check(inter, hrank, nlocal, nremote, server);
		if (rank == 0) {
			OK(MPI_Unpublish_name("abidyn-service", MPI_INFO_NULL, port));
			OK(MPI_Close_port(port));
		}

		/* 2. A port sent as a message, the halves' last ranks roots;
		 * the clients accept this time. */
		int root = nlocal - 1;
		if (!server && hrank == root) {
			OK(MPI_Open_port(MPI_INFO_NULL, port));
			OK(MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, nserv - 1, 9, MPI_COMM_WORLD));
			OK(MPI_Comm_accept(port, MPI_INFO_NULL, root, half, &inter));
			OK(MPI_Close_port(port));
		} else if (!server) {
			OK(MPI_Comm_accept(NULL, MPI_INFO_NULL, root, half, &inter));
		} else {
			if (hrank == root)
				OK(MPI_Recv(got, MPI_MAX_PORT_NAME, MPI_CHAR, size - 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			OK(MPI_Comm_connect(hrank == root ? got : NULL, MPI_INFO_NULL, root, half, &inter));
		}
		check(inter, hrank, nlocal, nremote, !server);
		OK(MPI_Comm_free(&half));

		/* 3. Ranks 0 and 1 join over a socket, which stays theirs,
		 * blocking as it was. */
		if (rank < 2) {
			int fd;
			if (rank == 0) {
				struct sockaddr_in a = {0};
				socklen_t al = sizeof a;
				int ls = socket(AF_INET, SOCK_STREAM, 0);
				a.sin_family = AF_INET;
				a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
				CHECK(ls >= 0 && bind(ls, (struct sockaddr *)&a, sizeof a) == 0 && listen(ls, 1) == 0, "listen");
				CHECK(getsockname(ls, (struct sockaddr *)&a, &al) == 0, "getsockname");
				v = ntohs(a.sin_port);
				OK(MPI_Send(&v, 1, MPI_INT, 1, 7, MPI_COMM_WORLD));
				fd = accept(ls, NULL, NULL);
				CHECK(fd >= 0, "accept");
				close(ls);
			} else {
				struct sockaddr_in a = {0};
				OK(MPI_Recv(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
				a.sin_family = AF_INET;
				a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
				a.sin_port = htons(v);
				fd = socket(AF_INET, SOCK_STREAM, 0);
				CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect");
			}
			OK(MPI_Comm_join(fd, &inter));
			CHECK(!(fcntl(fd, F_GETFL) & O_NONBLOCK), "the join left the socket non-blocking");
			check(inter, 0, 1, 1, rank == 0);
			char b = 'j';
			if (rank == 0)
				CHECK(write(fd, &b, 1) == 1, "write after the join");
			else
				CHECK(read(fd, &b, 1) == 1 && b == 'j', "read after the join");
			close(fd);
		}
	}
	OK(MPI_Barrier(MPI_COMM_WORLD));
	OK(MPI_Finalize());
	if (rank == 0)
		printf("ports OK\n");
	return 0;
}
