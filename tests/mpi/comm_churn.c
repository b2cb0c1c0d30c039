/* A logged loop that makes and frees communicators and persistent requests in every iteration:
 * ITERATIONS (default 5000) times MPI_Comm_dup + MPI_Allgather on the copy + MPI_Comm_free,
 * and MPI_Recv_init/Send_init + Startall + Waitall + MPI_Request_free. Each free in a
 * logging CD is held until no log can replay a call naming the handle.
 * - By default the one logging CD is advanced every iteration: the advance discards its log,
 *   so the handles are released as the loop runs and MPICH's ~2048 context ids last.
 * - With NESTED=K, each iteration is a child CD (logging inherited) committed into a logging
 *   root advanced every K iterations: a committed child's records are the root's until that
 *   advance, so the handles are held until then. With FAULT_RANK and FAULT_ITER set, that
 *   rank restores the root once at that iteration and re-executes the block alone from the
 *   root's log: the replayed MPI_Comm_dup hands out held communicators, which the replayed
 *   Allgather asks MPI about (their size), so a handle released too early is an MPI error.
 * Prints "churn rank R sum S recoveries N". */
#include <cd.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define PROGRAM "churn"
#include "support.h"

static long env_long(const char *name, long fallback) {
    const char *v = getenv(name);
    return v ? atol(v) : fallback;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long iterations = env_long("ITERATIONS", 5000), nested = env_long("NESTED", 0);
    long fault_rank = env_long("FAULT_RANK", -1), fault_iter = env_long("FAULT_ITER", -1);
    long sum = 0, i = 0;
    int recoveries = 0, faulted = 0;
    int error = 0;
    cd_handle root = create_cd(NULL, NULL, COMM_LOGGING_ENABLED, "churn", &error);
    if (!root) cd_fail("create_cd", error);
    struct cd_addrspec state[] = {
        {&sum, sizeof sum, READ_WRITE, GLOBAL},
        {&i, sizeof i, READ_WRITE, GLOBAL},
    };
    if (add_to_cd_via_copy(root, state, 2)) MPI_Abort(MPI_COMM_WORLD, 2);
    int peer = (rank + 1) % size, from = (rank + size - 1) % size;
    while (i < iterations) {
        cd_handle child = NULL;
        if (nested) {
            child = create_cd(root, NULL, COMM_LOGGING_INHERIT, NULL, &error);
            if (!child) cd_fail("create_cd", error);
        }
        MPI_Comm dup;
        if (MPI_Comm_dup(MPI_COMM_WORLD, &dup) != MPI_SUCCESS) {
            fprintf(stderr, "churn: MPI_Comm_dup failed at iteration %ld\n", i);
            MPI_Abort(MPI_COMM_WORLD, 4);
        }
        long mine = rank + i, all[64];
        MPI_Allgather(&mine, 1, MPI_LONG, all, 1, MPI_LONG, dup);
        for (int k = 0; k < size; k++) sum += all[k];
        MPI_Comm_free(&dup);
        long out = i, in = -1;
        MPI_Request r[2];
        MPI_Recv_init(&in, 1, MPI_LONG, from, 0, MPI_COMM_WORLD, &r[0]);
        MPI_Send_init(&out, 1, MPI_LONG, peer, 0, MPI_COMM_WORLD, &r[1]);
        MPI_Startall(2, r);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        MPI_Request_free(&r[0]);
        MPI_Request_free(&r[1]);
        sum += in;
        if (rank == fault_rank && i == fault_iter && !faulted) {
            faulted = 1;
            recoveries++;
            sum = -1;
            if (restore_cd(root)) MPI_Abort(MPI_COMM_WORLD, 5); /* discards the child */
            continue;
        }
        if (child && commit_cd(child)) MPI_Abort(MPI_COMM_WORLD, 6);
        i++;
        if (!nested || i % nested == 0) {
            if (advance_cd_point_in_time(root) == FAILURE) MPI_Abort(MPI_COMM_WORLD, 7);
            if (add_to_cd_via_copy(root, state, 2)) MPI_Abort(MPI_COMM_WORLD, 8);
        }
    }
    commit_cd(root);
    printf("churn rank %d sum %ld recoveries %d\n", rank, sum, recoveries);
    MPI_Finalize();
    return 0;
}
