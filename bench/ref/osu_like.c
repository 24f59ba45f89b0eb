/*
 * osu_like: Open MPI reference side for `mpigo bench`.
 *
 * Written for the mpigo project; the test definitions mirror cmd/mpigo/bench.go
 * (OSU-style output, but this is not OSU code).
 *
 *   osu_like TEST [-sizes MIN:MAX | -sizes A,B,C] [-iters N] [-rbuf-per-slot] [-thread-multiple] [-persistent]
 *
 * TEST: latency, bw, bibw, allreduce, bcast, barrier, allgather, alltoall,
 * reduce, reduce_scatter, scan, sendrecv (sizes as in `mpigo bench -h`).
 * Output: '#' comment lines, then "SIZE VALUE" per size (us, or MB/s with
 * MB = 10^6 bytes), printed by rank 0.
 * -persistent (allreduce, bcast): the collective is set up once per size
 * (MPI_Allreduce_init, MPI_Bcast_init) and each iteration is MPI_Start and
 * MPI_Wait. Open MPI 4.1 has them only as the MPIX_ extension
 * (mpi-ext.h, OMPI_HAVE_MPI_EXT_PCOLLREQ); without either the flag is
 * refused.
 */
#include <mpi.h>
#if defined(OPEN_MPI) && MPI_VERSION < 4
#include <mpi-ext.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64
#define MAX_SIZES 64

enum test { T_LATENCY, T_BW, T_BIBW, T_ALLREDUCE, T_BCAST, T_BARRIER, T_ALLGATHER, T_ALLTOALL, T_REDUCE, T_REDUCE_SCATTER, T_SCAN, T_SENDRECV, NTESTS };

static int rank, nranks;
static int opt_iters;        /* 0: chosen by size */
static int opt_rbuf_per_slot; /* bw/bibw: one receive buffer per window slot */
static int opt_persistent;    /* allreduce/bcast: Start+Wait of a persistent collective */

#if MPI_VERSION >= 4
#define ALLREDUCE_INIT MPI_Allreduce_init
#define BCAST_INIT MPI_Bcast_init
#define PERSISTENT_NAME "MPI_Allreduce_init/MPI_Bcast_init"
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define ALLREDUCE_INIT MPIX_Allreduce_init
#define BCAST_INIT MPIX_Bcast_init
#define PERSISTENT_NAME "MPIX_Allreduce_init/MPIX_Bcast_init"
#endif

