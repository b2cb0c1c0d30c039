/* The stall a background flush adds to the application's compute (issue 10's goal: under 5% of
 * the flushed bytes' copy time).
 *
 * Each rank holds two arrays of MIB MiB, each protected by a persistent root CD in the same
 * cache directory (dir=<BASE>/node<rank>, scheme=single): CD "flushed" also copies every
 * version to <BASE>/global on the runtime's background thread (flush_every=1,
 * flush=background), CD "local" does not. A third array is the application's working set.
 * Rounds alternate, in rotating order, between
 *   flushed  advance "flushed" (persist, then the flush starts in the background), then the
 *            compute phase;
 *   local    advance "local" (the same persist, no flush), then the same compute phase;
 *   beside   advance "local", then the same compute phase while a plain thread of the program copies the flushed
 *            bytes as the flush does (copy_file_range into a temporary file in <BASE>/global,
 *            fsync, rename, fsync of the directory) from a file of the same size in the cache
 *            directory: the stall no background copy of these bytes can avoid (the memory
 *            bandwidth and, with one rank per core, the core it shares);
 *   copy     that copy alone (the flushed bytes' copy time, the goal's unit);
 * every phase ending with a barrier. The compute phase is SWEEPS passes of a streaming update
 * over the working set (memory-bound, like a stencil code), calibrated at start to last about
 * four times the copy, so the flush ends inside it: the next advance of "flushed" waits for
 * an unfinished flush, and its time is printed too.
 *
 * The stall is median(compute after flushed) - median(compute after local); printed against
 * the median copy time and against the plain concurrent copy's stall. Usage: mpirun -np P flush_stall BASE MIB ROUNDS. Build and run:
 * scripts/bench-persist.sh --flush-stall. With one rank per core the flush thread shares a
 * core with a rank; with fewer ranks than cores it has one of its own: run both. */
#define _GNU_SOURCE
#include <cd.h>
#include <fcntl.h>
#include <pthread.h>
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

/* The median of n values (sorts them). */
static double median(double *v, int n) {
    qsort(v, n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The slowest rank's time of a phase that started at t0. */
static double phase_end(double t0) {
    double mine = MPI_Wtime() - t0, slowest;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

static void report(const char *name, double *t, int n) {
    double m = median(t, n);
    printf("  %-22s median %9.2f ms  [%.2f .. %.2f]\n", name, m * 1e3, t[0] * 1e3,
           t[n - 1] * 1e3);
}

static double *work;
static size_t words;

/* One pass of a streaming update over the working set. */
static void sweep(void) {
    for (size_t i = 0; i < words; i++) work[i] = work[i] * 0.999 + 1.0;
}

static double compute(int sweeps) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int s = 0; s < sweeps; s++) sweep();
    return phase_end(t0);
}

/* Copies `from` into `dir` as the flush does: a temporary file, copy_file_range, fsync, rename,
 * fsync of the directory; then removes the copy. Returns 0, or -1 on an error. */
static int copy_file(const char *from, const char *dir) {
    char tmp[4096], final[4096];
    snprintf(tmp, sizeof tmp, "%s/ref.%d.tmp", dir, rank);
    snprintf(final, sizeof final, "%s/ref.%d", dir, rank);
    int in = open(from, O_RDONLY), out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    struct stat st;
    if (in < 0 || out < 0 || fstat(in, &st)) return -1;
    for (off_t left = st.st_size; left > 0;) {
        ssize_t n = copy_file_range(in, NULL, out, NULL, (size_t)left, 0);
        if (n <= 0) return -1;
        left -= n;
    }
    if (fsync(out) || close(out) || close(in) || rename(tmp, final)) return -1;
    int d = open(dir, O_RDONLY | O_DIRECTORY);
    if (d < 0 || fsync(d) || close(d)) return -1;
    return unlink(final);
}

/* The copy alone: the slowest rank's time. */
static double copy_alone(const char *from, const char *dir) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (copy_file(from, dir)) die("copy the reference file");
    return phase_end(t0);
}

struct copy_job {
    const char *from, *dir;
    int status;
};

static void *copy_thread(void *arg) {
    struct copy_job *job = arg;
    job->status = copy_file(job->from, job->dir);
    return NULL;
}

/* The compute phase while a plain thread of the application copies the file: the least any
 * concurrent copy of these bytes can cost the compute (memory bandwidth, a core shared). */
static double compute_beside_a_copy(int sweeps, const char *from, const char *dir) {
    struct copy_job job = {from, dir, 0};
    pthread_t thread;
    MPI_Barrier(MPI_COMM_WORLD);
    if (pthread_create(&thread, NULL, copy_thread, &job)) die("pthread_create");
    double t0 = MPI_Wtime();
    for (int s = 0; s < sweeps; s++) sweep();
    double t = phase_end(t0);
    if (pthread_join(thread, NULL) || job.status) die("the copy thread");
    return t;
}

static cd_handle persistent(const char *name, const char *base, const char *flush, double *a,
                            size_t bytes) {
    char info[4096];
    snprintf(info, sizeof info, "dir=%s/node{rank};scheme=single;keep=2%s", base, flush);
    cd_handle cd = create_cd(NULL, info, COMM_LOGGING_DISABLED, name, NULL);
    if (!cd) die("create_cd");
    struct cd_addrspec spec = {a, bytes, READ_WRITE, GLOBAL};
    if (add_to_cd_via_copy(cd, &spec, 1)) die("add_to_cd_via_copy");
    return cd;
}

