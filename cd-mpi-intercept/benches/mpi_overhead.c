/* The cost of libcd's MPI interposer (cd-mpi-intercept) at -np 2: ping-pong latency and
 * bandwidth, and MPI_Allreduce, in three modes timed interleaved in one run, plus the speed of
 * a replay from the log.
 *
 * Modes (each a table of function pointers, so every mode calls MPI the same way):
 *   raw   the MPI library's own PMPI_X, taken with dlsym on the MPI library's handle (found
 *         among the loaded objects with dl_iterate_phdr + dlopen(RTLD_NOLOAD)). This is MPI
 *         without any wrapper: the reference. (dlsym(RTLD_NEXT) or a call by name from this
 *         executable would find libcd's PMPI_X.)
 *   nocd  MPI_X as the executable binds it: libcd's wrapper (this program links -lcd before
 *         the MPI library, the same symbol order as LD_PRELOAD), no CD active, so the wrapper
 *         reads one thread-local and forwards.
 *   log   libcd's wrapper inside a root CD created with COMM_LOGGING_ENABLED on both ranks:
 *         every call is logged (receives and collectives copy their data into the log). The CD
 *         is a long-lived one in its steady state: it ran one interval and was advanced before
 *         the timed interval, and the timed interval ends with its advance (which discards the
 *         log; timed, it is part of logging's cost). So K, the iterations between advances,
 *         is the round's iteration count.
 *   raw+copy (added next to log) raw, plus the application copying every received message
 *         into a ring as large as one interval's log, reused: what a log costs that makes the one
 *         copy it cannot avoid and nothing else. log vs raw+copy is what logging could gain.
 *   direct (built with -DNO_LIBCD only) MPI_X from the executable, that is the MPI library's:
 *         the cross-check that the raw pointers cost what a plain MPI program pays.
 *   journal libcd's wrapper with in-job recovery's sender-side journal on (issue 23): at the
 *         start, a persistent root CD (COMM_LOGGING_DISABLED, storage_info
 *         dir=<tmp>/node{rank};scheme=partner, CD_REDSET_FAILURE_GROUP node{rank} unless set)
 *         with a 64-byte range is created and advanced once, so a version is complete and, in
 *         a ULFM job (mpirun --with-ft ulfm, which sets OMPI_MCA_mpi_ft_enable=1), every send
 *         on MPI_COMM_WORLD is packed into the journal and every collective's result kept.
 *         Each journal round is followed, outside its timing, by an advance of that CD (a
 *         persist, which prunes the journal: its cost is persistence's, cd-persist's
 *         BENCHMARKS.md). Once the journal is on every wrapped call on the world journals, so
 *         journal cannot share a launch with nocd or log (run those in another launch, each
 *         against its own raw), and only with --bench pingpong,allreduce. raw+copy comes with
 *         it, the reference of the goal for large messages (raw plus one memcpy of the
 *         message).
 *   journal+log the journal with the CD logging too: the persistent root CD is created with
 *         COMM_LOGGING_ENABLED, so every call is both journaled (in-job recovery) and logged
 *         (local replay), as inside a CD that logs in a ULFM job. Its advance, which prunes
 *         both, is untimed as journal's. A launch of its own, as journal.
 *
 * Rounds: for each size, rounds of a fixed iteration count (calibrated on raw to about
 * --target-ms, default 5, and at most 64 MiB of messages) run mode after mode (raw nocd log, then nocd log raw, ...: the order rotates so
 * that no mode always follows another), both ranks in the same mode, synchronized by a raw
 * barrier outside the timing. Reported per mode: the median time per iteration and its
 * inter-quartile range over the rounds; the ratios are of medians, with the IQR of the ratios
 * of adjacent rounds (same load) in brackets. Times are rank 0's (CLOCK_MONOTONIC).
 * Ping-pong: rank 0 sends `size` bytes, rank 1 returns them; latency = round trip / 2,
 * bandwidth = size / latency. Allreduce: MPI_SUM over size/8 doubles.
 *
 * Replay: both ranks run N logged iterations in a CD that preserved the loop counter; rank 0
 * then calls restore_cd and re-executes the N iterations, its sends dropped and its receives
 * (and allreduce results) served from the log, while rank 1 waits in a barrier. Reported:
 * replay time (restore_cd included) against the original logged N iterations and against raw
 * N iterations, all from the same rounds. Every iteration checks a stamp in the data (rank 1's
 * iteration number; the allreduce sum) so a replay that served the wrong record fails.
 *
 * Also reported: log bytes per iteration on each rank (cd_get_info's log_bytes before the
 * advance) and minor page faults per iteration on rank 0.
 *
 * Stages (--bench stages, not in the default set): where logging's time goes, without a peer
 * to wait for. Each rank calls MPI_Allreduce on MPI_COMM_SELF (MPI copies the buffer; the log
 * records it: one record of `size` bytes per call) in the three modes, and in the same rounds
 * memcpy's the same bytes into a reused ring of one interval's size (mode "copy"): the one copy
 * a log cannot avoid.
 * (log - nocd) / copy says how many such copies a record costs.
 * Receive stages (--bench selfrecv): the same with MPI_Sendrecv of `size` bytes from each rank
 * to itself on MPI_COMM_SELF: one receive record per call (the record a ping-pong's answer
 * waits for), the data stamped and checked.
 *
 * Journal stages (--bench packing, not in the default set; no libcd needed): what the journal
 * does with each message it keeps, on each rank alone, without MPI traffic, in rotating
 * rounds of N messages: copy (memcpy into a reused ring, the one copy of the goal), pack
 * (MPI_Pack of MPI_BYTEs into the same reused ring), fresh (the journal's way:
 * MPI_Pack_size, a zeroed buffer of that size allocated per message, MPI_Pack into it, every
 * buffer kept until the round ends and then freed, as the journal keeps them until the next
 * version; the frees timed), touch (the fresh buffers alone: allocated, one byte written per
 * 4 KiB page, kept and freed the same way: their page faults without the copy). N: 64 MiB of
 * messages, at most 65536.
 *
 * Usage: mpi_overhead [--bench pingpong,allreduce,replay,stages,selfrecv,packing]
 *                     [--modes raw,nocd,log | raw,journal | raw,journal+log]
 *                     [--sizes 8,64,...] [--ar-sizes 8,...] [--rounds R] [--target-ms T]
 *                     [--any-source 1]
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#ifndef NO_LIBCD
#include <cd.h>
#endif

typedef int (*send_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
typedef int (*recv_fn)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);
typedef int (*allreduce_fn)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
typedef int (*sendrecv_fn)(const void *, int, MPI_Datatype, int, int, void *, int, MPI_Datatype,
                           int, int, MPI_Comm, MPI_Status *);
typedef int (*barrier_fn)(MPI_Comm);
typedef int (*bcast_fn)(void *, int, MPI_Datatype, int, MPI_Comm);
typedef int (*pack_fn)(const void *, int, MPI_Datatype, void *, int, int *, MPI_Comm);
typedef int (*pack_size_fn)(int, MPI_Datatype, MPI_Comm, int *);
static pack_fn raw_pack; /* the MPI library's own PMPI_Pack and PMPI_Pack_size */
static pack_size_fn raw_pack_size;

