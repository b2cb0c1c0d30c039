! A 1-D heat equation (Jacobi) over MPI, protected by a Containment Domain that logs MPI: the
! Fortran version of examples/c/heat_mpi.c (see there for the whole story).
!
! Each rank owns n cells plus two ghost cells; every step exchanges halos with its neighbours
! (MPI_Irecv / MPI_Isend / MPI_Waitall), updates its cells and sums a global residual with
! MPI_Allreduce. A root CD created with COMM_LOGGING_ENABLED protects the field, the step
! counter and the residual sum, and is advanced every `interval` steps. At the fault step the
! faulty rank flips a bit in a stripe of its field; the end-of-step check sees values outside
! [0, 1] (impossible for the heat equation), and the rank restores the CD and re-executes the
! interval alone, its MPI calls served from the CD's log. At the end rank 0 gathers a hash of
! every rank's field; with CD_VERIFY=FILE it writes them (when FILE does not exist: the
! fault-free reference) or compares them: "verified: result bitwise equal to the fault-free
! run", or error stop 1.
!
! Environment: CD_FAULT_RANK (default 2 with more than 2 ranks; -1 or none: no fault),
! CD_FAULT_STEP (default 53; comma-separated; none: no fault), CD_VERIFY, CD_HEAT_STEPS
! (default 200), CD_HEAT_INTERVAL (default 20), CD_MPI_STATS (libcd's per-rank statistics).
!
! Build: mpif90 -std=f2018 -O2 -I<dir of containment_domains.mod> heat_mpi.f90 \
!          -L<dir of libcd.so> -Wl,--no-as-needed -lcd -Wl,-rpath,<dir of libcd.so>
! Run:   CD_VERIFY=/tmp/heat-f.ref CD_FAULT_STEP=none mpirun -np 4 ./heat_mpi_f   # reference
!        CD_VERIFY=/tmp/heat-f.ref mpirun -np 4 ./heat_mpi_f                      # with a fault
program heat_mpi
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: output_unit
  use mpi_f08
  use Containment_Domains
  implicit none
  integer, parameter :: n = 16384, max_faults = 64
  real(c_double), allocatable, target, asynchronous :: u(:)
  real(c_double), allocatable :: unew(:)
  integer(c_int), target :: step = 0
  real(c_double), target :: resid_sum = 0
  integer :: rank, size, left, right, steps, interval, fault_rank, n_faults, last, i, f, r
  integer :: fault_steps(max_faults), recovered_from = 0, restored_to = 0, at
  logical :: fault_fired(max_faults) = .false., recovering = .false., restored, same, exists
  integer(c_int64_t) :: bits, h, ref, restores, total_restores
  integer(c_int64_t), allocatable :: all(:)
  integer(c_size_t) :: log_records = 0
  real(c_double) :: local_resid, global_resid, t0
  type(MPI_Request) :: req(4)
  type(MPI_Status) :: statuses(4)
  type(cd_addrspec) :: as(3)
  type(cd_info) :: info
  type(cd_stats) :: st
  type(c_ptr) :: cd
  integer(c_int) :: error
  character(kind=c_char), target :: cd_name(5) = ['h', 'e', 'a', 't', c_null_char]
  character(len=256) :: verify, line, header
  integer :: verify_len, unit, ios, ok, rr

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  t0 = MPI_Wtime()

  steps = env_int('CD_HEAT_STEPS', 200)
  interval = env_int('CD_HEAT_INTERVAL', 20)
  fault_rank = env_int('CD_FAULT_RANK', merge(2, -1, size > 2))
  n_faults = 0
  if (fault_rank >= 0 .and. fault_rank < size) call parse_fault_steps()
  left = merge(rank - 1, MPI_PROC_NULL, rank > 0)
  right = merge(rank + 1, MPI_PROC_NULL, rank < size - 1)

  if (rank == 0) then
    if (n_faults > 0) then
      print '(a,i0,a,i0,a,i0,a,i0,a,i0,a,*(i0,:,","))', 'heat_mpi: ', size, ' ranks x ', n, &
        ' cells, ', steps, ' steps, CD advanced every ', interval, ' steps; fault on rank ', &
        fault_rank, ' at step ', fault_steps(1:n_faults)
    else
      print '(a,i0,a,i0,a,i0,a,i0,a)', 'heat_mpi: ', size, ' ranks x ', n, ' cells, ', &
        steps, ' steps, CD advanced every ', interval, ' steps; no fault'
    end if
    flush (output_unit)
  end if

  ! The state: the field with its ghost cells, the step counter, the residual sum.
  allocate (u(0:n + 1), unew(0:n + 1))
  do i = 0, n + 1
    u(i) = real(mod((int(rank, c_int64_t) * n + i - 1) * 7919_c_int64_t, 1000_c_int64_t), &
                c_double) / 1000
  end do
  if (left == MPI_PROC_NULL) u(0) = 1      ! hot left wall
  if (right == MPI_PROC_NULL) u(n + 1) = 0 ! cold right wall

  as(1) = cd_addrspec(c_loc(u(0)), int(n + 2, c_size_t) * 8_c_size_t, READ_WRITE, GLOBAL)
  as(2) = cd_addrspec(c_loc(step), 4_c_size_t, READ_WRITE, GLOBAL)
  as(3) = cd_addrspec(c_loc(resid_sum), 8_c_size_t, READ_WRITE, GLOBAL)
  cd = create_cd(c_null_ptr, c_null_ptr, COMM_LOGGING_ENABLED, c_loc(cd_name), error)
  call must(error, 'create_cd')

  do while (step < steps)
    ! At the start of each interval: promote the entries to READ_WRITE (the first call saves
    ! them), so that the next advance saves what this interval changes.
    call must(add_to_cd_via_copy(cd, as, 3_c_int), 'add_to_cd_via_copy')
    last = min(step + interval, steps)
    restored = .false.
    do while (step < last)
      call MPI_Irecv(u(0), 1, MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, req(1))
      call MPI_Irecv(u(n + 1), 1, MPI_DOUBLE_PRECISION, right, 0, MPI_COMM_WORLD, req(2))
      call MPI_Isend(u(1), 1, MPI_DOUBLE_PRECISION, left, 0, MPI_COMM_WORLD, req(3))
      call MPI_Isend(u(n), 1, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD, req(4))
      call MPI_Waitall(4, req, statuses)

      unew(1:n) = 0.5_c_double * u(1:n) + 0.25_c_double * (u(0:n - 1) + u(2:n + 1))
      local_resid = 0
      do i = 1, n
        local_resid = local_resid + (unew(i) - u(i)) * (unew(i) - u(i))
      end do
      u(1:n) = unew(1:n)
      call MPI_Allreduce(local_resid, global_resid, 1, MPI_DOUBLE_PRECISION, MPI_SUM, &
                         MPI_COMM_WORLD)
      resid_sum = resid_sum + global_resid

      if (rank == fault_rank) then
        do f = 1, n_faults
          if (fault_steps(f) == step .and. .not. fault_fired(f)) then
            fault_fired(f) = .true.   ! kept outside the CD: the fault does not repeat
            do i = n / 4, n / 4 + 63
              bits = transfer(u(i), bits)
              bits = ieor(bits, ishft(1_c_int64_t, 62))   ! a flipped exponent bit
              u(i) = transfer(bits, u(i))
            end do
            exit   ! a step listed twice fails again when re-executed
          end if
        end do
      end if
      step = step + 1

      if (recovering .and. step == recovered_from + 1) then
        print '(a,i0,a,i0,a,i0,a,i0,a,i0,a)', 'rank ', rank, ': caught up with step ', &
          recovered_from, ': re-executed steps ', restored_to, '..', recovered_from, &
          ' alone, ', log_records, ' MPI records served from the log, live again'
        flush (output_unit)
        recovering = .false.
      end if
      if (any(.not. (u(1:n) >= 0 .and. u(1:n) <= 1))) then   ! the corruption is detected
        call must(cd_get_info(cd, info), 'cd_get_info')
        log_records = info%log_entries
        at = step - 1
        call must(restore_cd(cd), 'restore_cd')
        print '(a,i0,a,i0,a,i0,a,i0,a)', 'rank ', rank, ': fault at step ', at, &
          ' detected, restored to step ', step, ', re-executing from the MPI log (', &
          log_records, ' records)'
        flush (output_unit)
        recovering = .true.
        recovered_from = at
        restored_to = step
        restored = .true.
        exit
      end if
    end do
    if (.not. restored) then
      if (advance_cd_point_in_time(cd) == FAILURE) call must(cd_last_error(), 'advance')
    end if
  end do
  call must(cd_get_stats(cd, st), 'cd_get_stats')
  call must(commit_cd(cd), 'commit_cd')

  ! The result: a hash of the field's exact bits and of the residual sum (rotate and xor).
  h = 0
  do i = 1, n
    h = ieor(ishftc(h, 7), transfer(u(i), h))
  end do
  h = ieor(ishftc(h, 7), transfer(resid_sum, h))
  allocate (all(size))
  call MPI_Gather(h, 1, MPI_INTEGER8, all, 1, MPI_INTEGER8, 0, MPI_COMM_WORLD)
  restores = st%restores
  call MPI_Reduce(restores, total_restores, 1, MPI_INTEGER8, MPI_SUM, 0, MPI_COMM_WORLD)

  ok = 1
  if (rank == 0) then
    print '(a,i0,a,f0.2,a,i0,a,es24.17)', 'heat_mpi: ', steps, ' steps in ', MPI_Wtime() - t0, &
      ' s, ', total_restores, ' restore(s), residual sum ', resid_sum
    do r = 1, size
      print '(a,i0,a,i0)', '  rank ', r - 1, ': checksum ', all(r)
    end do
    call get_environment_variable('CD_VERIFY', verify, verify_len)
    if (verify_len > 0) then
      write (header, '(a,i0,a,i0,a,i0)') 'heat_mpi_f ranks=', size, ' cells=', n, ' steps=', steps
      inquire (file=verify(1:verify_len), exist=exists)
      if (.not. exists) then
        open (newunit=unit, file=verify(1:verify_len), status='new', action='write')
        write (unit, '(a)') trim(header)
        do r = 1, size
          write (unit, '(i0,1x,i0)') r - 1, all(r)
        end do
        close (unit)
        print '(a,a)', 'reference written to ', verify(1:verify_len)
      else
        open (newunit=unit, file=verify(1:verify_len), status='old', action='read')
        read (unit, '(a)', iostat=ios) line
        same = ios == 0 .and. line == header
        if (.not. same) print '(a,a,a,a)', verify(1:verify_len), &
          ' is the reference of another run (not "', trim(header), '")'
        do r = 1, size
          if (.not. same) exit
          read (unit, *, iostat=ios) rr, ref
          same = ios == 0 .and. rr == r - 1 .and. ref == all(r)
          if (.not. same) print '(a,i0,a,a)', 'rank ', r - 1, &
            ' differs from the reference in ', verify(1:verify_len)
        end do
        close (unit)
        if (same) then
          print '(a)', 'verified: result bitwise equal to the fault-free run'
        else
          print '(a,a,a)', 'VERIFICATION FAILED: result differs from the fault-free run (', &
            verify(1:verify_len), ')'
          ok = 0
        end if
      end if
    end if
    flush (output_unit)
  end if
  call MPI_Bcast(ok, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
  call MPI_Finalize()
  if (ok /= 1) error stop 1

contains

  integer function env_int(name, fallback)
    character(len=*), intent(in) :: name
    integer, intent(in) :: fallback
    character(len=64) :: value
    integer :: length, status
    env_int = fallback
    call get_environment_variable(name, value, length, status)
    if (status /= 0 .or. length == 0) return
    if (value(1:length) == 'none') then
      env_int = -1
    else
      read (value(1:length), *) env_int
    end if
  end function env_int

  ! The fault steps of CD_FAULT_STEP ("53", "53,57,130", "none"; default 53).
  subroutine parse_fault_steps()
    character(len=1024) :: value
    integer :: length, status, start, comma
    call get_environment_variable('CD_FAULT_STEP', value, length, status)
    if (status /= 0 .or. length == 0) then
      value = '53'
      length = 2
    end if
    if (value(1:length) == 'none') return
    start = 1
    do while (start <= length .and. n_faults < max_faults)
      comma = index(value(start:length), ',')
      n_faults = n_faults + 1
      if (comma == 0) then
        read (value(start:length), *) fault_steps(n_faults)
        exit
      end if
      read (value(start:start + comma - 2), *) fault_steps(n_faults)
      start = start + comma
    end do
  end subroutine parse_fault_steps

  subroutine must(rc, what)
    integer(c_int), intent(in) :: rc
    character(len=*), intent(in) :: what
    character(kind=c_char) :: msg(256)
    integer(c_size_t) :: len
    integer(c_int) :: ignored
    if (rc /= SUCCESS) then
      ignored = cd_last_error_message(msg, 256_c_size_t, len)
      print '(a,i0,a,a,a,i0,a,256a)', 'rank ', rank, ': ', what, ' failed (', rc, '): ', &
        msg(1:len)
      flush (output_unit)
      call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine must
end program heat_mpi
