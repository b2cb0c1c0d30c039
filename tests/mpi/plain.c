/* An unmodified MPI program (no CD calls): a ring exchange, a broadcast and a reduction.
 * Run with and without LD_PRELOAD=libcd.so: same output. Prints "plain rank R sum S". */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double x = rank + 1, y = 0, b = rank == 0 ? 3.5 : 0, sum = 0;
    MPI_Request rq[2];
    MPI_Irecv(&y, 1, MPI_DOUBLE, (rank + size - 1) % size, 0, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(&x, 1, MPI_DOUBLE, (rank + 1) % size, 0, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    MPI_Bcast(&b, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double v = y * b;
    MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    printf("plain rank %d sum %g\n", rank, sum);
    MPI_Finalize();
    return 0;
}
