! SPDX-License-Identifier: MIT

module mpi_win_c


end module mpi_win_c
