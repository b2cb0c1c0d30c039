/* Calls only MPI functions that libcd wraps (its rank comes from a scan, not MPI_Comm_rank),
 * so a linker using --as-needed drops MPICH's library from `mpicc as_needed.c -lcd`: libcd
 * must load it itself (cd-ffi/tests/mpi.rs). Prints one line per rank. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int one = 1, rank_plus_one = 0, size = 0;
    MPI_Scan(&one, &rank_plus_one, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&one, &size, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int rank = rank_plus_one - 1, got = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT,
                 (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("as-needed rank %d of %d got %d\n", rank, size, got);
    MPI_Finalize();
    return 0;
}
