/* MPI-4's large-count forms (MPI_X_c, counts as MPI_Count), which mpi4py 4 calls instead of
 * the int forms, in every round of a logged loop, with counts that fit in an int: blocking
 * (Send_c/Recv_c, Sendrecv_c, Mprobe + Mrecv_c), nonblocking (Isend_c/Irecv_c + Waitall,
 * Isendrecv_replace_c), persistent (Send_init_c/Recv_init_c + Startall), and collectives
 * (Bcast_c, Allreduce_c, Alltoallv_c, Gatherv_c, Iallgatherv_c + Wait, Reduce_scatter_block_c).
 * With FAULT_RANK set, that rank faults in round FAULT_ROUND, restores to the last advance and
 * re-executes alone from its log.
 * Prints "largecount rank R checksum X recoveries N", or "largecount rank R skipped" where the
 * headers say MPI_VERSION < 4 (Open MPI 4.1). */
#include <cd.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define PROGRAM "largecount"
#include "support.h"

#define N 8
#define ROUNDS 6
#define MAX_RANKS 16

#if MPI_VERSION >= 4
/* One round of large-count traffic on the ring (left, right): results summed into acc. */
static void round_trip(int rank, int size, int round, const double *u, double *acc) {
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    /* blocking point-to-point: even ranks send first */
    double out[N], in[N];
    for (int i = 0; i < N; i++) out[i] = u[i] + round;
    if (rank % 2 == 0) {
        mpi_check(MPI_Send_c(out, (MPI_Count)N, MPI_DOUBLE, right, 1, MPI_COMM_WORLD), "Send_c");
        mpi_check(MPI_Recv_c(in, (MPI_Count)N, MPI_DOUBLE, left, 1, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE),
                  "Recv_c");
    } else {
        mpi_check(MPI_Recv_c(in, (MPI_Count)N, MPI_DOUBLE, left, 1, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE),
                  "Recv_c");
        mpi_check(MPI_Send_c(out, (MPI_Count)N, MPI_DOUBLE, right, 1, MPI_COMM_WORLD), "Send_c");
    }
    for (int i = 0; i < N; i++) acc[0] += in[i] * (i + 1);

    /* nonblocking, completed together */
    double nb_out[3] = {rank + 0.5, round * 2.0, u[1]}, nb_in[3] = {0, 0, 0};
    MPI_Request r[2];
    mpi_check(MPI_Irecv_c(nb_in, 3, MPI_DOUBLE, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &r[0]),
              "Irecv_c");
    mpi_check(MPI_Isend_c(nb_out, 3, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &r[1]), "Isend_c");
    MPI_Status st[2];
    mpi_check(MPI_Waitall(2, r, st), "Waitall");
    MPI_Count got = 0;
    MPI_Get_count_c(&st[0], MPI_DOUBLE, &got);
    acc[1] += nb_in[0] + nb_in[1] * 3 + nb_in[2] * 5 + st[0].MPI_SOURCE * 7 + (double)got;

    /* Sendrecv_c, and a matched probe received with Mrecv_c */
    double sr_out = u[2] * 2 + round, sr_in = 0;
    mpi_check(MPI_Sendrecv_c(&sr_out, 1, MPI_DOUBLE, right, 3, &sr_in, 1, MPI_DOUBLE, left, 3,
                             MPI_COMM_WORLD, MPI_STATUS_IGNORE),
              "Sendrecv_c");
    acc[1] += sr_in * 11;
    double mp_out[2] = {rank * 3.0, round + 0.25}, mp_in[2] = {0, 0};
    MPI_Request mreq;
    mpi_check(MPI_Isend_c(mp_out, 2, MPI_DOUBLE, left, 4, MPI_COMM_WORLD, &mreq), "Isend_c 2");
    MPI_Message msg;
    MPI_Status mst;
    mpi_check(MPI_Mprobe(MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &msg, &mst), "Mprobe");
    mpi_check(MPI_Mrecv_c(mp_in, 2, MPI_DOUBLE, &msg, MPI_STATUS_IGNORE), "Mrecv_c");
    mpi_check(MPI_Wait(&mreq, MPI_STATUS_IGNORE), "Wait Isend_c");
    acc[1] += mp_in[0] * 13 + mp_in[1] * 17 + mst.MPI_SOURCE;

    /* Isendrecv_replace_c */
    double rep = u[3] + rank;
    mpi_check(MPI_Isendrecv_replace_c(&rep, 1, MPI_DOUBLE, right, 5, left, 5, MPI_COMM_WORLD,
                                      &mreq),
              "Isendrecv_replace_c");
    mpi_check(MPI_Wait(&mreq, MPI_STATUS_IGNORE), "Wait Isendrecv_replace_c");
    acc[1] += rep * 19;

    /* persistent point-to-point, made, started and freed in the round */
    double p_out[2] = {u[4] + round, rank * 1.0}, p_in[2] = {0, 0};
    MPI_Request p[2];
    mpi_check(MPI_Recv_init_c(p_in, 2, MPI_DOUBLE, left, 6, MPI_COMM_WORLD, &p[0]),
              "Recv_init_c");
    mpi_check(MPI_Send_init_c(p_out, 2, MPI_DOUBLE, right, 6, MPI_COMM_WORLD, &p[1]),
              "Send_init_c");
    mpi_check(MPI_Startall(2, p), "Startall");
    mpi_check(MPI_Waitall(2, p, MPI_STATUSES_IGNORE), "Waitall persistent");
    MPI_Request_free(&p[0]);
    MPI_Request_free(&p[1]);
    acc[2] += p_in[0] * 23 + p_in[1] * 29;

    /* collectives */
    int root = round % size;
    double b[2] = {0, 0};
    if (rank == root) b[0] = u[5] + round, b[1] = round * 31.0;
    mpi_check(MPI_Bcast_c(b, 2, MPI_DOUBLE, root, MPI_COMM_WORLD), "Bcast_c");
    double mine[2] = {u[6], rank + round * 0.5}, sum[2];
    mpi_check(MPI_Allreduce_c(mine, sum, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "Allreduce_c");
    acc[2] += b[0] * 37 + b[1] + sum[0] * 41 + sum[1] * 43;

    /* Alltoallv_c: to rank k, 1 + (rank + k) % 2 ints */
    int a_out[2 * MAX_RANKS], a_in[2 * MAX_RANKS];
    MPI_Count sc[MAX_RANKS], rc[MAX_RANKS];
    MPI_Aint sd[MAX_RANKS], rd[MAX_RANKS];
    for (int k = 0, so = 0, ro = 0; k < size; k++) {
        sc[k] = rc[k] = 1 + (rank + k) % 2;
        sd[k] = so;
        rd[k] = ro;
        so += (int)sc[k];
        ro += (int)rc[k];
    }
    for (int k = 0; k < 2 * MAX_RANKS; k++) a_out[k] = rank * 1000 + k + round, a_in[k] = -1;
    mpi_check(MPI_Alltoallv_c(a_out, sc, sd, MPI_INT, a_in, rc, rd, MPI_INT, MPI_COMM_WORLD),
              "Alltoallv_c");
    for (int k = 0; k < 2 * size; k++) acc[3] += a_in[k] * (k + 1);

    /* Gatherv_c at the root, Iallgatherv_c everywhere: rank k gives k + 1 doubles */
    double g_out[MAX_RANKS], g_in[MAX_RANKS * (MAX_RANKS + 1) / 2];
    MPI_Count gc[MAX_RANKS];
    MPI_Aint gd[MAX_RANKS];
    for (int k = 0, off = 0; k < size; k++) gc[k] = k + 1, gd[k] = off, off += k + 1;
    for (int k = 0; k <= rank; k++) g_out[k] = u[7] * (k + 1) + rank;
    int total = size * (size + 1) / 2;
    for (int k = 0; k < total; k++) g_in[k] = 0;
    mpi_check(MPI_Gatherv_c(g_out, rank + 1, MPI_DOUBLE, g_in, gc, gd, MPI_DOUBLE, root,
                            MPI_COMM_WORLD),
              "Gatherv_c");
    if (rank == root)
        for (int k = 0; k < total; k++) acc[4] += g_in[k] * (k + 2);
    MPI_Request ag;
    mpi_check(MPI_Iallgatherv_c(g_out, rank + 1, MPI_DOUBLE, g_in, gc, gd, MPI_DOUBLE,
                                MPI_COMM_WORLD, &ag),
              "Iallgatherv_c");
    mpi_check(MPI_Wait(&ag, MPI_STATUS_IGNORE), "Wait Iallgatherv_c");
    for (int k = 0; k < total; k++) acc[4] += g_in[k] * (k + 3);

    /* Reduce_scatter_block_c: two doubles per rank */
    double rs_out[2 * MAX_RANKS], rs_in[2];
    for (int k = 0; k < 2 * size; k++) rs_out[k] = u[k % N] + k * rank;
    mpi_check(MPI_Reduce_scatter_block_c(rs_out, rs_in, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
              "Reduce_scatter_block_c");
    acc[5] += rs_in[0] * 47 + rs_in[1] * 53;
}
#endif

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
#if MPI_VERSION >= 4
    if (size > MAX_RANKS) die("at most 16 ranks");
    int fault_rank = env_int("FAULT_RANK", -1), fault_round = env_int("FAULT_ROUND", 4);
    static double u[N], acc[8];
    int round = 0, recoveries = 0, faulted = 0;
    for (int i = 0; i < N; i++) u[i] = rank * 10.0 + i;
    int error = 0;
    cd_handle cd = create_cd(NULL, NULL, COMM_LOGGING_ENABLED, "largecount", &error);
    if (!cd) cd_fail("create_cd", error);
    struct cd_addrspec state[] = {
        {u, sizeof u, READ_WRITE, GLOBAL},
        {acc, sizeof acc, READ_WRITE, GLOBAL},
        {&round, sizeof round, READ_WRITE, GLOBAL},
    };
    CHECK(add_to_cd_via_copy(cd, state, 3));
    while (round < ROUNDS) {
        round_trip(rank, size, round, u, acc);
        for (int i = 0; i < N; i++) u[i] = 0.5 * u[i] + acc[(i + round) % 6] * 1e-4;
        if (rank == fault_rank && round == fault_round && !faulted) {
            faulted = 1;
            recoveries++;
            for (int i = 0; i < N; i++) u[i] = -1e300;
            CHECK(restore_cd(cd));
            continue;
        }
        round++;
        if (round == 2) {
            if (advance_cd_point_in_time(cd) == FAILURE) cd_fail("advance", cd_last_error());
            CHECK(add_to_cd_via_copy(cd, state, 3));
        }
    }
    CHECK(commit_cd(cd));
    for (int i = 0; i < N; i++) acc[7] += u[i] * (i + 1);
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < 8; i++) {
        uint64_t bits;
        memcpy(&bits, &acc[i], 8);
        h = (h ^ bits) * 1099511628211ull;
    }
    printf("largecount rank %d checksum %016llx recoveries %d\n", rank, (unsigned long long)h,
           recoveries);
#else
    printf("largecount rank %d skipped\n", rank);
#endif
    MPI_Finalize();
    return 0;
}