struct mpi_fns {
    send_fn send;
    recv_fn recv;
    allreduce_fn allreduce;
    barrier_fn barrier;
    bcast_fn bcast;
    sendrecv_fn sendrecv;
};

enum mode { RAW, NOCD, LOG, DIRECT, RAWCOPY, COPY, JOURNAL, JOURNAL_LOG, NMODES };
static const char *const MODE_NAME[NMODES] = {"raw",  "nocd",    "log",        "direct", "raw+copy",
                                              "copy", "journal", "journal+log"};
enum bench { PINGPONG, ALLREDUCE, SELF, SELFRECV };

static struct mpi_fns raw_fns, exe_fns; /* the MPI library's PMPI_X; MPI_X as bound here */
static int rank;
static long stamp_errors;
static char *sbuf, *rbuf;
static char *ring; /* the copy reference's destination, see copy_one() */
static size_t ring_len, ring_at;
static int copying; /* raw+copy: every received message is also copied into the ring */
static int journal_on; /* 1: the journal mode is among the modes, 2: journal+log */

/* The one copy a log cannot avoid: `size` received bytes to the next slot of a ring as large
 * as one interval's log (n * size bytes), pre-faulted and reused round after round, as a log
 * that recycled its memory would write them. */
static void copy_one(int size) {
    if (ring_at + (size_t)size > ring_len) ring_at = 0;
    memcpy(ring + ring_at, rbuf, (size_t)size);
    ring_at += (size_t)size;
    __asm__ volatile("" ::: "memory"); /* keep every copy */
}

