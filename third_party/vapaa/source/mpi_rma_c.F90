! SPDX-License-Identifier: MIT

module mpi_rma_c


end module mpi_rma_c
