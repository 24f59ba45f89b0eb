/* attrs: attributes with C callbacks on communicators and datatypes,
 * the predefined copy functions and the predefined attributes. */
#include <mpi.h>
#include "check.h"

static void expect_err(int rc, int want, const char *what)
{
	int cls = -1;
	CHECK(rc != MPI_SUCCESS, "%s succeeded", what);
	MPI_Error_class(rc, &cls);
	CHECK(cls == want, "%s: class %d, want %d", what, cls, want);
}

static int copies, deletes, last_keyval;
static MPI_Comm last_comm;
static void *last_val, *last_extra;

static int copy_fn(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
	copies++;
	last_comm = comm;
	last_keyval = keyval;
	last_extra = extra;
	*(void **)out = (char *)in + 1; /* the copy's value: one more */
	*flag = 1;
	return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm comm, int keyval, void *val, void *extra)
{
	deletes++;
	last_comm = comm;
	last_keyval = keyval;
	last_val = val;
	last_extra = extra;
	return MPI_SUCCESS;
}

static int refusing_copy(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
	return MPI_ERR_NO_MEM;
}

static int type_copies, type_deletes;
static MPI_Datatype last_type;

static int type_copy(MPI_Datatype t, int keyval, void *extra, void *in, void *out, int *flag)
{
	type_copies++;
	last_type = t;
	*(void **)out = in;
	*flag = 1;
	return MPI_SUCCESS;
}

