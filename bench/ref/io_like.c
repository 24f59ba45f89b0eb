/*
 * io_like: Open MPI reference side for `mpigo bench io`.
 *
 * Written for the mpigo project; the test definitions mirror
 * cmd/mpigo/bench_io.go (IOR-like patterns, not IOR code).
 *
 *   io_like TEST [-sizes A,B,C] [-iters N] [-reps R] [-dir DIR]
 *
 * TEST: io_seg_write, io_seg_read, io_strided_write_coll,
 * io_strided_write_ind, io_strided_read_coll, io_strided_read_ind, or io
 * (all six in turn). SIZE is the bytes of one piece. Segmented: each rank
 * one block of SIZE bytes at rank*SIZE, MPI_File_write_at_all /
 * read_at_all. Strided: each rank owns every n-th piece of SIZE bytes (a
 * vector filetype view), 16 pieces per rank per operation, collective
 * (_coll: MPI_File_write_at_all) or independent (_ind: MPI_File_write_at).
 * The clock runs from a barrier to a barrier after the last operation,
 * MPI_File_sync inside it for writes. Output, by rank 0, per test: '#'
 * lines, then "SIZE MB/s MIN MAX TIME/OP(us)" (MB = 10^6 bytes), the
 * median of the repetitions.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PIECES 16
#define MAX_SIZES 64
#define MAX_REPS 64

static int rank, nranks;

static const char *tests[] = {"io_seg_write", "io_seg_read", "io_strided_write_coll", "io_strided_write_ind", "io_strided_read_coll", "io_strided_read_ind"};

static void die(const char *msg)
{
    if (rank == 0)
        fprintf(stderr, "io_like: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

static void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        char s[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, s, &len);
        fprintf(stderr, "io_like: rank %d: %s: %s\n", rank, what, s);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    double s[MAX_REPS];
    memcpy(s, v, n * sizeof *v);
    qsort(s, n, sizeof *s, cmp);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* One repetition of one size: returns MB/s, sets *op_us. */
static double measure(const char *test, long size, int opt_iters, const char *dir, int seq, double *op_us)
{
    int write = strstr(test, "_write") != NULL;
    int strided = strncmp(test, "io_strided", 10) == 0;
    int coll = strstr(test, "_ind") == NULL;
    long mine = strided ? PIECES * size : size;
    long op_bytes = mine * nranks;
    long iters = (64L << 20) / op_bytes;
    if (iters < 2)
        iters = 2;
    if (iters > 50)
        iters = 50;
    if (opt_iters > 0)
        iters = opt_iters;
    char name[4096];
    int pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(name, sizeof name, "%s/io-like-%d-%d", dir, pid, seq);
    MPI_File f;
    check(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &f), "MPI_File_open");
    MPI_Offset off = 0;
    MPI_Datatype ft = MPI_DATATYPE_NULL;
    if (strided) {
        MPI_Type_vector(PIECES, (int)size, (int)size * nranks, MPI_BYTE, &ft);
        MPI_Type_commit(&ft);
        check(MPI_File_set_view(f, (MPI_Offset)rank * size, MPI_BYTE, ft, "native", MPI_INFO_NULL), "MPI_File_set_view");
    } else {
        off = (MPI_Offset)rank * size;
    }
    char *buf = malloc(mine);
    if (!buf)
        die("out of memory");
    for (long i = 0; i < mine; i++)
        buf[i] = (char)(rank + i);
    MPI_Status st;
