/* The calls added by MPI-3's and MPI-4's later chapters, each in every round of a logged loop:
 * MPI_Comm_dup_with_info (MPI-3, both families; with a Sendrecv ring, so that the
 * re-execution drops a send under both), and where the headers declare MPI-4's calls (MPICH 4,
 * Open MPI 5): MPI_Isendrecv and MPI_Isendrecv_replace completed by Wait, Waitany, Testall and
 * Waitsome mixed with live requests, persistent collectives (one made before the CD and
 * started in every round, others made, started and freed inside it), MPI_Comm_idup_with_info,
 * MPI_Comm_create_from_group, and with MPI_VERSION >= 4 (MPICH 4; Open MPI 5 lacks it)
 * MPI_Intercomm_create_from_groups.
 * With FAULT_RANK set, that rank faults in round FAULT_ROUND, restores to the last advance and
 * re-executes alone from its log.
 * Prints "mpi4 rank R checksum X mpi4 Y recoveries N" (Y: 1 when the MPI-4 part ran). */
#include <cd.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "mpi4"
#include "support.h"

#define N 16
#define ROUNDS 8

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int fault_rank = env_int("FAULT_RANK", -1), fault_round = env_int("FAULT_ROUND", 5);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;

    static double u[N];
    static double acc[8];
    int round = 0, recoveries = 0, faulted = 0;
    for (int i = 0; i < N; i++) u[i] = rank * 100.0 + i;

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_tag", "false");

#if HAS_MPI4
    /* a persistent Allreduce made before the CD: it lives across restores */
    double pr_in = 0, pr_out = 0;
    MPI_Request pred;
    mpi_check(MPI_Allreduce_init(&pr_in, &pr_out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                                 MPI_INFO_NULL, &pred),
              "Allreduce_init");
