// An MPI C++ program against Containment::cd and MPI::MPI_CXX: mpi.h (with the MPI C++
// bindings) and cd.h, then tests/cpp/mpi_main.hpp's logged CD, in which rank 0 restores and
// replays an MPI_Allreduce. Prints "cmake_mpi rank R total 15".
#include <mpi.h>
#include <cd.h>

#include "../cpp/mpi_main.hpp"

int main(int argc, char **argv) { return mpi_main(argc, argv, "cmake_mpi"); }
