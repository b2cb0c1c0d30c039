// mpi.h before cd.h in C++ (mpicxx, MPI C++ bindings on): SUCCESS, FAILURE, CURRENT_CD and
// MPI::SUCCESS all compile and mean what they should. See mpi_main.hpp.
#include <mpi.h>
#include <cd.h>

#include "mpi_main.hpp"

int main(int argc, char **argv) { return mpi_main(argc, argv, "mpi_then_cd"); }