#endif

    int error = 0;
    cd_handle cd = create_cd(NULL, NULL, COMM_LOGGING_ENABLED, "mpi4", &error);
    if (!cd) cd_fail("create_cd", error);
    struct cd_addrspec state[] = {
        {u, sizeof u, READ_WRITE, GLOBAL},
        {acc, sizeof acc, READ_WRITE, GLOBAL},
        {&round, sizeof round, READ_WRITE, GLOBAL},
    };
    if (add_to_cd_via_copy(cd, state, 3)) MPI_Abort(MPI_COMM_WORLD, 2);

    while (round < ROUNDS) {
        /* 1. a communicator duplicated with an info object, used, freed */
        MPI_Comm dup;
        mpi_check(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &dup), "Comm_dup_with_info");
        double x = u[rank % N] + round, sum = 0;
        mpi_check(MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, dup), "Allreduce dup");
        acc[0] += sum;
        MPI_Comm_free(&dup);
        double ring_out = u[0] + round, ring_in = 0;
        mpi_check(MPI_Sendrecv(&ring_out, 1, MPI_DOUBLE, right, 10, &ring_in, 1, MPI_DOUBLE, left,
                               10, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                  "Sendrecv");
        acc[0] += ring_in * 0.5;

#if HAS_MPI4
        /* 2. Isendrecv and Isendrecv_replace, completed with every kind of completion call,
         * mixed with live requests */
        double out = rank * 10.0 + round, in = 0, rep = rank + round * 0.5;
        MPI_Request r[4];
        mpi_check(MPI_Isendrecv(&out, 1, MPI_DOUBLE, right, 11, &in, 1, MPI_DOUBLE, left, 11,
                                MPI_COMM_WORLD, &r[0]),
                  "Isendrecv");
        mpi_check(MPI_Wait(&r[0], MPI_STATUS_IGNORE), "Wait Isendrecv");
        acc[1] += in;
        mpi_check(MPI_Isendrecv_replace(&rep, 1, MPI_DOUBLE, left, 12, right, 12, MPI_COMM_WORLD,
                                        &r[0]),
                  "Isendrecv_replace");
        double ring = 0, ringout = rank + 0.25;
        mpi_check(MPI_Irecv(&ring, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 13, MPI_COMM_WORLD, &r[1]),
                  "Irecv");
        mpi_check(MPI_Isend(&ringout, 1, MPI_DOUBLE, right, 13, MPI_COMM_WORLD, &r[2]), "Isend");
        int done = 0, idx;
        MPI_Status st;
        for (int k = 0; k < 3; k++) {
            mpi_check(MPI_Waitany(3, r, &idx, &st), "Waitany");
            if (idx == 1) acc[1] += st.MPI_SOURCE * 7;
        }
        acc[1] += rep * 3 + ring * 5;
        double in2[2] = {0, 0}, out2[2] = {rank * 1.5, round * 2.5}, rep2 = rank * 9.0;
        mpi_check(MPI_Isendrecv(out2, 2, MPI_DOUBLE, left, 14, in2, 2, MPI_DOUBLE, MPI_ANY_SOURCE,
                                14, MPI_COMM_WORLD, &r[0]),
                  "Isendrecv any");
        mpi_check(MPI_Isendrecv_replace(&rep2, 1, MPI_DOUBLE, right, 15, left, 15, MPI_COMM_WORLD,
                                        &r[1]),
                  "Isendrecv_replace 2");
        /* (MPICH 4.0.2 leaves an Isendrecv's status unfilled: not summed) */
        while (!done) mpi_check(MPI_Testall(2, r, &done, MPI_STATUSES_IGNORE), "Testall");
        acc[1] += in2[0] * 11 + in2[1] * 13 + rep2 * 17;
        int outcount, indices[2];
        double in3 = 0, out3 = rank + round;
        mpi_check(MPI_Isendrecv(&out3, 1, MPI_DOUBLE, right, 16, &in3, 1, MPI_DOUBLE, left, 16,
                                MPI_COMM_WORLD, &r[0]),
                  "Isendrecv 3");
        mpi_check(MPI_Ibarrier(MPI_COMM_WORLD, &r[1]), "Ibarrier");
        int left_to_do = 2;
        while (left_to_do > 0) {
            mpi_check(MPI_Waitsome(2, r, &outcount, indices, MPI_STATUSES_IGNORE), "Waitsome");
            left_to_do -= outcount;
        }
        acc[1] += in3 * 19;

        /* 3. persistent collectives: the one made before the CD, and some made here */
        pr_in = u[0] + round;
        mpi_check(MPI_Start(&pred), "Start Allreduce_init");
        int root = round % size;
        double b = rank == root ? round * 3.0 + 1 : 0, mine[2] = {rank + 0.5, round * 1.0},
               all[2 * 16], tot[2];
        int blk[16], blkin[16];
        for (int k = 0; k < size; k++) blk[k] = rank * 100 + k + round;
        MPI_Request pc[4];
        mpi_check(MPI_Bcast_init(&b, 1, MPI_DOUBLE, root, MPI_COMM_WORLD, MPI_INFO_NULL, &pc[0]),
                  "Bcast_init");
        mpi_check(MPI_Gather_init(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, root, MPI_COMM_WORLD,
                                  MPI_INFO_NULL, &pc[1]),
                  "Gather_init");
        mpi_check(MPI_Alltoall_init(blk, 1, MPI_INT, blkin, 1, MPI_INT, MPI_COMM_WORLD,
                                    MPI_INFO_NULL, &pc[2]),
                  "Alltoall_init");
        mpi_check(MPI_Scan_init(mine, tot, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                &pc[3]),
                  "Scan_init");
        mpi_check(MPI_Startall(4, pc), "Startall");
        mpi_check(MPI_Waitall(4, pc, MPI_STATUSES_IGNORE), "Waitall persistent collectives");
        mpi_check(MPI_Wait(&pred, MPI_STATUS_IGNORE), "Wait Allreduce_init");
        acc[2] += pr_out + b + tot[0] * 3 + tot[1];
        if (rank == root)
            for (int k = 0; k < 2 * size; k++) acc[2] += all[k] * (k + 1);
        for (int k = 0; k < size; k++) acc[2] += blkin[k] * (k + 2);
        /* started again: the same buffers, new values */
        b = rank == root ? round * 5.0 : 0;
        mpi_check(MPI_Start(&pc[0]), "Start Bcast_init");
        int flag = 0;
        while (!flag) mpi_check(MPI_Test(&pc[0], &flag, MPI_STATUS_IGNORE), "Test");
        acc[2] += b * 7;
        for (int k = 0; k < 4; k++) MPI_Request_free(&pc[k]);

        /* 4. the MPI-4 communicator makers */
        MPI_Comm idup, fromgroup;
        MPI_Request dreq;
        mpi_check(MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &idup, &dreq),
                  "Comm_idup_with_info");
        mpi_check(MPI_Wait(&dreq, MPI_STATUS_IGNORE), "Wait Comm_idup_with_info");
        MPI_Group world_group, half_group, other_group;
        MPI_Comm_group(MPI_COMM_WORLD, &world_group);
        mpi_check(MPI_Comm_create_from_group(world_group, "cd.mpi4.world", MPI_INFO_NULL,
                                             MPI_ERRORS_ARE_FATAL, &fromgroup),
                  "Comm_create_from_group");
        int evens[8], odds[8], ne = 0, no = 0;
        for (int k = 0; k < size; k++) {
            if (k % 2) odds[no++] = k;
            else evens[ne++] = k;
        }
        MPI_Group_incl(world_group, rank % 2 ? no : ne, rank % 2 ? odds : evens, &half_group);
        MPI_Group_incl(world_group, rank % 2 ? ne : no, rank % 2 ? evens : odds, &other_group);
        double s1 = 0, s2 = 0, s3 = 0;
