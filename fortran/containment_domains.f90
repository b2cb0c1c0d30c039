! Containment_Domains: the Fortran binding of libcd (the C API of cd.h), with bind(C)
! interfaces for every function of the spec, the MPI-log functions and the cd_ extensions.
!
! It starts from the spec's Appendix A, corrected as DESIGN.md says: cd_addrspec has all four
! fields of the C struct (address, length, addr_tp, addr_scope), and commit_cd returns an
! integer. Handles are type(c_ptr); NULL is c_null_ptr and CURRENT_CD is bound to libcd's
! global cd_current_cd. Strings (storage_info, name) are type(c_ptr): pass c_null_ptr or
! c_loc of a NUL-terminated character(kind=c_char) array.
!
! Every integer function returns SUCCESS (0) or a CD_ERR_* code, except
! advance_cd_point_in_time, which returns FAILURE on any failure (cd_last_error() tells why).
! The constants, interfaces and derived types must equal cd.h's: the test suite compares them
! (cd-ffi/tests/fortran.rs), and every C function is bound here or listed there with a reason.
! The result codes are generated (CD_UPDATE_HEADER=1 cargo test -p cd-ffi --test tests header).
!
! Build: gfortran -I$(pkg-config --variable=fmoddir cd) prog.f90 $(pkg-config --libs cd)
module Containment_Domains
  use, intrinsic :: iso_c_binding
  implicit none

  ! One address range with its labels (struct cd_addrspec).
  type, bind(C) :: cd_addrspec
    type(c_ptr)       :: address
    integer(c_size_t) :: length
    integer(c_int)    :: addr_tp     ! READ_ONLY, READ_WRITE
    integer(c_int)    :: addr_scope  ! GLOBAL, CONSTRAINED
  end type cd_addrspec

  ! Counters (struct cd_stats), and from cd_global_stats the memory the runtime holds now
  ! (stores, pool, MPI logs) and its peak, which CD_MEMORY_LIMIT caps.
  type, bind(C) :: cd_stats
    integer(c_int64_t) :: creates, commits, restores, advances, adds
    integer(c_int64_t) :: bytes_added, bytes_advanced, bytes_restored
    integer(c_int64_t) :: regen_calls, log_entries
    integer(c_int64_t) :: store_bytes, pool_bytes, log_bytes, peak_bytes
  end type cd_stats

  ! A description of one CD (struct cd_info), with the advised interval between advances
  ! (nanoseconds, as cd_get_advice's CD_ADVICE_INTERVAL; advised_interval_known = 0: not
  ! known yet, and the interval is 0).
  type, bind(C) :: cd_info
    type(c_ptr)        :: parent
    integer(c_int32_t) :: rank, depth, sibling_index
    integer(c_int)     :: logging, had_siblings, replaying
    integer(c_size_t)  :: children, ranges, tracked_bytes, stored_bytes
    integer(c_size_t)  :: files, log_entries, log_bytes
    type(cd_stats)     :: stats
    integer(c_int64_t) :: advised_interval_ns
    integer(c_int)     :: advised_interval_known
  end type cd_info

  ! The calling thread's active CD (the spec's CURRENT_CD, (cd_handle)1).
  type(c_ptr), bind(C, name="cd_current_cd"), protected :: CURRENT_CD

  ! addr_tp
  integer(c_int), parameter :: READ_ONLY = 0
  integer(c_int), parameter :: READ_WRITE = 1
  ! addr_scope
  integer(c_int), parameter :: GLOBAL = 0
  integer(c_int), parameter :: CONSTRAINED = 1
  ! log_comm of create_cd, with the spec's MPI_LOGGING_* aliases
  integer(c_int), parameter :: COMM_LOGGING_DISABLED = 0
  integer(c_int), parameter :: COMM_LOGGING_ENABLED = 1
  integer(c_int), parameter :: COMM_LOGGING_INHERIT = 2
  integer(c_int), parameter :: MPI_LOGGING_DISABLED = 0
  integer(c_int), parameter :: MPI_LOGGING_ENABLED = 1
  integer(c_int), parameter :: MPI_LOGGING_INHERIT = 2
  ! restoration of cd_get_entries (not bound here; listed for completeness)
  integer(c_int), parameter :: CD_RESTORE_COPY = 0
  integer(c_int), parameter :: CD_RESTORE_PARENT = 1
  integer(c_int), parameter :: CD_RESTORE_REGEN = 2
  ! what of cd_get_advice (times in nanoseconds), and its CD_ADVICE_MTBF_SOURCE values
  integer(c_int), parameter :: CD_ADVICE_INTERVAL = 0
  integer(c_int), parameter :: CD_ADVICE_YOUNG_INTERVAL = 1
  integer(c_int), parameter :: CD_ADVICE_ADVANCE_COST = 2
  integer(c_int), parameter :: CD_ADVICE_RESTORE_COST = 3
  integer(c_int), parameter :: CD_ADVICE_MTBF = 4
  integer(c_int), parameter :: CD_ADVICE_MTBF_SOURCE = 5
  integer(c_int), parameter :: CD_ADVICE_ADVANCES = 6
  integer(c_int), parameter :: CD_ADVICE_RESTORES = 7
  integer(c_int), parameter :: CD_MTBF_UNKNOWN = 0
  integer(c_int), parameter :: CD_MTBF_OBSERVED = 1
  integer(c_int), parameter :: CD_MTBF_GIVEN = 2

  ! Results
  ! BEGIN result codes: generated from the library's table by cd-ffi/tests/header.rs
  integer(c_int), parameter :: SUCCESS = 0
  integer(c_int), parameter :: FAILURE = -1
  integer(c_int), parameter :: CD_ERR_INVALID_HANDLE = 1
  integer(c_int), parameter :: CD_ERR_STALE_HANDLE = 2
  integer(c_int), parameter :: CD_ERR_NO_ACTIVE_CD = 3
  integer(c_int), parameter :: CD_ERR_REENTRANT = 4
  integer(c_int), parameter :: CD_ERR_ROOT_INHERITS_LOGGING = 10
  integer(c_int), parameter :: CD_ERR_LOGGING_MISMATCH = 11
  integer(c_int), parameter :: CD_ERR_CHILD_NAMED = 12
  integer(c_int), parameter :: CD_ERR_DUPLICATE_NAME = 13
  integer(c_int), parameter :: CD_ERR_BAD_NAME = 14
  integer(c_int), parameter :: CD_ERR_STORAGE_INFO = 15
  integer(c_int), parameter :: CD_ERR_ZERO_LENGTH = 20
  integer(c_int), parameter :: CD_ERR_NULL_ADDRESS = 21
  integer(c_int), parameter :: CD_ERR_ADDRESS_OVERFLOW = 22
  integer(c_int), parameter :: CD_ERR_OVERLAPPING_LIST = 23
  integer(c_int), parameter :: CD_ERR_READ_WRITE_REGEN = 24
  integer(c_int), parameter :: CD_ERR_PROMOTE_REGEN = 25
  integer(c_int), parameter :: CD_ERR_SCOPE_CHANGE = 26
  integer(c_int), parameter :: CD_ERR_NOT_IN_ANCESTOR = 27
  integer(c_int), parameter :: CD_ERR_REGEN_ANCESTOR = 28
  integer(c_int), parameter :: CD_ERR_NO_PARENT = 29
  integer(c_int), parameter :: CD_ERR_RANGE_NOT_FOUND = 30
  integer(c_int), parameter :: CD_ERR_STRADDLES_MEMORY_SPACE = 31
  integer(c_int), parameter :: CD_ERR_REGION_OVERLAP = 32
  integer(c_int), parameter :: CD_ERR_UNKNOWN_MEMORY_SPACE = 33
  integer(c_int), parameter :: CD_ERR_REGION_NOT_FOUND = 34
  integer(c_int), parameter :: CD_ERR_REGION_IN_USE = 35
  integer(c_int), parameter :: CD_ERR_REMAP_REFUSED = 36
  integer(c_int), parameter :: CD_ERR_FILE_NOT_SEEKABLE = 40
  integer(c_int), parameter :: CD_ERR_FILE_NOT_FOUND = 41
  integer(c_int), parameter :: CD_ERR_HAS_CHILDREN = 50
  integer(c_int), parameter :: CD_ERR_CONCURRENT_OPERATION = 51
  integer(c_int), parameter :: CD_ERR_OUT_OF_MEMORY = 60
  integer(c_int), parameter :: CD_ERR_DEVICE_COPY = 61
  integer(c_int), parameter :: CD_ERR_REGEN_FAILED = 62
  integer(c_int), parameter :: CD_ERR_PARENT_DATA_MISSING = 63
  integer(c_int), parameter :: CD_ERR_INJECTED_FAULT = 64
  integer(c_int), parameter :: CD_ERR_MEMORY_LIMIT = 65
  integer(c_int), parameter :: CD_ERR_LOGGING_DISABLED = 70
  integer(c_int), parameter :: CD_ERR_LOG_REPLAYING = 71
  integer(c_int), parameter :: CD_ERR_EMPTY_LOG_ENTRY = 72
  integer(c_int), parameter :: CD_ERR_RESTORE_REFUSED = 73
  integer(c_int), parameter :: CD_ERR_UNREPLAYABLE = 74
  integer(c_int), parameter :: CD_ERR_PERSIST = 75
  integer(c_int), parameter :: CD_ERR_PERSIST_MISMATCH = 76
  integer(c_int), parameter :: CD_ERR_PERSIST_IN_FLIGHT = 78
  integer(c_int), parameter :: CD_ERR_NULL_HANDLE = 100
  integer(c_int), parameter :: CD_ERR_NULL_POINTER = 101
  integer(c_int), parameter :: CD_ERR_NEGATIVE_COUNT = 102
  integer(c_int), parameter :: CD_ERR_EMPTY_LIST = 103
  integer(c_int), parameter :: CD_ERR_INVALID_ENUM = 104
  integer(c_int), parameter :: CD_ERR_INVALID_STRING = 105
  integer(c_int), parameter :: CD_ERR_BUFFER_TOO_SMALL = 106
  integer(c_int), parameter :: CD_ERR_PANIC = 107
  ! END result codes

  ! The shape of a regen function written in Fortran:
  !   integer(c_int) function my_regen(addrlist, ascount) bind(C)
  ! passed to add_to_cd_via_regen as c_funloc(my_regen).
  abstract interface
    function cd_regen_function(addrlist, ascount) bind(C)
      import :: c_int, cd_addrspec
      integer(c_int) :: cd_regen_function
      type(cd_addrspec), intent(inout) :: addrlist(*)
      integer(c_int), value :: ascount
    end function cd_regen_function
  end interface

  interface
    ! cd_handle create_cd(cd_handle parent, const char *storage_info, int log_comm,
    !                     const char *name, int *error)
    function create_cd(parent_cd, storage_info, log_comm, name, error) bind(C)
      import :: c_ptr, c_int
      type(c_ptr) :: create_cd                 ! cd_handle (c_null_ptr on error)
      type(c_ptr), value :: parent_cd          ! cd_handle: c_null_ptr for a root
      type(c_ptr), value :: storage_info       ! char *: c_null_ptr or c_loc(string)
      integer(c_int), value :: log_comm        ! COMM_LOGGING_*
      type(c_ptr), value :: name               ! char *: c_null_ptr or c_loc(string)
      integer(c_int), intent(out) :: error     ! int * (out)
    end function create_cd

    function commit_cd(cd) bind(C)
      import :: c_ptr, c_int
      integer(c_int) :: commit_cd
      type(c_ptr), value :: cd
    end function commit_cd

    function restore_cd(cd) bind(C)
      import :: c_ptr, c_int
      integer(c_int) :: restore_cd
      type(c_ptr), value :: cd
    end function restore_cd

    function advance_cd_point_in_time(cd) bind(C)
      import :: c_ptr, c_int
      integer(c_int) :: advance_cd_point_in_time  ! SUCCESS or FAILURE
      type(c_ptr), value :: cd
    end function advance_cd_point_in_time

    function add_to_cd_via_copy(cd, addrlist, ascount) bind(C)
      import :: c_ptr, c_int, cd_addrspec
      integer(c_int) :: add_to_cd_via_copy
      type(c_ptr), value :: cd
      type(cd_addrspec), intent(in) :: addrlist(*)
      integer(c_int), value :: ascount
    end function add_to_cd_via_copy

    function add_to_cd_via_parent(cd, addrlist, ascount) bind(C)
      import :: c_ptr, c_int, cd_addrspec
      integer(c_int) :: add_to_cd_via_parent
      type(c_ptr), value :: cd
      type(cd_addrspec), intent(in) :: addrlist(*)
      integer(c_int), value :: ascount
    end function add_to_cd_via_parent

    function add_to_cd_via_regen(cd, addrlist, ascount, regen) bind(C)
      import :: c_ptr, c_int, c_funptr, cd_addrspec
      integer(c_int) :: add_to_cd_via_regen
      type(c_ptr), value :: cd
      type(cd_addrspec), intent(in) :: addrlist(*)
      integer(c_int), value :: ascount
      type(c_funptr), value :: regen            ! c_funloc of a cd_regen_function
    end function add_to_cd_via_regen

    function delete_from_cd(cd, addrlist, ascount) bind(C)
      import :: c_ptr, c_int, cd_addrspec
      integer(c_int) :: delete_from_cd
      type(c_ptr), value :: cd
      type(cd_addrspec), intent(in) :: addrlist(*)
      integer(c_int), value :: ascount
    end function delete_from_cd

    function add_file_to_cd(cd, filedes) bind(C)
      import :: c_ptr, c_int
      integer(c_int) :: add_file_to_cd
      type(c_ptr), value :: cd
      integer(c_int), value :: filedes
    end function add_file_to_cd

    function delete_file_from_cd(cd, filedes) bind(C)
      import :: c_ptr, c_int
      integer(c_int) :: delete_file_from_cd
      type(c_ptr), value :: cd
      integer(c_int), value :: filedes
    end function delete_file_from_cd

    ! The MPI interposition layer's functions (logent must come from malloc).
    function add_MPI_log_to_cd(cd, logent, loglen) bind(C, name="add_MPI_log_to_cd")
      import :: c_ptr, c_int
      integer(c_int) :: add_MPI_log_to_cd
      type(c_ptr), value :: cd
      type(c_ptr), value :: logent
      integer(c_int), value :: loglen
    end function add_MPI_log_to_cd

    function get_MPI_log_from_cd(cd, error) bind(C, name="get_MPI_log_from_cd")
      import :: c_ptr, c_int
      type(c_ptr) :: get_MPI_log_from_cd
      type(c_ptr), value :: cd
      integer(c_int), intent(out) :: error
    end function get_MPI_log_from_cd

    ! The next replayed entry with its length (read-only bytes; entry is c_null_ptr at the end).
    function cd_get_MPI_log_entry(cd, entry, length) bind(C, name="cd_get_MPI_log_entry")
      import :: c_ptr, c_int, c_size_t
      integer(c_int) :: cd_get_MPI_log_entry
      type(c_ptr), value :: cd
      type(c_ptr), intent(out) :: entry
      integer(c_size_t), intent(out) :: length
    end function cd_get_MPI_log_entry

    function delete_MPI_log_from_cd(cd) bind(C, name="delete_MPI_log_from_cd")
      import :: c_ptr, c_int
      integer(c_int) :: delete_MPI_log_from_cd
      type(c_ptr), value :: cd
    end function delete_MPI_log_from_cd

    ! Errors
    function cd_last_error() bind(C)
      import :: c_int
      integer(c_int) :: cd_last_error
    end function cd_last_error

    ! Copies the description of code into buf (at most len-1 characters and a NUL); n gets
    ! the characters copied: print buf(1:n).
    function cd_error_message(code, buf, len, n) bind(C)
      import :: c_int, c_char, c_size_t
      integer(c_int) :: cd_error_message
      integer(c_int), value :: code
      character(kind=c_char), intent(out) :: buf(*)
      integer(c_size_t), value :: len
      integer(c_size_t), intent(out) :: n
    end function cd_error_message

    function cd_last_error_message(buf, len, n) bind(C)
      import :: c_int, c_char, c_size_t
      integer(c_int) :: cd_last_error_message
      character(kind=c_char), intent(out) :: buf(*)
      integer(c_size_t), value :: len
      integer(c_size_t), intent(out) :: n
    end function cd_last_error_message

    ! Extensions
    function cd_get_stats(cd, out) bind(C)
      import :: c_ptr, c_int, cd_stats
      integer(c_int) :: cd_get_stats
      type(c_ptr), value :: cd
      type(cd_stats), intent(out) :: out
    end function cd_get_stats

    function cd_global_stats(out) bind(C)
      import :: c_int, cd_stats
      integer(c_int) :: cd_global_stats
      type(cd_stats), intent(out) :: out
    end function cd_global_stats

    function cd_get_info(cd, out) bind(C)
      import :: c_ptr, c_int, cd_info
      integer(c_int) :: cd_get_info
      type(c_ptr), value :: cd
      type(cd_info), intent(out) :: out
    end function cd_get_info

    function cd_read_saved(cd, address, length, out) bind(C)
      import :: c_ptr, c_int, c_size_t
      integer(c_int) :: cd_read_saved
      type(c_ptr), value :: cd
      type(c_ptr), value :: address
      integer(c_size_t), value :: length
      type(c_ptr), value :: out
    end function cd_read_saved

    ! Whether a persistent root CD recovered a persisted version at create (0: none).
    function cd_recovered_version(cd, version) bind(C)
      import :: c_ptr, c_int, c_int64_t
      integer(c_int) :: cd_recovered_version
      type(c_ptr), value :: cd
      integer(c_int64_t), intent(out) :: version
    end function cd_recovered_version

    function cd_current() bind(C)
      import :: c_ptr
      type(c_ptr) :: cd_current
    end function cd_current

    function cd_validate_handle(cd) bind(C)
      import :: c_ptr, c_int
      integer(c_int) :: cd_validate_handle
      type(c_ptr), value :: cd
    end function cd_validate_handle

    ! One value of the advice on when to advance (known = 0: not known yet, value 0).
    function cd_get_advice(cd, what, value, known) bind(C)
      import :: c_ptr, c_int, c_int64_t
      integer(c_int) :: cd_get_advice
      type(c_ptr), value :: cd
      integer(c_int), value :: what
      integer(c_int64_t), intent(out) :: value
      integer(c_int), intent(out) :: known
    end function cd_get_advice

    function cd_set_rank(rank) bind(C)
      import :: c_int
      integer(c_int) :: cd_set_rank
      integer(c_int), value :: rank
    end function cd_set_rank

    ! Device memory: copy functions are bind(C) functions passed with c_funloc:
    !   integer(c_int) function copy(dst, src, n, ctx) bind(C)
    !     type(c_ptr), value :: dst, src, ctx;  integer(c_size_t), value :: n
    function cd_register_memory_space(name, copy_to_host, copy_to_device, ctx, space_id) bind(C)
      import :: c_ptr, c_funptr, c_int
      integer(c_int) :: cd_register_memory_space
      type(c_ptr), value :: name
      type(c_funptr), value :: copy_to_host
      type(c_funptr), value :: copy_to_device
      type(c_ptr), value :: ctx
      integer(c_int), intent(out) :: space_id
    end function cd_register_memory_space

    function cd_map_device_region(space, address, length) bind(C)
      import :: c_ptr, c_int, c_size_t
      integer(c_int) :: cd_map_device_region
      integer(c_int), value :: space
      type(c_ptr), value :: address
      integer(c_size_t), value :: length
    end function cd_map_device_region

    function cd_unmap_device_region(address) bind(C)
      import :: c_ptr, c_int
      integer(c_int) :: cd_unmap_device_region
      type(c_ptr), value :: address
    end function cd_unmap_device_region

    ! An advance that drains device ranges in the background (stream: a CUstream, or
    ! c_null_ptr for the default stream); cd_advance_test sets done to 1 once it is current.
    function cd_advance_async(cd, stream, in_flight) bind(C)
      import :: c_int, c_ptr
      integer(c_int) :: cd_advance_async
      type(c_ptr), value :: cd
      type(c_ptr), value :: stream
      integer(c_int), intent(out) :: in_flight
    end function cd_advance_async

    function cd_advance_test(cd, done) bind(C)
      import :: c_int, c_ptr
      integer(c_int) :: cd_advance_test
      type(c_ptr), value :: cd
      integer(c_int), intent(out) :: done
    end function cd_advance_test

    function cd_advance_wait(cd) bind(C)
      import :: c_int, c_ptr
      integer(c_int) :: cd_advance_wait
      type(c_ptr), value :: cd
    end function cd_advance_wait

    ! After a GPU reset: cd_device_reset, then cd_remap_device_region for arrays that came
    ! back at other addresses, then restore_cd.
    function cd_device_reset() bind(C)
      import :: c_int
      integer(c_int) :: cd_device_reset
    end function cd_device_reset

    function cd_remap_device_region(from, to, length) bind(C)
      import :: c_ptr, c_int, c_size_t
      integer(c_int) :: cd_remap_device_region
      type(c_ptr), value :: from, to
      integer(c_size_t), value :: length
    end function cd_remap_device_region
  end interface
end module Containment_Domains
