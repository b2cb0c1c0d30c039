! The spec's "Simple API Use Example" in Fortran: a GPU kernel loop protected by a root CD,
! with a simulated GPU whose memory only its copy functions (registered with libcd as a device
! memory space, written here in Fortran with bind(C)) and its kernel touch. A kernel launch
! fails at random (CD_FAULT_RATE, default 0.05; CD_SEED picks the pattern), leaving device
! memory garbage; the program reboots the GPU and restores the CD. At the end the result is
! compared with a fault-free run. This is the recipe for devices other than CUDA; CUDA memory
! needs no copy functions (libcd's built-in CUDA space): tests/fortran/cuda.f90 shows the
! calls from Fortran.
!
! Build: gfortran -O2 -I$(pkg-config --variable=fmoddir cd) simple_gpu.f90 $(pkg-config --libs cd)
module simulated_gpu
  use, intrinsic :: iso_c_binding
  implicit none
  integer, parameter :: state_words = 16384
  integer(c_int64_t), allocatable, target :: device_memory(:)  ! the GPU's memory
  integer(c_int64_t), target :: gpu_result
  logical :: gpu_failed = .false.
  integer :: faults = 0
  real :: fault_rate = 0.05
  integer(c_int64_t) :: rng = 88172645463325252_c_int64_t
contains
  ! cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost), for libcd
  integer(c_int) function copy_to_host(dst, src_dev, n, ctx) bind(C)
    type(c_ptr), value :: dst, src_dev, ctx
    integer(c_size_t), value :: n
    integer(c_int8_t), pointer :: d(:), s(:)
    call c_f_pointer(dst, d, [n])
    call c_f_pointer(src_dev, s, [n])
    d = s
    copy_to_host = merge(0_c_int, 0_c_int, c_associated(ctx))
  end function copy_to_host

  ! cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice), for libcd
  integer(c_int) function copy_to_device(dst_dev, src, n, ctx) bind(C)
    type(c_ptr), value :: dst_dev, src, ctx
    integer(c_size_t), value :: n
    integer(c_int8_t), pointer :: d(:), s(:)
    call c_f_pointer(dst_dev, d, [n])
    call c_f_pointer(src, s, [n])
    d = s
    copy_to_device = merge(0_c_int, 0_c_int, c_associated(ctx))
  end function copy_to_device

  real function random_unit()
    rng = ieor(rng, ishft(rng, 13))
    rng = ieor(rng, ishft(rng, -7))
    rng = ieor(rng, ishft(rng, 17))
    random_unit = real(iand(ishft(rng, -11), 16777215_c_int64_t)) / 16777216.0
  end function random_unit

  subroutine load_gpu_kernel()
    gpu_failed = .false.
  end subroutine load_gpu_kernel

  subroutine reboot_gpu()
    device_memory = 0
    gpu_failed = .false.
  end subroutine reboot_gpu

  ! One launch: updates every state word and the result; may fail.
  subroutine run_gpu_kernel(i, j)
    integer(c_int64_t), intent(in) :: i, j
    integer :: k
    gpu_result = 0
    do k = 1, state_words
      device_memory(k) = mod(device_memory(k) * 1103_c_int64_t + i * 1000 + j + k, &
                             2147483647_c_int64_t)
      gpu_result = mod(gpu_result * 31_c_int64_t + device_memory(k), 2147483647_c_int64_t)
    end do
    if (random_unit() < fault_rate) then
      device_memory = -559038737_c_int64_t   ! garbage
      gpu_failed = .true.
      faults = faults + 1
    end if
  end subroutine run_gpu_kernel
end module simulated_gpu