static int type_delete(MPI_Datatype t, int keyval, void *val, void *extra)
{
	type_deletes++;
	last_type = t;
	last_val = val;
	return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
	int rank, size, key, dupkey, nullkey, oldkey, badkey, flag, extra = 42;
	void *v;
	MPI_Comm c, d, e;

	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

	/* Predefined attributes. */
	int *ip;
	OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ip, &flag));
	CHECK(flag && *ip >= 32767, "MPI_TAG_UB %d", flag ? *ip : -1);
	OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &ip, &flag));
	CHECK(flag && *ip == MPI_PROC_NULL, "MPI_HOST");
	OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &ip, &flag));
	CHECK(flag && (*ip == MPI_ANY_SOURCE || (*ip >= 0 && *ip < size)), "MPI_IO %d", *ip);
	OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &ip, &flag));
	CHECK(flag && (*ip == 0 || *ip == 1), "MPI_WTIME_IS_GLOBAL");
	OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &ip, &flag));
	CHECK(flag && *ip >= size, "MPI_UNIVERSE_SIZE %d", *ip);
	OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &ip, &flag));
	CHECK(flag && *ip == 0, "MPI_APPNUM");
	OK(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &ip, &flag));
	CHECK(flag && *ip >= 32767, "MPI_Attr_get of MPI_TAG_UB");

	/* A keyval with callbacks: the copy runs on dup with the old
	 * communicator, the keyval, the extra state and the value; the
	 * delete runs on free with the new value. */
	OK(MPI_Comm_create_keyval(copy_fn, delete_fn, &key, &extra));
	CHECK(key != MPI_KEYVAL_INVALID, "keyval");
	OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &dupkey, NULL));
	OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &nullkey, NULL));
	OK(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &oldkey, NULL));
	OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
	OK(MPI_Comm_get_attr(c, key, &v, &flag));
	CHECK(!flag, "attribute before it is set");
	static char base[8];
	OK(MPI_Comm_set_attr(c, key, base));
	OK(MPI_Comm_set_attr(c, dupkey, base + 4));
	OK(MPI_Comm_set_attr(c, nullkey, base + 5));
	OK(MPI_Attr_put(c, oldkey, base + 6));
	OK(MPI_Comm_get_attr(c, key, &v, &flag));
	CHECK(flag && v == base, "get_attr %p", v);
	OK(MPI_Comm_dup(c, &d));
	CHECK(copies == 1 && last_comm == c && last_keyval == key && last_extra == &extra, "copy callback: %d calls", copies);
	OK(MPI_Comm_get_attr(d, key, &v, &flag));
	CHECK(flag && v == base + 1, "copied value %p", v);
	OK(MPI_Comm_get_attr(d, dupkey, &v, &flag));
	CHECK(flag && v == base + 4, "MPI_COMM_DUP_FN value");
	OK(MPI_Comm_get_attr(d, nullkey, &v, &flag));
	CHECK(!flag, "MPI_COMM_NULL_COPY_FN copied");
	OK(MPI_Attr_get(d, oldkey, &v, &flag));
	CHECK(flag && v == base + 6, "MPI_DUP_FN value");
	/* Overwriting calls delete with the old value. */
	OK(MPI_Comm_set_attr(d, key, base + 2));
	CHECK(deletes == 1 && last_val == base + 1 && last_comm == d, "delete on overwrite: %d", deletes);
	OK(MPI_Comm_free(&d));
	CHECK(deletes == 2 && last_val == base + 2 && last_keyval == key && last_extra == &extra, "delete on free: %d", deletes);
	OK(MPI_Comm_delete_attr(c, key));
	CHECK(deletes == 3 && last_val == base && last_comm == c, "delete_attr: %d", deletes);
	OK(MPI_Comm_get_attr(c, key, &v, &flag));
	CHECK(!flag, "attribute after delete");
	OK(MPI_Attr_delete(c, oldkey));
	/* A copy callback's error fails the dup. */
	OK(MPI_Comm_create_keyval(refusing_copy, MPI_COMM_NULL_DELETE_FN, &badkey, NULL));
	OK(MPI_Comm_set_attr(c, badkey, base));
	OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
	CHECK(MPI_Comm_dup(c, &e) != MPI_SUCCESS, "dup succeeded though a copy callback failed");
	OK(MPI_Comm_delete_attr(c, badkey));
	OK(MPI_Comm_free_keyval(&badkey));
	OK(MPI_Comm_free(&c));
	OK(MPI_Comm_free_keyval(&key));
	CHECK(key == MPI_KEYVAL_INVALID, "free_keyval did not reset the keyval");
	OK(MPI_Comm_free_keyval(&dupkey));
	OK(MPI_Comm_free_keyval(&nullkey));
	OK(MPI_Keyval_free(&oldkey));

	/* Datatype attributes: copied on Type_dup, deleted on Type_free. */
	int tkey;
	MPI_Datatype t, u;
	OK(MPI_Type_create_keyval(type_copy, type_delete, &tkey, NULL));
	OK(MPI_Type_contiguous(2, MPI_INT, &t));
	OK(MPI_Type_set_attr(t, tkey, base + 3));
	OK(MPI_Type_dup(t, &u));
	CHECK(type_copies == 1 && last_type == t, "type copy callback");
	OK(MPI_Type_get_attr(u, tkey, &v, &flag));
	CHECK(flag && v == base + 3, "type attribute of the dup");
	OK(MPI_Type_free(&t));
	CHECK(type_deletes == 1 && last_val == base + 3, "type delete on free");
	OK(MPI_Type_delete_attr(u, tkey));
	CHECK(type_deletes == 2, "type delete_attr");
	OK(MPI_Type_get_attr(u, tkey, &v, &flag));
	CHECK(!flag, "type attribute after delete");
	OK(MPI_Type_free(&u));
	OK(MPI_Type_free_keyval(&tkey));

	/* Bad input. */
	expect_err(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, base), MPI_ERR_KEYVAL, "setting MPI_TAG_UB");
	expect_err(MPI_Comm_get_attr(MPI_COMM_WORLD, key, &v, &flag), MPI_ERR_KEYVAL, "freed keyval");
	expect_err(MPI_Comm_get_attr(MPI_COMM_WORLD, 12345, &v, &flag), MPI_ERR_KEYVAL, "garbage keyval");
	expect_err(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL, &flag), MPI_ERR_ARG, "NULL attribute_val");
	int k2 = MPI_TAG_UB;
	expect_err(MPI_Comm_free_keyval(&k2), MPI_ERR_KEYVAL, "freeing a predefined keyval");
	expect_err(MPI_Type_get_attr(MPI_INT, tkey, &v, &flag), MPI_ERR_KEYVAL, "freed type keyval");

	OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("attrs OK\n");
	OK(MPI_Finalize());
	return 0;
}
