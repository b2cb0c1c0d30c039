! Advice on when to advance from Fortran (cd_get_advice, and the interval cd_get_info
! carries), run with CD_MTBF=100 (seconds): before an advance the cost and the interval are
! not known (value 0); after timed advances of 1 MiB the advance cost is known and positive,
! the MTBF is the one given, Young's interval is sqrt(2 * cost * MTBF), Daly's is below it by
! about 2/3 of the cost, and cd_get_info's advised interval is Daly's.
program advice
  use, intrinsic :: iso_c_binding
  use Containment_Domains
  use test_checks
  implicit none
  integer, parameter :: n = 131072   ! 1 MiB of doubles
  real(c_double), target :: state(n)
  type(cd_addrspec) :: as(1)
  type(cd_info) :: info
  type(c_ptr) :: cd
  character(kind=c_char), target :: name(9) = ['f', '-', 'a', 'd', 'v', 'i', 'c', 'e', c_null_char]
  integer(c_int) :: err
  integer(c_int64_t) :: cost, mtbf, young, daly, source, advances
  real(c_double) :: c, m
  integer :: k

  state = 1.0_c_double
  cd = create_cd(c_null_ptr, c_null_ptr, COMM_LOGGING_DISABLED, c_loc(name), err)
  call check(err == SUCCESS .and. c_associated(cd), 'create_cd')
  call check(get(CD_ADVICE_ADVANCE_COST, cost) == 0, 'no advance cost before an advance')
  call check(get(CD_ADVICE_INTERVAL, daly) == 0, 'no interval before an advance')
  call check(cd_get_info(cd, info) == SUCCESS, 'cd_get_info')
  call check(info%advised_interval_known == 0 .and. info%advised_interval_ns == 0, &
             'no advised interval in cd_get_info before an advance')

  ! The spec's loop: add (promote) before modifying, then advance: each copies 1 MiB.
  as(1) = cd_addrspec(c_loc(state), int(c_sizeof(state), c_size_t), READ_WRITE, GLOBAL)
  do k = 1, 4
    call check(add_to_cd_via_copy(cd, as, 1_c_int) == SUCCESS, 'add_to_cd_via_copy')
    state = state + 1.0_c_double
    call check(advance_cd_point_in_time(cd) == SUCCESS, 'advance_cd_point_in_time')
  end do

  call check(get(CD_ADVICE_ADVANCES, advances) == 1, 'advances counted')
  call check(advances >= 1 .and. advances <= 4, 'one to four advances timed')
  call check(get(CD_ADVICE_ADVANCE_COST, cost) == 1 .and. cost > 0, 'advance cost measured')
  call check(get(CD_ADVICE_MTBF_SOURCE, source) == 1, 'MTBF source known')
  call check(source == int(CD_MTBF_GIVEN, c_int64_t), 'MTBF given by CD_MTBF')
  call check(get(CD_ADVICE_MTBF, mtbf) == 1 .and. mtbf == 100000000000_c_int64_t, 'MTBF 100 s')
  c = real(cost, c_double)
  m = real(mtbf, c_double)
  call check(get(CD_ADVICE_YOUNG_INTERVAL, young) == 1, 'Young interval known')
  call check(abs(real(young, c_double)**2 - 2 * c * m) <= 2 * c * m * 1.0e-3_c_double, &
             'Young interval is sqrt(2 C M)')
  call check(get(CD_ADVICE_INTERVAL, daly) == 1, 'interval known')
  call check(abs(real(daly, c_double) - (real(young, c_double) - 2 * c / 3)) <= c / 100 + 2, &
             'Daly interval is about Young - 2C/3')
  call check(cd_get_info(cd, info) == SUCCESS, 'cd_get_info after the advances')
  call check(info%advised_interval_known == 1 .and. info%advised_interval_ns == daly, &
             'cd_get_info carries the advised interval')
  call check(commit_cd(cd) == SUCCESS, 'commit_cd')
  print '(a,i0,a,i0,a)', 'advice: ok (advance ', cost, ' ns, interval ', daly, ' ns)'

contains

  ! One value of the advice: returns known (1) or not (0, and then the value must be 0).
  integer(c_int) function get(what, value)
    integer(c_int), intent(in) :: what
    integer(c_int64_t), intent(out) :: value
    integer(c_int) :: known
    call check(cd_get_advice(cd, what, value, known) == SUCCESS, 'cd_get_advice')
    call check(known == 1 .or. (known == 0 .and. value == 0), 'an unknown value is 0')
    get = known
  end function get
end program advice