static void die(const char *what) {
    fprintf(stderr, "rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static long minflt(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

/* ---- finding the MPI library's own PMPI_X ---------------------------------------------- */

#include "raw_mpi.h"

static void resolve(void) {
    void *h = raw_mpi_open();
    raw_mpi_sym(h, "PMPI_Send", &raw_fns.send, sizeof raw_fns.send);
    raw_mpi_sym(h, "PMPI_Recv", &raw_fns.recv, sizeof raw_fns.recv);
    raw_mpi_sym(h, "PMPI_Allreduce", &raw_fns.allreduce, sizeof raw_fns.allreduce);
    raw_mpi_sym(h, "PMPI_Barrier", &raw_fns.barrier, sizeof raw_fns.barrier);
    raw_mpi_sym(h, "PMPI_Bcast", &raw_fns.bcast, sizeof raw_fns.bcast);
    raw_mpi_sym(h, "PMPI_Sendrecv", &raw_fns.sendrecv, sizeof raw_fns.sendrecv);
    raw_mpi_sym(h, "PMPI_Pack", &raw_pack, sizeof raw_pack);
    raw_mpi_sym(h, "PMPI_Pack_size", &raw_pack_size, sizeof raw_pack_size);
    exe_fns =
        (struct mpi_fns){MPI_Send, MPI_Recv, MPI_Allreduce, MPI_Barrier, MPI_Bcast, MPI_Sendrecv};
    if (rank == 0) {
        void *raw_send, *exe_send;
        memcpy(&raw_send, &raw_fns.send, sizeof raw_send);
        memcpy(&exe_send, &exe_fns.send, sizeof exe_send);
        printf("raw:  PMPI_Send from %s\n", raw_mpi_object_of(raw_send));
        printf("MPI_Send as bound by this executable: %s\n", raw_mpi_object_of(exe_send));
        if (raw_send == exe_send) printf("(the same function)\n");
    }
}

/* ---- the timed loops -------------------------------------------------------------------- */

/* --any-source: the ping-pong's receives name MPI_ANY_SOURCE (a choice: in-job recovery
 * records each at the partner in the journal mode). */
static int any_source;

/* Ping-pong of `size` bytes, iterations *i .. n-1 (the counter lives in memory so that a CD
 * can preserve it). Rank 1 stamps its iteration number into the message it returns. */
static void pingpong(const struct mpi_fns *f, int size, long *i, long n) {
    MPI_Status st;
    if (rank == 0) {
        for (; *i < n; (*i)++) {
            f->send(sbuf, size, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
            f->recv(rbuf, size, MPI_BYTE, any_source ? MPI_ANY_SOURCE : 1, 8, MPI_COMM_WORLD, &st);
            if (copying) copy_one(size);
            long s;
            memcpy(&s, rbuf, sizeof s);
            stamp_errors += s != *i;
        }
    } else if (rank == 1) {
        for (; *i < n; (*i)++) {
            f->recv(rbuf, size, MPI_BYTE, any_source ? MPI_ANY_SOURCE : 0, 7, MPI_COMM_WORLD, &st);
            if (copying) copy_one(size);
            memcpy(rbuf, i, sizeof *i);
            f->send(rbuf, size, MPI_BYTE, 0, 8, MPI_COMM_WORLD);
        }
    }
}

/* Allreduce (sum) of size/8 doubles over `comm` of `ranks` ranks; element 0 is the
 * iteration number on every rank. */
static void allreduce(const struct mpi_fns *f, int size, long *i, long n, MPI_Comm comm,
                      int ranks) {
    double *s = (double *)sbuf, *r = (double *)rbuf;
    for (; *i < n; (*i)++) {
        s[0] = (double)*i;
        f->allreduce(s, r, size / 8, MPI_DOUBLE, MPI_SUM, comm);
        if (copying) copy_one(size);
        stamp_errors += r[0] != ranks * (double)*i;
    }
}

/* Sendrecv of `size` bytes from this rank to itself on MPI_COMM_SELF; the first 8 bytes are
 * the iteration number. */
static void selfrecv(const struct mpi_fns *f, int size, long *i, long n) {
    MPI_Status st;
    for (; *i < n; (*i)++) {
        memcpy(sbuf, i, sizeof *i);
        f->sendrecv(sbuf, size, MPI_BYTE, 0, 5, rbuf, size, MPI_BYTE, 0, 5, MPI_COMM_SELF, &st);
        if (copying) copy_one(size);
        long s;
        memcpy(&s, rbuf, sizeof s);
        stamp_errors += s != *i;
    }
}

/* Copies alone (the stages' reference). */
static void copy(int size, long n) {
    for (long i = 0; i < n; i++) copy_one(size);
}

static void run(enum bench b, const struct mpi_fns *f, int size, long n) {
    long i = 0;
    if (b == PINGPONG)
        pingpong(f, size, &i, n);
    else if (b == ALLREDUCE)
        allreduce(f, size, &i, n, MPI_COMM_WORLD, 2);
    else if (b == SELF)
        allreduce(f, size, &i, n, MPI_COMM_SELF, 1);
    else
        selfrecv(f, size, &i, n);
}

#ifndef NO_LIBCD
static cd_handle logging_cd(void) {
    int error = 0;
    cd_handle cd = create_cd(NULL, NULL, COMM_LOGGING_ENABLED, NULL, &error);
    if (cd == NULL) die("create_cd");
    return cd;
}

static void advance(cd_handle cd) {
    if (advance_cd_point_in_time(cd) == FAILURE) die("advance_cd_point_in_time");
}

/* The journal mode's persistent root CD, its range and its directory (see the top). */
static cd_handle journal_cd;
static char journal_range[64];
static char journal_dir[256];

static void journal_advance(void) {
    advance(journal_cd);
    /* an advance demotes the range to READ_ONLY: promote it again, as a program would */
    struct cd_addrspec r = {journal_range, sizeof journal_range, READ_WRITE, GLOBAL};
    if (add_to_cd_via_copy(journal_cd, &r, 1) != SUCCESS) die("add_to_cd_via_copy");
}

static void journal_start(void) {
    if (rank == 0) {
        snprintf(journal_dir, sizeof journal_dir, "%s/cd-bench-journal.XXXXXX",
                 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (mkdtemp(journal_dir) == NULL) die("mkdtemp");
    }
    raw_fns.bcast(journal_dir, sizeof journal_dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    char node[300], info[400];
    snprintf(node, sizeof node, "%s/node%d", journal_dir, rank);
    if (mkdir(node, 0700) != 0) die("mkdir of the journal mode's node directory");
    snprintf(info, sizeof info, "dir=%s/node{rank};scheme=partner", journal_dir);
    int error = 0;
    int logs = journal_on == 2 ? COMM_LOGGING_ENABLED : COMM_LOGGING_DISABLED;
    journal_cd = create_cd(NULL, info, logs, "journal", &error);
    if (journal_cd == NULL) die("create_cd (persistent, for the journal mode)");
    struct cd_addrspec r = {journal_range, sizeof journal_range, READ_WRITE, GLOBAL};
    if (add_to_cd_via_copy(journal_cd, &r, 1) != SUCCESS) die("add_to_cd_via_copy");
    journal_advance(); /* version 1 complete: the journal is on from here (in a ULFM job) */
    if (rank == 0) {
        const char *ft = getenv("OMPI_MCA_mpi_ft_enable");
        printf("journal: persistent CD in %s, version 1 complete; OMPI_MCA_mpi_ft_enable=%s%s\n",
               journal_dir, ft ? ft : "(unset)",
               ft && strcmp(ft, "1") == 0 ? "" : " (not a ULFM job: no journal, this is nocd)");
    }
}

static void journal_end(void) {
    if (commit_cd(journal_cd) != SUCCESS) die("commit_cd");
    raw_fns.barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", journal_dir);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", journal_dir);
    }
}
#endif

struct sample {
    double t;         /* seconds per iteration */
    double faults;    /* minor faults per iteration (rank 0) */
    double log_bytes; /* log bytes per iteration (this rank) */
};

/* One round of `n` iterations in mode `m`; both ranks call it. */
static struct sample round_of(enum bench b, enum mode m, int size, long n) {
    struct sample s = {0, 0, 0};
    const struct mpi_fns *f = m == RAW || m == RAWCOPY ? &raw_fns : &exe_fns;
    copying = m == RAWCOPY;
    ring_at = 0;
    if (m == COPY) {
        raw_fns.barrier(MPI_COMM_WORLD);
        long f0 = minflt();
        double t0 = now();
        copy(size, n);
        s.t = (now() - t0) / (double)n;
        s.faults = (double)(minflt() - f0) / (double)n;
        return s;
    }
#ifndef NO_LIBCD
    cd_handle cd = NULL;
    if (m == LOG) { /* steady state: one interval logged and advanced before the timed one */
        cd = logging_cd();
        run(b, f, size, n);
        advance(cd);
    }
#endif
    raw_fns.barrier(MPI_COMM_WORLD);
    long f0 = minflt();
    double t0 = now();
    run(b, f, size, n);
    double t = now() - t0;
#ifndef NO_LIBCD
    if (m == JOURNAL || m == JOURNAL_LOG) journal_advance(); /* untimed (see the top) */
    if (m == LOG) {
        struct cd_info info;
        if (cd_get_info(cd, &info) != SUCCESS) die("cd_get_info");
        s.log_bytes = (double)info.log_bytes / (double)n;
        double t1 = now();
        advance(cd);
        t += now() - t1;
        if (commit_cd(cd) != SUCCESS) die("commit_cd");
    }
#endif
    s.faults = (double)(minflt() - f0) / (double)n;
    s.t = t / (double)n;
    copying = 0;
    return s;
}

/* ---- statistics ------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile (0..1) of v[0..n), linear interpolation; v is left sorted. */
static double quantile(double *v, int n, double q) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double at = q * (n - 1);
    int lo = (int)at;
    if (lo >= n - 1) return v[n - 1];
    return v[lo] + (at - lo) * (v[lo + 1] - v[lo]);
}

struct summary {
    double med, q1, q3;
};

static struct summary summarize(const double *v, int n) {
    double *c = malloc((size_t)n * sizeof *c);
    memcpy(c, v, (size_t)n * sizeof *c);
    struct summary s = {quantile(c, n, 0.5), quantile(c, n, 0.25), quantile(c, n, 0.75)};
    free(c);
    return s;
}

/* ---- options ---------------------------------------------------------------------------- */

#define MAX_SIZES 32
static int modes[NMODES], nmodes;
static int sizes[MAX_SIZES], nsizes;
static int ar_sizes[MAX_SIZES], nar_sizes;
static int rounds = 31;
static double target = 0.005;
static int do_pingpong = 1, do_allreduce = 1, do_replay = 1, do_stages = 0, do_selfrecv = 0,
           do_packing = 0;

static int parse_sizes(const char *s, int *out) {
    int n = 0;
    while (*s && n < MAX_SIZES) {
        char *end;
        long v = strtol(s, &end, 10);
        if (*end == 'k' || *end == 'K') v <<= 10, end++;
        if (*end == 'm' || *end == 'M') v <<= 20, end++;
        if (end == s || v < 8 || v % 8 != 0) die("sizes are multiples of 8 bytes");
        out[n++] = (int)v;
        s = *end == ',' ? end + 1 : end;
    }
    return n;
}

static void parse(int argc, char **argv) {
#ifdef NO_LIBCD
    const char *mode_list = "raw,direct";
#else
    const char *mode_list = "raw,nocd,log";
#endif
    nsizes = parse_sizes("8,64,512,4k,32k,256k,1M,4M", sizes);
    nar_sizes = parse_sizes("8,64,512,4k,32k,256k,1M", ar_sizes);
    for (int a = 1; a + 1 < argc; a += 2) {
        const char *k = argv[a], *v = argv[a + 1];
        if (strcmp(k, "--bench") == 0) {
            do_pingpong = strstr(v, "pingpong") != NULL;
            do_allreduce = strstr(v, "allreduce") != NULL;
            do_replay = strstr(v, "replay") != NULL;
            do_stages = strstr(v, "stages") != NULL;
            do_selfrecv = strstr(v, "selfrecv") != NULL;
            do_packing = strstr(v, "packing") != NULL;
        } else if (strcmp(k, "--modes") == 0) {
            mode_list = v;
        } else if (strcmp(k, "--sizes") == 0) {
            nsizes = parse_sizes(v, sizes);
        } else if (strcmp(k, "--ar-sizes") == 0) {
            nar_sizes = parse_sizes(v, ar_sizes);
        } else if (strcmp(k, "--rounds") == 0) {
            rounds = atoi(v);
        } else if (strcmp(k, "--target-ms") == 0) {
            target = atof(v) / 1000.0;
        } else if (strcmp(k, "--any-source") == 0) {
            any_source = atoi(v) != 0;
        } else {
            die("unknown option (see the comment at the top of mpi_overhead.c)");
        }
    }
    if (rounds < 1) die("--rounds must be positive");
    char copy[128];
    snprintf(copy, sizeof copy, "%s", mode_list);
    for (char *t = strtok(copy, ","); t != NULL; t = strtok(NULL, ",")) {
        int m = 0;
        while (m < NMODES && strcmp(t, MODE_NAME[m]) != 0) m++;
        if (m == NMODES) die("unknown mode");
#ifdef NO_LIBCD
        if (m == NOCD || m == LOG || m == JOURNAL || m == JOURNAL_LOG)
            die("nocd, log and the journal need libcd (built without -DNO_LIBCD)");
#else
        if (m == DIRECT) die("direct is the -DNO_LIBCD build's mode (here it would be nocd)");
#endif
        modes[nmodes++] = m;
    }
    if (nmodes == 0 || modes[0] != RAW) die("--modes must start with raw (the reference)");
    for (int k = 0; k < nmodes; k++) {
        int on = modes[k] == JOURNAL ? 1 : modes[k] == JOURNAL_LOG ? 2 : 0;
        if (on && journal_on && on != journal_on)
            die("journal and journal+log need launches of their own (see the top)");
        if (on) journal_on = on;
    }
    for (int k = 0; journal_on && k < nmodes; k++)
        if (modes[k] == NOCD || modes[k] == LOG)
            die("journal cannot share a launch with nocd or log (see the top)");
    if (journal_on && (do_replay || do_stages || do_selfrecv || do_packing))
        die("journal runs with --bench pingpong,allreduce only");
}

/* ---- drivers ---------------------------------------------------------------------------- */

/* At most this many bytes of messages per round: a log interval stays far below the log's
 * spill threshold (CD_MPI_LOG_SPILL, 256 MiB), so no round measures spilling to files. */
#define MAX_INTERVAL (64L << 20)

/* Iterations per round, so that a raw round takes about `target` on rank 0 (and at most
 * MAX_INTERVAL bytes): doubles until a round takes a quarter of it, then scales by the fastest
 * of three trials of that length (a rank descheduled for a while must not make the rounds
 * short). Rank 0 decides. */
static long calibrate(enum bench b, int size) {
    long n = 1;
    double t = 0;
    for (;;) {
        raw_fns.barrier(MPI_COMM_WORLD);
        double t0 = now();
        run(b, &raw_fns, size, n);
        t = now() - t0;
        int more = t < target / 4 && n < (1L << 22);
        raw_fns.bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!more) break;
        n *= 2;
    }
    for (int trial = 0; trial < 3; trial++) {
        raw_fns.barrier(MPI_COMM_WORLD);
        double t0 = now();
        run(b, &raw_fns, size, n);
        double dt = now() - t0;
        t = dt < t ? dt : t;
    }
    long out = (long)(target / t * (double)n + 0.5);
    if (out > MAX_INTERVAL / size) out = MAX_INTERVAL / size;
    out = out < 2 ? 2 : out;
    raw_fns.bcast(&out, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    return out;
}

/* Rank 1's value, to rank 0 (outside any timing). */
static double from_rank1(double v) {
    MPI_Status st;
    if (rank == 1) raw_fns.send(&v, 1, MPI_DOUBLE, 0, 99, MPI_COMM_WORLD);
    if (rank == 0) raw_fns.recv(&v, 1, MPI_DOUBLE, 1, 99, MPI_COMM_WORLD, &st);
    return v;
}

static void fmt_size(int size, char *out, size_t len) {
    if (size >= (1 << 20) && size % (1 << 20) == 0)
        snprintf(out, len, "%d MiB", size >> 20);
    else if (size >= 1024 && size % 1024 == 0)
        snprintf(out, len, "%d KiB", size >> 10);
    else
        snprintf(out, len, "%d B", size);
}

static void bench_modes(enum bench b) {
    const int *sz = b == ALLREDUCE ? ar_sizes : sizes;
    const int nsz = b == ALLREDUCE ? nar_sizes : nsizes;
    int ms[NMODES], nm = 0, log_k = -1, nocd_k = -1, journal_k = -1, rawcopy_k = -1;
    for (int k = 0; k < nmodes; k++) {
        if (modes[k] == LOG) log_k = nm;
        if (modes[k] == NOCD) nocd_k = nm;
        if (modes[k] == JOURNAL || modes[k] == JOURNAL_LOG) journal_k = nm;
        ms[nm++] = modes[k];
    }
    const int faults_k = log_k >= 0 ? log_k : journal_k; /* the CD mode whose faults are shown */
    const int alone = b == SELF || b == SELFRECV; /* each rank alone: the copy alongside */
    if (alone) ms[nm++] = COPY;
    else if (log_k >= 0 || journal_k >= 0) rawcopy_k = nm, ms[nm++] = RAWCOPY;
    const int split = alone && log_k >= 0 && nocd_k >= 0; /* log - nocd vs copy */
    if (rank == 0) {
        if (b == PINGPONG)
            printf("\nping-pong: time per one-way message (round trip / 2)");
        else if (b == ALLREDUCE)
            printf("\nallreduce (MPI_SUM of doubles, both ranks): time per call");
        else if (b == SELF)
            printf("\nstages: allreduce on MPI_COMM_SELF (one log record per call, no peer), "
                   "each rank alone, and a reused-buffer memcpy of the same size: time per call");
        else
            printf("\nreceive stages: sendrecv to itself on MPI_COMM_SELF (one receive record per "
                   "call, no peer), each rank alone, and a reused-buffer memcpy of the same size: "
                   "time per call");
        printf(", %d rounds per mode and size; median [IQR] in us; ratios of medians "
               "[IQR of adjacent-round ratios]\n\n| size | iters/round |",
               rounds);
        int cols = 2;
        for (int k = 0; k < nm; k++, cols++) printf(" %s |", MODE_NAME[ms[k]]);
        for (int k = 1; k < nm; k++)
            if (ms[k] != COPY) printf(" %s/raw |", MODE_NAME[ms[k]]), cols++;
        if (b == PINGPONG) printf(" raw MB/s |"), cols++;
        if (split) printf(" (log-nocd)/copy |"), cols++;
        if (journal_k >= 0 && rawcopy_k >= 0)
            printf(" %s/(raw+copy) |", MODE_NAME[ms[journal_k]]), cols++;
        if (log_k >= 0) printf(" log B/iter r0, r1 |"), cols++;
        if (faults_k >= 0) printf(" faults/iter r0 raw, %s |", MODE_NAME[ms[faults_k]]), cols++;
        printf("\n|");
        for (int k = 0; k < cols; k++) printf("---|");
        printf("\n");
        fflush(stdout);
    }
    double *t = malloc((size_t)(NMODES * rounds) * sizeof *t);
    double *faults = malloc((size_t)(NMODES * rounds) * sizeof *faults);
    double *ratio = malloc((size_t)rounds * sizeof *ratio);
    for (int z = 0; z < nsz; z++) {
        const int size = sz[z];
        const long n = calibrate(b, size);
        double log_bytes = 0;
        ring_len = (size_t)size * (size_t)n; /* <= MAX_INTERVAL (calibrate) */
        if (posix_memalign((void **)&ring, 4096, ring_len) != 0) die("out of memory");
        memset(ring, 1, ring_len);
        for (int k = 0; k < nm; k++) round_of(b, (enum mode)ms[k], size, n); /* warm-up */
        for (int r = 0; r < rounds; r++)
            for (int j = 0; j < nm; j++) {
                int k = (j + r) % nm; /* rotate the order */
                struct sample s = round_of(b, (enum mode)ms[k], size, n);
                t[k * rounds + r] = s.t / (b == PINGPONG ? 2.0 : 1.0);
                faults[k * rounds + r] = s.faults;
                if (s.log_bytes > 0) log_bytes = s.log_bytes;
            }
        double log_bytes1 = from_rank1(log_bytes);
        free(ring);
        ring = NULL;
        if (rank != 0) continue;
        char label[32];
        fmt_size(size, label, sizeof label);
        printf("| %s | %ld |", label, n);
        struct summary s[NMODES];
        for (int k = 0; k < nm; k++) {
            s[k] = summarize(&t[k * rounds], rounds);
            /* Times under 1 us to 0.1 ns: a few ns per record is what is measured there. */
            if (s[k].med < 1e-6)
                printf(" %.4f [%.4f–%.4f] |", s[k].med * 1e6, s[k].q1 * 1e6, s[k].q3 * 1e6);
            else
                printf(" %.3f [%.3f–%.3f] |", s[k].med * 1e6, s[k].q1 * 1e6, s[k].q3 * 1e6);
        }
        for (int k = 1; k < nm; k++) {
            if (ms[k] == COPY) continue;
            for (int r = 0; r < rounds; r++) ratio[r] = t[k * rounds + r] / t[r];
            struct summary q = summarize(ratio, rounds);
            printf(" **%.3f** [%.3f–%.3f] |", s[k].med / s[0].med, q.q1, q.q3);
        }
        if (b == PINGPONG) printf(" %.0f |", size / s[0].med / 1e6);
        if (split) {
            const int c = nm - 1;
            for (int r = 0; r < rounds; r++)
                ratio[r] = (t[log_k * rounds + r] - t[nocd_k * rounds + r]) / t[c * rounds + r];
            struct summary q = summarize(ratio, rounds);
            printf(" %.2f [%.2f–%.2f] |", (s[log_k].med - s[nocd_k].med) / s[c].med, q.q1, q.q3);
        }
        if (journal_k >= 0 && rawcopy_k >= 0) {
            for (int r = 0; r < rounds; r++)
                ratio[r] = t[journal_k * rounds + r] / t[rawcopy_k * rounds + r];
            struct summary q = summarize(ratio, rounds);
            printf(" **%.3f** [%.3f–%.3f] |", s[journal_k].med / s[rawcopy_k].med, q.q1, q.q3);
        }
        if (log_k >= 0) printf(" %.0f, %.0f |", log_bytes, log_bytes1);
        if (faults_k >= 0)
            printf(" %.2f, %.2f |", summarize(&faults[0], rounds).med,
                   summarize(&faults[faults_k * rounds], rounds).med);
        printf("\n");
        fflush(stdout);
    }
    free(ratio);
    free(faults);
    free(t);
}

/* ---- the journal's stages (--bench packing) ---------------------------------------------- */

enum stage { S_COPY, S_PACK, S_FRESH, S_TOUCH, NSTAGES };

/* One round of stage `k`: n messages of `size` bytes from sbuf; seconds per message. */
static double stage_round(enum stage k, int size, long n, char **kept) {
    int cap = 0, pos;
    raw_pack_size(size, MPI_BYTE, MPI_COMM_SELF, &cap);
    ring_at = 0;
    double t0 = now();
    for (long i = 0; i < n; i++) {
        if (k == S_COPY) {
            memcpy(ring + ring_at, sbuf, (size_t)size);
        } else if (k == S_PACK) {
            pos = 0;
            raw_pack(sbuf, size, MPI_BYTE, ring + ring_at, cap, &pos, MPI_COMM_SELF);
        } else {
            if (k == S_FRESH) raw_pack_size(size, MPI_BYTE, MPI_COMM_SELF, &cap); /* per message */
            kept[i] = calloc(1, (size_t)cap);
            if (kept[i] == NULL) die("out of memory");
            if (k == S_FRESH) {
                pos = 0;
                raw_pack(sbuf, size, MPI_BYTE, kept[i], cap, &pos, MPI_COMM_SELF);
            } else {
                for (int b = 0; b < cap; b += 4096) kept[i][b] = 1;
            }
        }
        ring_at += (size_t)size;
        if (ring_at + (size_t)size > ring_len) ring_at = 0;
        __asm__ volatile("" ::: "memory");
    }
    if (k == S_FRESH || k == S_TOUCH)
        for (long i = 0; i < n; i++) free(kept[i]);
    return (now() - t0) / (double)n;
}

static void bench_packing(void) {
    if (rank == 0)
        printf("\njournal stages, each rank alone, %d rounds per stage and size: time per message, "
               "median [IQR] in us; ratios to copy of medians [IQR of adjacent-round ratios]\n\n"
               "| size | messages/round | copy | pack | fresh | touch | pack/copy | fresh/copy | "
               "touch/copy | faults/message fresh |\n|---|---|---|---|---|---|---|---|---|---|\n",
               rounds);
    double *t = malloc((size_t)(NSTAGES * rounds) * sizeof *t);
    double *ratio = malloc((size_t)rounds * sizeof *ratio);
    for (int z = 0; z < nsizes; z++) {
        const int size = sizes[z];
        long n = MAX_INTERVAL / size;
        n = n > 65536 ? 65536 : n;
        ring_len = (size_t)size * (size_t)n;
        char **kept = malloc((size_t)n * sizeof *kept);
        if (posix_memalign((void **)&ring, 4096, ring_len) != 0 || kept == NULL)
            die("out of memory");
        memset(ring, 1, ring_len);
        for (int k = 0; k < NSTAGES; k++) stage_round((enum stage)k, size, n, kept); /* warm-up */
        double faults = 0;
        for (int r = 0; r < rounds; r++)
            for (int j = 0; j < NSTAGES; j++) {
                int k = (j + r) % NSTAGES;
                raw_fns.barrier(MPI_COMM_WORLD);
                long f0 = minflt();
                t[k * rounds + r] = stage_round((enum stage)k, size, n, kept);
                if (k == S_FRESH) faults += (double)(minflt() - f0) / (double)n;
            }
        free(kept);
        free(ring);
        ring = NULL;
        if (rank != 0) continue;
        char label[32];
        fmt_size(size, label, sizeof label);
        printf("| %s | %ld |", label, n);
        struct summary s[NSTAGES];
        for (int k = 0; k < NSTAGES; k++) {
            s[k] = summarize(&t[k * rounds], rounds);
            printf(" %.4f [%.4f–%.4f] |", s[k].med * 1e6, s[k].q1 * 1e6, s[k].q3 * 1e6);
        }
        for (int k = 1; k < NSTAGES; k++) {
            for (int r = 0; r < rounds; r++) ratio[r] = t[k * rounds + r] / t[r];
            struct summary q = summarize(ratio, rounds);
            printf(" **%.2f** [%.2f–%.2f] |", s[k].med / s[0].med, q.q1, q.q3);
        }
        printf(" %.1f |\n", faults / rounds);
        fflush(stdout);
    }
    free(ratio);
    free(t);
}

#ifndef NO_LIBCD
/* One replay round: raw N iterations, logged N iterations, then (rank 0) restore and
 * re-execution. Returns rank 0's three times per iteration. */
static void replay_round(enum bench b, int size, long n, double out[3]) {
    raw_fns.barrier(MPI_COMM_WORLD);
    double t0 = now();
    run(b, &raw_fns, size, n);
    out[0] = (now() - t0) / (double)n;

    raw_fns.barrier(MPI_COMM_WORLD);
    cd_handle cd = logging_cd();
    long i = 0;
    struct cd_addrspec counter = {&i, sizeof i, READ_WRITE, GLOBAL};
    if (add_to_cd_via_copy(cd, &counter, 1) != SUCCESS) die("add_to_cd_via_copy");
    int replaying = 0; /* not preserved: tells the re-execution apart */
    t0 = now();
    for (;;) {
        if (b == PINGPONG)
            pingpong(&exe_fns, size, &i, n);
        else
            allreduce(&exe_fns, size, &i, n, MPI_COMM_WORLD, 2);
        double t = now() - t0;
        if (replaying) {
            out[2] = t / (double)n;
            break;
        }
        out[1] = t / (double)n;
        if (rank != 0) break;
        replaying = 1;
        t0 = now();
        if (restore_cd(cd) != SUCCESS) die("restore_cd");
        if (i != 0) die("restore_cd did not restore the loop counter");
    }
    if (commit_cd(cd) != SUCCESS) die("commit_cd");
    raw_fns.barrier(MPI_COMM_WORLD); /* rank 1 waits here during the replay */
}

static void bench_replay(void) {
    if (rank == 0) {
        printf("\nreplay, %d rounds per size: rank 0 re-executes N iterations from its log after "
               "restore_cd (time per iteration, restore included; median [IQR])\n\n",
               rounds);
        printf("| call | size | N | raw us | original (logged) us | replay us | "
               "replay/original | replay/raw |\n|---|---|---|---|---|---|---|---|\n");
    }
    double *t = malloc((size_t)(3 * rounds) * sizeof *t), *ratio = malloc(2 * (size_t)rounds * sizeof *ratio);
    for (int bb = 0; bb < 2; bb++) {
        enum bench b = (enum bench)bb;
        const int *sz = b == PINGPONG ? sizes : ar_sizes;
        const int nsz = b == PINGPONG ? nsizes : nar_sizes;
        for (int z = 0; z < nsz; z++) {
            const int size = sz[z];
            const long n = calibrate(b, size);
            double out[3];
            replay_round(b, size, n, out); /* warm-up */
            for (int r = 0; r < rounds; r++) {
                replay_round(b, size, n, out);
                for (int k = 0; k < 3; k++) t[k * rounds + r] = out[k];
                ratio[r] = out[2] / out[1];
                ratio[rounds + r] = out[2] / out[0];
            }
            if (rank != 0) continue;
            char label[32];
            fmt_size(size, label, sizeof label);
            struct summary s[3];
            printf("| %s | %s | %ld |", b == PINGPONG ? "ping-pong" : "allreduce", label, n);
            for (int k = 0; k < 3; k++) {
                s[k] = summarize(&t[k * rounds], rounds);
                printf(" %.3f [%.3f–%.3f] |", s[k].med * 1e6, s[k].q1 * 1e6, s[k].q3 * 1e6);
            }
            struct summary q0 = summarize(ratio, rounds), q1 = summarize(&ratio[rounds], rounds);
            printf(" **%.3f** [%.3f–%.3f] | **%.3f** [%.3f–%.3f] |\n", s[2].med / s[1].med, q0.q1,
                   q0.q3, s[2].med / s[0].med, q1.q1, q1.q3);
            fflush(stdout);
        }
    }
    free(ratio);
    free(t);
}
#endif

int main(int argc, char **argv) {
#ifndef NO_LIBCD
    setenv("CD_REDSET_FAILURE_GROUP", "node{rank}", 0); /* the journal mode's two nodes */
#endif
    MPI_Init(&argc, &argv);
    int nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks != 2) die("run at -np 2");
    parse(argc, argv);
    resolve();

    int max = 8;
    for (int z = 0; z < nsizes; z++) max = sizes[z] > max ? sizes[z] : max;
    for (int z = 0; z < nar_sizes; z++) max = ar_sizes[z] > max ? ar_sizes[z] : max;
    if (posix_memalign((void **)&sbuf, 4096, (size_t)max) != 0 ||
        posix_memalign((void **)&rbuf, 4096, (size_t)max) != 0)
        die("out of memory");
    memset(sbuf, 1, (size_t)max); /* fault the buffers in before any timing */
    memset(rbuf, 1, (size_t)max);

    if (rank == 0) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(version, &len);
        char *nl = strchr(version, '\n');
        if (nl) *nl = '\0';
        printf("MPI: %s\n", version);
#ifndef NO_LIBCD
        printf("libcd %s\n", cd_version());
#endif
    }
    for (int b = PINGPONG; b <= SELFRECV; b++) run((enum bench)b, &raw_fns, 8, 1000); /* connect */
#ifndef NO_LIBCD
    if (journal_on) journal_start();
#endif
    if (do_pingpong) bench_modes(PINGPONG);
    if (do_allreduce) bench_modes(ALLREDUCE);
#ifndef NO_LIBCD
    if (do_replay) bench_replay();
#endif
    if (do_stages) bench_modes(SELF);
    if (do_selfrecv) bench_modes(SELFRECV);
    if (do_packing) bench_packing();
    long errors = stamp_errors;
    raw_fns.allreduce(MPI_IN_PLACE, &errors, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("\nstamp errors (wrong data delivered): %ld\n", errors);
#ifndef NO_LIBCD
    if (journal_on) journal_end();
#endif
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return errors == 0 ? 0 : 1;
}
