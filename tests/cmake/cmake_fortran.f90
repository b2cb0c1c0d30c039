! Fortran against Containment::cd_fortran (the module Containment_Domains): a root CD's
! advance, a fault and restore_cd. Prints "cmake_fortran: ok".
program cmake_fortran
  use, intrinsic :: iso_c_binding
  use Containment_Domains
  implicit none
  real(c_double), target :: field(16)
  type(cd_addrspec) :: as(1)
  type(c_ptr) :: cd
  character(kind=c_char), target :: name(6) = ['c', 'm', 'a', 'k', 'e', c_null_char]
  integer(c_int) :: err

  field = 1.0_c_double
  cd = create_cd(c_null_ptr, c_null_ptr, COMM_LOGGING_DISABLED, c_loc(name), err)
  call check(err == SUCCESS .and. c_associated(cd), 'create_cd')
  as(1) = cd_addrspec(c_loc(field), int(c_sizeof(field), c_size_t), READ_WRITE, GLOBAL)
  call check(add_to_cd_via_copy(CURRENT_CD, as, 1_c_int) == SUCCESS, 'add_to_cd_via_copy')
  field(3) = 3.0_c_double
  call check(advance_cd_point_in_time(CURRENT_CD) /= FAILURE, 'advance_cd_point_in_time')
  field = -1.0_c_double
  call check(restore_cd(CURRENT_CD) == SUCCESS, 'restore_cd')
  call check(field(3) == 3.0_c_double .and. field(16) == 1.0_c_double, 'restored')
  call check(commit_cd(cd) == SUCCESS, 'commit_cd')
  print '(a)', 'cmake_fortran: ok'

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (.not. ok) then
      print '(a, a)', 'cmake_fortran: failed: ', what
      error stop 1
    end if
  end subroutine check
end program cmake_fortran
