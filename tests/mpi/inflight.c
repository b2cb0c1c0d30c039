/* A fault while requests are in flight: the faulty rank has posted its halo Irecv and Isend
 * when it detects the fault and restores, before waiting. The receive must never write into
 * the restored memory later (the restore drains it), and the re-execution must still get the
 * message. SECOND_FAULT_STEP=K faults the same rank again during the re-execution, at step K
 * (at or before the first fault's step, also after posting), before the replay was consumed:
 * the requests the first re-execution posted must not outlive its rewind. FIXED_TAG=1 sends
 * every message with tag 0 (else the step), so that a receive left over from a rewound
 * re-execution would take a later step's message instead of waiting for ever. With
 * SECOND_AFTER_CALL=1 (and SECOND_FAULT_STEP the first fault's step), the faulty rank polls
 * its receive at the first fault's step with MPI_Request_get_status until the message is in,
 * so that the restore drains it with its data, and in every re-execution of that step it calls
 * MPI_Request_get_status once more before the fault check: in the first, a call past the log
 * that ends the replay and completes the receive with the drained data; the second fault then
 * rewinds that completion.
 * Prints "inflight rank R checksum X steps S recoveries N". */
#include <cd.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "inflight"
#include "support.h"

#define N 64
#define STEPS 40

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int fault_rank = env_int("FAULT_RANK", -1), fault_step = 17;
    int second_step = env_int("SECOND_FAULT_STEP", -1), fixed_tag = env_int("FIXED_TAG", 0);
    int after_call = env_int("SECOND_AFTER_CALL", 0);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    static double u[N + 1];
    for (int i = 0; i <= N; i++) u[i] = rank + i * 0.001;
    int step = 0, recoveries = 0, faulted = 0, error;
    cd_handle cd = create_cd(NULL, NULL, COMM_LOGGING_ENABLED, "inflight", &error);
    struct cd_addrspec state[] = {{u, sizeof u, READ_WRITE, GLOBAL}, {&step, sizeof step, READ_WRITE, GLOBAL}};
    add_to_cd_via_copy(cd, state, 2);
    while (step < STEPS) {
        MPI_Request rq[2];
        double out = u[N];
        int tag = fixed_tag ? 0 : step;
        MPI_Irecv(&u[0], 1, MPI_DOUBLE, left, tag, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(&out, 1, MPI_DOUBLE, right, tag, MPI_COMM_WORLD, &rq[1]);
        if (after_call && rank == fault_rank && step == fault_step) {
            int flag = 0;
            while (!flag) MPI_Request_get_status(rq[0], &flag, MPI_STATUS_IGNORE);
            if (faulted >= 1) MPI_Request_get_status(rq[0], &flag, MPI_STATUS_IGNORE);
        }
        if (rank == fault_rank &&
            ((step == fault_step && faulted == 0) || (step == second_step && faulted == 1))) {
            faulted++;
            recoveries++;
            for (int i = 1; i <= N; i++) u[i] = -1;
            if (restore_cd(cd)) MPI_Abort(MPI_COMM_WORLD, 3);
            continue;
        }
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        for (int i = N; i >= 1; i--) u[i] = 0.5 * (u[i] + u[i - 1]);
        step++;
        if (step % 10 == 0) {
            if (advance_cd_point_in_time(cd) == FAILURE) MPI_Abort(MPI_COMM_WORLD, 4);
            add_to_cd_via_copy(cd, state, 2);
        }
    }
    commit_cd(cd);
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i <= N; i++) {
        uint64_t b;
        memcpy(&b, &u[i], 8);
        h = (h ^ b) * 1099511628211ull;
    }
    printf("inflight rank %d checksum %016llx steps %d recoveries %d\n", rank, (unsigned long long)h, step, recoveries);
    MPI_Finalize();
    return 0;
}
