/* What the multi-rank test programs of tests/mpi/ share: reading their knobs from the
 * environment and reporting a failed call. A program defines PROGRAM, its name as a string
 * literal (the first word of every line it prints), before including this header. Everything
 * here is `static inline`, so that a program using only part of it still compiles with
 * -Wall -Wextra -Werror.
 *
 * Two ways to fail, for two kinds of test:
 * - the abort family (mpi_check, cd_fail / CHECK, die) for programs whose only expected
 *   outcome is success: every rank is aborted, the harness sees the launch fail;
 * - report_cd_error for programs whose harness also drives failures on purpose (a refused
 *   restore, a bad storage_info): the rank prints "PROGRAM rank R error CODE WHAT: MESSAGE" on
 *   stdout, which the harness parses, and leaves MPI cleanly. */
#ifndef CD_TEST_SUPPORT_H
#define CD_TEST_SUPPORT_H

#include <cd.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef PROGRAM
#error "define PROGRAM (the program's name, a string literal) before including support.h"
#endif

/* Whether the headers declare MPI-4's calls (persistent collectives, MPI_Isendrecv, ...):
 * MPICH 4, and Open MPI 5, whose headers still say MPI_VERSION 3 (the large-count forms and
 * MPI_Intercomm_create_from_groups need MPI_VERSION >= 4). */
#if MPI_VERSION >= 4 || (defined(OPEN_MPI) && OMPI_MAJOR_VERSION >= 5)
#define HAS_MPI4 1
#else
#define HAS_MPI4 0
#endif

/* The integer in the environment variable `name`, or `fallback` when it is not set. */
static inline int env_int(const char *name, int fallback) {
    const char *v = getenv(name);
    return v ? atoi(v) : fallback;
}

/* This process's rank in MPI_COMM_WORLD (-1 outside MPI_Init .. MPI_Finalize). */
static inline int world_rank(void) {
    int initialized = 0, finalized = 0, rank = -1;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

/* The calling thread's last CD error message, NUL-terminated in `buf`. */
static inline const char *cd_message(char *buf, size_t len) {
    size_t n = 0;
    cd_last_error_message(buf, len - 1, &n);
    buf[n < len ? n : len - 1] = '\0';
    return buf;
}

/* Aborts every rank unless the MPI call `what` returned MPI_SUCCESS. */
static inline void mpi_check(int rc, const char *what) {
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, PROGRAM ": rank %d: %s failed (%d)\n", world_rank(), what, rc);
        MPI_Abort(MPI_COMM_WORLD, 9);
    }
}

/* Aborts every rank after the CD call `what` failed with `code`, naming and describing it. */
static inline void cd_fail(const char *what, int code) {
    char detail[512];
    fprintf(stderr, PROGRAM ": rank %d: %s: %s (%s): %s\n", world_rank(), what,
            cd_error_name(code), cd_error_string(code), cd_message(detail, sizeof detail));
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Runs a CD call that returns an error code, aborting through cd_fail unless it is 0. */
#define CHECK(call)                      \
    do {                                 \
        int rc_ = (call);                \
        if (rc_ != 0) cd_fail(#call, rc_); \
    } while (0)

/* Aborts every rank on a broken expectation `what`. */
static inline void die(const char *what) {
    printf(PROGRAM " rank %d error -1 %s\n", world_rank(), what);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Reports the calling thread's last CD error after the call `what` failed, as one line the
 * harness reads, and finalizes MPI: `return report_cd_error(...)` ends main. */
static inline int report_cd_error(const char *what) {
    char msg[1024];
    printf(PROGRAM " rank %d error %d %s: %s\n", world_rank(), cd_last_error(), what,
           cd_message(msg, sizeof msg));
    fflush(stdout);
    MPI_Finalize();
    return 0;
}

#endif
