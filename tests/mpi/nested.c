/* Nested CDs around a conjugate-gradient solver (1D Poisson, tridiag(-1, 2, -1), Dirichlet
 * ends): per iteration a halo exchange of p with the neighbours (Isend/Irecv/Waitall,
 * MPI_PROC_NULL at the ends), two Allreduce dot products and a Bcast of rank 0's beta.
 * Three levels of CDs, all logging MPI: a root for the whole solve (advanced at each block
 * boundary), a child per block of BLOCK iterations (COMM_LOGGING_INHERIT) and a grandchild per
 * iteration (COMM_LOGGING_ENABLED, explicit), each saving the solver state it may rewind.
 *
 * FAULT_RANK=R FAULTS=i13,o27,... injects faults on rank R, in that order, each once: "iK"
 * corrupts the state at the end of iteration K and restores the iteration CD (one iteration
 * re-executes from the iteration CD's log); "oK" restores the block CD instead (up to BLOCK
 * iterations re-execute from the block's log, which holds the committed iterations' logs
 * merged into it and the live iteration's, merged by the restore; the iteration CDs created
 * during that replay consume the block's log). A fault listed after an "o" fault for an
 * earlier iteration happens during the block's replay: restoring that iteration CD rewinds the
 * block's replay to where the iteration began.
 * Prints one line per rank: "nested rank R checksum X rho Y iters N recoveries K". */
#include <cd.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "nested"
#include "support.h"

#define NL 64     /* unknowns per rank */
#define ITERS 40  /* CG iterations */
#define BLOCK 10  /* iterations per block CD */
#define MAXFAULTS 16

static double dot(const double *a, const double *b) {
    double s = 0;
    for (int i = 0; i < NL; i++) s += a[i] * b[i];
    return s;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;

    /* the fault plan: outside every CD, so that restores do not rewind it */
    const char *fr = getenv("FAULT_RANK");
    int fault_rank = fr ? atoi(fr) : -1;
    char fault_level[MAXFAULTS];
    int fault_iter[MAXFAULTS], nfaults = 0, next_fault = 0, recoveries = 0;
    const char *plan = getenv("FAULTS");
    for (const char *s = plan; s && *s && nfaults < MAXFAULTS;) {
        if (*s != 'i' && *s != 'o') {
            fprintf(stderr, "nested: bad FAULTS entry at \"%s\"\n", s);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        fault_level[nfaults] = *s;
        fault_iter[nfaults++] = atoi(s + 1);
        s = strchr(s, ',');
        s = s ? s + 1 : NULL;
    }

    /* the solver state: x, r, p (with its two ghost cells), rho and the iteration */
    static double x[NL], r[NL], p[NL + 2], ap[NL];
    double rho = 0;
    int it = 0;
    for (int i = 0; i < NL; i++) {
        int g = rank * NL + i;
        x[i] = 0;
        r[i] = (g % 7) - 3 + 0.5;
        p[i + 1] = r[i];
    }
    double local = dot(r, r);
    MPI_Allreduce(&local, &rho, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

    struct cd_addrspec state[] = {
        {x, sizeof x, READ_WRITE, GLOBAL},   {r, sizeof r, READ_WRITE, GLOBAL},
        {p, sizeof p, READ_WRITE, GLOBAL},   {&rho, sizeof rho, READ_WRITE, GLOBAL},
        {&it, sizeof it, READ_WRITE, GLOBAL},
    };
    int error = 0;
    cd_handle root = create_cd(NULL, NULL, COMM_LOGGING_ENABLED, "nested", &error);
    if (!root) cd_fail("create_cd(root)", error);
    CHECK(add_to_cd_via_copy(root, state, 5));
    cd_handle block = NULL;

    while (it < ITERS) {
        if (!block) {
            block = create_cd(root, NULL, COMM_LOGGING_INHERIT, NULL, &error);
            if (!block) cd_fail("create_cd(block)", error);
            CHECK(add_to_cd_via_copy(block, state, 5));
        }
        cd_handle iter = create_cd(block, NULL, COMM_LOGGING_ENABLED, NULL, &error);
        if (!iter) cd_fail("create_cd(iteration)", error);
        CHECK(add_to_cd_via_copy(iter, state, 5));
        int outer_fault = 0;
        for (;;) {
            /* halo of p, then Ap = 2p - p_left - p_right */
            MPI_Request rq[4];
            MPI_Irecv(&p[0], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &rq[0]);
            MPI_Irecv(&p[NL + 1], 1, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &rq[1]);
            MPI_Isend(&p[NL], 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &rq[2]);
            MPI_Isend(&p[1], 1, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &rq[3]);
            MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
            if (left == MPI_PROC_NULL) p[0] = 0;
            if (right == MPI_PROC_NULL) p[NL + 1] = 0;
            for (int i = 0; i < NL; i++) ap[i] = 2 * p[i + 1] - p[i] - p[i + 2];
            double pap;
            local = dot(&p[1], ap);
            MPI_Allreduce(&local, &pap, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            double alpha = rho / pap;
            for (int i = 0; i < NL; i++) {
                x[i] += alpha * p[i + 1];
                r[i] -= alpha * ap[i];
            }
            double rho_new;
            local = dot(r, r);
            MPI_Allreduce(&local, &rho_new, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            double beta = rank == 0 ? rho_new / rho : -1;
            MPI_Bcast(&beta, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            for (int i = 0; i < NL; i++) p[i + 1] = r[i] + beta * p[i + 1];
            rho = rho_new;

            if (rank == fault_rank && next_fault < nfaults && fault_iter[next_fault] == it) {
                /* a transient fault, detected before the corrupted data leaves the rank */
                char level = fault_level[next_fault++];
                recoveries++;
                for (int i = 0; i < NL; i += 5) x[i] = r[i] = p[i + 1] = -1e30;
                rho = -1;
                it = -7;
                if (level == 'i') {
                    CHECK(restore_cd(iter));
                    continue; /* the same iteration again, from the iteration CD's log */
                }
                CHECK(restore_cd(block)); /* discards iter */
                outer_fault = 1;
            }
            break;
        }
        if (outer_fault) continue; /* the block's iterations again, from the block's log */
        CHECK(commit_cd(iter));
        it++;
        if (it % BLOCK == 0 || it == ITERS) {
            CHECK(commit_cd(block));
            block = NULL;
            if (advance_cd_point_in_time(root) == FAILURE)
                cd_fail("advance_cd_point_in_time(root)", cd_last_error());
            CHECK(add_to_cd_via_copy(root, state, 5));
        }
    }
    CHECK(commit_cd(root));
    if (rank == fault_rank && next_fault != nfaults) {
        fprintf(stderr, "nested rank %d: %d of %d faults injected\n", rank, next_fault, nfaults);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < NL; i++) {
        uint64_t b;
        memcpy(&b, &x[i], 8);
        h = (h ^ b) * 1099511628211ull;
    }
    uint64_t rb;
    memcpy(&rb, &rho, 8);
    printf("nested rank %d checksum %016llx rho %016llx iters %d recoveries %d\n", rank,
           (unsigned long long)h, (unsigned long long)rb, it, recoveries);
    MPI_Finalize();
    return 0;
}
