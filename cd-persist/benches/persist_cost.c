/* The cost of persisting a CD, against the physical references, at one rank per core.
 *
 * Each rank holds MIB MiB in one array protected by a persistent root CD
 * (dir=<BASE>/node<rank>, the scheme given, one set of all ranks). Rounds alternate, in
 * rotating order, between
 *   raw      writing the same bytes to a file in the same directory: open, write, fsync, close
 *            (the unavoidable stage of a persist: its data must reach the node's storage);
 *   advance  advance_cd_point_in_time after changing the array: the CD saves the array into
 *            its store (one memory copy) and persists the new version (data file, cd-redset's
 *            redundancy, commit markers, the old version pruned);
 *   bound    the stages a scheme cannot avoid, one after the other: the copy into the store, then
 *            for XOR/RS/PARTNER at this set size the exchange of the array with the partner
 *            rank (MPI_Sendrecv: at 2 ranks the parity or copy a rank keeps is the other's
 *            data) and writing the data and that redundancy (two files, fsync each); for
 *            SINGLE the copy and the data file;
 * every round ending with a barrier, so a round's time is the slowest rank's. Then the
 * restart: the CD is committed, rank 1's cache directory emptied (a lost node), and a CD of
 * the same name created again, which finds the newest version and rebuilds rank 1's files;
 * that create is timed against reading the same bytes back from a file (raw read). (SINGLE
 * keeps no redundancy: its restart loses nothing.)
 *
 * Prints the median and the spread (min..max) of each mode, the ratios of medians, and GiB/s
 * per rank. Usage: mpirun -np 2 persist_cost BASE MIB SCHEME ROUNDS  (SCHEME: single, partner,
 * xor, rs). Build and run: scripts/bench-persist.sh. */
#define _GNU_SOURCE
#include <cd.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_ROUNDS 64

static int rank, size;

static void die(const char *what) {
    char msg[512];
    size_t n = 0;
    cd_last_error_message(msg, sizeof msg, &n);
    fprintf(stderr, "rank %d: %s: %s\n", rank, what, n ? msg : "failed");
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void report(const char *name, double *t, int n, double bytes) {
    double m = median(t, n);
    printf("  %-8s median %9.2f ms  [%.2f .. %.2f]  %6.2f GiB/s per rank\n", name, m * 1e3,
           t[0] * 1e3, t[n - 1] * 1e3, bytes / m / (1 << 30));
}

static void write_raw(const char *path, const char *buf, size_t len) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) die("open raw");
    for (size_t done = 0; done < len;) {
        ssize_t w = write(fd, buf + done, len - done);
        if (w <= 0) die("write raw");
        done += (size_t)w;
    }
    if (fsync(fd) != 0) die("fsync raw");
    close(fd);
}

static void read_raw(const char *path, char *buf, size_t len) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) die("open raw for reading");
    for (size_t done = 0; done < len;) {
        ssize_t r = read(fd, buf + done, len - done);
        if (r <= 0) die("read raw");
        done += (size_t)r;
    }
    close(fd);
}

