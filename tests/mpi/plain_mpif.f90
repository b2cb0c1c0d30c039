! An unmodified Fortran MPI program (include 'mpif.h'): ring exchange, broadcast,
! reduction. Run with and without LD_PRELOAD=libcd.so: same output.
program plain_mpif

  implicit none
  include 'mpif.h'
  integer :: rank, size, ierr
  integer :: rq(2)
  double precision :: x, y, b, v, total
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  x = rank + 1
  y = 0
  b = 0
  if (rank == 0) b = 3.5d0
  call MPI_Irecv(y, 1, MPI_DOUBLE_PRECISION, mod(rank + size - 1, size), 0, MPI_COMM_WORLD, rq(1), ierr)
  call MPI_Isend(x, 1, MPI_DOUBLE_PRECISION, mod(rank + 1, size), 0, MPI_COMM_WORLD, rq(2), ierr)
  call MPI_Waitall(2, rq, MPI_STATUSES_IGNORE, ierr)
  call MPI_Bcast(b, 1, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
  v = y * b
  call MPI_Allreduce(v, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  print '(a,i0,a,f0.1)', 'plain rank ', rank, ' sum ', total
  call MPI_Finalize(ierr)
end program plain_mpif
