/* A logged loop that makes and frees communicators and persistent requests in every iteration,
 * with its logging CD advanced every iteration: ITERATIONS (default 5000) times
 * MPI_Comm_dup + MPI_Allreduce on the copy + MPI_Comm_free, and MPI_Send_init/Recv_init +
 * Startall + Waitall + MPI_Request_free. Each free in a logging CD is held until no log can
 * replay the call that made the handle; the advance discards the log, so the handles are
 * released and MPICH's ~2048 context ids are never exhausted.
 * Prints "churn rank R sum S" (S: the sum of the Allreduce results). */
#include <cd.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *it = getenv("ITERATIONS");
    long iterations = it ? atol(it) : 5000;
    int error = 0;
    cd_handle cd = create_cd(NULL, NULL, COMM_LOGGING_ENABLED, "churn", &error);
    if (!cd) { fprintf(stderr, "create_cd: %s\n", cd_error_string(error)); MPI_Abort(MPI_COMM_WORLD, 1); }
    long sum = 0;
    int peer = (rank + 1) % size, from = (rank + size - 1) % size;
    for (long i = 0; i < iterations; i++) {
        MPI_Comm dup;
        if (MPI_Comm_dup(MPI_COMM_WORLD, &dup) != MPI_SUCCESS) {
            fprintf(stderr, "churn: MPI_Comm_dup failed at iteration %ld\n", i);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        long mine = rank + i, total = 0;
        MPI_Allreduce(&mine, &total, 1, MPI_LONG, MPI_SUM, dup);
        sum += total;
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
        if (advance_cd_point_in_time(cd) == FAILURE) MPI_Abort(MPI_COMM_WORLD, 3);
    }
    commit_cd(cd);
    printf("churn rank %d sum %ld\n", rank, sum);
    MPI_Finalize();
    return 0;
}
