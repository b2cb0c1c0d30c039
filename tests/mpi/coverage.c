/* The rest of the replayed calls, each in every round of a logged loop: persistent requests
 * (made before the CD and made and freed inside it, Startall/Start), matched probes (Mprobe +
 * Mrecv, Improbe + Imrecv), nonblocking collectives completed together with point-to-point
 * requests in one Waitall, Alltoallw, the calls that make communicators (Comm_split_type,
 * Cart_create, Cart_sub, Comm_create, Comm_idup, Intercomm_create, Intercomm_merge), and the
 * neighborhood collectives on the Cartesian one (Neighbor_allgather, Ineighbor_alltoall,
 * Neighbor_alltoallw).
 * With FAULT_RANK set, that rank faults in round FAULT_ROUND while its persistent halo and an
 * Iallreduce are in flight, restores to the last advance and re-executes alone from its log;
 * the requests in flight are drained at restore and served again after the replay.
 * Prints "coverage rank R checksum X recoveries N". */
#include <cd.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "coverage"
#include "support.h"

#define N 64
#define ROUNDS 8

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int fault_rank = env_int("FAULT_RANK", -1), fault_round = env_int("FAULT_ROUND", 5);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;

    static double u[N + 2];
    static double acc[8];
    int round = 0, recoveries = 0, faulted = 0;
    for (int i = 0; i < N + 2; i++) u[i] = rank * 100.0 + i;

    /* persistent halo, made before the CD: it lives across restores */
    MPI_Request halo[4];
    MPI_Recv_init(&u[0], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &halo[0]);
    MPI_Recv_init(&u[N + 1], 1, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &halo[1]);
    MPI_Send_init(&u[N], 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &halo[2]);
    MPI_Send_init(&u[1], 1, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &halo[3]);

    int error = 0;
    cd_handle cd = create_cd(NULL, NULL, COMM_LOGGING_ENABLED, "coverage", &error);
    if (!cd) cd_fail("create_cd", error);
    struct cd_addrspec state[] = {
        {u, sizeof u, READ_WRITE, GLOBAL},
        {acc, sizeof acc, READ_WRITE, GLOBAL},
        {&round, sizeof round, READ_WRITE, GLOBAL},
    };
    if (add_to_cd_via_copy(cd, state, 3)) MPI_Abort(MPI_COMM_WORLD, 2);

    while (round < ROUNDS) {
        /* 1. the persistent halo and a nonblocking reduction in flight together */
        mpi_check(MPI_Startall(4, halo), "Startall");
        double local = 0, global = 0;
        for (int i = 1; i <= N; i++) local += u[i];
        MPI_Request red;
        mpi_check(MPI_Iallreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &red),
                  "Iallreduce");
        if (rank == fault_rank && round == fault_round && !faulted) {
            faulted = 1;
            recoveries++;
            /* the fault hits the state, not the halo cells a receive in flight may already
             * have filled (the drain takes a completed receive's data from its buffer) */
            for (int i = 1; i <= N; i++) u[i] = -1e300;
            if (restore_cd(cd)) MPI_Abort(MPI_COMM_WORLD, 3);
            continue;
        }
        mpi_check(MPI_Waitall(4, halo, MPI_STATUSES_IGNORE), "Waitall halo");
        mpi_check(MPI_Wait(&red, MPI_STATUS_IGNORE), "Wait Iallreduce");
        for (int i = 1; i <= N; i++) u[i] = 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1]);
        acc[0] = acc[0] * 0.5 + global * 1e-6;

        /* 2. a persistent pair made, used and freed inside the CD */
        double token = rank + round * 0.25, got = 0;
        MPI_Request pair[2];
        MPI_Recv_init(&got, 1, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, &pair[0]);
        MPI_Ssend_init(&token, 1, MPI_DOUBLE, right, 3, MPI_COMM_WORLD, &pair[1]);
        mpi_check(MPI_Start(&pair[0]), "Start recv");
        mpi_check(MPI_Start(&pair[1]), "Start send");
        int done = 0;
        while (!done) mpi_check(MPI_Testall(2, pair, &done, MPI_STATUSES_IGNORE), "Testall");
        MPI_Request_free(&pair[0]);
        MPI_Request_free(&pair[1]);
        acc[1] += got;

        /* 3. matched probes: Mprobe + Mrecv, Improbe + Imrecv, sizes vary by round */
        int out[8], in[8];
        int n = 1 + (rank + round) % 8;
        for (int i = 0; i < n; i++) out[i] = rank * 1000 + round * 10 + i;
        MPI_Request sreq;
        MPI_Isend(out, n, MPI_INT, right, 4, MPI_COMM_WORLD, &sreq);
        MPI_Message msg;
        MPI_Status st;
        mpi_check(MPI_Mprobe(MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &msg, &st), "Mprobe");
        int m;
        MPI_Get_count(&st, MPI_INT, &m);
        mpi_check(MPI_Mrecv(in, m, MPI_INT, &msg, MPI_STATUS_IGNORE), "Mrecv");
        for (int i = 0; i < m; i++) acc[2] += in[i] * (i + 1) + st.MPI_SOURCE;
        MPI_Wait(&sreq, MPI_STATUS_IGNORE);
        MPI_Isend(out, n, MPI_INT, left, 5, MPI_COMM_WORLD, &sreq);
        int flag = 0;
        while (!flag) mpi_check(MPI_Improbe(right, 5, MPI_COMM_WORLD, &flag, &msg, &st), "Improbe");
        MPI_Get_count(&st, MPI_INT, &m);
        MPI_Request rreq[2] = {MPI_REQUEST_NULL, sreq};
        mpi_check(MPI_Imrecv(in, m, MPI_INT, &msg, &rreq[0]), "Imrecv");
        mpi_check(MPI_Waitall(2, rreq, MPI_STATUSES_IGNORE), "Waitall Imrecv");
        for (int i = 0; i < m; i++) acc[2] += in[i] * 0.5;

        /* 4. nonblocking collectives mixed with a receive in one Waitall */
        int root = round % size;
        double b = rank == root ? round * 3.0 + 1 : 0;
        double mine[2] = {rank + 0.5, round * 1.0}, all[2 * 16], tot[2];
        int blk[16], blkin[16];
        for (int k = 0; k < size; k++) blk[k] = rank * 100 + k + round;
        double ring = rank * 2.0 + round, ringin = 0;
        MPI_Request cr[6];
        MPI_Ibcast(&b, 1, MPI_DOUBLE, root, MPI_COMM_WORLD, &cr[0]);
        MPI_Igather(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, root, MPI_COMM_WORLD, &cr[1]);
        MPI_Ialltoall(blk, 1, MPI_INT, blkin, 1, MPI_INT, MPI_COMM_WORLD, &cr[2]);
        MPI_Irecv(&ringin, 1, MPI_DOUBLE, left, 6, MPI_COMM_WORLD, &cr[3]);
        MPI_Isend(&ring, 1, MPI_DOUBLE, right, 6, MPI_COMM_WORLD, &cr[4]);
        MPI_Iscan(mine, tot, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &cr[5]);
        mpi_check(MPI_Waitall(6, cr, MPI_STATUSES_IGNORE), "Waitall collectives");
        MPI_Ibarrier(MPI_COMM_WORLD, &cr[0]);
        int idx;
        mpi_check(MPI_Waitany(1, cr, &idx, MPI_STATUS_IGNORE), "Waitany Ibarrier");
        acc[3] += b + ringin + tot[0] * 3 + tot[1];
        if (rank == root)
            for (int k = 0; k < 2 * size; k++) acc[3] += all[k] * (k + 1);
        for (int k = 0; k < size; k++) acc[4] += blkin[k] * (k + 2);

        /* 5. Alltoallw: ints to even ranks, doubles to odd ones, byte displacements */
        char sendw[16 * 8], recvw[16 * 8];
        int counts[16], displs[16];
        MPI_Datatype types[16];
        for (int k = 0; k < size; k++) {
            counts[k] = 1;
            displs[k] = k * 8;
            types[k] = (k % 2 || rank % 2) ? MPI_DOUBLE : MPI_INT;
        }
        for (int k = 0; k < size; k++) {
            if (types[k] == MPI_DOUBLE) {
                double d = rank * 10.0 + k + round;
                memcpy(sendw + k * 8, &d, 8);
            } else {
                int v = rank * 10 + k + round;
                memcpy(sendw + k * 8, &v, 4);
            }
        }
        memset(recvw, 0, sizeof recvw);
        mpi_check(MPI_Alltoallw(sendw, counts, displs, types, recvw, counts, displs, types,
                                MPI_COMM_WORLD), "Alltoallw");
        for (int k = 0; k < size; k++) {
            if (types[k] == MPI_DOUBLE) {
                double d;
                memcpy(&d, recvw + k * 8, 8);
                acc[5] += d * (k + 1);
            } else {
                int v;
                memcpy(&v, recvw + k * 8, 4);
                acc[5] += v * (k + 1);
            }
        }

        /* 6. communicators made and freed in the loop */
        MPI_Comm node, cart, row, evens, dup, inter, merged;
        mpi_check(
            MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node),
            "Comm_split_type");
        int dims[2] = {2, size / 2}, periods[2] = {1, 1};
        mpi_check(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart), "Cart_create");
        int remain[2] = {0, 1};
        mpi_check(MPI_Cart_sub(cart, remain, &row), "Cart_sub");
        /* neighborhood collectives on the Cartesian topology: 2 * ndims = 4 blocks each */
        double nb_mine = rank * 3.0 + round, nb_all[4] = {0}, nb_out[4], nb_in[4] = {0},
               nb_w[4] = {0};
        for (int k = 0; k < 4; k++) nb_out[k] = rank * 100 + k * 10 + round;
        mpi_check(MPI_Neighbor_allgather(&nb_mine, 1, MPI_DOUBLE, nb_all, 1, MPI_DOUBLE, cart),
                  "Neighbor_allgather");
        MPI_Request nreq;
        mpi_check(MPI_Ineighbor_alltoall(nb_out, 1, MPI_DOUBLE, nb_in, 1, MPI_DOUBLE, cart, &nreq),
                  "Ineighbor_alltoall");
        mpi_check(MPI_Wait(&nreq, MPI_STATUS_IGNORE), "Wait Ineighbor_alltoall");
        int wcounts[4] = {1, 1, 1, 1};
        MPI_Aint wdispls[4] = {24, 16, 8, 0}; /* reversed, in bytes */
        MPI_Datatype wtypes[4] = {MPI_DOUBLE, MPI_DOUBLE, MPI_DOUBLE, MPI_DOUBLE};
        mpi_check(MPI_Neighbor_alltoallw(nb_out, wcounts, wdispls, wtypes, nb_w, wcounts, wdispls,
                                         wtypes, cart),
                  "Neighbor_alltoallw");
        for (int k = 0; k < 4; k++) acc[6] += nb_all[k] * (k + 1) + nb_in[k] * (k + 11) + nb_w[k] * (k + 21);
        MPI_Group world_group, even_group;
        MPI_Comm_group(MPI_COMM_WORLD, &world_group);
        int evens_ranks[8], ne = 0;
        for (int k = 0; k < size; k += 2) evens_ranks[ne++] = k;
        MPI_Group_incl(world_group, ne, evens_ranks, &even_group);
        mpi_check(MPI_Comm_create(MPI_COMM_WORLD, even_group, &evens), "Comm_create");
        MPI_Request dreq;
        mpi_check(MPI_Comm_idup(row, &dup, &dreq), "Comm_idup");
        mpi_check(MPI_Wait(&dreq, MPI_STATUS_IGNORE), "Wait Comm_idup");
        double x = rank + round, sum_node, sum_row, sum_dup, sum_evens = 0;
        MPI_Allreduce(&x, &sum_node, 1, MPI_DOUBLE, MPI_SUM, node);
        MPI_Allreduce(&x, &sum_row, 1, MPI_DOUBLE, MPI_MAX, row);
        MPI_Allreduce(&x, &sum_dup, 1, MPI_DOUBLE, MPI_MIN, dup);
        if (evens != MPI_COMM_NULL) MPI_Allreduce(&x, &sum_evens, 1, MPI_DOUBLE, MPI_SUM, evens);
        /* the two halves of world, joined by an intercommunicator and merged back */
        MPI_Comm half;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        mpi_check(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &inter),
                  "Intercomm_create");
        mpi_check(MPI_Intercomm_merge(inter, rank % 2, &merged), "Intercomm_merge");
        int mrank;
        MPI_Comm_rank(merged, &mrank);
        double sum_merged;
        MPI_Allreduce(&x, &sum_merged, 1, MPI_DOUBLE, MPI_SUM, merged);
        acc[6] += sum_node + sum_row * 2 + sum_dup * 3 + sum_evens * 5 + sum_merged * 7 + mrank;
        MPI_Comm_free(&merged);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
        MPI_Comm_free(&dup);
        if (evens != MPI_COMM_NULL) MPI_Comm_free(&evens);
        MPI_Group_free(&even_group);
        MPI_Group_free(&world_group);
        MPI_Comm_free(&row);
        MPI_Comm_free(&cart);
        MPI_Comm_free(&node);

        round++;
        if (round == 2 || round == 4) {
            if (advance_cd_point_in_time(cd) == FAILURE) MPI_Abort(MPI_COMM_WORLD, 4);
            if (add_to_cd_via_copy(cd, state, 3)) MPI_Abort(MPI_COMM_WORLD, 5);
        }
    }
    commit_cd(cd);
    for (int k = 0; k < 4; k++) MPI_Request_free(&halo[k]);
    for (int i = 1; i <= N; i++) acc[7] += u[i] * i;
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < 8; i++) {
        uint64_t bits;
        memcpy(&bits, &acc[i], 8);
        h = (h ^ bits) * 1099511628211ull;
    }
    printf("coverage rank %d checksum %016llx recoveries %d\n", rank, (unsigned long long)h,
           recoveries);
    MPI_Finalize();
    return 0;
}
