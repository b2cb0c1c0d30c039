! A regen callback written in Fortran: bind(C), passed with c_funloc. The table is restored by
! regenerating it from `scale`, which the same CD restores first (COPY before REGEN).
module regen_funcs
  use, intrinsic :: iso_c_binding
  use Containment_Domains
  implicit none
  integer(c_int), target :: scale = 3
  integer(c_int), target :: table(32)
  integer :: calls = 0
contains
  integer(c_int) function fill_table(addrlist, ascount) bind(C)
    type(cd_addrspec), intent(inout) :: addrlist(*)
    integer(c_int), value :: ascount
    integer(c_int), pointer :: part(:)
    integer :: k, m, first
    calls = calls + 1
    do k = 1, ascount
      call c_f_pointer(addrlist(k)%address, part, [int(addrlist(k)%length / 4)])
      ! index of part(1) in table, from the byte offset
      first = int((transfer(addrlist(k)%address, 0_c_intptr_t) - &
                   transfer(c_loc(table), 0_c_intptr_t)) / 4) + 1
      do m = 1, size(part)
        part(m) = scale * (first + m - 1)
      end do
    end do
    fill_table = 0
  end function fill_table
end module regen_funcs

program regen
  use, intrinsic :: iso_c_binding
  use Containment_Domains
  use test_checks
  use regen_funcs
  implicit none
  type(cd_addrspec) :: a_scale(1), a_table(1), a_rw(1)
  type(c_ptr) :: root, child
  integer(c_int) :: err
  integer :: m

  do m = 1, 32
    table(m) = scale * m
  end do
  root = create_cd(c_null_ptr, c_null_ptr, COMM_LOGGING_DISABLED, c_null_ptr, err)
  call check(err == SUCCESS, 'create root')
  child = create_cd(root, c_null_ptr, COMM_LOGGING_INHERIT, c_null_ptr, err)
  call check(err == SUCCESS, 'create child')
  a_scale(1) = cd_addrspec(c_loc(scale), 4_c_size_t, READ_WRITE, GLOBAL)
  a_table(1) = cd_addrspec(c_loc(table), int(c_sizeof(table), c_size_t), READ_ONLY, GLOBAL)
  a_rw(1) = cd_addrspec(c_loc(table), int(c_sizeof(table), c_size_t), READ_WRITE, GLOBAL)

  call check(add_to_cd_via_regen(child, a_rw, 1_c_int, c_funloc(fill_table)) == &
             CD_ERR_READ_WRITE_REGEN, 'READ_WRITE regen refused')
  call check(add_to_cd_via_regen(child, a_table, 1_c_int, c_null_funptr) == &
             CD_ERR_NULL_POINTER, 'NULL regen refused')
  call check(add_to_cd_via_copy(child, a_scale, 1_c_int) == SUCCESS, 'add scale')
  call check(add_to_cd_via_regen(child, a_table, 1_c_int, c_funloc(fill_table)) == SUCCESS, &
             'add table via regen')

  scale = -7
  table = 0
  call check(restore_cd(child) == SUCCESS, 'restore_cd')
  call check(calls == 1, 'regen called once')
  call check(scale == 3, 'scale restored by copy')
  do m = 1, 32
    call check(table(m) == 3 * m, 'table regenerated from the restored scale')
  end do

  call check(commit_cd(child) == SUCCESS, 'commit child')
  ! The regen entry moved to the root: restoring the root regenerates again.
  table = 0
  call check(restore_cd(root) == SUCCESS, 'restore root')
  call check(calls == 2 .and. table(32) == 96, 'regen through the root')
  call check(commit_cd(root) == SUCCESS, 'commit root')
  print '(a)', 'regen: ok'
end program regen
