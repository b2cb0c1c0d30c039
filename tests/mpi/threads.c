/* MPI_THREAD_MULTIPLE: two threads per rank, each with its own root CD (the active-CD stack
 * is per thread) that logs MPI and advances every INTERVAL steps, and each on its own
 * communicator (duplicated before the threads start), both running at the same time.
 * Thread 0 does a halo exchange in a ring (Isend/Irecv/Waitall) and an Allreduce(SUM);
 * thread 1 does a Sendrecv in a ring, a Bcast from a rotating root and an
 * Allreduce(MAX): the two threads make different calls, so each rank's call counts tell whose
 * calls were re-executed. With FAULT_RANK/FAULT_THREAD/FAULT_STEP set, that thread of that
 * rank corrupts its data at that step, restores its CD and re-executes the steps since its
 * last advance alone, from its own log, while the other thread goes on live.
 * Prints one line per rank:
 * "threads rank R t0 checksum X t1 checksum Y steps S recoveries N". */
#include <cd.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "threads"
#include "support.h"

#define N 128
#define STEPS 30
#define INTERVAL 10

static int rank, size, fault_rank, fault_thread, fault_step;
static MPI_Comm comms[2];
static pthread_barrier_t start;

struct worker {
    int id;
    uint64_t checksum;
    int steps, recoveries;
};

static void *work(void *arg) {
    struct worker *w = arg;
    MPI_Comm comm = comms[w->id];
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    double u[N + 2], v[N + 2];
    for (int i = 0; i < N + 2; i++) u[i] = rank * 1000.0 + i + w->id * 0.125;
    int step = 0, faulted = 0;
    double total = 0;
    char name[32];
    snprintf(name, sizeof name, "threads-%d", w->id);
    int error = 0;
    cd_handle cd = create_cd(NULL, NULL, COMM_LOGGING_ENABLED, name, &error);
    if (!cd) cd_fail("create_cd", error);
    if (cd_current() != cd) die("cd_current() is not this thread's new CD");
    struct cd_addrspec state[] = {
        {u, sizeof u, READ_WRITE, GLOBAL},
        {&step, sizeof step, READ_WRITE, GLOBAL},
        {&total, sizeof total, READ_WRITE, GLOBAL},
    };
    CHECK(add_to_cd_via_copy(cd, state, 3));
    pthread_barrier_wait(&start);

    while (step < STEPS) {
        double local = 0, reduced;
        if (w->id == 0) {
            MPI_Request rq[4];
            MPI_Irecv(&u[0], 1, MPI_DOUBLE, left, 7, comm, &rq[0]);
            MPI_Irecv(&u[N + 1], 1, MPI_DOUBLE, right, 8, comm, &rq[1]);
            MPI_Isend(&u[N], 1, MPI_DOUBLE, right, 7, comm, &rq[2]);
            MPI_Isend(&u[1], 1, MPI_DOUBLE, left, 8, comm, &rq[3]);
            MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
        } else {
            /* one ghost cell from the right neighbour, the other end reflects */
            MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, left, 9, &u[N + 1], 1, MPI_DOUBLE, right, 9, comm,
                         MPI_STATUS_IGNORE);
            u[0] = u[N];
            double scale = u[N / 2];
            MPI_Bcast(&scale, 1, MPI_DOUBLE, step % size, comm);
            u[N / 2] += scale * 1e-6;
        }
        for (int i = 1; i <= N; i++) {
            v[i] = 0.25 * u[i - 1] + 0.5 * u[i] + 0.25 * u[i + 1];
            local += v[i];
        }
        memcpy(&u[1], &v[1], N * sizeof(double));
        MPI_Allreduce(&local, &reduced, 1, MPI_DOUBLE, w->id == 0 ? MPI_SUM : MPI_MAX, comm);
        total += reduced * 1e-9;
        step++;
        if (rank == fault_rank && w->id == fault_thread && step == fault_step && !faulted) {
            /* a transient fault, detected before the corrupted data leaves the thread */
            faulted = 1;
            for (int i = 1; i <= N; i += 7) u[i] = -1e30;
            total = -1;
            w->recoveries++;
            CHECK(restore_cd(cd));
            continue;
        }
        if (step % INTERVAL == 0) {
            if (advance_cd_point_in_time(cd) == FAILURE)
                cd_fail("advance_cd_point_in_time", cd_last_error());
            CHECK(add_to_cd_via_copy(cd, state, 3));
        }
    }
    CHECK(commit_cd(cd));
    uint64_t h = 1469598103934665603ull;
    for (int i = 1; i <= N + 1; i++) {
        uint64_t b;
        memcpy(&b, i <= N ? &u[i] : &total, 8);
        h = (h ^ b) * 1099511628211ull;
    }
    w->checksum = h;
    w->steps = step;
    return NULL;
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided != MPI_THREAD_MULTIPLE) die("MPI_THREAD_MULTIPLE is not provided");
    const char *fr = getenv("FAULT_RANK"), *ft = getenv("FAULT_THREAD"), *fs = getenv("FAULT_STEP");
    fault_rank = fr ? atoi(fr) : -1;
    fault_thread = ft ? atoi(ft) : 0;
    fault_step = fs ? atoi(fs) : 27;
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
    pthread_barrier_init(&start, NULL, 2);

    struct worker workers[2] = {{.id = 0}, {.id = 1}};
    pthread_t threads[2];
    for (int t = 0; t < 2; t++)
        if (pthread_create(&threads[t], NULL, work, &workers[t])) die("pthread_create failed");
    for (int t = 0; t < 2; t++) pthread_join(threads[t], NULL);
    if (cd_current() != NULL) die("the main thread has an active CD");

    MPI_Comm_free(&comms[0]);
    MPI_Comm_free(&comms[1]);
    printf("threads rank %d t0 checksum %016llx t1 checksum %016llx steps %d %d recoveries %d\n",
           rank, (unsigned long long)workers[0].checksum, (unsigned long long)workers[1].checksum,
           workers[0].steps, workers[1].steps, workers[0].recoveries + workers[1].recoveries);
    MPI_Finalize();
    return 0;
}
