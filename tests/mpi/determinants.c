/* Non-deterministic choices are logged and forced on replay: wildcard receives, Probe,
 * Iprobe loops, Waitany, Waitsome, plus MPI_IN_PLACE, a derived datatype and Sendrecv.
 * Rank 0 (the wildcard receiver) restores mid-way and re-executes from its log. The order in
 * which sources are seen differs from run to run, so the program keeps what the first
 * execution of each round saw (outside the CD, so a restore does not rewind it) and checks
 * that the re-execution sees exactly the same order and computes bitwise the same values.
 * Prints "determinants rank R ... recoveries N replay identical|DIFFERENT". */
#include <cd.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "determinants"
#include "support.h"

#define ROUNDS 6

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int fault_rank = env_int("FAULT_RANK", -1);

    int order[ROUNDS * 16], seen[ROUNDS * 16];
    double seen_acc[ROUNDS][8];
    int nseen = 0, rounds_seen = 0, differences = 0;
    int norder = 0, round = 0, recoveries = 0, faulted = 0;
    double acc[8] = {0};
    double matrix[4][4];
    int error;
    cd_handle cd = create_cd(NULL, NULL, COMM_LOGGING_ENABLED, "determinants", &error);
    struct cd_addrspec state[] = {
        {order, sizeof order, READ_WRITE, GLOBAL},
        {&norder, sizeof norder, READ_WRITE, GLOBAL},
        {&round, sizeof round, READ_WRITE, GLOBAL},
        {acc, sizeof acc, READ_WRITE, GLOBAL},
        {matrix, sizeof matrix, READ_WRITE, GLOBAL},
    };
    add_to_cd_via_copy(cd, state, 5);
    MPI_Datatype column;
    MPI_Type_vector(4, 1, 4, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);

    while (round < ROUNDS) {
        /* 1. wildcard receives: everyone sends to 0, 0 receives from MPI_ANY_SOURCE */
        if (rank == 0) {
            for (int k = 1; k < size; k++) {
                double x;
                MPI_Status st;
                MPI_Recv(&x, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 1000 + round, MPI_COMM_WORLD, &st);
                order[norder++] = st.MPI_SOURCE;
                acc[0] = acc[0] * 1.5 + x;
            }
        } else {
            double x = rank * 10.0 + round;
            MPI_Send(&x, 1, MPI_DOUBLE, 0, 1000 + round, MPI_COMM_WORLD);
        }
        /* 2. Probe then receive what was probed, Iprobe polling */
        if (rank == 0) {
            for (int k = 1; k < size; k++) {
                MPI_Status st;
                int flag = 0;
                while (!flag) MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, &st);
                MPI_Probe(st.MPI_SOURCE, 99, MPI_COMM_WORLD, &st);
                int n;
                MPI_Get_count(&st, MPI_INT, &n);
                int data[8];
                MPI_Recv(data, n, MPI_INT, st.MPI_SOURCE, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                order[norder++] = 100 + st.MPI_SOURCE;
                for (int i = 0; i < n; i++) acc[1] += data[i] * (i + 1);
            }
        } else {
            int data[8];
            for (int i = 0; i < rank + 1; i++) data[i] = rank * round + i;
            MPI_Send(data, rank + 1, MPI_INT, 0, 99, MPI_COMM_WORLD);
        }
        /* 3. Waitany / Waitsome over receives from everyone */
        if (rank == 0) {
            MPI_Request rq[16];
            double in[16];
            for (int k = 1; k < size; k++)
                MPI_Irecv(&in[k], 1, MPI_DOUBLE, k, 5, MPI_COMM_WORLD, &rq[k - 1]);
            int done = 0;
            while (done < size - 1) {
                if (round % 2) {
                    int idx;
                    MPI_Status st;
                    MPI_Waitany(size - 1, rq, &idx, &st);
                    order[norder++] = 200 + idx;
                    acc[2] = acc[2] * 1.25 + in[idx + 1];
                    done++;
                } else {
                    int outcount, idx[16];
                    MPI_Waitsome(size - 1, rq, &outcount, idx, MPI_STATUSES_IGNORE);
                    for (int j = 0; j < outcount; j++) {
                        order[norder++] = 300 + idx[j];
                        acc[2] = acc[2] * 1.25 + in[idx[j] + 1];
                    }
                    done += outcount;
                }
            }
        } else {
            double x = rank + round * 0.5;
            MPI_Request r;
            MPI_Isend(&x, 1, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        /* 4. MPI_IN_PLACE reduction, and a derived datatype through Sendrecv */
        double v[2] = {rank + round, acc[0] + acc[1] + acc[2]};
        MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        acc[3] += v[0];
        acc[4] += v[1];
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) matrix[i][j] = rank * 100 + round * 10 + i * 4 + j;
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        MPI_Sendrecv_replace(&matrix[0][1], 1, column, right, 4, left, 4, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
        for (int i = 0; i < 4; i++) acc[5] = acc[5] * 0.5 + matrix[i][1];

        /* what the first execution saw; a re-execution must see the same */
        for (int p = 0; p < norder; p++) {
            if (p < nseen) differences += order[p] != seen[p];
            else seen[nseen++] = order[p];
        }
        if (round < rounds_seen) differences += memcmp(seen_acc[round], acc, sizeof acc) != 0;
        else { memcpy(seen_acc[round], acc, sizeof acc); rounds_seen = round + 1; }
        round++;
        if (rank == fault_rank && round == ROUNDS - 2 && !faulted) {
            faulted = 1;
            recoveries++;
            memset(acc, 0xff, sizeof acc);
            if (restore_cd(cd)) MPI_Abort(MPI_COMM_WORLD, 3);
            continue;
        }
        if (round == 2) {
            if (advance_cd_point_in_time(cd) == FAILURE) MPI_Abort(MPI_COMM_WORLD, 4);
            add_to_cd_via_copy(cd, state, 5);
        }
    }
    commit_cd(cd);
    MPI_Type_free(&column);
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < 8; i++) {
        uint64_t b;
        memcpy(&b, &acc[i], 8);
        h = (h ^ b) * 1099511628211ull;
    }
    /* one write per rank: mpirun forwards the ranks' output in chunks, which would split a
     * line printed piece by piece */
    char line[4096];
    int at = snprintf(line, sizeof line, "determinants rank %d norder %d order", rank, norder);
    for (int i = 0; i < norder; i++) at += snprintf(line + at, sizeof line - at, " %d", order[i]);
    snprintf(line + at, sizeof line - at, " checksum %016llx recoveries %d replay %s\n",
             (unsigned long long)h, recoveries, differences ? "DIFFERENT" : "identical");
    fputs(line, stdout);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
