/* A deliberately non-deterministic re-execution: after restore_cd, rank 1 receives with
 * another tag than the logged receive. The call must fail with an MPI error whose string
 * names both calls, through the communicator's error handler (MPI_ERRORS_RETURN here), and
 * must not write into the receive buffer. Prints "mismatch rank R ok: <error string>". */
#include <cd.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, error;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int attempt = 0; /* outside the CD: survives the restore */
    double x = 0;
    cd_handle cd = create_cd(NULL, NULL, COMM_LOGGING_ENABLED, "mismatch", &error);
    if (rank == 0) {
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
            char text[MPI_MAX_ERROR_STRING];
            int len = 0;
            MPI_Error_string(rc, text, &len);
            if (rc != MPI_SUCCESS && y == -7 && strstr(text, "CD replay mismatch") && strstr(text, "tag 6") && strstr(text, "tag 5"))
                printf("mismatch rank 1 ok: %s\n", text);
            else
                printf("mismatch rank 1 FAILED: rc %d y %g: %s\n", rc, y, text);
            break;
        }
    }
    commit_cd(cd);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
