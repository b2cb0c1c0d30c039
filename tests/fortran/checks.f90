! What every Fortran test program uses: a check that stops the program with a line naming what
! failed and the library's last error (compiled before each program: cd-ffi/tests/fortran.rs).
module test_checks
  use Containment_Domains
  implicit none
contains
  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) then
      print '(a,a,a,i0)', 'check failed: ', what, '; cd_last_error() = ', cd_last_error()
      error stop 1
    end if
  end subroutine check
end module test_checks
