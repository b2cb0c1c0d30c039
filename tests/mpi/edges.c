/* The argument forms a hostile user reaches for, each in every round of a logged loop, replayed
 * after a fault: MPI_IN_PLACE in every collective that allows it (Reduce at its root,
 * Gather(v) and Scatter(v) at their root, Allgatherv, Alltoall, Alltoallv, Alltoallw,
 * Reduce_scatter, Reduce_scatter_block, Scan, Exscan), MPI_DATATYPE_NULL wherever MPI ignores
 * the datatype, Sendrecv_replace with a strided derived datatype, a receive of a derived
 * datatype posted for more than arrives (whole elements; with PARTIAL=1 also a message that
 * ends in a partial element), zero counts and MPI_PROC_NULL in blocking, nonblocking and
 * collective forms, and a Waitany/Testsome array mixing MPI_REQUEST_NULL, an inactive
 * persistent request and live ones.
 * One CD logs MPI, advanced every 4 rounds; with FAULT_RANK set, that rank corrupts its state
 * at the end of round FAULT_ROUND (default 9), restores and re-executes from the log. Outside
 * the CD (not rewound), the program keeps the Waitany/Testsome order the first execution of
 * each round saw and counts re-executions that saw another (`order`), and counts elements a
 * receive got beyond the message (`beyond`: the buffer's tail is refilled with a marker of the
 * execution before each receive, so a replay that wrote the first execution's tail shows).
 * Prints "edges rank R checksum X rounds N order K beyond B recoveries F". */
#include <cd.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "edges"
#include "support.h"

#define ROUNDS 12
#define MAXR 8

static uint64_t hash = 1469598103934665603ull;

static void mix(const double *v, int n) {
    for (int i = 0; i < n; i++) {
        uint64_t b;
        memcpy(&b, &v[i], 8);
        hash = (hash ^ b) * 1099511628211ull;
    }
}

static void mix_int(int v) {
    double d = v;
    mix(&d, 1);
}