static void die(const char *msg)
{
    if (rank == 0)
        fprintf(stderr, "osu_like: %s\n", msg);
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

/* Page-aligned buffer, touched so that no page fault lands inside the timing. */
static void *alloc_buf(size_t size)
{
    void *p = NULL;
    if (size == 0)
        size = 1;
    if (posix_memalign(&p, 4096, size) != 0)
        die("posix_memalign failed");
    memset(p, 'a', size);
    return p;
}

static double latency(long size)
{
    int warm, iters, i;
    char *buf = alloc_buf(size);
    double start = 0;
    iterations(size, 10000, 1000, &warm, &iters);
    MPI_Barrier(MPI_COMM_WORLD);
    for (i = 0; i < warm + iters; i++) {
        if (i == warm)
            start = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(buf, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
        }
    }
    double el = MPI_Wtime() - start;
    free(buf);
    return el * 1e6 / iters / 2;
}

/* sendrecv: ranks 0 and 1 exchange size bytes both ways at once. */
static double sendrecv(long size)
{
    int warm, iters, i;
    char *sbuf = alloc_buf(size), *rbuf = alloc_buf(size);
    double start = 0;
    iterations(size, 10000, 1000, &warm, &iters);
    MPI_Barrier(MPI_COMM_WORLD);
    for (i = 0; i < warm + iters; i++) {
        if (i == warm)
            start = MPI_Wtime();
        if (rank < 2)
            MPI_Sendrecv(sbuf, (int)size, MPI_CHAR, 1 - rank, 1, rbuf, (int)size, MPI_CHAR, 1 - rank, 1,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    double el = MPI_Wtime() - start;
    free(sbuf);
    free(rbuf);
    return el * 1e6 / iters;
}

static double bandwidth(long size, int both)
{
    int warm, iters, i, w, nreq;
    int nrbuf = opt_rbuf_per_slot ? WINDOW : 1;
    char *sbuf = alloc_buf(size);
    char *rbuf[WINDOW];
    char ack[4] = {0};
    MPI_Request reqs[2 * WINDOW];
    double start = 0, el;

    for (w = 0; w < nrbuf; w++)
        rbuf[w] = alloc_buf(size);
    for (; w < WINDOW; w++)
        rbuf[w] = rbuf[0]; /* same buffer reused, as OSU does */
    iterations(size, 100, 20, &warm, &iters);
    MPI_Barrier(MPI_COMM_WORLD);
    for (i = 0; i < warm + iters; i++) {
        if (i == warm)
            start = MPI_Wtime();
        if (rank > 1)
            continue;
        int peer = 1 - rank;
        nreq = 0;
        if (rank == 1 || both)
            for (w = 0; w < WINDOW; w++)
                MPI_Irecv(rbuf[w], (int)size, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &reqs[nreq++]);
        if (rank == 0 || both)
            for (w = 0; w < WINDOW; w++)
                MPI_Isend(sbuf, (int)size, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &reqs[nreq++]);
        MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
        if (rank == 0)
            MPI_Recv(ack, 4, MPI_CHAR, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
            MPI_Send(ack, 4, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
    }
    el = MPI_Wtime() - start;
    MPI_Barrier(MPI_COMM_WORLD);
    for (w = 0; w < nrbuf; w++)
        free(rbuf[w]);
    free(sbuf);
    double bytes = (double)size * WINDOW * iters * (both ? 2 : 1);
    return bytes / el / 1e6;
}

/* Average time per call on this rank; returns the max over ranks (on rank 0). */
static double collective(enum test t, long size)
{
    int warm, iters, i;
    int count = size / 8 > 0 ? (int)(size / 8) : 1;
    double *in = NULL, *out = NULL;
    char *bbuf = NULL;
    double start = 0, avg, maxavg = 0;

    int blk = count / nranks > 0 ? count / nranks : 1;
    char *bout = NULL;
    if (t == T_ALLREDUCE || t == T_REDUCE || t == T_SCAN || t == T_REDUCE_SCATTER) {
        size_t n = t == T_REDUCE_SCATTER ? (size_t)blk * nranks : (size_t)count;
        in = alloc_buf(n * sizeof(double));
        out = alloc_buf(n * sizeof(double));
        for (i = 0; i < (int)n; i++)
            in[i] = 1.0;
    } else if (t == T_BCAST) {
        bbuf = alloc_buf(size);
    } else if (t == T_ALLGATHER) {
        bbuf = alloc_buf(size > 0 ? size : 1);
        bout = alloc_buf((size > 0 ? size : 1) * nranks);
    } else if (t == T_ALLTOALL) {
        bbuf = alloc_buf((size > 0 ? size : 1) * nranks);
        bout = alloc_buf((size > 0 ? size : 1) * nranks);
    }
    MPI_Request preq = MPI_REQUEST_NULL;
#ifdef ALLREDUCE_INIT
    if (opt_persistent && t == T_ALLREDUCE)
        ALLREDUCE_INIT(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &preq);
    else if (opt_persistent && t == T_BCAST)
        BCAST_INIT(bbuf, (int)size, MPI_CHAR, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &preq);
#endif
    iterations(size, 1000, 100, &warm, &iters);
    MPI_Barrier(MPI_COMM_WORLD);
    for (i = 0; i < warm + iters; i++) {
        if (i == warm)
            start = MPI_Wtime();
        if (preq != MPI_REQUEST_NULL) {
            MPI_Start(&preq);
            MPI_Wait(&preq, MPI_STATUS_IGNORE);
            continue;
        }
        switch (t) {
        case T_ALLREDUCE:
            MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            break;
        case T_BCAST:
            MPI_Bcast(bbuf, (int)size, MPI_CHAR, 0, MPI_COMM_WORLD);
            break;
        case T_ALLGATHER:
            MPI_Allgather(bbuf, (int)size, MPI_CHAR, bout, (int)size, MPI_CHAR, MPI_COMM_WORLD);
            break;
        case T_ALLTOALL:
            MPI_Alltoall(bbuf, (int)size, MPI_CHAR, bout, (int)size, MPI_CHAR, MPI_COMM_WORLD);
            break;
        case T_REDUCE:
            MPI_Reduce(in, out, count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            break;
        case T_REDUCE_SCATTER:
            MPI_Reduce_scatter_block(in, out, blk, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            break;
        case T_SCAN:
            MPI_Scan(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            break;
        default:
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    avg = (MPI_Wtime() - start) * 1e6 / iters;
    if (preq != MPI_REQUEST_NULL)
        MPI_Request_free(&preq);
    MPI_Reduce(&avg, &maxavg, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    free(in);
    free(out);
    free(bbuf);
    free(bout);
    return maxavg;
}

static int parse_sizes(const char *s, long *out)
{
    int n = 0;
    const char *colon = strchr(s, ':');
    if (colon) {
        char *end;
        long lo = strtol(s, &end, 10), hi;
        if (end != colon)
            return -1;
        hi = strtol(colon + 1, &end, 10);
        if (*end || lo < 0 || hi < lo)
            return -1;
        if (lo == 0) {
            out[n++] = 0;
            lo = 1;
        }
        for (long v = lo; v <= hi && n < MAX_SIZES; v *= 2)
            out[n++] = v;
        return n;
    }
    while (*s && n < MAX_SIZES) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 0 || (*end && *end != ','))
            return -1;
        out[n++] = v;
        s = *end ? end + 1 : end;
    }
    return n;
}

int main(int argc, char **argv)
{
    static const char *names[] = {"latency", "bw", "bibw", "allreduce", "bcast", "barrier",
                                  "allgather", "alltoall", "reduce", "reduce_scatter", "scan", "sendrecv"};
    enum test t = T_LATENCY;
    const char *spec = NULL;
    long sizes[MAX_SIZES];
    int nsizes, i, found = 0;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len, major, minor, release = 0;
    int want_multiple = 0, provided = 0;

    /* -thread-multiple: MPI_Init_thread(MPI_THREAD_MULTIPLE), the level
     * mpigo always runs at (any goroutine may call anything), so that both
     * sides pay for the same thread safety; plain MPI_Init otherwise. */
    for (i = 1; i < argc; i++)
        if (strcmp(argv[i], "-thread-multiple") == 0 || strcmp(argv[i], "--thread-multiple") == 0)
            want_multiple = 1;
    if (want_multiple) {
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        if (provided < MPI_THREAD_MULTIPLE)
            die("MPI_THREAD_MULTIPLE not provided");
    } else {
        MPI_Init(&argc, &argv);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    if (argc < 2)
        die("usage: osu_like latency|bw|bibw|allreduce|bcast|barrier|allgather|alltoall|reduce|reduce_scatter|scan|sendrecv [-sizes MIN:MAX|A,B,...] [-iters N] [-rbuf-per-slot] [-thread-multiple]");
    for (i = 0; i < NTESTS; i++)
        if (strcmp(argv[1], names[i]) == 0) {
            t = (enum test)i;
            found = 1;
        }
    if (!found)
        die("unknown test (want latency, bw, bibw, allreduce, bcast, barrier, allgather, alltoall, reduce, reduce_scatter, scan or sendrecv)");
    for (i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] == '-' && a[1] == '-')
            a++; /* accept --flag as well as -flag */
        if (strcmp(a, "-sizes") == 0 && i + 1 < argc)
            spec = argv[++i];
        else if (strcmp(a, "-iters") == 0 && i + 1 < argc)
            opt_iters = atoi(argv[++i]);
        else if (strcmp(a, "-rbuf-per-slot") == 0)
            opt_rbuf_per_slot = 1;
        else if (strcmp(a, "-thread-multiple") == 0)
            ; /* read before MPI_Init_thread */
        else if (strcmp(a, "-persistent") == 0)
            opt_persistent = 1;
        else
            die("bad argument");
    }
    if (opt_persistent && t != T_ALLREDUCE && t != T_BCAST)
        die("-persistent applies to allreduce and bcast only");
#ifndef ALLREDUCE_INIT
    if (opt_persistent)
        die("-persistent: this MPI has neither MPI_Allreduce_init (MPI-4) nor Open MPI's MPIX_Allreduce_init");
#endif
    if (!spec)
        spec = t >= T_ALLREDUCE && t != T_BARRIER && t != T_SENDRECV ? "8:1048576" : t == T_BARRIER ? "0" : "1:4194304";
    if (t == T_BARRIER)
        spec = "0";
    nsizes = parse_sizes(spec, sizes);
    if (nsizes <= 0)
        die("bad -sizes (want MIN:MAX or a comma list)");
    if (nranks < 2 && (t == T_LATENCY || t == T_BW || t == T_BIBW || t == T_SENDRECV))
        die("this test needs at least 2 ranks");

#if defined(OMPI_MAJOR_VERSION)
    major = OMPI_MAJOR_VERSION;
    minor = OMPI_MINOR_VERSION;
    release = OMPI_RELEASE_VERSION;
    (void)len;
    MPI_Get_library_version(lib, &len);
#else
    MPI_Get_version(&major, &minor);
    MPI_Get_library_version(lib, &len);
#endif
    if (rank == 0) {
        printf("# osu_like %s\n", names[t]);
#if defined(OMPI_MAJOR_VERSION)
        printf("# Open MPI %d.%d.%d, %d ranks%s%s\n", major, minor, release, nranks,
               (t == T_BW || t == T_BIBW) ? (opt_rbuf_per_slot ? ", rbuf per window slot" : ", one rbuf") : "",
               want_multiple ? ", MPI_THREAD_MULTIPLE" : "");
#else
        printf("# %s (MPI %d.%d), %d ranks\n", strtok(lib, "\n"), major, minor, nranks);
#endif
#ifdef PERSISTENT_NAME
        if (opt_persistent)
            printf("# persistent: %s once per size, then MPI_Start + MPI_Wait\n", PERSISTENT_NAME);
#endif
        printf("# %-10s %s\n", "Size", (t == T_BW || t == T_BIBW) ? "Bandwidth (MB/s)" : "Latency (us)");
        fflush(stdout);
    }
    for (i = 0; i < nsizes; i++) {
        double v;
        long size = sizes[i];
        if (size > 0x7fffffffL)
            die("size too large");
        switch (t) {
        case T_LATENCY:
            v = latency(size);
            break;
        case T_SENDRECV:
            v = sendrecv(size);
            break;
        case T_BW:
            v = bandwidth(size, 0);
            break;
        case T_BIBW:
            v = bandwidth(size, 1);
            break;
        default:
            v = collective(t, size);
        }
        if (rank == 0) {
            printf("%-12ld %.2f\n", size, v);
            fflush(stdout);
        }
    }
    MPI_Finalize();
    return 0;
}
