! The built-in CUDA space from Fortran: device arrays from the CUDA driver (reached with dlopen
! and dlsym, as a Fortran code without a CUDA binding can) in a CD with no callbacks, an
! asynchronous advance (cd_advance_async, cd_advance_test, cd_advance_wait), then a GPU reset
! with a drain in flight, cd_device_reset, new arrays at other addresses and
! cd_remap_device_region (with a refusal), and a restore into them. The test driver
! (cd-ffi/tests/fortran.rs) runs it with CD_CUDA_LIBRARY naming the stand-in driver
! (cd-cuda/standin/cuda_standin.c): asynchronous copies run only when synchronised, and
! cuStandinReset plays cudaDeviceReset.
program cuda
  use, intrinsic :: iso_c_binding
  use Containment_Domains
  use test_checks
  implicit none

  abstract interface
    function init_fn(flags) bind(C)
      import :: c_int
      integer(c_int) :: init_fn
      integer(c_int), value :: flags
    end function init_fn
    function alloc_fn(p, n) bind(C)
      import :: c_int, c_long_long, c_size_t
      integer(c_int) :: alloc_fn
      integer(c_long_long), intent(out) :: p
      integer(c_size_t), value :: n
    end function alloc_fn
    function retain_fn(ctx, ordinal) bind(C)
      import :: c_int, c_ptr
      integer(c_int) :: retain_fn
      type(c_ptr), intent(out) :: ctx
      integer(c_int), value :: ordinal
    end function retain_fn
    function push_fn(ctx) bind(C)
      import :: c_int, c_ptr
      integer(c_int) :: push_fn
      type(c_ptr), value :: ctx
    end function push_fn
    function pop_fn(ctx) bind(C)
      import :: c_int, c_ptr
      integer(c_int) :: pop_fn
      type(c_ptr), intent(out) :: ctx
    end function pop_fn
    function htod_fn(dst, src, n) bind(C)
      import :: c_int, c_long_long, c_ptr, c_size_t
      integer(c_int) :: htod_fn
      integer(c_long_long), value :: dst
      type(c_ptr), value :: src
      integer(c_size_t), value :: n
    end function htod_fn
    function dtoh_fn(dst, src, n) bind(C)
      import :: c_int, c_long_long, c_ptr, c_size_t
      integer(c_int) :: dtoh_fn
      type(c_ptr), value :: dst
      integer(c_long_long), value :: src
      integer(c_size_t), value :: n
    end function dtoh_fn
    subroutine hook_fn() bind(C)
    end subroutine hook_fn
  end interface

  interface
    function dlopen(name, flags) bind(C, name="dlopen")
      import :: c_char, c_int, c_ptr
      type(c_ptr) :: dlopen
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), value :: flags
    end function dlopen
    ! dlsym's void * taken as a procedure pointer, as POSIX allows for functions.
    function dlsym(handle, name) bind(C, name="dlsym")
      import :: c_char, c_funptr, c_ptr
      type(c_funptr) :: dlsym
      type(c_ptr), value :: handle
      character(kind=c_char), intent(in) :: name(*)
    end function dlsym
  end interface

  integer(c_int), parameter :: RTLD_NOW = 2
  integer, parameter :: n = 65536
  integer(c_size_t), parameter :: bytes = 4_c_size_t * n
  integer(c_int32_t), target :: host(n)
  procedure(alloc_fn), pointer :: cu_alloc
  procedure(retain_fn), pointer :: cu_retain
  procedure(push_fn), pointer :: cu_push
  procedure(pop_fn), pointer :: cu_pop
  procedure(htod_fn), pointer :: cu_htod
  procedure(dtoh_fn), pointer :: cu_dtoh
  procedure(init_fn), pointer :: cu_init
  procedure(hook_fn), pointer :: standin_reset
  type(c_ptr) :: lib, cd
  type(cd_addrspec) :: as(2)
  character(len=4096) :: path
  character(kind=c_char), target :: name(5) = ['g', 'p', 'u', 'f', c_null_char]
  integer(c_long_long) :: a, b, a2, b2
  integer(c_int) :: err, in_flight, done
  integer :: length, status

  call get_environment_variable('CD_CUDA_LIBRARY', path, length, status)
  call check(status == 0, 'CD_CUDA_LIBRARY names the driver library')
  lib = dlopen(trim(path)//c_null_char, RTLD_NOW)
  call check(c_associated(lib), 'dlopen')
  call c_f_procpointer(symbol('cuInit'), cu_init)
  call c_f_procpointer(symbol('cuMemAlloc_v2'), cu_alloc)
  call c_f_procpointer(symbol('cuDevicePrimaryCtxRetain'), cu_retain)
  call c_f_procpointer(symbol('cuCtxPushCurrent_v2'), cu_push)
  call c_f_procpointer(symbol('cuCtxPopCurrent_v2'), cu_pop)
  call c_f_procpointer(symbol('cuMemcpyHtoD_v2'), cu_htod)
  call c_f_procpointer(symbol('cuMemcpyDtoH_v2'), cu_dtoh)
  call c_f_procpointer(symbol('cuStandinReset'), standin_reset)
  call check(cu_init(0_c_int) == 0, 'cuInit')

  a = device_alloc()
  b = device_alloc()
  call kernel(a, 1)
  call kernel(b, 1)
  cd = create_cd(c_null_ptr, c_null_ptr, COMM_LOGGING_DISABLED, c_loc(name), err)
  call check(err == SUCCESS .and. c_associated(cd), 'create_cd')
  as(1) = cd_addrspec(transfer(a, c_null_ptr), bytes, READ_WRITE, GLOBAL)
  as(2) = cd_addrspec(transfer(b, c_null_ptr), bytes, READ_WRITE, GLOBAL)
  call check(add_to_cd_via_copy(cd, as, 2_c_int) == SUCCESS, 'add_to_cd_via_copy')

  ! The asynchronous advance: the kernel queued after it is not in the snapshot, and the
  ! point is current once the drain completed.
  call kernel(a, 2)
  call kernel(b, 2)
  call check(cd_advance_async(cd, c_null_ptr, in_flight) == SUCCESS, 'cd_advance_async')
  call check(in_flight == 1, 'the drain runs in the background')
  call check(cd_advance_test(cd, done) == SUCCESS .and. done == 0, 'drain still running')
  call kernel(a, 3)
  call check(cd_advance_wait(cd) == SUCCESS, 'cd_advance_wait')
  call check(cd_advance_test(cd, done) == SUCCESS .and. done == 1, 'drain complete')
  call check(restore_cd(cd) == SUCCESS, 'restore_cd')
  call check(holds(a, 2) .and. holds(b, 2), 'restored the snapshot')

  ! A GPU reset with a drain in flight: the CD stays at its previous point; the arrays come
  ! back at other addresses and the CD's ranges follow them.
  call check(add_to_cd_via_copy(cd, as, 2_c_int) == SUCCESS, 'promotion')
  call kernel(a, 4)
  call kernel(b, 4)
  call check(cd_advance_async(cd, c_null_ptr, in_flight) == SUCCESS, 'cd_advance_async')
  call check(in_flight == 1, 'the second drain runs in the background')
  call standin_reset()
  call check(cd_device_reset() == SUCCESS, 'cd_device_reset')
  a2 = device_alloc()
  b2 = device_alloc()
  call check(a2 /= a .and. b2 /= b, 'new addresses')
  call kernel(a2, 5)
  call kernel(b2, 5)
  call check(cd_remap_device_region(transfer(a, c_null_ptr), transfer(a2, c_null_ptr), bytes) &
             == SUCCESS, 'remap a')
  call check(cd_remap_device_region(transfer(b, c_null_ptr), transfer(a2, c_null_ptr), bytes) &
             == CD_ERR_REMAP_REFUSED, 'remap onto ranges the CD holds is refused')
  call check(cd_remap_device_region(transfer(b, c_null_ptr), transfer(b2, c_null_ptr), bytes) &
             == SUCCESS, 'remap b')
  call check(restore_cd(cd) == SUCCESS, 'restore_cd after the reset')
  call check(holds(a2, 2) .and. holds(b2, 2), 'restored into the new arrays')
  call check(commit_cd(cd) == SUCCESS, 'commit_cd')
  print '(a)', 'cuda: ok'

contains

  function symbol(what) result(f)
    character(len=*), intent(in) :: what
    type(c_funptr) :: f
    f = dlsym(lib, what//c_null_char)
    call check(c_associated(f), what)
  end function symbol

  subroutine enter()
    type(c_ptr) :: ctx
    call check(cu_retain(ctx, 0_c_int) == 0, 'cuDevicePrimaryCtxRetain')
    call check(cu_push(ctx) == 0, 'cuCtxPushCurrent')
  end subroutine enter

  subroutine leave()
    type(c_ptr) :: ctx
    call check(cu_pop(ctx) == 0, 'cuCtxPopCurrent')
  end subroutine leave

  function device_alloc() result(p)
    integer(c_long_long) :: p
    call enter()
    call check(cu_alloc(p, bytes) == 0, 'cuMemAlloc')
    call leave()
  end function device_alloc

  ! A "kernel" filling a device array with `value`: a synchronous copy, ordered after the
  ! work queued on the default stream as a kernel launched there would be.
  subroutine kernel(dev, value)
    integer(c_long_long), intent(in) :: dev
    integer, intent(in) :: value
    host = int(value, c_int32_t)
    call enter()
    call check(cu_htod(dev, c_loc(host), bytes) == 0, 'cuMemcpyHtoD')
    call leave()
  end subroutine kernel

  logical function holds(dev, value)
    integer(c_long_long), intent(in) :: dev
    integer, intent(in) :: value
    call enter()
    call check(cu_dtoh(c_loc(host), dev, bytes) == 0, 'cuMemcpyDtoH')
    call leave()
    holds = all(host == int(value, c_int32_t))
  end function holds
end program cuda
