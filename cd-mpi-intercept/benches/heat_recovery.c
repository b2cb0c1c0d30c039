/* The heat program of the in-job recovery tests (tests/mpi/heat_persist.c, whose header
 * explains HEAT_CACHE, HEAT_STEPS, HEAT_INTERVAL, HEAT_REDUCE, HEAT_KILL_AT, HEAT_KILL_RANK,
 * HEAT_KILL_ONCE, HEAT_KILL_WIPE), copied for scripts/bench-recovery.sh with timestamps:
 * the same computation, messages, CD calls and output, plus
 *   "heat rank R t WHAT STEP SECONDS"  (CLOCK_REALTIME, the clock of CD_TRACE's timestamps)
 * for WHAT = start (main entered: for a replacement, the spawn has started it), init
 * (MPI_Init returned: for a replacement, it has joined the repaired world and its files are
 * rebuilt), resumed (restore_cd returned), killed (about to raise SIGKILL), mark (the step
 * HEAT_MARK reached, default HEAT_KILL_AT: for a replacement, where it has caught up with the
 * step its predecessor was lost at), end (the last step done, before commit_cd and
 * MPI_Finalize). Two knobs of its own:
 *   HEAT_PROGRESS=PREFIX  each rank overwrites PREFIX.R with its step count after every step
 *                         (8 bytes, pwrite), so a run that ends in a loss still tells how far
 *                         each rank got: the work a relaunch loses.
 *   HEAT_STEP_US=N        each step also sleeps N microseconds (a stand-in for computation
 *                         that does not take the shared CPUs; default 0: the test's program).
 * Not a test: tests/mpi/heat_persist.c stays the reference program. */
#define _GNU_SOURCE
#include <cd.h>
#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROGRAM "heat"
#include "support.h"

#define N 64
#define RESULT_PARTS 3
#define PART ((N + 2) / RESULT_PARTS)

static int rank = -1;

/* One timestamp line (see the header). */
static void stamp(const char *what, int step) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    printf("heat rank %d t %s %d %lld.%06ld\n", rank, what, step, (long long)ts.tv_sec,
           ts.tv_nsec / 1000);
    fflush(stdout);
}

/* Raises SIGKILL (see HEAT_KILL_ONCE and HEAT_KILL_WIPE in tests/mpi/heat_persist.c). */
static void kill_self(int step) {
    const char *once = getenv("HEAT_KILL_ONCE");
    if (once) {
        FILE *f = fopen(once, "wx");
        if (!f) return; /* killed before: this is the replacement */
        fclose(f);
    }
    if (env_int("HEAT_KILL_WIPE", 0) && getenv("HEAT_CACHE")) {
        char cmd[1200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s/node%d'", getenv("HEAT_CACHE"), rank);
        if (system(cmd) != 0) return;
    }
    stamp("killed", step);
    raise(SIGKILL);
}

int main(int argc, char **argv) {
    static char out[1 << 16];
    setvbuf(stdout, out, _IOFBF, sizeof out);
    struct timespec start;
    clock_gettime(CLOCK_REALTIME, &start);
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("heat rank %d t start 0 %lld.%06ld\n", rank, (long long)start.tv_sec,
           start.tv_nsec / 1000);
    stamp("init", 0);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int kill_at = getenv("HEAT_KILL_AT") ? atoi(getenv("HEAT_KILL_AT")) : -1;
    int kill_rank = getenv("HEAT_KILL_RANK") ? atoi(getenv("HEAT_KILL_RANK")) : -1;
    const int STEPS = env_int("HEAT_STEPS", 100), INTERVAL = env_int("HEAT_INTERVAL", 10);
    const int reduce = env_int("HEAT_REDUCE", 0), mark = env_int("HEAT_MARK", kill_at);
    const int step_us = env_int("HEAT_STEP_US", 0);
    int progress = -1;
    if (getenv("HEAT_PROGRESS")) {
        char path[1200];
        snprintf(path, sizeof path, "%s.%d", getenv("HEAT_PROGRESS"), rank);
        progress = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (progress < 0) die("HEAT_PROGRESS: cannot open the file");
    }
    int executed = 0;

    static double u[N + 2], v[N + 2];
    for (int i = 0; i < N + 2; i++) u[i] = (rank * 31 + i * 7) % 101;
    int step = 0;

    char info[1024];
    snprintf(info, sizeof info, "dir=%s/node{rank};scheme=xor;set_size=4;keep=2",
             getenv("HEAT_CACHE") ? getenv("HEAT_CACHE") : "/tmp");
    cd_handle cd = create_cd(NULL, info, COMM_LOGGING_DISABLED, "heat", NULL);
    if (!cd) return report_cd_error("create_cd");
    struct cd_addrspec state[] = {
        {u, sizeof u, READ_WRITE, GLOBAL},
        {&step, sizeof step, READ_WRITE, GLOBAL},
    };
    if (add_to_cd_via_copy(cd, state, 2)) return report_cd_error("add_to_cd_via_copy");
    uint64_t version = 0;
    if (cd_recovered_version(cd, &version)) return report_cd_error("cd_recovered_version");
    if (version) {
        if (restore_cd(cd)) return report_cd_error("restore_cd");
        printf("heat rank %d resumed %d version %llu\n", rank, step, (unsigned long long)version);
        stamp("resumed", step);
    }

    while (step < STEPS) {
        MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, left, 0, &u[N + 1], 1, MPI_DOUBLE, right, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&u[N], 1, MPI_DOUBLE, right, 1, &u[0], 1, MPI_DOUBLE, left, 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 1; i <= N; i++) v[i] = u[i] + 0.25 * (u[i - 1] - 2 * u[i] + u[i + 1]);
        memcpy(&u[1], &v[1], N * sizeof(double));
        if (step_us > 0) usleep((useconds_t)step_us);
        if (reduce) {
            double local = 0, total = 0;
            for (int i = 1; i <= N; i++) local += u[i];
            MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            u[1] += total * 1e-6;
        }
        step++;
        executed++;
        if (progress >= 0 && pwrite(progress, &step, sizeof step, 0) != sizeof step)
            die("HEAT_PROGRESS: write");
        if (step % INTERVAL == 0) {
            if (advance_cd_point_in_time(cd) != 0) return report_cd_error("advance_cd_point_in_time");
            if (add_to_cd_via_copy(cd, state, 2)) return report_cd_error("add_to_cd_via_copy");
        }
        if (step == mark) stamp("mark", step);
        if (step == kill_at && (kill_rank < 0 || kill_rank == rank)) kill_self(step);
    }
    stamp("end", step);

    for (int p = 0; p < RESULT_PARTS; p++) {
        char hex[PART * 16 + 1];
        for (int i = 0; i < PART; i++) {
            uint64_t bits;
            memcpy(&bits, &u[p * PART + i], sizeof bits);
            snprintf(hex + i * 16, 17, "%016llx", (unsigned long long)bits);
        }
        printf("heat rank %d result %d %d %s\n", rank, step, p, hex);
        fflush(stdout);
    }
    printf("heat rank %d executed %d\n", rank, executed);
    fflush(stdout);
    if (progress >= 0) close(progress);
    commit_cd(cd);
    MPI_Finalize();
    return 0;
}
