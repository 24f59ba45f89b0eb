/* mpit: the tools interface. Control variables listed, read, an
 * enumeration's items, a write refused while the job runs; performance
 * variables listed and one counting this rank's messages; categories;
 * no events; bad indices, names and handles; calls outside
 * MPI_T_init_thread/MPI_T_finalize. */
#include <mpi.h>
#include "check.h"

#define TOK(call) do { int rc_ = (call); CHECK(rc_ == MPI_SUCCESS, "%s returned %d", #call, rc_); } while (0)
#define TERR(call, want) do { int rc_ = (call); CHECK(rc_ == (want), "%s returned %d, want %s (%d)", #call, rc_, #want, want); } while (0)

int main(int argc, char **argv)
{
	int rank, size, provided, n;
	TERR(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
	TOK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
	CHECK(provided == MPI_THREAD_SINGLE, "provided %d", provided);
	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

	/* Control variables. */
	TOK(MPI_T_cvar_get_num(&n));
	CHECK(n > 5, "%d control variables", n);
	int eager = -1, transport = -1;
	for (int i = 0; i < n; i++) {
		char name[256], desc[1024];
		int nlen = sizeof name, dlen = sizeof desc, verb, bind, scope;
		MPI_Datatype dt;
		MPI_T_enum et;
		TOK(MPI_T_cvar_get_info(i, name, &nlen, &verb, &dt, &et, desc, &dlen, &bind, &scope));
		CHECK(strncmp(name, "MPIGO_", 6) == 0 && nlen == (int)strlen(name) + 1, "cvar %d: [%s] %d", i, name, nlen);
		CHECK(dlen > 1 && bind == MPI_T_BIND_NO_OBJECT && scope >= MPI_T_SCOPE_CONSTANT && scope <= MPI_T_SCOPE_ALL_EQ, "cvar %s: desc %d bind %d scope %d", name, dlen, bind, scope);
		CHECK(verb >= MPI_T_VERBOSITY_USER_BASIC && verb <= MPI_T_VERBOSITY_MPIDEV_ALL, "cvar %s: verbosity %d", name, verb);
		if (strcmp(name, "MPIGO_EAGER_LIMIT") == 0) {
			eager = i;
			CHECK(dt == MPI_INT && et == MPI_T_ENUM_NULL, "eager limit type");
		}
		if (strcmp(name, "MPIGO_TRANSPORT") == 0) {
			transport = i;
			CHECK(dt == MPI_INT && et != MPI_T_ENUM_NULL, "transport: an enumeration");
		}
	}
	int idx = -1;
	TOK(MPI_T_cvar_get_index("MPIGO_EAGER_LIMIT", &idx));
	CHECK(idx == eager && eager >= 0, "MPIGO_EAGER_LIMIT at %d, listed at %d", idx, eager);
	MPI_T_cvar_handle ch;
	int count, val = -1;
	TOK(MPI_T_cvar_handle_alloc(idx, NULL, &ch, &count));
	CHECK(count == 1, "count %d", count);
	TOK(MPI_T_cvar_read(ch, &val));
	CHECK(val > 0, "eager limit %d", val);
	TERR(MPI_T_cvar_write(ch, &val), MPI_T_ERR_CVAR_SET_NOT_NOW);
	TOK(MPI_T_cvar_handle_free(&ch));
	CHECK(ch == MPI_T_CVAR_HANDLE_NULL, "handle after free");
	TERR(MPI_T_cvar_read(ch, &val), MPI_T_ERR_INVALID_HANDLE);

	/* An enumeration: MPIGO_TRANSPORT's values. */
	MPI_Datatype dt;
	MPI_T_enum et;
	TOK(MPI_T_cvar_get_info(transport, NULL, NULL, NULL, &dt, &et, NULL, NULL, NULL, NULL));
	char item[64], ename[64];
	int items, v, ilen = sizeof item, elen = sizeof ename, found = 0;
	TOK(MPI_T_enum_get_info(et, &items, ename, &elen));
	CHECK(items >= 3 && strcmp(ename, "MPIGO_TRANSPORT") == 0, "enum %s of %d", ename, items);
	for (int i = 0; i < items; i++) {
		ilen = sizeof item;
		TOK(MPI_T_enum_get_item(et, i, &v, item, &ilen));
		CHECK(v == i, "item %d has value %d", i, v);
		found += strcmp(item, "shm") == 0;
	}
	CHECK(found == 1, "no item shm");
	TERR(MPI_T_enum_get_item(et, items, &v, item, &ilen), MPI_T_ERR_INVALID_ITEM);
	TOK(MPI_T_cvar_handle_alloc(transport, NULL, &ch, &count));
	TOK(MPI_T_cvar_read(ch, &val));
	CHECK(val >= 0 && val < items, "transport %d", val);
	TOK(MPI_T_cvar_handle_free(&ch));

	/* Performance variables: messages this rank sends to each rank. */
	TOK(MPI_T_pvar_get_num(&n));
	CHECK(n >= 5, "%d performance variables", n);
	TOK(MPI_T_pvar_get_index("messages_sent", MPI_T_PVAR_CLASS_COUNTER, &idx));
	TERR(MPI_T_pvar_get_index("messages_sent", MPI_T_PVAR_CLASS_TIMER, &idx), MPI_T_ERR_INVALID_NAME);
	char name[64];
	int nlen = sizeof name, verb, cls, bind, ro, cont, atomic;
	TOK(MPI_T_pvar_get_info(idx, name, &nlen, &verb, &cls, &dt, &et, NULL, NULL, &bind, &ro, &cont, &atomic));
	CHECK(strcmp(name, "messages_sent") == 0 && cls == MPI_T_PVAR_CLASS_COUNTER && dt == MPI_UNSIGNED_LONG_LONG && bind == MPI_T_BIND_MPI_COMM && !ro && !cont,
	      "pvar [%s] class %d bind %d ro %d cont %d", name, cls, bind, ro, cont);
	MPI_T_pvar_session s;
	MPI_T_pvar_handle ph;
	MPI_Comm world = MPI_COMM_WORLD;
	TOK(MPI_T_pvar_session_create(&s));
	TOK(MPI_T_pvar_handle_alloc(s, idx, &world, &ph, &count));
	CHECK(count == size, "count %d for %d ranks", count, size);
	TOK(MPI_T_pvar_start(s, ph));
	int right = (rank + 1) % size, left = (rank + size - 1) % size, x = 0;
	for (int i = 0; i < 5; i++)
		OK(MPI_Sendrecv(&rank, 1, MPI_INT, right, 1, &x, 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	TOK(MPI_T_pvar_stop(s, ph));
	unsigned long long *sent = calloc(size, sizeof *sent);
	TOK(MPI_T_pvar_read(s, ph, sent));
	if (size > 1)
		CHECK(sent[right] >= 5, "%llu messages counted to rank %d", sent[right], right);
	TOK(MPI_T_pvar_readreset(s, ph, sent));
	TOK(MPI_T_pvar_read(s, ph, sent));
	for (int i = 0; i < size; i++)
		CHECK(sent[i] == 0, "after readreset: %llu to rank %d", sent[i], i);
	TOK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
	TOK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));
	MPI_T_pvar_session other;
	TOK(MPI_T_pvar_session_create(&other));
	TERR(MPI_T_pvar_read(other, ph, sent), MPI_T_ERR_INVALID_HANDLE);
	TOK(MPI_T_pvar_session_free(&other));
	int posted;
	TOK(MPI_T_pvar_get_index("posted_queue_length", MPI_T_PVAR_CLASS_LEVEL, &posted));
	MPI_T_pvar_handle lh;
	TOK(MPI_T_pvar_handle_alloc(s, posted, &world, &lh, &count));
	TERR(MPI_T_pvar_start(s, lh), MPI_T_ERR_PVAR_NO_STARTSTOP);
	TERR(MPI_T_pvar_write(s, lh, sent), MPI_T_ERR_PVAR_NO_WRITE);
	TOK(MPI_T_pvar_handle_free(s, &ph));
	CHECK(ph == MPI_T_PVAR_HANDLE_NULL, "pvar handle after free");
	TOK(MPI_T_pvar_session_free(&s));
	TERR(MPI_T_pvar_read(s, lh, sent), MPI_T_ERR_INVALID_SESSION);
	free(sent);

	/* Categories. */
	int ncat, traffic, nc, np, nsub;
	TOK(MPI_T_category_get_num(&ncat));
	TOK(MPI_T_category_get_index("traffic", &traffic));
	char cname[64];
	int clen = sizeof cname;
	TOK(MPI_T_category_get_info(traffic, cname, &clen, NULL, NULL, &nc, &np, &nsub));
	CHECK(strcmp(cname, "traffic") == 0 && np >= 4 && nc == 0, "category [%s] cvars %d pvars %d", cname, nc, np);
	int pv[16], hit = 0;
	TOK(MPI_T_category_get_pvars(traffic, np, pv));
	for (int i = 0; i < np; i++)
		hit += pv[i] == idx;
	CHECK(hit == 1, "messages_sent (%d) not in category traffic", idx);
	int stamp = -1;
	TOK(MPI_T_category_changed(&stamp));
	TOK(MPI_T_category_get_num_events(traffic, &n));
	CHECK(n == 0, "%d events", n);

	/* No events, no sources. */
	TOK(MPI_T_event_get_num(&n));
	CHECK(n == 0, "%d events", n);
	TOK(MPI_T_source_get_num(&n));
	CHECK(n == 0, "%d sources", n);
	TERR(MPI_T_event_get_index("x", &n), MPI_T_ERR_INVALID_NAME);
	TERR(MPI_T_event_get_info(0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);

	/* Bad indices and names. */
	TERR(MPI_T_cvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
	TERR(MPI_T_cvar_get_index("MPIGO_NO_SUCH", &n), MPI_T_ERR_INVALID_NAME);
	TERR(MPI_T_pvar_get_info(1000, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
	TERR(MPI_T_category_get_info(ncat, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
	TERR(MPI_T_cvar_handle_alloc(-3, NULL, &ch, &count), MPI_T_ERR_INVALID_INDEX);

	TOK(MPI_T_finalize());
	TERR(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
	TERR(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
	/* The Fortran side: nothing until a binding tells, once. */
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	MPI_Info fi, got;
	OK(MPI_Abi_get_fortran_info(&got));
	CHECK(got == MPI_INFO_NULL, "Fortran info before any was set");
	OK(MPI_Info_create(&fi));
	OK(MPI_Info_set(fi, "mpi_integer_size", "4"));
	int ec = -1;
	OK(MPI_Error_class(MPI_Abi_set_fortran_info(fi), &ec));
	CHECK(ec == MPI_ERR_ABI, "set_fortran_info without the real, double precision and logical sizes: class %d", ec);
	OK(MPI_Info_set(fi, "mpi_real_size", "4"));
	OK(MPI_Info_set(fi, "mpi_double_precision_size", "8"));
	OK(MPI_Info_set(fi, "mpi_logical_size", "4"));
	OK(MPI_Abi_set_fortran_info(fi));
	OK(MPI_Error_class(MPI_Abi_set_fortran_info(fi), &ec));
	CHECK(ec == MPI_ERR_ABI, "a second set_fortran_info: class %d", ec);
	OK(MPI_Info_free(&fi));
	OK(MPI_Abi_get_fortran_info(&got));
	char fv[16];
	int fflag = 0, fl = sizeof fv;
	OK(MPI_Info_get_string(got, "mpi_integer_size", &fl, fv, &fflag));
	CHECK(fflag && strcmp(fv, "4") == 0, "mpi_integer_size [%s]", fv);
	OK(MPI_Info_free(&got));
	int t = -1, f = -1, is_set = 1, ft = 1, ff = 0;
	OK(MPI_Abi_get_fortran_booleans(4, &t, &f, &is_set));
	CHECK(!is_set, "booleans set before any were");
	OK(MPI_Abi_set_fortran_booleans(4, &ft, &ff));
	OK(MPI_Abi_get_fortran_booleans(4, &t, &f, &is_set));
	CHECK(is_set && t == 1 && f == 0, "booleans %d %d %d", is_set, t, f);
	OK(MPI_Error_class(MPI_Abi_set_fortran_booleans(3, &ft, &ff), &ec));
	CHECK(ec == MPI_ERR_ARG, "logical size 3: class %d", ec);

	int main_thread = 0;
	OK(MPI_Is_thread_main(&main_thread));
	CHECK(main_thread, "MPI_Is_thread_main is false on the thread that called MPI_Init");
	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("mpit OK\n");
	OK(MPI_Finalize());
	return 0;
}
