! Error paths from Fortran: bad handles, bad lists, rule violations, and the error strings.
program errors
  use, intrinsic :: iso_c_binding
  use Containment_Domains
  use test_checks
  implicit none
  integer(c_int), target :: x(4)
  type(cd_addrspec) :: ax(1), zero(1), bad(1), two(2)
  type(c_ptr) :: root, child, gone
  integer(c_int) :: err
  character(kind=c_char) :: buf(128)
  integer(c_size_t) :: n
  type(cd_info) :: info

  x = 0
  ax(1) = cd_addrspec(c_loc(x), 16_c_size_t, READ_WRITE, GLOBAL)
  zero(1) = cd_addrspec(c_loc(x), 0_c_size_t, READ_WRITE, GLOBAL)
  bad(1) = cd_addrspec(c_loc(x), 16_c_size_t, 7_c_int, GLOBAL)
  two(1) = cd_addrspec(c_loc(x), 16_c_size_t, READ_WRITE, GLOBAL)
  two(2) = cd_addrspec(c_loc(x(2)), 4_c_size_t, READ_ONLY, GLOBAL)

  call expect(commit_cd(c_null_ptr), CD_ERR_NULL_HANDLE, 'NULL handle')
  call expect(restore_cd(CURRENT_CD), CD_ERR_NO_ACTIVE_CD, 'CURRENT_CD without a CD')
  call expect(cd_validate_handle(CURRENT_CD), CD_ERR_NO_ACTIVE_CD, 'CURRENT_CD binding')

  root = create_cd(c_null_ptr, c_null_ptr, COMM_LOGGING_INHERIT, c_null_ptr, err)
  call expect(err, CD_ERR_ROOT_INHERITS_LOGGING, 'root INHERIT')
  call check(.not. c_associated(root), 'NULL on error')

  root = create_cd(c_null_ptr, c_null_ptr, COMM_LOGGING_ENABLED, c_null_ptr, err)
  call expect(err, SUCCESS, 'create root')
  call expect(add_to_cd_via_copy(root, ax, 0_c_int), CD_ERR_EMPTY_LIST, 'ascount 0')
  call expect(add_to_cd_via_copy(root, ax, -1_c_int), CD_ERR_NEGATIVE_COUNT, 'ascount < 0')
  call expect(add_to_cd_via_copy(root, zero, 1_c_int), CD_ERR_ZERO_LENGTH, 'zero length')
  call expect(add_to_cd_via_copy(root, bad, 1_c_int), CD_ERR_INVALID_ENUM, 'bad addr_tp')
  call expect(add_to_cd_via_copy(root, two, 2_c_int), CD_ERR_OVERLAPPING_LIST, 'overlap')
  call expect(add_to_cd_via_parent(root, ax, 1_c_int), CD_ERR_NO_PARENT, 'via parent on root')
  call expect(delete_from_cd(root, ax, 1_c_int), CD_ERR_RANGE_NOT_FOUND, 'delete missing')
  call expect(add_file_to_cd(root, -3_c_int), CD_ERR_FILE_NOT_SEEKABLE, 'bad descriptor')

  child = create_cd(root, c_null_ptr, COMM_LOGGING_DISABLED, c_null_ptr, err)
  call expect(err, CD_ERR_LOGGING_MISMATCH, 'logging mismatch')
  child = create_cd(CURRENT_CD, c_null_ptr, MPI_LOGGING_INHERIT, c_null_ptr, err)
  call expect(err, SUCCESS, 'create child of CURRENT_CD')
  call expect(cd_get_info(child, info), SUCCESS, 'cd_get_info')
  call check(info%depth == 1 .and. c_associated(info%parent, root), 'child info')
  call expect(commit_cd(root), CD_ERR_HAS_CHILDREN, 'commit with children')
  call expect(advance_cd_point_in_time(root), FAILURE, 'advance with children')
  call expect(cd_last_error(), CD_ERR_HAS_CHILDREN, 'the reason of FAILURE')
  call expect(cd_last_error_message(buf, int(size(buf), c_size_t), n), SUCCESS, 'message')
  call check(n > 0 .and. n < size(buf), 'message length')
  call expect(cd_error_message(CD_ERR_STALE_HANDLE, buf, int(size(buf), c_size_t), n), &
              SUCCESS, 'cd_error_message')
  call check(n > 10, 'description length')

  gone = child
  call expect(restore_cd(root), SUCCESS, 'restore discards the child')
  call expect(commit_cd(gone), CD_ERR_STALE_HANDLE, 'restored-away handle')
  call expect(commit_cd(root), SUCCESS, 'commit root')
  call expect(restore_cd(root), CD_ERR_STALE_HANDLE, 'committed handle')
  print '(a)', 'errors: ok'

contains

  subroutine expect(got, wanted, what)
    integer(c_int), intent(in) :: got, wanted
    character(len=*), intent(in) :: what
    if (got /= wanted) then
      print '(a,a,a,i0,a,i0)', 'check failed: ', what, ': got ', got, ', expected ', wanted
      error stop 1
    end if
  end subroutine expect
end program errors