static void empty_dir(const char *dir) {
    char cmd[2200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    if (system(cmd) != 0) die("emptying the cache directory");
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 5) {
        if (rank == 0) fprintf(stderr, "usage: persist_cost BASE MIB SCHEME ROUNDS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *base = argv[1], *scheme = argv[3];
    size_t len = (size_t)atol(argv[2]) << 20;
    int rounds = atoi(argv[4]);
    if (rounds < 1 || rounds > MAX_ROUNDS || len == 0) die("arguments");

    char dir[1024], raw[1100], info[1400];
    snprintf(dir, sizeof dir, "%s/node%d", base, rank);
    empty_dir(dir);
    snprintf(raw, sizeof raw, "%s/raw.%d", dir, rank);
    const char *extra = strcmp(scheme, "rs") == 0 ? ";checksums=1"
                        : strcmp(scheme, "partner") == 0 ? ";replicas=1"
                                                         : "";
    snprintf(info, sizeof info, "dir=%s/node{rank};scheme=%s%s;set_size=%d;keep=2", base, scheme,
             extra, size);

    char *data = malloc(len), *back = malloc(len), *expect = malloc(len);
    if (!data || !back || !expect) die("malloc");
    for (size_t i = 0; i < len; i++) data[i] = (char)(i * 131 + rank);
    cd_handle cd = create_cd(NULL, info, COMM_LOGGING_DISABLED, "bench", NULL);
    if (!cd) die("create_cd");
    struct cd_addrspec as = {data, len, READ_WRITE, GLOBAL};
    if (add_to_cd_via_copy(cd, &as, 1)) die("add_to_cd_via_copy");
    if (advance_cd_point_in_time(cd) == FAILURE) die("first advance"); /* warm: version 1 */
    write_raw(raw, data, len);

    char *store = malloc(len), *other = malloc(len), parity[1200];
    if (!store || !other) die("malloc");
    memcpy(store, data, len); /* both buffers touched before timing */
    memcpy(other, data, len);
    snprintf(parity, sizeof parity, "%s/parity.%d", dir, rank);
    const int redundant = strcmp(scheme, "single") != 0 && size > 1;
    const int peer = (rank ^ 1) < size ? (rank ^ 1) : rank;
    double t_raw[MAX_ROUNDS], t_adv[MAX_ROUNDS], t_bound[MAX_ROUNDS];
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < 3; k++) {
            int mode = (r + k) % 3; /* A B C, B C A, ... */
            data[(r * 4099) % len] ^= 1;
            if (mode == 1 && add_to_cd_via_copy(cd, &as, 1)) die("add (promote)");
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (mode == 0) {
                write_raw(raw, data, len);
            } else if (mode == 1) {
                if (advance_cd_point_in_time(cd) == FAILURE) die("advance_cd_point_in_time");
            } else {
                memcpy(store, data, len);
                if (redundant) {
                    for (size_t off = 0; off < len; off += (size_t)1 << 30) {
                        int n = (int)(len - off < ((size_t)1 << 30) ? len - off : (size_t)1 << 30);
                        MPI_Sendrecv(store + off, n, MPI_BYTE, peer, 9, other + off, n, MPI_BYTE,
                                     peer, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    }
                }
                write_raw(raw, store, len);
                if (redundant) write_raw(parity, other, len);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            (mode == 0 ? t_raw : mode == 1 ? t_adv : t_bound)[r] = MPI_Wtime() - t0;
        }
    }

    /* The restart: a lost node's files rebuilt by create_cd, against reading the bytes. */
    memcpy(expect, data, len); /* what the last advance persisted */
    if (commit_cd(cd)) die("commit_cd");
    double t_read, t_rebuild;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    read_raw(raw, back, len);
    MPI_Barrier(MPI_COMM_WORLD);
    t_read = MPI_Wtime() - t0;
    if (redundant && rank == 1) { /* SINGLE cannot rebuild: its restart loses nothing */
        char cmd[1100];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'/bench", dir);
        if (system(cmd) != 0) die("losing node 1's cache");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    cd_handle again = create_cd(NULL, info, COMM_LOGGING_DISABLED, "bench", NULL);
    if (!again) die("create_cd (restart)");
    MPI_Barrier(MPI_COMM_WORLD);
    t_rebuild = MPI_Wtime() - t0;
    if (add_to_cd_via_copy(again, &as, 1)) die("add (restart)");
    uint64_t version = 0;
    if (cd_recovered_version(again, &version) || version == 0) die("no recovered version");
    memset(data, 0, len);
    if (restore_cd(again)) die("restore_cd (restart)");
    int ok = memcmp(data, expect, len) == 0, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    commit_cd(again);

    if (rank == 0) {
        printf("persist_cost: %d ranks, %zu MiB per rank, scheme %s, %d rounds, %s\n", size,
               len >> 20, scheme, rounds, base);
        report("raw", t_raw, rounds, (double)len);
        report("bound", t_bound, rounds, (double)len);
        report("advance", t_adv, rounds, (double)len);
        printf("  advance/raw %.2f, advance/bound %.2f\n",
               median(t_adv, rounds) / median(t_raw, rounds),
               median(t_adv, rounds) / median(t_bound, rounds));
        printf("  restart%s: create_cd %.2f ms, raw read %.2f ms, ratio %.2f; restored bytes %s\n",
               redundant ? " with node 1's cache lost" : " (nothing lost)", t_rebuild * 1e3,
               t_read * 1e3, t_rebuild / t_read, all_ok ? "equal" : "DIFFER");
    }
    free(other);
    free(store);
    free(expect);
    free(back);
    free(data);
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
