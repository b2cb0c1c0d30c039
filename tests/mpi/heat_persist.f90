! The Fortran twin of heat_persist.c: a 1-D heat equation (Jacobi sweeps with a halo exchange)
! under a persistent root CD that advances, and so persists, every INTERVAL steps. HEAT_CACHE
! names the base of the simulated nodes' cache directories (dir=$HEAT_CACHE/node{rank}); with
! HEAT_KILL_AT=S every rank kills itself (SIGKILL) after step S. A restart finds the persisted
! version (cd_recovered_version), restores it and goes on from there. Prints the same lines as
! the C program: "heat rank R resumed S version V", "heat rank R error ..." and
! "heat rank R result STEPS PART HEX".
program heat_persist
  use, intrinsic :: iso_c_binding
  use mpi
  use Containment_Domains
  implicit none
  interface
    function c_getpid() bind(C, name="getpid")
      import :: c_int
      integer(c_int) :: c_getpid
    end function c_getpid
    function c_kill(pid, sig) bind(C, name="kill")
      import :: c_int
      integer(c_int), value :: pid, sig
      integer(c_int) :: c_kill
    end function c_kill
  end interface
  integer, parameter :: n = 64, steps = 100, interval = 10, part = (n + 2) / 3
  integer(c_int), parameter :: sigkill = 9
  real(c_double), target :: u(0:n + 1), v(0:n + 1)
  integer(c_int), target :: step
  type(cd_addrspec) :: state(2)
  type(c_ptr) :: cd
  character(len=1024) :: cache, text
  character(kind=c_char), target :: info(1100), name(5) = ['h', 'e', 'a', 't', c_null_char]
  character(len=16 * (n + 2)) :: hex
  integer(c_int) :: err
  integer(c_int64_t) :: version
  integer :: ierr, rank, nranks, left, right, i, kill_at, length, status

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  left = mod(rank + nranks - 1, nranks)
  right = mod(rank + 1, nranks)
  kill_at = -1
  call get_environment_variable('HEAT_KILL_AT', text, length, status)
  if (status == 0) read (text(1:length), *) kill_at

  do i = 0, n + 1
    u(i) = real(mod(rank * 31 + i * 7, 101), c_double)
  end do
  v = 0
  step = 0

  call get_environment_variable('HEAT_CACHE', cache, length, status)
  if (status /= 0) then
    cache = '/tmp'
    length = 4
  end if
  text = 'dir=' // cache(1:length) // '/node{rank};scheme=xor;set_size=4;keep=2'
  do i = 1, len_trim(text)
    info(i) = text(i:i)
  end do
  info(len_trim(text) + 1) = c_null_char
  cd = create_cd(c_null_ptr, c_loc(info), COMM_LOGGING_DISABLED, c_loc(name), err)
  if (.not. c_associated(cd)) call fail('create_cd')
  state(1) = cd_addrspec(c_loc(u), int(c_sizeof(u), c_size_t), READ_WRITE, GLOBAL)
  state(2) = cd_addrspec(c_loc(step), int(c_sizeof(step), c_size_t), READ_WRITE, GLOBAL)
  if (add_to_cd_via_copy(cd, state, 2_c_int) /= SUCCESS) call fail('add_to_cd_via_copy')
  if (cd_recovered_version(cd, version) /= SUCCESS) call fail('cd_recovered_version')
  if (version /= 0) then
    if (restore_cd(cd) /= SUCCESS) call fail('restore_cd')
    write (*, '(a,i0,a,i0,a,i0)') 'heat rank ', rank, ' resumed ', step, ' version ', version
    flush (6)
  end if

  do while (step < steps)
    call MPI_Sendrecv(u(1), 1, MPI_DOUBLE_PRECISION, left, 0, u(n + 1), 1, &
                      MPI_DOUBLE_PRECISION, right, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Sendrecv(u(n), 1, MPI_DOUBLE_PRECISION, right, 1, u(0), 1, &
                      MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    do i = 1, n
      v(i) = u(i) + 0.25_c_double * (u(i - 1) - 2 * u(i) + u(i + 1))
    end do
    u(1:n) = v(1:n)
    step = step + 1
    if (mod(step, interval) == 0) then
      if (advance_cd_point_in_time(cd) == FAILURE) call fail('advance_cd_point_in_time')
      ! an advance demotes the ranges to READ_ONLY: promote them again
      if (add_to_cd_via_copy(cd, state, 2_c_int) /= SUCCESS) call fail('add_to_cd_via_copy')
    end if
    if (step == kill_at) i = c_kill(c_getpid(), sigkill)
  end do

  ! in three lines, as the C program prints them (short lines stay whole under Open MPI)
  do i = 0, n + 1
    write (hex(16 * i + 1:16 * i + 16), '(z16.16)') transfer(u(i), 0_c_int64_t)
  end do
  do i = 0, 2
    write (*, '(a,i0,a,i0,a,i0,a,a)') 'heat rank ', rank, ' result ', step, ' ', i, ' ', &
      to_lower(hex(i * part * 16 + 1:(i + 1) * part * 16))
    flush (6)
  end do
  if (commit_cd(cd) /= SUCCESS) call fail('commit_cd')
  call MPI_Finalize(ierr)

contains

  subroutine fail(what)
    character(len=*), intent(in) :: what
    character(kind=c_char) :: msg(1024)
    integer(c_size_t) :: got
    integer(c_int) :: code, rc
    integer :: k
    code = cd_last_error()
    rc = cd_last_error_message(msg, int(size(msg), c_size_t), got)
    write (*, '(a,i0,a,i0,a,a,a)', advance='no') 'heat rank ', rank, ' error ', code, ' ', &
      what, ': '
    do k = 1, int(min(got, int(size(msg), c_size_t)))
      write (*, '(a)', advance='no') msg(k)
    end do
    write (*, '(a)') ''
    flush (6)
    call MPI_Finalize(ierr)
    stop
  end subroutine fail

  pure function to_lower(s) result(r)
    character(len=*), intent(in) :: s
    character(len=len(s)) :: r
    integer :: k
    r = s
    do k = 1, len(s)
      if (s(k:k) >= 'A' .and. s(k:k) <= 'F') r(k:k) = achar(iachar(s(k:k)) + 32)
    end do
  end function to_lower
end program heat_persist
