/* What in-job recovery's all-forms cost (issue 23): the collectives whose result differs by
 * rank, run in a ULFM job that contains losses so that every rank holds the whole result
 * (cd-mpi-intercept/src/recovery/allform.rs), or unrolled into point-to-point messages
 * (cd-mpi-intercept/src/recovery/unrolled.rs), against the MPI library's own collective, timed
 * interleaved in one launch.
 *
 * Modes, each a table of function pointers, so that both call MPI the same way:
 *   raw       the MPI library's own PMPI_X (raw_mpi.h): the reference.
 *   recovery  MPI_X as this executable binds it: libcd's wrapper, with a persistent root CD
 *             whose first version is complete, so that in a ULFM job (mpirun --with-ft ulfm)
 *             each call runs as its all-form and its result is journaled.
 * Each round of recovery is followed, outside its timing, by an advance of that CD (which
 * prunes the journal). Rounds alternate raw, recovery, raw, ... (A B A B); each round runs a
 * fixed iteration count calibrated on raw to about --target-ms (default 5). Reported per call
 * and size: the median time per call of each mode and its inter-quartile range, and the median
 * and IQR of the ratios recovery/raw of adjacent rounds. A round's time is its slowest rank's.
 *
 * Calls (a block of `size` bytes per rank, as MPI_BYTE, MPI_Reduce and MPI_Scan as doubles):
 *   alltoall   MPI_Alltoall (its all-form: an MPI_Allgather of every rank's whole buffer)
 *   scan       MPI_Scan with MPI_SUM (an MPI_Allgather, folded with MPI_Reduce_local)
 *   reduce     MPI_Reduce to rank 0 (an MPI_Allreduce)
 *   neighbor   MPI_Neighbor_alltoall on a periodic Cartesian ring (the blocks packed with
 *              where they go: an MPI_Allreduce of the degree, then two MPI_Allgather(v)s)
 *   ialltoall  MPI_Ialltoall then MPI_Wait (a nonblocking MPI_Iallgather, each rank taking its
 *              blocks when the request completes)
 *   iscan      MPI_Iscan with MPI_SUM then MPI_Wait (an MPI_Iallgather, folded when the
 *              request completes)
 *   ialltoallv MPI_Ialltoallv of equal blocks then MPI_Wait (unrolled: an MPI_Irecv and an
 *              MPI_Isend per other rank on the world's twin, completed by one MPI_Waitall)
 *   allreduce  MPI_Allreduce (no all-form: what the journal alone costs a collective)
 *
 * Usage: allform [--sizes 8,65536] [--rounds R] [--target-ms T]
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <cd.h>

#include "raw_mpi.h"

typedef int (*alltoall_fn)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm);
typedef int (*scan_fn)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
typedef int (*reduce_fn)(const void *, void *, int, MPI_Datatype, MPI_Op, int, MPI_Comm);
typedef int (*barrier_fn)(MPI_Comm);
typedef int (*ialltoall_fn)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm,
                            MPI_Request *);
typedef int (*iscan_fn)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm, MPI_Request *);
typedef int (*ialltoallv_fn)(const void *, const int *, const int *, MPI_Datatype, void *,
                             const int *, const int *, MPI_Datatype, MPI_Comm, MPI_Request *);
typedef int (*wait_fn)(MPI_Request *, MPI_Status *);

struct fns {
    alltoall_fn alltoall, neighbor;
    scan_fn scan, allreduce;
    reduce_fn reduce;
    barrier_fn barrier;
    ialltoall_fn ialltoall;
    iscan_fn iscan;
    wait_fn wait;
    ialltoallv_fn ialltoallv;
};

enum { RAW, RECOVERY, NMODES };
static const char *const MODE[NMODES] = {"raw", "recovery"};
enum { ALLTOALL, SCAN, REDUCE, NEIGHBOR, IALLTOALL, ISCAN, IALLTOALLV, ALLREDUCE, NCALLS };
static const char *const CALL[NCALLS] = {"alltoall",  "scan",  "reduce",     "neighbor",
                                         "ialltoall", "iscan", "ialltoallv", "allreduce"};

static struct fns fns[NMODES];
static int rank, size;
static MPI_Comm ring;
static char *sbuf, *rbuf;
static int *counts, *displs;
static cd_handle cd;
static char state[64];

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void check(int rc, const char *what) {
    if (rc != MPI_SUCCESS) raw_mpi_die(what);
}

/* One call of `call` with blocks of `bytes`. */
static void one(const struct fns *f, int call, int bytes) {
    int doubles = bytes / 8 > 0 ? bytes / 8 : 1;
    switch (call) {
    case ALLTOALL:
        check(f->alltoall(sbuf, bytes, MPI_BYTE, rbuf, bytes, MPI_BYTE, MPI_COMM_WORLD),
              "MPI_Alltoall");
        break;
    case SCAN:
        check(f->scan(sbuf, rbuf, doubles, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "MPI_Scan");
        break;
    case REDUCE:
        check(f->reduce(sbuf, rbuf, doubles, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD),
              "MPI_Reduce");
        break;
    case NEIGHBOR:
        check(f->neighbor(sbuf, bytes, MPI_BYTE, rbuf, bytes, MPI_BYTE, ring),
              "MPI_Neighbor_alltoall");
        break;
    case IALLTOALL: {
        MPI_Request r;
        check(f->ialltoall(sbuf, bytes, MPI_BYTE, rbuf, bytes, MPI_BYTE, MPI_COMM_WORLD, &r),
              "MPI_Ialltoall");
        check(f->wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
        break;
    }
    case IALLTOALLV: {
        MPI_Request r;
        for (int j = 0; j < size; j++) counts[j] = bytes, displs[j] = j * bytes;
        check(f->ialltoallv(sbuf, counts, displs, MPI_BYTE, rbuf, counts, displs, MPI_BYTE,
                            MPI_COMM_WORLD, &r),
              "MPI_Ialltoallv");
        check(f->wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
        break;
    }
    case ISCAN: {
        MPI_Request r;
        check(f->iscan(sbuf, rbuf, doubles, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r), "MPI_Iscan");
        check(f->wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
        break;
    }
    default:
        check(f->allreduce(sbuf, rbuf, doubles, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
              "MPI_Allreduce");
    }
}

/* Seconds per call over `n` calls, every rank starting together. */
static double round_of(int mode, int call, int bytes, long n) {
    fns[RAW].barrier(MPI_COMM_WORLD);
    double t0 = now();
    for (long i = 0; i < n; i++) one(&fns[mode], call, bytes);
    double t = (now() - t0) / (double)n;
    if (mode == RECOVERY) {
        /* the journal pruned, as a program's next version does (outside the timing) */
        if (advance_cd_point_in_time(cd) != SUCCESS) raw_mpi_die("advance_cd_point_in_time");
        struct cd_addrspec r = {state, sizeof state, READ_WRITE, GLOBAL};
        if (add_to_cd_via_copy(cd, &r, 1) != SUCCESS) raw_mpi_die("add_to_cd_via_copy");
    }
    /* the slowest rank's time, which every rank then holds */
    fns[RAW].allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return t;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median and the quartiles of `v` (sorted in place). */
static void quartiles(double *v, int n, double *q1, double *med, double *q3) {
    qsort(v, (size_t)n, sizeof *v, by_value);
    *q1 = v[n / 4], *med = v[n / 2], *q3 = v[(3 * n) / 4];
}

/* A persistent root CD with its first version complete: in-job recovery is on from here. */
static void start_recovery(void) {
    char dir[256] = {0}, node[300], info[400];
    if (rank == 0) {
        snprintf(dir, sizeof dir, "%s/cd-bench-allform.XXXXXX",
                 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (mkdtemp(dir) == NULL) raw_mpi_die("mkdtemp");
    }
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    snprintf(node, sizeof node, "%s/node%d", dir, rank);
    if (mkdir(node, 0700) != 0) raw_mpi_die("mkdir of a node directory");
    snprintf(info, sizeof info, "dir=%s/node{rank};scheme=partner", dir);
    int error = 0;
    cd = create_cd(NULL, info, COMM_LOGGING_DISABLED, "allform", &error);
    if (cd == NULL) raw_mpi_die("create_cd");
    struct cd_addrspec r = {state, sizeof state, READ_WRITE, GLOBAL};
    if (add_to_cd_via_copy(cd, &r, 1) != SUCCESS) raw_mpi_die("add_to_cd_via_copy");
    if (advance_cd_point_in_time(cd) != SUCCESS) raw_mpi_die("advance_cd_point_in_time");
    if (add_to_cd_via_copy(cd, &r, 1) != SUCCESS) raw_mpi_die("add_to_cd_via_copy");
    if (rank == 0) {
        const char *ft = getenv("OMPI_MCA_mpi_ft_enable");
        printf("persistent CD in %s, version 1 complete; OMPI_MCA_mpi_ft_enable=%s%s\n", dir,
               ft ? ft : "(unset)",
               ft && strcmp(ft, "1") == 0 ? "" : " (not a ULFM job: no all-forms)");
    }
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int sizes[16] = {8, 65536}, nsizes = 2, rounds = 21;
    double target_ms = 5;
    for (int a = 1; a + 1 < argc; a += 2) {
        if (strcmp(argv[a], "--sizes") == 0) {
            nsizes = 0;
            for (char *t = strtok(argv[a + 1], ","); t && nsizes < 16; t = strtok(NULL, ","))
                sizes[nsizes++] = atoi(t);
        } else if (strcmp(argv[a], "--rounds") == 0) {
            rounds = atoi(argv[a + 1]);
        } else if (strcmp(argv[a], "--target-ms") == 0) {
            target_ms = atof(argv[a + 1]);
        }
    }
    if (rounds < 3) rounds = 3;
    void *h = raw_mpi_open();
    raw_mpi_sym(h, "PMPI_Alltoall", &fns[RAW].alltoall, sizeof fns[RAW].alltoall);
    raw_mpi_sym(h, "PMPI_Neighbor_alltoall", &fns[RAW].neighbor, sizeof fns[RAW].neighbor);
    raw_mpi_sym(h, "PMPI_Scan", &fns[RAW].scan, sizeof fns[RAW].scan);
    raw_mpi_sym(h, "PMPI_Allreduce", &fns[RAW].allreduce, sizeof fns[RAW].allreduce);
    raw_mpi_sym(h, "PMPI_Reduce", &fns[RAW].reduce, sizeof fns[RAW].reduce);
    raw_mpi_sym(h, "PMPI_Barrier", &fns[RAW].barrier, sizeof fns[RAW].barrier);
    raw_mpi_sym(h, "PMPI_Ialltoall", &fns[RAW].ialltoall, sizeof fns[RAW].ialltoall);
    raw_mpi_sym(h, "PMPI_Iscan", &fns[RAW].iscan, sizeof fns[RAW].iscan);
    raw_mpi_sym(h, "PMPI_Wait", &fns[RAW].wait, sizeof fns[RAW].wait);
    raw_mpi_sym(h, "PMPI_Ialltoallv", &fns[RAW].ialltoallv, sizeof fns[RAW].ialltoallv);
    fns[RECOVERY] = (struct fns){MPI_Alltoall, MPI_Neighbor_alltoall, MPI_Scan,
                                 MPI_Allreduce, MPI_Reduce,    MPI_Barrier,
                                 MPI_Ialltoall, MPI_Iscan,     MPI_Wait,
                                 MPI_Ialltoallv};
    int dims[1] = {size}, periods[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    int most = 0;
    for (int s = 0; s < nsizes; s++) most = sizes[s] > most ? sizes[s] : most;
    size_t len = (size_t)most * (size_t)(size > 2 ? size : 2) + 64;
    sbuf = calloc(len, 1), rbuf = calloc(len, 1);
    counts = calloc((size_t)size, sizeof(int)), displs = calloc((size_t)size, sizeof(int));
    if (!sbuf || !rbuf || !counts || !displs) raw_mpi_die("out of memory");
    start_recovery();
    if (rank == 0) {
        void *raw, *wrapped;
        memcpy(&raw, &fns[RAW].alltoall, sizeof raw);
        memcpy(&wrapped, &fns[RECOVERY].alltoall, sizeof wrapped);
        printf("raw: PMPI_Alltoall from %s; recovery: MPI_Alltoall from %s\n",
               raw_mpi_object_of(raw), raw_mpi_object_of(wrapped));
        printf("np %d, %d rounds per call and size, A B A B\n", size, rounds);
    }
    double *t[NMODES], *ratio = malloc(sizeof(double) * (size_t)rounds);
    for (int m = 0; m < NMODES; m++) t[m] = malloc(sizeof(double) * (size_t)rounds);
    for (int call = 0; call < NCALLS; call++) {
        for (int s = 0; s < nsizes; s++) {
            int bytes = sizes[s];
            /* calibrated on raw: iterations for about target_ms, the same in every round */
            double once = round_of(RAW, call, bytes, 10);
            long n = (long)(target_ms * 1e-3 / (once > 1e-9 ? once : 1e-9));
            n = n < 10 ? 10 : n > 100000 ? 100000 : n;
            for (int r = 0; r < rounds; r++) {
                int first = r % 2 ? RECOVERY : RAW;
                t[first][r] = round_of(first, call, bytes, n);
                t[1 - first][r] = round_of(1 - first, call, bytes, n);
                ratio[r] = t[RECOVERY][r] / t[RAW][r];
            }
            double q[NMODES][3], qr[3];
            for (int m = 0; m < NMODES; m++) quartiles(t[m], rounds, &q[m][0], &q[m][1], &q[m][2]);
            quartiles(ratio, rounds, &qr[0], &qr[1], &qr[2]);
            if (rank == 0)
                printf("%-9s %7d B  %s %9.2f us (IQR %.2f-%.2f)  %s %9.2f us (IQR %.2f-%.2f)  "
                       "recovery/raw %.2f (%.2f-%.2f)  %ld calls a round\n",
                       CALL[call], bytes, MODE[RAW], q[RAW][1] * 1e6, q[RAW][0] * 1e6,
                       q[RAW][2] * 1e6, MODE[RECOVERY], q[RECOVERY][1] * 1e6,
                       q[RECOVERY][0] * 1e6, q[RECOVERY][2] * 1e6, qr[1], qr[0], qr[2], n);
        }
    }
    if (commit_cd(cd) != SUCCESS) raw_mpi_die("commit_cd");
    MPI_Comm_free(&ring);
    MPI_Finalize();
    return 0;
}
