! A loop with add/advance/restore (the spec's pattern) in Fortran: every outer iteration
! re-adds the state (promotion), runs the inner steps, restores on a detected fault and
! otherwise advances with the spec's `== FAILURE` test. The result must equal a fault-free run.
program loop
  use, intrinsic :: iso_c_binding
  use Containment_Domains
  use test_checks
  implicit none
  integer, parameter :: n = 64, outer = 12, inner = 5
  real(c_double), target :: state(n), reference(n)
  integer(c_int), target :: i
  type(cd_addrspec) :: as(2)
  type(cd_stats) :: st
  type(c_ptr) :: cd
  character(kind=c_char), target :: name(5) = ['f', 'o', 'r', 't', c_null_char]
  integer(c_int) :: err
  integer :: j, faults
  logical :: faulted(outer)

  state = 1.0_c_double
  faulted = .false.
  faults = 0
  cd = create_cd(c_null_ptr, c_null_ptr, COMM_LOGGING_DISABLED, c_loc(name), err)
  call check(err == SUCCESS .and. c_associated(cd), 'create_cd')
  as(1) = cd_addrspec(c_loc(state), int(c_sizeof(state), c_size_t), READ_WRITE, GLOBAL)
  as(2) = cd_addrspec(c_loc(i), int(c_sizeof(i), c_size_t), READ_WRITE, GLOBAL)

  i = 1
  do while (i <= outer)
    ! CURRENT_CD is the CD just created.
    call check(add_to_cd_via_copy(CURRENT_CD, as, 2_c_int) == SUCCESS, 'add_to_cd_via_copy')
    do j = 1, inner
      state = state * 0.5_c_double + real(i * j, c_double)
    end do
    if (mod(i, 4) == 0 .and. .not. faulted(i)) then
      faulted(i) = .true.            ! a fault detected at the end of the inner loop
      faults = faults + 1
      state = -1.0_c_double
      i = 999
      call check(restore_cd(cd) == SUCCESS, 'restore_cd')
      call check(state(1) /= -1.0_c_double .and. i <= outer, 'restored state')
      cycle
    end if
    i = i + 1
    if (advance_cd_point_in_time(cd) == FAILURE) then
      call check(restore_cd(cd) == SUCCESS, 'restore after failed advance')
    end if
  end do

  call check(cd_get_stats(cd, st) == SUCCESS, 'cd_get_stats')
  call check(st%restores == int(faults, c_int64_t), 'one restore per fault')
  call check(st%advances == int(outer, c_int64_t), 'one advance per iteration')
  ! The process's memory: the CD's store is held now, and the peak covers it.
  call check(cd_global_stats(st) == SUCCESS, 'cd_global_stats')
  call check(st%store_bytes >= int(c_sizeof(state), c_int64_t), 'store bytes held')
  call check(st%peak_bytes >= st%store_bytes + st%pool_bytes + st%log_bytes, 'peak')
  call check(commit_cd(cd) == SUCCESS, 'commit_cd')
  call check(commit_cd(cd) == CD_ERR_STALE_HANDLE, 'commit twice')
  call check(cd_global_stats(st) == SUCCESS, 'cd_global_stats after commit')
  call check(st%store_bytes == 0_c_int64_t, 'every store freed')

  reference = 1.0_c_double
  do i = 1, outer
    do j = 1, inner
      reference = reference * 0.5_c_double + real(i * j, c_double)
    end do
  end do
  call check(all(state == reference), 'result equals the fault-free run')
  call check(faults == outer / 4, 'faults met')
  print '(a,i0,a)', 'loop: ok (', faults, ' faults)'
end program loop
