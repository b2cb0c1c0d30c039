/* The predefined MPI handles, for Rust.
 *
 * MPI defines its predefined handles as macros: integer constants in MPICH, addresses of
 * library globals in Open MPI. Rust cannot expand them, so build.rs generates one function per
 * handle (`cd_mpi_comm_world()`, ...) into cd_shim_generated.h, compiled here with $MPICC.
 * The globals those macros name are declared weak in the same header, so that libcd.so loads
 * in a program without MPI; the functions are only called once MPI is initialized. */
#include "cd_shim_generated.h"
