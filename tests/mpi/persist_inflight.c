/* A persist must prove that no application message is in flight (issue 10): a persistent root
 * CD advanced every PI_INTERVAL steps (default 10) of a ring exchange, with traffic around the
 * advance at step PI_AT (default 20) chosen by PI_MODE:
 *   isend    rank 0 Isends to rank 1 before the advance, rank 1 receives it after: in flight
 *   recv     the same, but rank 1 receives before the advance: nothing in flight
 *   pending  rank 1 posts an Irecv from rank 0 before the advance, rank 0 sends after it
 *   wild     no special step; every step runs wildcard Irecv + Waitany, Recv(ANY_SOURCE) with
 *            MPI_STATUS_IGNORE, Mprobe/Mrecv and Improbe/Imrecv, persistent Startall + Waitall,
 *            Testsome, Iallreduce + Testall, Bcast, Sendrecv_replace, MPI_PROC_NULL peers,
 *            on a duplicated communicator and on one made and freed every step
 *   threads  MPI_THREAD_MULTIPLE: every step two threads exchange messages around the ring
 *            at once (Isend/Irecv + Waitall, Send + Recv(ANY_SOURCE)), each on its own
 *            communicator, and are joined before the advance
 * PI_CACHE names the simulated nodes' cache base (dir=$PI_CACHE/node{rank}); with
 * PI_FROM_ENV=1 the CD takes CD_STORAGE_INFO instead (set by the caller). PI_KILL_AT=S: every
 * rank kills itself (SIGKILL) after step S. A restart resumes from the recovered version.
 * Prints "pi rank R persisted S", "pi rank R refused S CODE MESSAGE" (an advance that failed),
 * "pi rank R resumed S version V", "pi rank R error CODE WHAT: MESSAGE" (and exits cleanly),
 * and "pi rank R done S HEX" at the end. */
#include <cd.h>
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "pi"
#include "support.h"

#define M 8

static int rank, size;

