/* Communicators (and persistent requests) freed inside one logging CD that never advances:
 * ITERATIONS (default 5000) times MPI_Comm_dup + MPI_Allgather on the copy + MPI_Comm_free,
 * and MPI_Recv_init/Send_init + Startall + Waitall + MPI_Request_free. Every free is held
 * for replay; past CD_MPI_HELD_MAX communicators (default 256) the oldest is freed in MPI
 * and the logs that could replay a call naming it are marked unreplayable, so that the loop
 * never runs out of MPICH's ~2048 context ids.
 * With RESTORE_RANK set, that rank restores the CD once after the loop: refused with
 * CD_ERR_UNREPLAYABLE when a held handle had to be freed (the line "held rank R error CODE
 * restore_cd: MESSAGE"), re-executed from the log otherwise (fewer frees than the cap).
 * With FREE_IN_CHILD=1 the ITERATIONS communicators are made (and used) in the CD, then
 * freed in a child CD that advances (dropping its log, and the marks on it) and commits: the
 * records of their making are still in the CD's log, so its restore must still be refused.
 * With CHILD_ADVANCES=1 the loop runs in a child CD advanced every iteration: an advance
 * commits the child's log into the CD's first, so the frees stay held until the CD itself
 * can no longer replay them, and a restore of the CD (under the limit) still replays.
 * Prints "held rank R sum S recoveries N". */
#include <cd.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define PROGRAM "held"
#include "support.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 64) die("at most 64 ranks");
    long iterations = env_int("ITERATIONS", 5000);
    int restore_rank = env_int("RESTORE_RANK", -1);
    long sum = 0, i = 0;
    int recoveries = 0;
    int error = 0;
    cd_handle cd = create_cd(NULL, NULL, COMM_LOGGING_ENABLED, "held", &error);
    if (!cd) cd_fail("create_cd", error);
    struct cd_addrspec state[] = {
        {&sum, sizeof sum, READ_WRITE, GLOBAL},
        {&i, sizeof i, READ_WRITE, GLOBAL},
    };
    CHECK(add_to_cd_via_copy(cd, state, 2));
    int peer = (rank + 1) % size, from = (rank + size - 1) % size;
    int free_in_child = env_int("FREE_IN_CHILD", 0);
    for (;;) {
        if (free_in_child) {
            MPI_Comm *dups = malloc(iterations * sizeof *dups);
            if (!dups) die("out of memory");
            for (i = 0; i < iterations; i++) {
                mpi_check(MPI_Comm_dup(MPI_COMM_WORLD, &dups[i]), "MPI_Comm_dup");
                long mine = rank + i, all[64];
                mpi_check(MPI_Allgather(&mine, 1, MPI_LONG, all, 1, MPI_LONG, dups[i]),
                          "MPI_Allgather");
                for (int k = 0; k < size; k++) sum += all[k];
            }
            cd_handle child = create_cd(cd, NULL, COMM_LOGGING_INHERIT, NULL, &error);
            if (!child) cd_fail("create_cd", error);
            for (long k = 0; k < iterations; k++) mpi_check(MPI_Comm_free(&dups[k]), "MPI_Comm_free");
            if (advance_cd_point_in_time(child) == FAILURE) cd_fail("advance_cd_point_in_time", cd_last_error());
            CHECK(commit_cd(child));
            free(dups);
        }
        cd_handle child = NULL;
        if (env_int("CHILD_ADVANCES", 0)) {
            child = create_cd(cd, NULL, COMM_LOGGING_INHERIT, NULL, &error);
            if (!child) cd_fail("create_cd", error);
        }
        for (; i < iterations; i++) {
            if (child && advance_cd_point_in_time(child) == FAILURE)
                cd_fail("advance_cd_point_in_time", cd_last_error());
            MPI_Comm dup;
            if (MPI_Comm_dup(MPI_COMM_WORLD, &dup) != MPI_SUCCESS) {
                printf(PROGRAM " rank %d error -1 MPI_Comm_dup failed at iteration %ld\n", rank, i);
                fflush(stdout);
                MPI_Abort(MPI_COMM_WORLD, 4);
            }
            long mine = rank + i, all[64];
            mpi_check(MPI_Allgather(&mine, 1, MPI_LONG, all, 1, MPI_LONG, dup), "MPI_Allgather");
            for (int k = 0; k < size; k++) sum += all[k];
            mpi_check(MPI_Comm_free(&dup), "MPI_Comm_free");
            long out = i, in = -1;
            MPI_Request r[2];
            MPI_Recv_init(&in, 1, MPI_LONG, from, 0, MPI_COMM_WORLD, &r[0]);
            MPI_Send_init(&out, 1, MPI_LONG, peer, 0, MPI_COMM_WORLD, &r[1]);
            MPI_Startall(2, r);
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
            mpi_check(MPI_Request_free(&r[0]), "MPI_Request_free");
            mpi_check(MPI_Request_free(&r[1]), "MPI_Request_free");
            sum += in;
        }
        if (child) CHECK(commit_cd(child));
        if (rank != restore_rank || recoveries) break;
        recoveries++;
        sum = -1;
        if (restore_cd(cd) != 0) return report_cd_error("restore_cd");
    }
    CHECK(commit_cd(cd));
    printf(PROGRAM " rank %d sum %ld recoveries %d\n", rank, sum, recoveries);
    MPI_Finalize();
    return 0;
}