static void ok(int rc, const char *what) { mpi_check(rc, what); }

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (size > MAXR) die("at most 8 ranks");
    int fault_rank = env_int("FAULT_RANK", -1), fault_round = env_int("FAULT_ROUND", 9);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int partial = env_int("PARTIAL", 0);

    /* outside the CD: not rewound */
    static int first_order[ROUNDS][8];
    static int seen[ROUNDS];
    int order_diffs = 0, beyond = 0, recoveries = 0, faulted = 0, executions = 0;

    /* a strided datatype (3 doubles, every other one) and a contiguous one of 3 doubles */
    MPI_Datatype strided, triple;
    MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &strided);
    MPI_Type_commit(&strided);
    MPI_Type_contiguous(3, MPI_DOUBLE, &triple);
    MPI_Type_commit(&triple);

    /* a persistent receive made before the CD, never started: inactive in the Waitany array */
    static double idle;
    MPI_Request inactive;
    ok(MPI_Recv_init(&idle, 1, MPI_DOUBLE, left, 999, comm, &inactive), "MPI_Recv_init");

    int counts[MAXR], displs[MAXR], total = 0;
    for (int i = 0; i < size; i++) {
        counts[i] = i + 1;
        displs[i] = total;
        total += counts[i];
    }
    /* Alltoallv in place needs symmetric counts: count(i, j) == count(j, i) */
    int vcounts[MAXR], vdispls[MAXR], vtotal = 0;
    int wcounts[MAXR], wdispls[MAXR];
    MPI_Datatype wtypes[MAXR];
    for (int i = 0; i < size; i++) {
        vcounts[i] = 1 + (i + rank) % 3;
        vdispls[i] = vtotal;
        vtotal += vcounts[i];
        wcounts[i] = vcounts[i];
        wdispls[i] = vdispls[i] * (int)sizeof(double);
        wtypes[i] = MPI_DOUBLE;
    }

    int round = 0, error;
    cd_handle cd = create_cd(NULL, NULL, COMM_LOGGING_ENABLED, "edges", &error);
    if (!cd) cd_fail("create_cd", error);
    struct cd_addrspec state[] = {{&hash, sizeof hash, READ_WRITE, GLOBAL},
                                  {&round, sizeof round, READ_WRITE, GLOBAL}};
    CHECK(add_to_cd_via_copy(cd, state, 2));
    while (round < ROUNDS) {
        executions++;
        int r = round, root = r % size;
        double base = 100.0 * r + rank;

        /* Reduce, in place at the root */
        double red[4];
        for (int i = 0; i < 4; i++) red[i] = base + i * 0.25;
        if (rank == root) {
            ok(MPI_Reduce(MPI_IN_PLACE, red, 4, MPI_DOUBLE, MPI_SUM, root, comm), "MPI_Reduce");
            mix(red, 4);
        } else {
            ok(MPI_Reduce(red, NULL, 4, MPI_DOUBLE, MPI_SUM, root, comm), "MPI_Reduce");
        }

        /* Gatherv and Scatterv, in place at the root */
        double gat[MAXR * (MAXR + 1) / 2];
        for (int i = 0; i < total; i++) gat[i] = rank == root ? -1 : 0;
        for (int k = 0; k < counts[rank]; k++) gat[displs[rank] + k] = base + k;
        if (rank == root) {
            ok(MPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, gat, counts, displs, MPI_DOUBLE,
                           root, comm), "MPI_Gatherv");
            mix(gat, total);
            for (int i = 0; i < total; i++) gat[i] = gat[i] * 0.5 + r;
            ok(MPI_Scatterv(gat, counts, displs, MPI_DOUBLE, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL,
                            root, comm), "MPI_Scatterv");
            mix(gat, total);
        } else {
            ok(MPI_Gatherv(&gat[displs[rank]], counts[rank], MPI_DOUBLE, NULL, NULL, NULL,
                           MPI_DATATYPE_NULL, root, comm), "MPI_Gatherv");
            double mine[MAXR];
            ok(MPI_Scatterv(NULL, NULL, NULL, MPI_DATATYPE_NULL, mine, counts[rank], MPI_DOUBLE,
                            root, comm), "MPI_Scatterv");
            mix(mine, counts[rank]);
        }

        /* Gather and Scatter: in place at the root, MPI_DATATYPE_NULL where it is ignored */
        double g4[2 * MAXR];
        for (int i = 0; i < 2 * size; i++) g4[i] = rank == root ? -1 : 0;
        g4[2 * rank] = base * 11;
        g4[2 * rank + 1] = base * 13;
        if (rank == root) {
            ok(MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g4, 2, MPI_DOUBLE, root, comm),
               "MPI_Gather");
            mix(g4, 2 * size);
            for (int i = 0; i < 2 * size; i++) g4[i] += 0.5;
            ok(MPI_Scatter(g4, 2, MPI_DOUBLE, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, comm),
               "MPI_Scatter");
        } else {
            ok(MPI_Gather(&g4[2 * rank], 2, MPI_DOUBLE, NULL, 0, MPI_DATATYPE_NULL, root, comm),
               "MPI_Gather");
            double two[2];
            ok(MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, two, 2, MPI_DOUBLE, root, comm),
               "MPI_Scatter");
            mix(two, 2);
        }

        /* Allgatherv, Alltoall, Alltoallv, Alltoallw in place */
        double ag[MAXR * (MAXR + 1) / 2];
        for (int i = 0; i < total; i++) ag[i] = -2;
        for (int k = 0; k < counts[rank]; k++) ag[displs[rank] + k] = base - k;
        ok(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ag, counts, displs, MPI_DOUBLE, comm),
           "MPI_Allgatherv");
        mix(ag, total);
        double a2a[2 * MAXR];
        for (int i = 0; i < 2 * size; i++) a2a[i] = base * 3 + i;
        ok(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a2a, 2, MPI_DOUBLE, comm),
           "MPI_Alltoall");
        mix(a2a, 2 * size);
        double a2v[3 * MAXR];
        for (int i = 0; i < vtotal; i++) a2v[i] = base * 5 + i;
        ok(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, a2v, vcounts, vdispls,
                         MPI_DOUBLE, comm), "MPI_Alltoallv");
        mix(a2v, vtotal);
        for (int i = 0; i < vtotal; i++) a2v[i] = base * 7 - i;
        ok(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, a2v, wcounts, wdispls, wtypes, comm),
           "MPI_Alltoallw");
        mix(a2v, vtotal);

        /* Reduce_scatter, Reduce_scatter_block, Scan, Exscan in place */
        double rs[MAXR * (MAXR + 1) / 2];
        for (int i = 0; i < total; i++) rs[i] = base + i * 0.125;
        ok(MPI_Reduce_scatter(MPI_IN_PLACE, rs, counts, MPI_DOUBLE, MPI_SUM, comm),
           "MPI_Reduce_scatter");
        mix(rs, counts[rank]);
        double rsb[2 * MAXR];
        for (int i = 0; i < 2 * size; i++) rsb[i] = base - i * 0.375;
        ok(MPI_Reduce_scatter_block(MPI_IN_PLACE, rsb, 2, MPI_DOUBLE, MPI_MAX, comm),
           "MPI_Reduce_scatter_block");
        mix(rsb, 2);
        double sc[2] = {base, -base};
        ok(MPI_Scan(MPI_IN_PLACE, sc, 2, MPI_DOUBLE, MPI_SUM, comm), "MPI_Scan");
        mix(sc, 2);
        double ex[2] = {base, base * 2};
        ok(MPI_Exscan(MPI_IN_PLACE, ex, 2, MPI_DOUBLE, MPI_SUM, comm), "MPI_Exscan");
        if (rank != 0) mix(ex, 2); /* undefined at rank 0 */

        /* Sendrecv_replace with a strided datatype: only the strided elements move */
        double sr[6];
        for (int i = 0; i < 6; i++) sr[i] = base + 10 * i;
        MPI_Status st;
        ok(MPI_Sendrecv_replace(sr, 1, strided, right, 7, left, 7, comm, &st),
           "MPI_Sendrecv_replace");
        mix(sr, 6);
        mix_int(st.MPI_SOURCE);

        /* a receive of 4 triples: 2 whole triples arrive (then 7 doubles: a partial triple) */
        double out[7];
        for (int i = 0; i < 7; i++) out[i] = base + i * 0.5;
        for (int n = 6; n <= (partial ? 7 : 6); n++) {
            double in[12];
            double marker = -1000.0 - executions;
            for (int i = 0; i < 12; i++) in[i] = marker;
            MPI_Request rq[2];
            ok(MPI_Irecv(in, 4, triple, left, 8, comm, &rq[0]), "MPI_Irecv");
            ok(MPI_Isend(out, n, MPI_DOUBLE, right, 8, comm, &rq[1]), "MPI_Isend");
            MPI_Status sts[2];
            ok(MPI_Waitall(2, rq, sts), "MPI_Waitall");
            int whole = 0, elements = 0;
            MPI_Get_count(&sts[0], triple, &whole);
            MPI_Get_elements(&sts[0], triple, &elements);
            mix_int(whole);
            mix_int(elements);
            mix(in, n);
            for (int i = n; i < 12; i++) beyond += in[i] != marker;
        }

        /* zero counts and MPI_PROC_NULL */
        double z = base, zin = -3;
        ok(MPI_Sendrecv(&z, 0, MPI_DOUBLE, right, 9, &zin, 0, MPI_DOUBLE, left, 9, comm, &st),
           "MPI_Sendrecv(0)");
        int zc = -1;
        MPI_Get_count(&st, MPI_DOUBLE, &zc);
        mix_int(zc);
        mix_int(st.MPI_SOURCE);
        mix(&zin, 1);
        ok(MPI_Sendrecv(&z, 1, MPI_DOUBLE, MPI_PROC_NULL, 9, &zin, 1, MPI_DOUBLE, MPI_PROC_NULL,
                        9, comm, &st), "MPI_Sendrecv(PROC_NULL)");
        MPI_Get_count(&st, MPI_DOUBLE, &zc);
        mix_int(zc);
        mix_int(st.MPI_SOURCE == MPI_PROC_NULL);
        mix(&zin, 1);
        ok(MPI_Bcast(&z, 0, MPI_DOUBLE, root, comm), "MPI_Bcast(0)");
        ok(MPI_Allreduce(MPI_IN_PLACE, &z, 0, MPI_DOUBLE, MPI_SUM, comm), "MPI_Allreduce(0)");
        mix(&z, 1);

        /* Waitany then Testsome over a mixed array */
        double got[2] = {-4, -4}, send1 = base + 0.75, send2 = base - 0.75;
        MPI_Request arr[6];
        arr[0] = MPI_REQUEST_NULL;
        arr[1] = inactive;
        ok(MPI_Irecv(&got[0], 1, MPI_DOUBLE, left, 10, comm, &arr[2]), "MPI_Irecv");
        ok(MPI_Irecv(&got[1], 1, MPI_DOUBLE, MPI_PROC_NULL, 10, comm, &arr[3]), "MPI_Irecv");
        ok(MPI_Isend(&send1, 1, MPI_DOUBLE, right, 10, comm, &arr[4]), "MPI_Isend");
        ok(MPI_Isend(&send2, 0, MPI_DOUBLE, MPI_PROC_NULL, 10, comm, &arr[5]), "MPI_Isend");
        int order[8], k = 0, index;
        ok(MPI_Waitany(6, arr, &index, &st), "MPI_Waitany");
        order[k++] = index;
        while (k < 8) {
            int outcount, idx[6];
            MPI_Status sts[6];
            ok(MPI_Testsome(6, arr, &outcount, idx, sts), "MPI_Testsome");
            if (outcount == MPI_UNDEFINED) break;
            for (int j = 0; j < outcount && k < 8; j++) order[k++] = idx[j];
        }
        while (k < 8) order[k++] = -1;
        if (arr[1] != inactive) die("the inactive persistent request left its slot");
        mix(got, 2);
        if (!seen[r]) {
            memcpy(first_order[r], order, sizeof order);
            seen[r] = 1;
        } else if (memcmp(first_order[r], order, sizeof order) != 0) {
            order_diffs++;
        }

        if (rank == fault_rank && r == fault_round && !faulted) {
            faulted = 1;
            recoveries++;
            hash = 0;
            round = -5;
            CHECK(restore_cd(cd));
            continue;
        }
        round++;
        if (round % 4 == 0) {
            if (advance_cd_point_in_time(cd) == FAILURE)
                cd_fail("advance_cd_point_in_time", cd_last_error());
            CHECK(add_to_cd_via_copy(cd, state, 2));
        }
    }
    CHECK(commit_cd(cd));
    MPI_Request_free(&inactive);
    MPI_Type_free(&strided);
    MPI_Type_free(&triple);
    printf("edges rank %d checksum %016llx rounds %d order %d beyond %d recoveries %d\n", rank,
           (unsigned long long)hash, round, order_diffs, beyond, recoveries);
    MPI_Finalize();
    return 0;
}