/* Changes the array, then advances (persists) the CD; the slowest rank's time. */
static double advance(cd_handle cd, double *a, size_t n, int round) {
    struct cd_addrspec spec = {a, n * sizeof *a, READ_WRITE, GLOBAL};
    if (add_to_cd_via_copy(cd, &spec, 1)) die("add_to_cd_via_copy");
    for (size_t i = 0; i < n; i += 512) a[i] = round;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (advance_cd_point_in_time(cd) != 0) die("advance_cd_point_in_time");
    return phase_end(t0);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 4) {
        if (rank == 0) fprintf(stderr, "usage: flush_stall BASE MIB ROUNDS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *base = argv[1];
    size_t bytes = (size_t)atoi(argv[2]) << 20, n = bytes / sizeof(double);
    int rounds = atoi(argv[3]);
    if (rounds < 1 || rounds > MAX_ROUNDS || bytes == 0) die("bad MIB or ROUNDS");

    if (strlen(base) > 1900) die("BASE is too long");
    char dir[2048], global[2048], ref[2100];
    snprintf(dir, sizeof dir, "%s/node%d", base, rank);
    snprintf(global, sizeof global, "%s/global", base);
    snprintf(ref, sizeof ref, "%s/ref.dat", dir);
    mkdir(base, 0755);
    mkdir(dir, 0755);
    mkdir(global, 0755);

    double *flushed_a = malloc(bytes), *local_a = malloc(bytes);
    words = n;
    work = malloc(bytes);
    if (!flushed_a || !local_a || !work) die("malloc");
    for (size_t i = 0; i < n; i++) flushed_a[i] = local_a[i] = work[i] = (double)i;

    /* the reference's source: a file of the array's size in the cache directory */
    int fd = open(ref, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, flushed_a, bytes) != (ssize_t)bytes || fsync(fd) || close(fd))
        die("write the reference file");

    char flush[2100];
    snprintf(flush, sizeof flush, ";global_dir=%s;flush_every=1;flush=background", global);
    cd_handle flushed = persistent("flushed", base, flush, flushed_a, bytes);
    cd_handle local = persistent("local", base, "", local_a, bytes);

    /* calibration: the compute phase lasts about four of the slowest of five copies */
    double copy = 0;
    for (int i = 0; i < 5; i++) {
        double t = copy_alone(ref, global);
        copy = t > copy ? t : copy;
    }
    double one = compute(1);
    int sweeps = (int)(4.0 * copy / one) + 1;

    double t_flushed[MAX_ROUNDS], t_local[MAX_ROUNDS], t_copy[MAX_ROUNDS], t_beside[MAX_ROUNDS];
    double a_flushed[MAX_ROUNDS], a_local[MAX_ROUNDS]; /* a_local: the later of two per round */
    int in_time = 0; /* flushes whose copy was done when the compute phase ended */
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < 4; k++) {
            switch ((r + k) % 4) {
            case 0: {
                a_flushed[r] = advance(flushed, flushed_a, n, r);
                t_flushed[r] = compute(sweeps);
                /* was this version's copy in the global directory by the end of the phase? */
                char copied[4096];
                snprintf(copied, sizeof copied, "%s/flushed/v%08d/data.%d.cdp", global, r + 1,
                         rank);
                in_time += access(copied, F_OK) == 0;
                break;
            }
            case 1:
                a_local[r] = advance(local, local_a, n, r);
                t_local[r] = compute(sweeps);
                break;
            case 2:
                a_local[r] = advance(local, local_a, n, r);
                t_beside[r] = compute_beside_a_copy(sweeps, ref, global);
                break;
            default:
                t_copy[r] = copy_alone(ref, global);
            }
        }
    }
    if (commit_cd(flushed) || commit_cd(local)) die("commit_cd");

    int all_in_time = 0;
    MPI_Reduce(&in_time, &all_in_time, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("flush_stall: %d ranks, %s MiB per rank, %d rounds, %d sweeps per compute "
               "phase, base %s\n",
               size, argv[2], rounds, sweeps, base);
        double mf = median(t_flushed, rounds), ml = median(t_local, rounds),
               mc = median(t_copy, rounds), mb = median(t_beside, rounds);
        printf("  flushes copied within their compute phase: %d of %d\n", all_in_time,
               rounds * size);
        report("compute after flushed", t_flushed, rounds);
        report("compute after local", t_local, rounds);
        report("compute beside a copy", t_beside, rounds);
        report("copy alone", t_copy, rounds);
        report("advance flushed", a_flushed, rounds);
        report("advance local", a_local, rounds);
        printf("  stall = %.2f ms = %.1f%% of the copy (goal < 5%%); %.1f%% of the compute "
               "phase\n",
               (mf - ml) * 1e3, 100.0 * (mf - ml) / mc, 100.0 * (mf - ml) / ml);
        printf("  a plain concurrent copy's stall = %.2f ms = %.1f%% of the copy; the flush's "
               "stall is %.2fx of it\n",
               (mb - ml) * 1e3, 100.0 * (mb - ml) / mc, (mf - ml) / (mb - ml));
    }
    unlink(ref);
    free(flushed_a);
    free(local_a);
    free(work);
    MPI_Finalize();
    return 0;
}
