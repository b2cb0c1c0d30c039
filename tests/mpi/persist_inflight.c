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
 *   large    (MPI_VERSION >= 4, else "pi rank R skipped") every step, the CD logging,
 *            point-to-point and collective traffic where even ranks call the large-count
 *            forms with a count beyond INT_MAX (3e9 elements of a size-0 datatype: passed
 *            through unlogged) and odd ranks the int forms with 0 bytes, so that a pair's
 *            counts differ if a large-count call goes uncounted; and rank 0 MPI_Isend_c's such
 *            a message to rank 1 before the advance at PI_AT, received after it: in flight
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

#if MPI_VERSION >= 4
/* A datatype of size 0 and a count beyond INT_MAX: a large-count call passed through unlogged
 * that moves no byte. */
static MPI_Datatype empty;
#define HUGE_COUNT ((MPI_Count)3000000000)
#define UNPACK(...) __VA_ARGS__
/* MPI_<call>_c with HUGE_COUNT elements of `empty` on an even rank, MPI_<call> with 0 bytes on
 * an odd one (the same, empty, type signature): `pre` and `post` are the arguments before and
 * after the count and datatype, in parentheses. */
#define EITHER(call, pre, post)                                                                \
    mpi_check(rank % 2 == 0 ? MPI_##call##_c(UNPACK pre, HUGE_COUNT, empty, UNPACK post)       \
                            : MPI_##call(UNPACK pre, 0, MPI_BYTE, UNPACK post),                \
              #call)

/* One step of "large" traffic on `comm`; `persistent` holds a send to the right, a receive
 * from the left and a broadcast from rank 0, made by EITHER. */
static void large_step(MPI_Comm comm, MPI_Request persistent[3]) {
    int left = (rank + size - 1) % size, right = (rank + 1) % size, big = rank % 2 == 0;
    double d = 0;
    MPI_Request q[2];
    EITHER(Send, (&d), (right, 20, comm));
    EITHER(Recv, (&d), (left, 20, comm, MPI_STATUS_IGNORE));
    EITHER(Irecv, (&d), (left, 21, comm, &q[0]));
    EITHER(Isend, (&d), (right, 21, comm, &q[1]));
    mpi_check(MPI_Waitall(2, q, MPI_STATUSES_IGNORE), "Waitall");
    mpi_check(big ? MPI_Sendrecv_c(&d, HUGE_COUNT, empty, right, 22, &d, HUGE_COUNT, empty, left,
                                   22, comm, MPI_STATUS_IGNORE)
                  : MPI_Sendrecv(&d, 0, MPI_BYTE, right, 22, &d, 0, MPI_BYTE, left, 22, comm,
                                 MPI_STATUS_IGNORE),
              "Sendrecv");
    mpi_check(big ? MPI_Sendrecv_replace_c(&d, HUGE_COUNT, empty, left, 23, right, 23, comm,
                                           MPI_STATUS_IGNORE)
                  : MPI_Sendrecv_replace(&d, 0, MPI_BYTE, left, 23, right, 23, comm,
                                         MPI_STATUS_IGNORE),
              "Sendrecv_replace");
    /* (no MPI_Isendrecv(_replace): MPICH 4.0.2 crashes on it with any derived datatype, int
     * form or not, without libcd too) */
    /* matched probes, received by Mrecv and Imrecv */
    MPI_Message msg;
    EITHER(Send, (&d), (left, 26, comm));
    mpi_check(MPI_Mprobe(MPI_ANY_SOURCE, 26, comm, &msg, MPI_STATUS_IGNORE), "Mprobe");
    EITHER(Mrecv, (&d), (&msg, MPI_STATUS_IGNORE));
    EITHER(Send, (&d), (left, 27, comm));
    int flag = 0;
    while (!flag) MPI_Improbe(MPI_ANY_SOURCE, 27, comm, &flag, &msg, MPI_STATUS_IGNORE);
    EITHER(Imrecv, (&d), (&msg, &q[0]));
    mpi_check(MPI_Wait(&q[0], MPI_STATUS_IGNORE), "Wait Imrecv");
    /* persistent requests, and collectives */
    mpi_check(MPI_Startall(3, persistent), "Startall");
    mpi_check(MPI_Waitall(3, persistent, MPI_STATUSES_IGNORE), "Waitall persistent");
    EITHER(Bcast, (&d), (1, comm));
    EITHER(Ibcast, (&d), (0, comm, &q[0]));
    mpi_check(MPI_Wait(&q[0], MPI_STATUS_IGNORE), "Wait Ibcast");
}
#endif

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
    int wild = strcmp(mode, "wild") == 0, large = strcmp(mode, "large") == 0;
#if MPI_VERSION >= 4
    MPI_Type_contiguous(0, MPI_BYTE, &empty);
    MPI_Type_commit(&empty);
#else
    if (large) {
        printf("pi rank %d skipped\n", rank);
        MPI_Finalize();
        return 0;
    }
#endif

    static double u[M];
    for (int i = 0; i < M; i++) u[i] = rank * 10 + i;
    int step = 0;

    char info[1024];
    snprintf(info, sizeof info, "dir=%s/node{rank};scheme=xor;set_size=4;keep=3",
             getenv("PI_CACHE") ? getenv("PI_CACHE") : "/tmp");
    const char *given = getenv("PI_FROM_ENV") ? NULL : info;
    /* "large" logs, so that its collectives check their counts too (see `coll`) */
    cd_handle cd = create_cd(NULL, given, large ? COMM_LOGGING_ENABLED : COMM_LOGGING_DISABLED,
                             "inflight", NULL);
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
#if MPI_VERSION >= 4
    static double large_buf;
    MPI_Request large_persistent[3];
    if (large) {
        EITHER(Send_init, (&large_buf), (right, 28, dup, &large_persistent[0]));
        EITHER(Recv_init, (&large_buf), (left, 28, dup, &large_persistent[1]));
        mpi_check(rank % 2 == 0 ? MPI_Bcast_init_c(&large_buf, HUGE_COUNT, empty, 0, dup,
                                                   MPI_INFO_NULL, &large_persistent[2])
                                : MPI_Bcast_init(&large_buf, 0, MPI_BYTE, 0, dup, MPI_INFO_NULL,
                                                 &large_persistent[2]),
                  "Bcast_init");
    }
#endif
    struct lane lanes[2];
    for (int t = 0; t < 2; t++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &lanes[t].comm);
        lanes[t].sum = 0;
    }

    while (step < steps) {
        MPI_Sendrecv(&u[0], 1, MPI_DOUBLE, left, 0, &u[M - 1], 1, MPI_DOUBLE, right, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (wild) wild_step(dup, step, u, persistent, &pin, &pout);
#if MPI_VERSION >= 4
        if (large) large_step(dup, large_persistent);
#endif
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
                                     strcmp(mode, "pending") == 0 || large);
        double token = 1000 + step, got = 0;
        MPI_Request sreq = MPI_REQUEST_NULL, rreq = MPI_REQUEST_NULL;
        if (special && strcmp(mode, "isend") == 0) {
            if (rank == 0) MPI_Isend(&token, 1, MPI_DOUBLE, 1, 42, MPI_COMM_WORLD, &sreq);
#if MPI_VERSION >= 4
        } else if (special && large) {
            if (rank == 0)
                mpi_check(MPI_Isend_c(&token, HUGE_COUNT, empty, 1, 42, MPI_COMM_WORLD, &sreq),
                          "Isend_c");
#endif
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
#if MPI_VERSION >= 4
        } else if (special && large) {
            if (rank == 0) MPI_Wait(&sreq, MPI_STATUS_IGNORE);
            if (rank == 1)
                mpi_check(MPI_Recv_c(&got, HUGE_COUNT, empty, 0, 42, MPI_COMM_WORLD,
                                     MPI_STATUS_IGNORE),
                          "Recv_c");
            got = token; /* no byte moved */
#endif
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
#if MPI_VERSION >= 4
    if (large)
        for (int k = 0; k < 3; k++) MPI_Request_free(&large_persistent[k]);
    MPI_Type_free(&empty);
#endif
    MPI_Comm_free(&dup);
    for (int t = 0; t < 2; t++) MPI_Comm_free(&lanes[t].comm);
    commit_cd(cd);
    MPI_Finalize();
    return 0;
}
