/* finattr.c: MPI_Finalize deletes the attributes of MPI_COMM_SELF first,
 * the last set first, while MPI is still usable in the delete callbacks;
 * attributes of keyvals freed earlier are deleted too. And a freed
 * keyval's handle, kept by the program, still deletes the attributes set
 * before the free, even after new keyvals were created (its handle is not
 * given to one of them). */
#include <mpi.h>
#include "check.h"

#define NKEYS 4
static int keys[NKEYS];
static int order[NKEYS] = {2, 0, 3, 1}; /* the order the attributes are set */
static int deleted = 0;
static int vals[NKEYS];

static int world_deletes = 0;

static int world_del_fn(MPI_Comm comm, int keyval, void *val, void *extra) {
	(void)comm; (void)keyval; (void)val; (void)extra;
	world_deletes++;
	return MPI_SUCCESS;
}

static int del_fn(MPI_Comm comm, int keyval, void *val, void *extra) {
	(void)extra;
	CHECK(comm == MPI_COMM_SELF, "delete callback on another communicator");
	CHECK(deleted < NKEYS, "delete callback called %d times", deleted + 1);
	int want = order[NKEYS - 1 - deleted];
	CHECK(keyval == keys[want], "deletion %d: keyval %d, want %d (key %d)", deleted, keyval, keys[want], want);
	CHECK(val == &vals[want], "deletion %d: wrong attribute value", deleted);
	int flag = 1, rank = -1;
	CHECK(MPI_Finalized(&flag) == MPI_SUCCESS && !flag, "MPI_Finalized is true inside MPI_Finalize's attribute deletion");
	CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS && rank >= 0, "MPI unusable in a delete callback at MPI_Finalize");
	deleted++;
	return MPI_SUCCESS;
}

int main(int argc, char **argv) {
	int rank, i;
	OK(MPI_Init(&argc, &argv));
	OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	for (i = 0; i < NKEYS; i++)
		OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_fn, &keys[i], NULL));
	for (i = 0; i < NKEYS; i++)
		OK(MPI_Comm_set_attr(MPI_COMM_SELF, keys[order[i]], &vals[order[i]]));
	/* Freeing a keyval leaves its attributes in place. */
	for (i = 0; i < NKEYS; i++) {
		int k = keys[i];
		OK(MPI_Comm_free_keyval(&k));
	}
	CHECK(deleted == 0, "%d attributes deleted before MPI_Finalize", deleted);

	/* A freed keyval deletes what it set before the free. */
	int wkey, saved, more[8], val = 5;
	OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, world_del_fn, &wkey, NULL));
	saved = wkey;
	OK(MPI_Comm_set_attr(MPI_COMM_WORLD, wkey, &val));
	OK(MPI_Comm_free_keyval(&wkey));
	CHECK(wkey == MPI_KEYVAL_INVALID, "freed keyval not set to MPI_KEYVAL_INVALID");
	for (i = 0; i < 8; i++) {
		OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &more[i], NULL));
		CHECK(more[i] != saved, "a new keyval got the handle of a freed one whose attribute remains");
	}
	OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, saved));
	CHECK(world_deletes == 1, "deleting with a freed keyval called the callback %d times", world_deletes);
	OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	int rc = MPI_Comm_free_keyval(&saved), class = -1;
	OK(MPI_Error_class(rc, &class));
	CHECK(class == MPI_ERR_KEYVAL, "second free of a keyval: class %d, want MPI_ERR_KEYVAL", class);
	for (i = 0; i < 8; i++)
		OK(MPI_Comm_free_keyval(&more[i]));
	OK(MPI_Finalize());
	CHECK(deleted == NKEYS, "MPI_Finalize deleted %d of %d attributes of MPI_COMM_SELF", deleted, NKEYS);
	if (rank == 0)
		printf("finattr OK\n");
	return 0;
}
