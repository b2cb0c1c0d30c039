/* A long-logging loop that crosses the MPI log's spill threshold (CD_MPI_LOG_SPILL, set small
 * by the test, with CD_MPI_LOG_DIR): one CD, never advanced, logs STEPS ring exchanges of
 * MSG bytes (Sendrecv) and an Allreduce each, MiBs of received data in all. The program
 * measures what the log did: the CD's log bytes (cd_get_info), the bytes of unlinked spill
 * files under CD_MPI_LOG_DIR mapped into the process (/proc/self/maps) and the growth of the
 * resident set (VmRSS) from early in the loop to its end. With FAULT_RANK set, that rank then
 * corrupts its data, restores the CD and re-executes the whole loop alone from its spilled
 * log; its resident set is measured again after the replay.
 * Prints one line per rank: "spill rank R checksum X steps S recoveries N", and one with the
 * measures (KiB): "spill-memory rank R logged L spilled M rss_growth G replay_growth H
 * leftover_files F". */
#include <cd.h>
#include <dirent.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "spill"
#include "support.h"

#define MSG (1 << 20)            /* bytes per message */
#define WORDS (MSG / 8)
#define STEPS 64                 /* MSG bytes received per step: 64 MiB logged per rank */
#define EARLY 4                  /* the step after which the resident set is first measured */

static int rank;

/* The value of a /proc/self/status field, in KiB. */
static long status_kib(const char *field) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    size_t len = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, field, len) && line[len] == ':') kib = atol(line + len + 1);
    if (f) fclose(f);
    return kib;
}

/* KiB of unlinked files of `dir` mapped into this process (the spilled log chunks). */
static long spilled_kib(const char *dir) {
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    long kib = 0;
    size_t len = strlen(dir);
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char *path = strchr(line, '/');
        if (!path || sscanf(line, "%lx-%lx", &lo, &hi) != 2) continue;
        if (!strncmp(path, dir, len) && path[len] == '/' && strstr(path, " (deleted)"))
            kib += (long)((hi - lo) / 1024);
    }
    if (f) fclose(f);
    return kib;
}

/* Files left in `dir` whose name starts with cd-mpi-log (spill files must be unlinked). */
static int leftover_files(const char *dir) {
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += !strncmp(e->d_name, "cd-mpi-log", 10);
    if (d) closedir(d);
    return n;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *fr = getenv("FAULT_RANK"), *dir = getenv("CD_MPI_LOG_DIR");
    int fault_rank = fr ? atoi(fr) : -1;
    if (!dir) {
        fprintf(stderr, "spill: CD_MPI_LOG_DIR is not set\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    uint64_t *out = malloc(MSG), *in = malloc(MSG);
    if (!out || !in) {
        fprintf(stderr, "spill: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(in, 0, MSG);

    uint64_t acc = 1469598103934665603ull;
    double total = 0;
    int step = 0, recoveries = 0, faulted = 0;
    long rss_early = -1, rss_end = -1, spilled = -1, logged = -1;
    int error = 0;
    cd_handle cd = create_cd(NULL, NULL, COMM_LOGGING_ENABLED, "spill", &error);
    if (!cd) cd_fail("create_cd", error);
    struct cd_addrspec state[] = {
        {&acc, sizeof acc, READ_WRITE, GLOBAL},
        {&total, sizeof total, READ_WRITE, GLOBAL},
        {&step, sizeof step, READ_WRITE, GLOBAL},
    };
    CHECK(add_to_cd_via_copy(cd, state, 3));

    for (;;) {
        while (step < STEPS) {
            uint64_t seed = (uint64_t)rank * 0x9e3779b97f4a7c15ull + (uint64_t)step * 0xbf58476d1ce4e5b9ull;
            for (int i = 0; i < WORDS; i++) {
                seed ^= seed >> 31;
                seed *= 0x94d049bb133111ebull;
                out[i] = seed;
            }
            MPI_Sendrecv(out, WORDS, MPI_UINT64_T, right, 3, in, WORDS, MPI_UINT64_T, left, 3,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int i = 0; i < WORDS; i += 8) acc = (acc ^ in[i] ^ (in[i + 7] >> 3)) * 1099511628211ull;
            double local = (double)(in[step] >> 12), sum;
            MPI_Allreduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            total += sum * 1e-12;
            step++;
            if (step == EARLY && rss_early < 0) rss_early = status_kib("VmRSS");
        }
        if (rss_end < 0) {
            rss_end = status_kib("VmRSS");
            spilled = spilled_kib(dir);
            struct cd_info info;
            CHECK(cd_get_info(cd, &info));
            logged = (long)(info.log_bytes / 1024);
        }
        if (rank == fault_rank && !faulted) {
            /* a transient fault at the end of the loop: everything since the CD began again */
            faulted = 1;
            recoveries++;
            acc = 0;
            total = -1;
            memset(in, 0xff, MSG);
            CHECK(restore_cd(cd));
            continue;
        }
        break;
    }
    long replay_growth = faulted ? status_kib("VmRSS") - rss_end : 0;
    CHECK(commit_cd(cd));
    uint64_t tb;
    memcpy(&tb, &total, 8);
    printf("spill rank %d checksum %016llx total %016llx steps %d recoveries %d\n", rank,
           (unsigned long long)acc, (unsigned long long)tb, step, recoveries);
    printf("spill-memory rank %d logged %ld spilled %ld rss_growth %ld replay_growth %ld "
           "leftover_files %d\n",
           rank, logged, spilled, rss_end - rss_early, replay_growth, leftover_files(dir));
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
