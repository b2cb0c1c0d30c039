! SPDX-License-Identifier: MIT

module mpi_message_c


end module mpi_message_c