#if MPI_VERSION >= 4
        MPI_Comm inter;
        mpi_check(MPI_Intercomm_create_from_groups(half_group, 0, other_group, 0, "cd.mpi4.inter",
                                                   MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &inter),
                  "Intercomm_create_from_groups");
        MPI_Allreduce(&x, &s3, 1, MPI_DOUBLE, MPI_SUM, inter); /* the remote group's sum */
        MPI_Comm_free(&inter);
#endif
        MPI_Allreduce(&x, &s1, 1, MPI_DOUBLE, MPI_MAX, idup);
        MPI_Allreduce(&x, &s2, 1, MPI_DOUBLE, MPI_MIN, fromgroup);
        acc[3] += s1 + s2 * 3 + s3 * 5;
        MPI_Comm_free(&fromgroup);
        MPI_Comm_free(&idup);
        MPI_Group_free(&other_group);
        MPI_Group_free(&half_group);
        MPI_Group_free(&world_group);
#endif

        for (int i = 0; i < N; i++) u[i] = 0.5 * u[i] + acc[(i + round) % 4] * 1e-3;
        if (rank == fault_rank && round == fault_round && !faulted) {
            faulted = 1;
            recoveries++;
            for (int i = 0; i < N; i++) u[i] = -1e300;
            if (restore_cd(cd)) MPI_Abort(MPI_COMM_WORLD, 3);
            continue;
        }
        round++;
        if (round == 2 || round == 4) {
            if (advance_cd_point_in_time(cd) == FAILURE) MPI_Abort(MPI_COMM_WORLD, 4);
            if (add_to_cd_via_copy(cd, state, 3)) MPI_Abort(MPI_COMM_WORLD, 5);
        }
    }
    commit_cd(cd);
#if HAS_MPI4
    MPI_Request_free(&pred);
    int mpi4 = 1;
#else
    int mpi4 = 0;
#endif
    MPI_Info_free(&info);
    for (int i = 0; i < N; i++) acc[7] += u[i] * (i + 1);
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < 8; i++) {
        uint64_t bits;
        memcpy(&bits, &acc[i], 8);
        h = (h ^ bits) * 1099511628211ull;
    }
    printf("mpi4 rank %d checksum %016llx mpi4 %d recoveries %d\n", rank, (unsigned long long)h,
           mpi4, recoveries);
    MPI_Finalize();
    return 0;
}
