// cd.h before mpi.h in C++ (mpicxx, MPI C++ bindings on): SUCCESS, FAILURE, CURRENT_CD and
// MPI::SUCCESS all compile and mean what they should. See mpi_main.hpp.
#include <cd.h>
#include <mpi.h>

#include "mpi_main.hpp"

int main(int argc, char **argv) { return mpi_main(argc, argv, "cd_then_mpi"); }