static void check(int ok, const char *what) {
    if (!ok) {
        printf("pi rank %d wrong %s\n", rank, what);
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

/* One step of every kind of traffic the counts must get right; all of it completes. */
static void wild_step(MPI_Comm comm, int step, double *u, MPI_Request persistent[2],
                      double *pin, double *pout) {
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    double r[2], s[2] = {u[0] + step, u[1] - step};
    MPI_Request req[4];
    MPI_Irecv(&r[0], 1, MPI_DOUBLE, MPI_ANY_SOURCE, 5, comm, &req[0]);
    MPI_Irecv(&r[1], 1, MPI_DOUBLE, MPI_ANY_SOURCE, 5, comm, &req[1]);
    MPI_Isend(&s[0], 1, MPI_DOUBLE, left, 5, comm, &req[2]);
    MPI_Isend(&s[1], 1, MPI_DOUBLE, right, 5, comm, &req[3]);
    for (int k = 0; k < 4; k++) {
        int index;
        MPI_Waitany(4, req, &index, MPI_STATUS_IGNORE);
    }
    u[2] += r[0] + r[1];

    double x = u[3], y = 0;
    MPI_Send(&x, 1, MPI_DOUBLE, right, 6, comm);
    MPI_Recv(&y, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 6, comm, MPI_STATUS_IGNORE);
    u[3] = 0.5 * (u[3] + y);

    MPI_Send(&x, 1, MPI_DOUBLE, left, 7, comm);
    MPI_Message msg;
    if (step % 2) {
        MPI_Mprobe(MPI_ANY_SOURCE, 7, comm, &msg, MPI_STATUS_IGNORE);
        MPI_Mrecv(&y, 1, MPI_DOUBLE, &msg, MPI_STATUS_IGNORE);
    } else {
        int flag = 0;
        while (!flag) MPI_Improbe(MPI_ANY_SOURCE, 7, comm, &flag, &msg, MPI_STATUS_IGNORE);
        MPI_Request q;
        MPI_Imrecv(&y, 1, MPI_DOUBLE, &msg, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    u[4] += y * 1e-3;

    *pout = u[5];
    MPI_Startall(2, persistent);
    MPI_Waitall(2, persistent, MPI_STATUSES_IGNORE);
    u[5] = 0.5 * (u[5] + *pin);

    double t = 0;
    MPI_Request ts[2];
    MPI_Irecv(&t, 1, MPI_DOUBLE, left, 9, comm, &ts[0]);
    MPI_Isend(&u[6], 1, MPI_DOUBLE, right, 9, comm, &ts[1]);
    int done = 0;
    while (done < 2) {
        int outcount, indices[2];
        MPI_Testsome(2, ts, &outcount, indices, MPI_STATUSES_IGNORE);
        if (outcount != MPI_UNDEFINED) done += outcount;
    }
    u[6] = 0.5 * (u[6] + t);

    double sum = 0;
    MPI_Request ar;
    MPI_Iallreduce(&u[7], &sum, 1, MPI_DOUBLE, MPI_SUM, comm, &ar);
    int flag = 0;
    while (!flag) MPI_Testall(1, &ar, &flag, MPI_STATUSES_IGNORE);
    u[7] = sum / size;
    MPI_Bcast(&u[0], 1, MPI_DOUBLE, step % size, comm);

    double z = u[1];
    MPI_Sendrecv_replace(&z, 1, MPI_DOUBLE, right, 10, left, 10, comm, MPI_STATUS_IGNORE);
    u[1] = 0.5 * (u[1] + z);

    /* MPI_PROC_NULL peers are no messages */
    MPI_Request pn;
    MPI_Irecv(&z, 1, MPI_DOUBLE, MPI_PROC_NULL, 11, comm, &pn);
    MPI_Wait(&pn, MPI_STATUS_IGNORE);
    MPI_Send(&z, 1, MPI_DOUBLE, MPI_PROC_NULL, 11, comm);

    /* a communicator made and freed every step */
    MPI_Comm tmp;
    MPI_Comm_split(comm, rank % 2, rank, &tmp);
    int trank, tsize;
    MPI_Comm_rank(tmp, &trank);
    MPI_Comm_size(tmp, &tsize);
    double w = trank, got = 0;
    MPI_Sendrecv(&w, 1, MPI_DOUBLE, (trank + 1) % tsize, 12, &got, 1, MPI_DOUBLE,
                 (trank + tsize - 1) % tsize, 12, tmp, MPI_STATUS_IGNORE);
    check(got == (trank + tsize - 1) % tsize, "split communicator exchange");
    MPI_Comm_free(&tmp);
}

struct lane {
    MPI_Comm comm;
    int step;
    double sum;
};

/* One thread's traffic of a step, on its own communicator. */
static void *lane_run(void *arg) {
    struct lane *lane = arg;
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    for (int k = 0; k < 25; k++) {
        double s = rank + k + lane->step, r[2];
        MPI_Request req[4];
        MPI_Irecv(&r[0], 1, MPI_DOUBLE, left, 1, lane->comm, &req[0]);
        MPI_Irecv(&r[1], 1, MPI_DOUBLE, right, 1, lane->comm, &req[1]);
        MPI_Isend(&s, 1, MPI_DOUBLE, right, 1, lane->comm, &req[2]);
        MPI_Isend(&s, 1, MPI_DOUBLE, left, 1, lane->comm, &req[3]);
        MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
        double y;
        MPI_Send(&s, 1, MPI_DOUBLE, right, 2, lane->comm);
        MPI_Recv(&y, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 2, lane->comm, MPI_STATUS_IGNORE);
        lane->sum += r[0] - r[1] + y * 1e-3;
    }
    return NULL;
}

int main(int argc, char **argv) {
    static char out[1 << 16];
    setvbuf(stdout, out, _IOFBF, sizeof out);
    const char *mode = getenv("PI_MODE") ? getenv("PI_MODE") : "wild";
    int threads = strcmp(mode, "threads") == 0;
    if (threads) {
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        if (provided != MPI_THREAD_MULTIPLE) {
            printf("pi rank ? error 0 MPI_Init_thread: no MPI_THREAD_MULTIPLE\n");
            MPI_Finalize();
            return 0;
        }
    } else {
        MPI_Init(&argc, &argv);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int steps = env_int("PI_STEPS", 40), interval = env_int("PI_INTERVAL", 10);
    int at = env_int("PI_AT", 20), kill_at = env_int("PI_KILL_AT", -1);
    int wild = strcmp(mode, "wild") == 0;

    static double u[M];
    for (int i = 0; i < M; i++) u[i] = rank * 10 + i;
    int step = 0;

    char info[1024];
    snprintf(info, sizeof info, "dir=%s/node{rank};scheme=xor;set_size=4;keep=3",
             getenv("PI_CACHE") ? getenv("PI_CACHE") : "/tmp");
    const char *given = getenv("PI_FROM_ENV") ? NULL : info;
    cd_handle cd = create_cd(NULL, given, COMM_LOGGING_DISABLED, "inflight", NULL);
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
        printf("pi rank %d resumed %d version %llu\n", rank, step, (unsigned long long)version);
        fflush(stdout);
    }

    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    double pin = 0, pout = 0;
    MPI_Request persistent[2];
    MPI_Recv_init(&pin, 1, MPI_DOUBLE, left, 8, dup, &persistent[0]);
    MPI_Send_init(&pout, 1, MPI_DOUBLE, right, 8, dup, &persistent[1]);
    struct lane lanes[2];
    for (int t = 0; t < 2; t++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &lanes[t].comm);
        lanes[t].sum = 0;
    }

    while (step < steps) {
        MPI_Sendrecv(&u[0], 1, MPI_DOUBLE, left, 0, &u[M - 1], 1, MPI_DOUBLE, right, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (wild) wild_step(dup, step, u, persistent, &pin, &pout);
        if (threads) {
            pthread_t th[2];
            for (int t = 0; t < 2; t++) {
                lanes[t].step = step;
                pthread_create(&th[t], NULL, lane_run, &lanes[t]);
            }
            for (int t = 0; t < 2; t++) pthread_join(th[t], NULL);
            u[2] += 1e-6 * (lanes[0].sum - lanes[1].sum);
        }
        for (int i = 0; i < M; i++) u[i] = 0.9 * u[i] + 0.1 * u[(i + 1) % M];
        step++;
        if (step % interval) continue;

        /* the traffic around the advance at step `at` */
        int special = step == at && (strcmp(mode, "isend") == 0 || strcmp(mode, "recv") == 0 ||
                                     strcmp(mode, "pending") == 0);
        double token = 1000 + step, got = 0;
        MPI_Request sreq = MPI_REQUEST_NULL, rreq = MPI_REQUEST_NULL;
        if (special && strcmp(mode, "isend") == 0) {
            if (rank == 0) MPI_Isend(&token, 1, MPI_DOUBLE, 1, 42, MPI_COMM_WORLD, &sreq);
        } else if (special && strcmp(mode, "recv") == 0) {
            if (rank == 0) MPI_Send(&token, 1, MPI_DOUBLE, 1, 42, MPI_COMM_WORLD);
            if (rank == 1) MPI_Recv(&got, 1, MPI_DOUBLE, 0, 42, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (special && strcmp(mode, "pending") == 0) {
            if (rank == 1) MPI_Irecv(&got, 1, MPI_DOUBLE, 0, 42, MPI_COMM_WORLD, &rreq);
        }

        if (advance_cd_point_in_time(cd) == 0) {
            printf("pi rank %d persisted %d\n", rank, step);
        } else {
            char msg[2048];
            printf("pi rank %d refused %d %d %s\n", rank, step, cd_last_error(),
                   cd_message(msg, sizeof msg));
        }
        fflush(stdout);
        if (step == kill_at) {
            MPI_Barrier(MPI_COMM_WORLD); /* every rank's line is out before the first dies */
            raise(SIGKILL);
        }

        if (special && strcmp(mode, "isend") == 0) {
            if (rank == 0) MPI_Wait(&sreq, MPI_STATUS_IGNORE);
            if (rank == 1) MPI_Recv(&got, 1, MPI_DOUBLE, 0, 42, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (special && strcmp(mode, "pending") == 0) {
            if (rank == 0) MPI_Send(&token, 1, MPI_DOUBLE, 1, 42, MPI_COMM_WORLD);
            if (rank == 1) MPI_Wait(&rreq, MPI_STATUS_IGNORE);
        }
        if (special && rank == 1) check(got == token, "token");
        /* an advance demotes the ranges to READ_ONLY: promote them again */
        if (add_to_cd_via_copy(cd, state, 2)) return report_cd_error("add_to_cd_via_copy");
    }

    char hex[M * 16 + 1];
    for (int i = 0; i < M; i++) {
        uint64_t bits;
        memcpy(&bits, &u[i], sizeof bits);
        snprintf(hex + i * 16, 17, "%016llx", (unsigned long long)bits);
    }
    printf("pi rank %d done %d %s\n", rank, step, hex);
    fflush(stdout);
    MPI_Request_free(&persistent[0]);
    MPI_Request_free(&persistent[1]);
    MPI_Comm_free(&dup);
    for (int t = 0; t < 2; t++) MPI_Comm_free(&lanes[t].comm);
    commit_cd(cd);
    MPI_Finalize();
    return 0;
}
