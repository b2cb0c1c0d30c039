/* Halo exchange (Isend/Irecv/Waitall) in a ring, with a global sum every step, under a root
 * CD that logs MPI and advances every INTERVAL steps. With FAULT_RANK/FAULT_STEP set, that
 * rank corrupts its data at that step, detects it at once, restores to the last advance and
 * re-executes the steps since alone, from its MPI log, then goes on live.
 * Prints one line per rank: "halo rank R checksum X steps S recoveries N". */
#include <cd.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "halo"
#include "support.h"

#define N 256
#define STEPS 60
#define INTERVAL 10

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int fault_rank = env_int("FAULT_RANK", -1), fault_step = env_int("FAULT_STEP", -1);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;

    static double u[N + 2], v[N + 2];
    for (int i = 0; i < N + 2; i++) u[i] = rank * 1000.0 + i;
    int step = 0, recoveries = 0, faulted = 0;
    double total = 0;

    int error = 0;
    cd_handle cd = create_cd(NULL, NULL, COMM_LOGGING_ENABLED, "halo", &error);
    if (!cd) cd_fail("create_cd", error);
    struct cd_addrspec state[] = {
        {u, sizeof u, READ_WRITE, GLOBAL},
        {&step, sizeof step, READ_WRITE, GLOBAL},
        {&total, sizeof total, READ_WRITE, GLOBAL},
    };
    if (add_to_cd_via_copy(cd, state, 3)) MPI_Abort(MPI_COMM_WORLD, 2);

    while (step < STEPS) {
        MPI_Request rq[4];
        MPI_Irecv(&u[0], 1, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, &rq[0]);
        MPI_Irecv(&u[N + 1], 1, MPI_DOUBLE, right, 8, MPI_COMM_WORLD, &rq[1]);
        MPI_Isend(&u[N], 1, MPI_DOUBLE, right, 7, MPI_COMM_WORLD, &rq[2]);
        MPI_Isend(&u[1], 1, MPI_DOUBLE, left, 8, MPI_COMM_WORLD, &rq[3]);
        MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
        double local = 0;
        for (int i = 1; i <= N; i++) {
            v[i] = 0.25 * u[i - 1] + 0.5 * u[i] + 0.25 * u[i + 1];
            local += v[i];
        }
        memcpy(&u[1], &v[1], N * sizeof(double));
        double sum;
        MPI_Allreduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        total += sum * 1e-9;
        step++;
        if (rank == fault_rank && step == fault_step && !faulted) {
            /* a transient fault, detected before the corrupted data leaves the rank */
            faulted = 1;
            for (int i = 1; i <= N; i += 7) u[i] = -1e30;
            recoveries++;
            if (restore_cd(cd)) MPI_Abort(MPI_COMM_WORLD, 3);
            continue;
        }
        if (step % INTERVAL == 0) {
            if (advance_cd_point_in_time(cd) == FAILURE) MPI_Abort(MPI_COMM_WORLD, 4);
            if (add_to_cd_via_copy(cd, state, 3)) MPI_Abort(MPI_COMM_WORLD, 5);
        }
    }
    commit_cd(cd);
    uint64_t h = 1469598103934665603ull;
    for (int i = 1; i <= N; i++) {
        uint64_t b;
        memcpy(&b, &u[i], 8);
        h = (h ^ b) * 1099511628211ull;
    }
    uint64_t tb;
    memcpy(&tb, &total, 8);
    printf("halo rank %d checksum %016llx total %016llx steps %d recoveries %d\n", rank,
           (unsigned long long)h, (unsigned long long)tb, step, recoveries);
    MPI_Finalize();
    return 0;
}
