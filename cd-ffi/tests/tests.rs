//! cd-ffi's integration tests, one binary (see each module for what belongs in it).
//!
//! - `header`: the checked-in `include/cd.h` is what cbindgen generates from the source.
//! - `c_programs`: the C programs of `tests/c/` (one per spec use case, plus misuse),
//!   compiled with `cc -Wall -Werror` against the installed header and library, and run.
//! - `cpp`: the C++ programs of `tests/cpp/` (`cd.h` with and without `mpi.h`, in both
//!   orders), compiled with g++ and both families' `mpicxx`, and run.
//! - `fortran`: the Fortran programs of `tests/fortran/`, compiled with gfortran against the
//!   installed module, and run.
//! - `examples`: `examples/c/` and `examples/fortran/`, run with faults injected.
//! - `memcheck`: a C program under valgrind: no invalid access, no leak in libcd.
//! - `install`: what `scripts/install.sh` installs, `pkg-config --cflags --libs cd` (the
//!   README's line gives a program that runs), and the tools' `--help`.
//! - `cmake`: the installed CMake package: `tests/cmake/` (C, C++, Fortran) configured against
//!   the prefix, built, installed and run.
//! - `mpi`: the MPI interposer under `mpirun -np 4`: C programs of `tests/mpi/` recover one
//!   rank in isolation, bitwise equal to a fault-free run.

#[path = "../../tests/support/mpi_launch.rs"]
mod mpi_launch;
mod util;

mod c_programs;
mod cmake;
mod cpp;
mod examples;
mod fortran;
mod header;
mod install;
mod memcheck;
mod mpi;
