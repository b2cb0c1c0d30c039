/* A deliberately non-deterministic re-execution: after restore_cd, rank 1 receives with
 * another tag than the logged receive. The call must fail with an MPI error whose string
 * names both calls, through the communicator's error handler (MPI_ERRORS_RETURN here), and
 * must not write into the receive buffer. Prints "mismatch rank R ok: <error string>".
 * With MISMATCH_CALL=isendrecv the exchange is an MPI_Isendrecv whose send side is the same on
 * re-execution and whose receive side is not (MPI-4; without it, rank 1 prints "skipped").
 * With MISMATCH_CALL=large rank 1 receives with MPI_Recv_c (MPI-4) and re-executes the receive
 * with MPI_Recv, the same arguments: another call, so a mismatch too.
 * With MISMATCH_CALL=waitall rank 1 posts two receives and completes them with MPI_Waitall,
 * then, re-executing, passes the two requests to MPI_Waitall in the other order: the logged
 * completions name other posts than the slots hold, a mismatch that writes neither buffer. */
#include <cd.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "mismatch"
#include "support.h"

/* Prints rank 1's verdict on its re-executed call: it must have failed (`rc`) with an error
 * string naming the re-executed call (`reexecuted`) and the logged one (`logged`), and left
 * the receive buffer as it was (`got` still -7). */
static void verdict(int rc, double got, const char *reexecuted, const char *logged) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    if (rc != MPI_SUCCESS && got == -7 && strstr(text, "CD replay mismatch") &&
        strstr(text, reexecuted) && strstr(text, logged))
        printf("mismatch rank 1 ok: %s\n", text);
    else
        printf("mismatch rank 1 FAILED: rc %d got %g: %s\n", rc, got, text);
}

/* Ranks 0 and 1 exchange one double with MPI_Isendrecv; rank 1, re-executing, receives with
 * tag 6 where the log holds tag 5. */
static void isendrecv_mismatch(int rank, cd_handle cd, int *attempt) {
#if HAS_MPI4
    if (rank > 1) return;
    for (;;) {
        double out = 40 + rank, in = -7;
        MPI_Request req;
        int rc = MPI_Isendrecv(&out, 1, MPI_DOUBLE, 1 - rank, 5, &in, 1, MPI_DOUBLE, 1 - rank,
                               5 + *attempt, MPI_COMM_WORLD, &req);
        if (*attempt == 0) {
            if (rc == MPI_SUCCESS) rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS || in != 41 - rank) {
                printf("mismatch rank %d FAILED: first exchange\n", rank);
                return;
            }
            if (rank == 0) return;
            (*attempt)++;
            restore_cd(cd);
            continue;
        }
        /* in a ULFM job (mpirun --with-ft ulfm), whose losses libcd contains, MPI_Isendrecv
         * runs as its receive and its send, and the mismatch names the receive */
        const char *ft = getenv("OMPI_MCA_mpi_ft_enable");
        if (ft && (!strcmp(ft, "1") || !strcmp(ft, "true")))
            verdict(rc, in, "re-executed MPI_Irecv(peer 0, tag 6", "logged MPI_Irecv(peer 0, tag 5");
        else
            verdict(rc, in, "[0, 6, 1, 8]", "[0, 5, 1, 8]");
        return;
    }
#else
    (void)cd;
    (void)attempt;
    if (rank == 1) printf("mismatch rank 1 skipped: no MPI_Isendrecv\n");
#endif
}

/* Rank 1 receives 42 from rank 0 with MPI_Recv_c, then, re-executing, with MPI_Recv: the error
 * names both calls and nothing is written. */
static void large_count_mismatch(int rank, cd_handle cd, int *attempt) {
#if MPI_VERSION >= 4
    if (rank == 0) {
        double x = 42;
        MPI_Send(&x, 1, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD);
    }
    if (rank != 1) return;
    for (;;) {
        double y = -7;
        int rc = *attempt == 0
                     ? MPI_Recv_c(&y, 1, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
                     : MPI_Recv(&y, 1, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (*attempt == 0) {
            if (rc != MPI_SUCCESS || y != 42) {
                printf("mismatch rank 1 FAILED: first receive\n");
                return;
            }
            (*attempt)++;
            restore_cd(cd);
            continue;
        }
        verdict(rc, y, "re-executed MPI_Recv(", "logged MPI_Recv_c(");
        return;
    }
#else
    (void)cd;
    (void)attempt;
    if (rank == 1) printf("mismatch rank 1 skipped: MPI_VERSION < 4\n");
#endif
}

/* Rank 0 sends 42 (tag 5) and 43 (tag 6) to rank 1, which receives them with two Irecvs
 * completed by one MPI_Waitall; re-executing, it swaps the two requests in the array. */
static void waitall_mismatch(int rank, cd_handle cd, int *attempt) {
    if (rank == 0) {
        double x = 42, y = 43;
        MPI_Send(&x, 1, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD);
        MPI_Send(&y, 1, MPI_DOUBLE, 1, 6, MPI_COMM_WORLD);
    }
    if (rank != 1) return;
    static double a, b; /* at the same addresses in both executions */
    for (;;) {
        a = b = -7;
        MPI_Request rq[2];
        MPI_Irecv(&a, 1, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD, &rq[0]);
        MPI_Irecv(&b, 1, MPI_DOUBLE, 0, 6, MPI_COMM_WORLD, &rq[1]);
        if (*attempt == 0) {
            int rc = MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
            if (rc != MPI_SUCCESS || a != 42 || b != 43) {
                printf("mismatch rank 1 FAILED: first receives\n");
                return;
            }
            (*attempt)++;
            restore_cd(cd);
            continue;
        }
        MPI_Request swapped[2] = {rq[1], rq[0]};
        int rc = MPI_Waitall(2, swapped, MPI_STATUSES_IGNORE);
        verdict(rc, a == -7 && b == -7 ? -7 : a, "MPI_Waitall", "post");
        return;
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, error;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int attempt = 0; /* outside the CD: survives the restore */
    double x = 0;
    cd_handle cd = create_cd(NULL, NULL, COMM_LOGGING_ENABLED, "mismatch", &error);
    const char *which = getenv("MISMATCH_CALL");
    if (which && strcmp(which, "isendrecv") == 0) {
        isendrecv_mismatch(rank, cd, &attempt);
    } else if (which && strcmp(which, "large") == 0) {
        large_count_mismatch(rank, cd, &attempt);
    } else if (which && strcmp(which, "waitall") == 0) {
        waitall_mismatch(rank, cd, &attempt);
    } else if (rank == 0) {
        x = 42;
        MPI_Send(&x, 1, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD);
    } else if (rank == 1) {
        for (;;) {
            double y = -7;
            int rc = MPI_Recv(&y, 1, MPI_DOUBLE, 0, 5 + attempt, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (attempt == 0) {
                if (rc != MPI_SUCCESS || y != 42) { printf("mismatch rank 1 FAILED: first receive\n"); break; }
                attempt++;
                restore_cd(cd);
                continue;
            }
            verdict(rc, y, "tag 6", "tag 5");
            break;
        }
    }
    commit_cd(cd);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
