/*
 * osu_rma: Open MPI reference side for the one-sided tests of `mpigo bench`.
 *
 * Written for the mpigo project; the definitions mirror cmd/mpigo/bench_rma.go
 * (OSU's one-sided tests in their flush form, but this is not OSU code):
 * the window is allocated once (MPI_Win_allocate), rank 0 locks rank 1's
 * window once (shared), and each iteration is one operation towards rank 1
 * followed by MPI_Win_flush; the bandwidth tests issue 64 operations per
 * flush.
 *
 *   osu_rma TEST [-sizes MIN:MAX | -sizes A,B,C] [-iters N]
 *
 * TEST: put_latency, get_latency, acc_latency, fop_latency, cas_latency,
 * put_bw, get_bw. Output: '#' lines, then "SIZE VALUE" (us or MB/s, MB =
 * 10^6 bytes) printed by rank 0.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64
#define MAX_SIZES 64

enum test { T_PUT, T_GET, T_ACC, T_FOP, T_CAS, T_PUT_BW, T_GET_BW, NTESTS };
static const char *names[] = {"put_latency", "get_latency", "acc_latency", "fop_latency",
                              "cas_latency", "put_bw", "get_bw"};

static int rank, nranks, opt_iters;

static void die(const char *msg)
{
    if (rank == 0)
        fprintf(stderr, "osu_rma: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

/* Same rule as benchConfig.iterations in cmd/mpigo/bench.go. */
static void iterations(long size, int small, int large, int *warm, int *iters)
{
    int n = small;
    if (size > 64L << 10)
        n = large;
    if (size >= 1L << 20)
        n = large / 4 > 10 ? large / 4 : 10;
    if (opt_iters > 0)
        n = opt_iters;
    *iters = n;
    *warm = n / 10 > 1 ? n / 10 : 1;
}

static int parse_sizes(const char *s, long *out)
{
    long a, b;
    int n = 0;
    char *end;
    if (strchr(s, ':')) {
        a = strtol(s, &end, 10);
        if (*end != ':')
            return -1;
        b = strtol(end + 1, &end, 10);
        if (*end || a < 1 || b < a)
            return -1;
        for (; a <= b && n < MAX_SIZES; a *= 2)
            out[n++] = a;
        return n;
    }
    while (*s && n < MAX_SIZES) {
        long v = strtol(s, &end, 10);
        if (end == s || v < 0)
            return -1;
        out[n++] = v;
        s = *end ? end + 1 : end;
    }
    return n;
}

int main(int argc, char **argv)
{
    enum test t = NTESTS;
    const char *spec = NULL;
    long sizes[MAX_SIZES], largest = 8;
    int nsizes, i;
    char *buf, *res;
    int64_t *wbytes, *wword, one = 1, zero = 0, fetched;
    MPI_Win win, word;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc < 2)
        die("usage: osu_rma put_latency|get_latency|acc_latency|fop_latency|cas_latency|put_bw|get_bw [-sizes ...] [-iters N]");
    for (i = 0; i < NTESTS; i++)
        if (strcmp(argv[1], names[i]) == 0)
            t = (enum test)i;
    if (t == NTESTS)
        die("unknown test");
    for (i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] == '-' && a[1] == '-')
            a++;
        if (strcmp(a, "-sizes") == 0 && i + 1 < argc)
            spec = argv[++i];
        else if (strcmp(a, "-iters") == 0 && i + 1 < argc)
            opt_iters = atoi(argv[++i]);
        else
            die("bad argument");
    }
    if (!spec)
        spec = (t == T_FOP || t == T_CAS) ? "8" : (t == T_PUT_BW || t == T_GET_BW) ? "1:4194304" : "1:1048576";
    nsizes = parse_sizes(spec, sizes);
    if (nsizes <= 0)
        die("bad -sizes");
    if (nranks < 2)
        die("this test needs at least 2 ranks");
    for (i = 0; i < nsizes; i++)
        if (sizes[i] > largest)
            largest = sizes[i];

    /* Allocated once; rank 0 locks rank 1 once. */
    MPI_Win_allocate(largest, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &wbytes, &win);
    MPI_Win_allocate(sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &wword, &word);
    buf = calloc(largest, 1);
    res = calloc(largest, 1);
    if (rank == 0) {
        printf("# osu_rma %s\n", names[t]);
        printf("# Open MPI reference, %d ranks, flush form\n", nranks);
        printf("# %-10s %s\n", "Size", (t == T_PUT_BW || t == T_GET_BW) ? "Bandwidth (MB/s)" : "Latency (us)");
        fflush(stdout);
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, word);
    }
    for (i = 0; i < nsizes; i++) {
        long size = sizes[i];
        int bw = t == T_PUT_BW || t == T_GET_BW;
        int warm, iters, it, k, per = bw ? WINDOW : 1;
        double start = 0, el;
        iterations(size, bw ? 100 : 10000, bw ? 20 : 1000, &warm, &iters);
        if (rank == 0) {
            for (it = 0; it < warm + iters; it++) {
                if (it == warm)
                    start = MPI_Wtime();
                for (k = 0; k < per; k++) {
                    switch (t) {
                    case T_PUT:
                    case T_PUT_BW:
                        MPI_Put(buf, size, MPI_BYTE, 1, 0, size, MPI_BYTE, win);
                        break;
                    case T_GET:
                    case T_GET_BW:
                        MPI_Get(res, size, MPI_BYTE, 1, 0, size, MPI_BYTE, win);
                        break;
                    case T_ACC:
                        MPI_Accumulate(buf, size, MPI_UNSIGNED_CHAR, 1, 0, size, MPI_UNSIGNED_CHAR, MPI_SUM, win);
                        break;
                    case T_FOP:
                        MPI_Fetch_and_op(&one, &fetched, MPI_INT64_T, 1, 0, MPI_SUM, word);
                        break;
                    case T_CAS:
                        MPI_Compare_and_swap(&zero, &zero, &fetched, MPI_INT64_T, 1, 0, word);
                        break;
                    default:
                        break;
                    }
                }
                MPI_Win_flush(1, (t == T_FOP || t == T_CAS) ? word : win);
            }
            el = MPI_Wtime() - start;
            if (bw)
                printf("%-12ld %.2f\n", size, (double)size * per * iters / el / 1e6);
            else
                printf("%-12ld %.2f\n", size, el * 1e6 / iters);
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank == 0) {
        MPI_Win_unlock(1, win);
        MPI_Win_unlock(1, word);
    }
    MPI_Win_free(&win);
    MPI_Win_free(&word);
    free(buf);
    free(res);
    MPI_Finalize();
    return 0;
}