program simple_gpu
  use, intrinsic :: iso_c_binding
  use Containment_Domains
  use simulated_gpu
  implicit none
  integer, parameter :: n_cd = 10, outer = 100
  integer(c_int64_t), target :: node_copy_of_result = 0, checksum = 0, i = 1, j = 1
  integer(c_int64_t) :: expected, r
  integer(c_int64_t), allocatable :: state(:)
  type(cd_addrspec) :: as(5)
  type(cd_stats) :: st
  type(c_ptr) :: cd
  integer(c_int) :: error, space
  logical :: failed
  character(len=32) :: env
  integer :: length, status, k
  character(kind=c_char), target :: name(5) = ['r', 'o', 'o', 't', c_null_char]

  call get_environment_variable('CD_FAULT_RATE', env, length, status)
  if (status == 0) read (env, *) fault_rate
  call get_environment_variable('CD_SEED', env, length, status)
  if (status == 0) then
    read (env, *) k
    rng = ieor(rng, int(k, c_int64_t) * 2654435761_c_int64_t)
  end if
  allocate (device_memory(state_words))
  device_memory = 0
  call must(cd_register_memory_space(c_null_ptr, c_funloc(copy_to_host), &
                                     c_funloc(copy_to_device), c_null_ptr, space), 'register')
  call must(cd_map_device_region(space, c_loc(device_memory), &
                                 int(state_words, c_size_t) * 8_c_size_t), 'map')

  as(1) = cd_addrspec(c_loc(device_memory), int(state_words, c_size_t) * 8_c_size_t, &
                      READ_WRITE, GLOBAL)
  as(2) = cd_addrspec(c_loc(node_copy_of_result), 8_c_size_t, READ_WRITE, GLOBAL)
  as(3) = cd_addrspec(c_loc(i), 8_c_size_t, READ_WRITE, GLOBAL)
  as(4) = cd_addrspec(c_loc(j), 8_c_size_t, READ_WRITE, GLOBAL)
  as(5) = cd_addrspec(c_loc(checksum), 8_c_size_t, READ_WRITE, GLOBAL)
  cd = create_cd(c_null_ptr, c_null_ptr, COMM_LOGGING_ENABLED, c_loc(name), error)
  call must(error, 'create_cd')
  call load_gpu_kernel()
  do while (i <= outer)
    call must(add_to_cd_via_copy(cd, as, 5_c_int), 'add_to_cd_via_copy')
    failed = .false.
    do j = 1, n_cd
      call run_gpu_kernel(i, j)
      failed = gpu_failed
      if (.not. failed) node_copy_of_result = gpu_result   ! copy_from_gpu
      if (failed) then
        call reboot_gpu()
        call load_gpu_kernel()
        call must(restore_cd(cd), 'restore_cd')
        exit
      end if
      ! instead of MPI_Send/MPI_Recv: fold the result into a checksum
      checksum = mod(checksum * 7_c_int64_t + ieor(node_copy_of_result, i), 2147483647_c_int64_t)
    end do
    if (.not. failed) then
      i = i + 1
      if (advance_cd_point_in_time(cd) == FAILURE) then
        call reboot_gpu()
        call load_gpu_kernel()
        call must(restore_cd(cd), 'restore_cd')
      end if
    end if
  end do
  call must(cd_get_stats(cd, st), 'cd_get_stats')
  call must(commit_cd(cd), 'commit_cd')
  call must(cd_unmap_device_region(c_loc(device_memory)), 'unmap')

  ! The fault-free run.
  allocate (state(state_words))
  state = 0
  expected = 0
  do i = 1, outer
    do j = 1, n_cd
      r = 0
      do k = 1, state_words
        state(k) = mod(state(k) * 1103_c_int64_t + i * 1000 + j + k, 2147483647_c_int64_t)
        r = mod(r * 31_c_int64_t + state(k), 2147483647_c_int64_t)
      end do
      expected = mod(expected * 7_c_int64_t + ieor(r, i), 2147483647_c_int64_t)
    end do
  end do
  print '(a,i0,a,i0,a,i0,a)', 'simple_gpu: ', faults, ' faults met, ', st%restores, &
    ' restores, ', st%advances, ' advances'
  if (checksum == expected) then
    print '(a,i0,a)', 'simple_gpu: result ', checksum, ' equals the fault-free run'
  else
    print '(a,i0,a,i0)', 'simple_gpu: result ', checksum, ' DIFFERS from the fault-free run ', &
      expected
    error stop 1
  end if

contains

  subroutine must(rc, what)
    integer(c_int), intent(in) :: rc
    character(len=*), intent(in) :: what
    if (rc /= SUCCESS) then
      print '(a,a,i0)', what, ' failed: ', rc
      error stop 1
    end if
  end subroutine must
end program simple_gpu
