/* Communication of a parent CD overlapping a child CD's work: each step, under a root CD that
 * logs MPI (advanced every 10 steps), posts its halo (Irecv from the left, Isend to the right),
 * then runs a child CD (logging inherited) that works on the interior only (a Sendrecv in the
 * ring and an Allreduce), commits it, and only then waits for the halo. With FAULT_RANK set,
 * that rank corrupts the interior inside the child at step FAULT_STEP (default 17) and
 * restores the child: the halo requests were posted by the parent before the child began, so
 * the child's restore must leave them to the parent's Waitall, which must still complete them
 * with the right message. With CHILD_POSTS=1 the child posts the halo and commits before the
 * parent waits for it, and the fault (after the child's commit) restores the root: the
 * requests of the committed child are rolled back with it and posted again by the
 * re-execution. Prints "overlap rank R checksum X steps S recoveries N". */
#include <cd.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "overlap"
#include "support.h"

#define N 32
#define STEPS 30

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int fault_rank = env_int("FAULT_RANK", -1), fault_step = env_int("FAULT_STEP", 17);
    int child_posts = env_int("CHILD_POSTS", 0);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    /* u[0] is the ghost cell the parent's halo receive fills; u[1..N] the interior */
    static double u[N + 1];
    for (int i = 0; i <= N; i++) u[i] = rank + i * 0.001;
    int step = 0, recoveries = 0, faulted = 0, error;
    cd_handle root = create_cd(NULL, NULL, COMM_LOGGING_ENABLED, "overlap", &error);
    if (!root) cd_fail("create_cd(root)", error);
    struct cd_addrspec state[] = {{u, sizeof u, READ_WRITE, GLOBAL}, {&step, sizeof step, READ_WRITE, GLOBAL}};
    CHECK(add_to_cd_via_copy(root, state, 2));
    struct cd_addrspec interior[] = {{&u[1], N * sizeof(double), READ_WRITE, GLOBAL}};
    while (step < STEPS) {
        MPI_Request rq[2];
        double out = u[N];
        if (!child_posts) {
            mpi_check(MPI_Irecv(&u[0], 1, MPI_DOUBLE, left, step, MPI_COMM_WORLD, &rq[0]), "MPI_Irecv");
            mpi_check(MPI_Isend(&out, 1, MPI_DOUBLE, right, step, MPI_COMM_WORLD, &rq[1]), "MPI_Isend");
        }
        cd_handle child = create_cd(root, NULL, COMM_LOGGING_INHERIT, NULL, &error);
        if (!child) cd_fail("create_cd(child)", error);
        CHECK(add_to_cd_via_copy(child, interior, 1));
        if (child_posts) {
            mpi_check(MPI_Irecv(&u[0], 1, MPI_DOUBLE, left, step, MPI_COMM_WORLD, &rq[0]), "MPI_Irecv");
            mpi_check(MPI_Isend(&out, 1, MPI_DOUBLE, right, step, MPI_COMM_WORLD, &rq[1]), "MPI_Isend");
        }
        for (;;) {
            double mine = u[N / 2], theirs = 0, local = 0, total = 0;
            mpi_check(MPI_Sendrecv(&mine, 1, MPI_DOUBLE, right, 1000 + step, &theirs, 1, MPI_DOUBLE,
                                   left, 1000 + step, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                      "MPI_Sendrecv");
            for (int i = 1; i <= N; i++) local += u[i];
            mpi_check(MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
                      "MPI_Allreduce");
            for (int i = N; i >= 2; i--) u[i] = 0.5 * (u[i] + u[i - 1]) + 1e-6 * total;
            u[1] += 1e-3 * theirs;
            if (!child_posts && rank == fault_rank && step == fault_step && !faulted) {
                faulted = 1;
                recoveries++;
                for (int i = 1; i <= N; i++) u[i] = -1;
                CHECK(restore_cd(child));
                continue;
            }
            break;
        }
        CHECK(commit_cd(child));
        if (child_posts && rank == fault_rank && step == fault_step && !faulted) {
            /* the halo the committed child posted is in flight: the root's restore rolls it
             * back with the steps since the last advance, and the re-execution posts it again */
            faulted = 1;
            recoveries++;
            /* not u[0], the pending receive's buffer: a fault there is what the re-execution
             * gets (the drain keeps the buffer of a receive MPI completed; engine.rs) */
            for (int i = 1; i <= N; i++) u[i] = -1;
            CHECK(restore_cd(root));
            continue;
        }
        mpi_check(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE), "MPI_Waitall");
        u[1] += 0.25 * u[0];
        step++;
        if (step % 10 == 0) {
            if (advance_cd_point_in_time(root) == FAILURE)
                cd_fail("advance_cd_point_in_time(root)", cd_last_error());
            CHECK(add_to_cd_via_copy(root, state, 2));
        }
    }
    CHECK(commit_cd(root));
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i <= N; i++) {
        uint64_t b;
        memcpy(&b, &u[i], 8);
        h = (h ^ b) * 1099511628211ull;
    }
    printf("overlap rank %d checksum %016llx steps %d recoveries %d\n", rank, (unsigned long long)h, step, recoveries);
    MPI_Finalize();
    return 0;
}
