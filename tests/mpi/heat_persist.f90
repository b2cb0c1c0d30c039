! The Fortran twin of heat_persist.c (`use mpi_f08`): a 1-D heat equation (Jacobi sweeps with a
! halo exchange) under a persistent root CD that advances, and so persists, every INTERVAL
! steps (HEAT_INTERVAL, default 10) of STEPS (HEAT_STEPS, default 100). HEAT_CACHE names the
! base of the simulated nodes' cache directories (dir=$HEAT_CACHE/node{rank}). It reads the C
! program's options that its tests use, with the same meaning and the same arithmetic in the
! same order, so its results are bitwise the C program's:
! - HEAT_KILL_AT=S: every rank kills itself (SIGKILL) after step S (only rank R with
!   HEAT_KILL_RANK=R: a lost node, which a ULFM job survives); HEAT_KILL_ONCE=PATH kills only
!   while PATH does not exist (it is made first), HEAT_KILL_WIPE=1 removes the rank's node cache
!   directory first;
! - HEAT_NONBLOCKING=1: the halo by MPI_Irecv, MPI_Isend and MPI_Waitall (else MPI_Sendrecv);
! - HEAT_REDUCE=1: an MPI_Allreduce of the array's sum every step, folded into the state;
! - HEAT_START=1: the start communicates (MPI_Bcast of the coefficient from rank 0, a bias from
!   the left neighbour by MPI_Sendrecv and the ranks' sum by MPI_Allreduce).
! A restart finds the persisted version (cd_recovered_version), restores it and goes on from
! there. Prints the C program's lines: "heat rank R resumed S version V", "heat rank R error
! ...", "heat rank R result STEPS PART HEX" and "heat rank R executed N".
program heat_persist
  use, intrinsic :: iso_c_binding
  use mpi_f08
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
  integer, parameter :: n = 64, part = (n + 2) / 3
  integer(c_int), parameter :: sigkill = 9
  real(c_double), target, asynchronous :: u(0:n + 1)
  real(c_double) :: v(0:n + 1), coefficient, bias, params(2), mine, theirs, total, local
  integer(c_int), target :: step
  type(cd_addrspec) :: state(2)
  type(c_ptr) :: cd
  type(MPI_Request) :: halo(4)
  character(len=1024) :: cache, text
  character(kind=c_char), target :: info(1100), name(5) = ['h', 'e', 'a', 't', c_null_char]
  character(len=16 * (n + 2)) :: hex
  integer(c_int) :: err
  integer(c_int64_t) :: version
  integer :: rank, nranks, left, right, i, kill_at, kill_rank, length, status
  integer :: steps, interval, executed

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  left = mod(rank + nranks - 1, nranks)
  right = mod(rank + 1, nranks)
  kill_at = env_int('HEAT_KILL_AT', -1)
  kill_rank = env_int('HEAT_KILL_RANK', -1)
  steps = env_int('HEAT_STEPS', 100)
  interval = env_int('HEAT_INTERVAL', 10)
  executed = 0

  do i = 0, n + 1
    u(i) = real(mod(rank * 31 + i * 7, 101), c_double)
  end do
  v = 0
  step = 0
  coefficient = 0.25_c_double
  bias = 0
  if (env_int('HEAT_START', 0) /= 0) then
    params = 0
    if (rank == 0) then
      params(1) = 0.2_c_double + 1.0_c_double / real(nranks + 7, c_double)
      params(2) = 1.0e-4_c_double
    end if
    call MPI_Bcast(params, 2, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD)
    mine = rank + 1.0_c_double
    theirs = 0
    total = 0
    call MPI_Sendrecv(mine, 1, MPI_DOUBLE_PRECISION, right, 2, theirs, 1, MPI_DOUBLE_PRECISION, &
                      left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call MPI_Allreduce(mine, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
    coefficient = params(1)
    bias = params(2) * theirs / total
  end if

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
    if (env_int('HEAT_NONBLOCKING', 0) /= 0) then
      call MPI_Irecv(u(n + 1), 1, MPI_DOUBLE_PRECISION, right, 0, MPI_COMM_WORLD, halo(1))
      call MPI_Irecv(u(0), 1, MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, halo(2))
      call MPI_Isend(u(1), 1, MPI_DOUBLE_PRECISION, left, 0, MPI_COMM_WORLD, halo(3))
      call MPI_Isend(u(n), 1, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD, halo(4))
      call MPI_Waitall(4, halo, MPI_STATUSES_IGNORE)
    else
      call MPI_Sendrecv(u(1), 1, MPI_DOUBLE_PRECISION, left, 0, u(n + 1), 1, &
                        MPI_DOUBLE_PRECISION, right, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
      call MPI_Sendrecv(u(n), 1, MPI_DOUBLE_PRECISION, right, 1, u(0), 1, &
                        MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    end if
    do i = 1, n
      v(i) = u(i) + coefficient * (u(i - 1) - 2 * u(i) + u(i + 1)) + bias
    end do
    u(1:n) = v(1:n)
    if (env_int('HEAT_REDUCE', 0) /= 0) then
      ! summed in the C program's order
      local = 0
      do i = 1, n
        local = local + u(i)
      end do
      call MPI_Allreduce(local, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
      u(1) = u(1) + total * 1.0e-6_c_double
    end if
    step = step + 1
    executed = executed + 1
    if (mod(step, interval) == 0) then
      if (advance_cd_point_in_time(cd) == FAILURE) call fail('advance_cd_point_in_time')
      ! an advance demotes the ranges to READ_ONLY: promote them again
      if (add_to_cd_via_copy(cd, state, 2_c_int) /= SUCCESS) call fail('add_to_cd_via_copy')
    end if
    if (step == kill_at .and. (kill_rank < 0 .or. kill_rank == rank)) call kill_self()
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
  write (*, '(a,i0,a,i0)') 'heat rank ', rank, ' executed ', executed
  flush (6)
  if (commit_cd(cd) /= SUCCESS) call fail('commit_cd')
  call MPI_Finalize()

contains

  ! The integer value of environment variable `key`, or `default` when it is not set.
  integer function env_int(key, default)
    character(len=*), intent(in) :: key
    integer, intent(in) :: default
    character(len=64) :: value
    integer :: got, unset, bad
    env_int = default
    call get_environment_variable(key, value, got, unset)
    if (unset == 0 .and. got > 0) then
      read (value(1:got), *, iostat=bad) env_int
      if (bad /= 0) env_int = default
    end if
  end function env_int

  ! Raises SIGKILL, as the C program's kill_self (HEAT_KILL_ONCE, HEAT_KILL_WIPE).
  subroutine kill_self()
    character(len=1024) :: once
    integer :: got, unset, unit, opened, wiped
    call get_environment_variable('HEAT_KILL_ONCE', once, got, unset)
    if (unset == 0) then
      ! made first: a replacement re-executing the step finds it and goes on
      open (newunit=unit, file=once(1:got), status='new', action='write', iostat=opened)
      if (opened /= 0) return
      close (unit)
    end if
    if (env_int('HEAT_KILL_WIPE', 0) /= 0 .and. length > 0) then
      write (text, '(a,i0)') cache(1:length) // '/node', rank
      call execute_command_line("rm -rf '" // trim(text) // "'", exitstat=wiped)
      if (wiped /= 0) return
    end if
    flush (6)
    i = c_kill(c_getpid(), sigkill)
  end subroutine kill_self

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
    call MPI_Finalize()
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
