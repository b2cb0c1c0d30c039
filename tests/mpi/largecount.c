/* MPI-4's large-count forms (MPI_X_c, counts as MPI_Count), which mpi4py 4 calls instead of
 * the int forms, in every round of a logged loop, with counts that fit in an int: blocking
 * (Send_c/Recv_c, Sendrecv_c, Mprobe + Mrecv_c), nonblocking (Isend_c/Irecv_c + Waitall,
 * Isendrecv_replace_c), persistent (Send_init_c/Recv_init_c + Startall), and collectives
 * (Bcast_c, Allreduce_c, Alltoallv_c, Gatherv_c, Iallgatherv_c + Wait, Reduce_scatter_block_c);
 * then a second phase: the neighbourhood collectives, blocking on a periodic 1-D Cartesian ring
 * and nonblocking (Ineighbor_X_c) on the same ring made by MPI_Dist_graph_create_adjacent, the
 * w-collectives (Alltoallw_c, Ialltoallw_c), and every other nonblocking collective (Ibcast_c,
 * Ireduce_c, Iallreduce_c, Iscan_c, Iexscan_c, Igather_c, Igatherv_c, Iscatter_c, Iscatterv_c,
 * Iallgather_c, Ialltoall_c, Ialltoallv_c, Ireduce_scatter_c, Ireduce_scatter_block_c), posted
 * together and completed by one Waitall.
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

/* An int's worth of data from a double, for the int blocks. */
static int bits(double x) { return (int)(x * 8) % 100000; }

/* The neighbourhood collectives on `ring` (two in- and out-neighbours, left then right, as a
 * periodic 1-D Cartesian topology and a distributed graph both order them), blocking or not. */
