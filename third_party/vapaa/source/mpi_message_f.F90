! SPDX-License-Identifier: MIT

module mpi_message_f
    use iso_c_binding, only: c_int
    implicit none

end module mpi_message_f