#define OP(w) do { \
        if ((w) && coll) check(MPI_File_write_at_all(f, off, buf, (int)mine, MPI_BYTE, &st), "write_at_all"); \
        else if (w) check(MPI_File_write_at(f, off, buf, (int)mine, MPI_BYTE, &st), "write_at"); \
        else if (coll) check(MPI_File_read_at_all(f, off, buf, (int)mine, MPI_BYTE, &st), "read_at_all"); \
        else check(MPI_File_read_at(f, off, buf, (int)mine, MPI_BYTE, &st), "read_at"); \
    } while (0)
    OP(1);
    check(MPI_File_sync(f), "MPI_File_sync");
    if (!write)
        OP(0);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++)
        OP(write);
    if (write)
        check(MPI_File_sync(f), "MPI_File_sync");
    MPI_Barrier(MPI_COMM_WORLD);
    double us = (MPI_Wtime() - t0) * 1e6;
#undef OP
    check(MPI_File_close(&f), "MPI_File_close");
    if (ft != MPI_DATATYPE_NULL)
        MPI_Type_free(&ft);
    free(buf);
    if (rank == 0)
        unlink(name);
    *op_us = us / iters;
    return (double)op_bytes * iters / us;
}

static void run(const char *test, long *sizes, int nsizes, int iters, int reps, const char *dir, int *seq)
{
    if (rank == 0) {
        printf("# io_like %s (Open MPI MPI-IO)\n", test);
        printf("# %d ranks, median of %d repetitions of each size; min and max over them\n", nranks, reps);
        printf("# %-10s %-16s %10s %10s %12s\n", "Size", "Bandwidth (MB/s)", "Min", "Max", "Time/op(us)");
    }
    for (int i = 0; i < nsizes; i++) {
        double bw[MAX_REPS], op[MAX_REPS], lo = 1e300, hi = 0;
        for (int r = 0; r < reps; r++) {
            bw[r] = measure(test, sizes[i], iters, dir, (*seq)++, &op[r]);
            lo = bw[r] < lo ? bw[r] : lo;
            hi = bw[r] > hi ? bw[r] : hi;
        }
        if (rank == 0)
            printf("%-12ld %-16.2f %10.2f %10.2f %12.1f\n", sizes[i], median(bw, reps), lo, hi, median(op, reps));
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    /* -thread-multiple: MPI_Init_thread(MPI_THREAD_MULTIPLE), the level
     * mpigo always provides, so that both sides pay for the same thread
     * safety; plain MPI_Init otherwise. */
    int multiple = 0;
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "-thread-multiple"))
            multiple = 1;
    if (multiple) {
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        if (provided < MPI_THREAD_MULTIPLE)
            die("MPI_THREAD_MULTIPLE not provided");
    } else {
        MPI_Init(&argc, &argv);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc < 2)
        die("usage: io_like TEST [-sizes A,B,C] [-iters N] [-reps R] [-dir DIR] [-thread-multiple]");
    const char *test = argv[1];
    long sizes[MAX_SIZES];
    int nsizes = 0, iters = 0, reps = 3;
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    const char *spec = NULL; /* default: each test its own, as mpigo bench's */
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "-sizes") && i + 1 < argc)
            spec = argv[++i];
        else if (!strcmp(argv[i], "-iters") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-dir") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "-thread-multiple"))
            ; /* read before MPI_Init_thread */
        else
            die("unknown argument");
    }
    if (reps < 1 || reps > MAX_REPS)
        die("-reps out of range");
    int seq = 0;
    int found = 0;
    for (int t = 0; t < 6; t++) {
        if (!strcmp(test, "io") || !strcmp(test, tests[t])) {
            const char *sp = spec ? spec : strncmp(tests[t], "io_strided", 10) == 0 ? "4096,65536,1048576" : "65536,1048576,4194304";
            char *copy = strdup(sp);
            nsizes = 0;
            for (char *p = strtok(copy, ","); p && nsizes < MAX_SIZES; p = strtok(NULL, ","))
                if ((sizes[nsizes++] = atol(p)) <= 0)
                    die("sizes must be positive");
            free(copy);
            run(tests[t], sizes, nsizes, iters, reps, dir, &seq);
            found = 1;
        }
    }
    if (!found)
        die("unknown test");
    MPI_Finalize();
    return 0;
}