static void neighbours(MPI_Comm ring, int nonblocking, int rank, int round, const double *u,
                       double *acc) {
    MPI_Request r[5];
    int n = 0;
#define POST(call, ...)                                                                        \
    mpi_check(nonblocking ? MPI_Ineighbor_##call(__VA_ARGS__, &r[n++])                        \
                          : MPI_Neighbor_##call(__VA_ARGS__),                                  \
              #call)
    /* allgather: one double from each neighbour */
    double x = u[0] + rank + round, ag[2] = {0, 0};
    POST(allgather_c, &x, 1, MPI_DOUBLE, ag, 1, MPI_DOUBLE, ring);
    /* allgatherv: two doubles each, the right neighbour's first */
    double xv[2] = {u[1] * 2 + round, rank * 3.0}, agv[4] = {0, 0, 0, 0};
    MPI_Count cv[2] = {2, 2};
    MPI_Aint dv[2] = {2, 0};
    POST(allgatherv_c, xv, 2, MPI_DOUBLE, agv, cv, dv, MPI_DOUBLE, ring);
    /* alltoall: one int to each */
    int at[2] = {rank * 100 + round, rank * 100 + 50 + bits(u[2])}, atr[2] = {0, 0};
    POST(alltoall_c, at, 1, MPI_INT, atr, 1, MPI_INT, ring);
    /* alltoallv: one double to the left, two to the right (so two from the left, one from
     * the right) */
    double av[3] = {u[3] + round, rank + 0.25, rank + 0.75}, avr[3] = {0, 0, 0};
    MPI_Count sc[2] = {1, 2}, rc[2] = {2, 1};
    MPI_Aint sd[2] = {0, 1}, rd[2] = {1, 0};
    POST(alltoallv_c, av, sc, sd, MPI_DOUBLE, avr, rc, rd, MPI_DOUBLE, ring);
    /* alltoallw: a double to the left, two ints to the right (byte displacements) */
    union {
        double d[3];
        int i[6];
    } ws = {{0}}, wr = {{0}};
    ws.d[0] = u[4] * 3 + round;
    ws.i[2] = rank * 7 + round, ws.i[3] = bits(u[5]);
    MPI_Count wsc[2] = {1, 2}, wrc[2] = {2, 1};
    MPI_Aint wsd[2] = {0, 8}, wrd[2] = {0, 16};
    MPI_Datatype wst[2] = {MPI_DOUBLE, MPI_INT}, wrt[2] = {MPI_INT, MPI_DOUBLE};
    POST(alltoallw_c, &ws, wsc, wsd, wst, &wr, wrc, wrd, wrt, ring);
#undef POST
    if (nonblocking) mpi_check(MPI_Waitall(n, r, MPI_STATUSES_IGNORE), "Waitall neighbours");
    acc[6] += ag[0] * 3 + ag[1] * 5 + agv[0] * 7 + agv[1] * 11 + agv[2] * 13 + agv[3] * 17;
    acc[6] += atr[0] * 19 + atr[1] * 23 + avr[0] * 29 + avr[1] * 31 + avr[2] * 37;
    acc[6] += wr.i[0] * 41 + wr.i[1] * 43 + wr.d[2] * 47 + nonblocking;
}

/* Alltoallw_c and Ialltoallw_c, and every other nonblocking collective, posted together. */
static void collectives(int rank, int size, int round, const double *u, double *acc) {
    MPI_Comm w = MPI_COMM_WORLD;
    int root = (round + 1) % size;
    /* Alltoallw_c: to rank k, 1 + k % 2 ints (byte displacements), the same from each */
    int ws[2 * MAX_RANKS], wr[2 * MAX_RANKS], wri[2 * MAX_RANKS];
    MPI_Count wc[MAX_RANKS], wrc[MAX_RANKS];
    MPI_Aint wd[MAX_RANKS], wrd[MAX_RANKS];
    MPI_Datatype wt[MAX_RANKS];
    for (int k = 0, off = 0; k < size; k++) {
        wc[k] = 1 + k % 2, wd[k] = off * (MPI_Aint)sizeof(int), off += 1 + k % 2;
        wrc[k] = 1 + rank % 2, wrd[k] = k * 2 * (MPI_Aint)sizeof(int), wt[k] = MPI_INT;
    }
    for (int k = 0; k < 2 * MAX_RANKS; k++)
        ws[k] = rank * 1000 + k * 3 + round + bits(u[k % N]), wr[k] = wri[k] = -1;
    mpi_check(MPI_Alltoallw_c(ws, wc, wd, wt, wr, wrc, wrd, wt, w), "Alltoallw_c");

    /* the nonblocking ones: each its own buffers, completed by one Waitall */
    enum { M = 4 };
    MPI_Request r[16];
    int n = 0;
    double mine[M], b[M], red[M], all[M], scan[M], exs[M];
    for (int k = 0; k < M; k++)
        mine[k] = u[k] + rank * (k + 1) + round, b[k] = rank == root ? u[k + 4] : 0,
        red[k] = all[k] = scan[k] = exs[k] = 0;
    mpi_check(MPI_Ialltoallw_c(ws, wc, wd, wt, wri, wrc, wrd, wt, w, &r[n++]), "Ialltoallw_c");
    mpi_check(MPI_Ibcast_c(b, M, MPI_DOUBLE, root, w, &r[n++]), "Ibcast_c");
    mpi_check(MPI_Ireduce_c(mine, red, M, MPI_DOUBLE, MPI_SUM, root, w, &r[n++]), "Ireduce_c");
    mpi_check(MPI_Iallreduce_c(mine, all, M, MPI_DOUBLE, MPI_MAX, w, &r[n++]), "Iallreduce_c");
    mpi_check(MPI_Iscan_c(mine, scan, M, MPI_DOUBLE, MPI_SUM, w, &r[n++]), "Iscan_c");
    mpi_check(MPI_Iexscan_c(mine, exs, M, MPI_DOUBLE, MPI_SUM, w, &r[n++]), "Iexscan_c");
    /* gathered and scattered: rank k's block is k + 1 doubles in the v forms, 2 otherwise */
    double g[2 * MAX_RANKS], gv[MAX_RANKS * (MAX_RANKS + 1) / 2], sg[2], sv[MAX_RANKS];
    double src[MAX_RANKS * (MAX_RANKS + 1) / 2], ag[2 * MAX_RANKS];
    MPI_Count gc[MAX_RANKS];
    MPI_Aint gd[MAX_RANKS];
    int total = size * (size + 1) / 2;
    for (int k = 0, off = 0; k < size; k++) gc[k] = k + 1, gd[k] = off, off += k + 1;
    for (int k = 0; k < total; k++) src[k] = u[k % N] * (k + 1) + rank + round, gv[k] = 0;
    for (int k = 0; k < 2 * MAX_RANKS; k++) g[k] = ag[k] = 0;
    sg[0] = sg[1] = 0;
    for (int k = 0; k < MAX_RANKS; k++) sv[k] = 0;
    mpi_check(MPI_Igather_c(mine, 2, MPI_DOUBLE, g, 2, MPI_DOUBLE, root, w, &r[n++]), "Igather_c");
    mpi_check(MPI_Igatherv_c(src, rank + 1, MPI_DOUBLE, gv, gc, gd, MPI_DOUBLE, root, w, &r[n++]),
              "Igatherv_c");
    mpi_check(MPI_Iscatter_c(src, 2, MPI_DOUBLE, sg, 2, MPI_DOUBLE, root, w, &r[n++]),
              "Iscatter_c");
    mpi_check(MPI_Iscatterv_c(src, gc, gd, MPI_DOUBLE, sv, rank + 1, MPI_DOUBLE, root, w, &r[n++]),
              "Iscatterv_c");
    mpi_check(MPI_Iallgather_c(mine, 2, MPI_DOUBLE, ag, 2, MPI_DOUBLE, w, &r[n++]), "Iallgather_c");
    /* Ialltoall_c: one int to each; Ialltoallv_c: k % 2 + 1 ints to rank k */
    int ia[MAX_RANKS], iar[MAX_RANKS], iv[2 * MAX_RANKS], ivr[2 * MAX_RANKS];
    MPI_Count vc[MAX_RANKS], vrc[MAX_RANKS];
    MPI_Aint vd[MAX_RANKS], vrd[MAX_RANKS];
    for (int k = 0, so = 0; k < size; k++) {
        ia[k] = rank * 10 + k + round, iar[k] = -1;
        vc[k] = k % 2 + 1, vd[k] = so, so += k % 2 + 1;
        vrc[k] = rank % 2 + 1, vrd[k] = 2 * k;
    }
    for (int k = 0; k < 2 * MAX_RANKS; k++) iv[k] = rank * 100 + k + round, ivr[k] = -1;
    mpi_check(MPI_Ialltoall_c(ia, 1, MPI_INT, iar, 1, MPI_INT, w, &r[n++]), "Ialltoall_c");
    mpi_check(MPI_Ialltoallv_c(iv, vc, vd, MPI_INT, ivr, vrc, vrd, MPI_INT, w, &r[n++]),
              "Ialltoallv_c");
    /* Ireduce_scatter_c: rank k gets k % 2 + 1 doubles; the block form two each */
    double rs[2 * MAX_RANKS], rsr[2] = {0, 0}, rb[2 * MAX_RANKS], rbr[2] = {0, 0};
    MPI_Count rsc[MAX_RANKS];
    for (int k = 0; k < size; k++) rsc[k] = k % 2 + 1;
    for (int k = 0; k < 2 * MAX_RANKS; k++) rs[k] = u[k % N] + k * rank, rb[k] = rs[k] * 0.5 + round;
    mpi_check(MPI_Ireduce_scatter_c(rs, rsr, rsc, MPI_DOUBLE, MPI_SUM, w, &r[n++]),
              "Ireduce_scatter_c");
    mpi_check(MPI_Ireduce_scatter_block_c(rb, rbr, 2, MPI_DOUBLE, MPI_SUM, w, &r[n++]),
              "Ireduce_scatter_block_c");
    mpi_check(MPI_Waitall(n, r, MPI_STATUSES_IGNORE), "Waitall collectives");

    double a = 0;
    for (int k = 0; k < 2 * size; k++) a += (wr[k] + wri[k] * 3.0) * (k + 1) + ivr[k] * 5.0 * (k + 2);
    for (int k = 0; k < size; k++) a += iar[k] * 7.0 * (k + 1);
    for (int k = 0; k < M; k++)
        a += b[k] * 11 + red[k] * 13 + all[k] * 17 + scan[k] * 19 + exs[k] * 23 * (k + 1);
    for (int k = 0; k < 2 * size; k++) a += g[k] * 29 * (k + 1) + ag[k] * 31 * (k + 2);
    for (int k = 0; k < total; k++) a += gv[k] * 37 * (k + 3);
    for (int k = 0; k <= rank; k++) a += sv[k] * 41 * (k + 1);
    a += sg[0] * 43 + sg[1] * 47 + rsr[0] * 53 + rsr[1] * 59 + rbr[0] * 61 + rbr[1] * 67;
    acc[6] += a * 1e-3;
}
#endif

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
#if MPI_VERSION >= 4
    if (size > MAX_RANKS) die("at most 16 ranks");
    /* the ring of the neighbourhood collectives, made before the CD: as a Cartesian topology
     * and as a distributed graph */
    MPI_Comm cart, graph;
    int dims[1] = {size}, periods[1] = {1};
    mpi_check(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart), "Cart_create");
    int ring[2] = {(rank + size - 1) % size, (rank + 1) % size};
    mpi_check(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, ring, MPI_UNWEIGHTED, 2, ring,
                                             MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph),
              "Dist_graph_create_adjacent");
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
        neighbours(cart, 0, rank, round, u, acc);
        neighbours(graph, 1, rank, round, u, acc);
        collectives(rank, size, round, u, acc);
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
    MPI_Comm_free(&cart);
    MPI_Comm_free(&graph);
#else
    printf("largecount rank %d skipped\n", rank);
#endif
    MPI_Finalize();
    return 0;
}
