//! `libcd`: the C API of Containment Domains, as the spec names it (`include/cd.h`).
//!
//! This crate builds `libcd.so` and `libcd.a` over cd-core. C programs include the checked-in
//! header `cd-ffi/include/cd.h`; Fortran programs use the `Containment_Domains` module in
//! `fortran/containment_domains.f90`, which binds the same symbols. `scripts/install.sh`
//! installs both with a pkg-config file (see `cd-ffi/README.md`).
//!
//! # Brief overview
//! - [`api`]: `create_cd`, `commit_cd`, `restore_cd`, `advance_cd_point_in_time`, the three
//!   `add_to_cd_via_*`, `delete_from_cd`, `add_file_to_cd`, `delete_file_from_cd`.
//! - [`mpi_log`]: `add_MPI_log_to_cd`, `get_MPI_log_from_cd`, `delete_MPI_log_from_cd`.
//! - [`error`]: the codes (`SUCCESS`, `FAILURE`, `CD_ERR_*`), `cd_error_string`,
//!   `cd_error_message`, `cd_last_error`, `cd_last_error_message`.
//! - [`types`]: `cd_handle`, `struct cd_addrspec` and the enums of the spec.
//! - [`ext`] and [`device`]: the `cd_` extensions (version, statistics, a CD's description and
//!   saved bytes, device memory spaces).
//! - `trace` (private): `CD_TRACE` installs a `tracing` subscriber when the library is
//!   loaded, so that C and Fortran programs see the spans of every CD and MPI call.
//! - `persist` (private): persistent CDs wired into the MPI interposer (cd-persist's hooks
//!   at `MPI_Init`, its flushes at `MPI_Finalize`, its counters in `CD_MPI_STATS`).
//!
//! # Design
//! - **Handles** are cd-core's generation-tagged handles as 64-bit values (always at least
//!   2^32), cast to `void *`. They are never dereferenced: every call looks them up, so a NULL,
//!   committed, discarded or made-up handle is an error code, never undefined behaviour.
//!   `CURRENT_CD` is `(cd_handle)1`. The library needs 64-bit pointers.
//! - **No panic crosses the boundary.** Every export runs its body through
//!   `boundary::run_int` / `run_ptr` (`catch_unwind`); a panic becomes `CD_ERR_PANIC`. Every
//!   pointer is checked before use; `// SAFETY:` comments state why each unsafe block is sound.
//! - **Errors** are distinct codes: cd-core's stable numbers (1..99) and this layer's own
//!   (100..). `advance_cd_point_in_time` is the one exception: it returns `FAILURE` (-1) on
//!   any failure, because the spec's own code tests `== FAILURE`; the reason is in
//!   `cd_last_error()`, which every function sets.
//! - **The header is generated** by a pinned cbindgen from this crate's source and checked in;
//!   the test `header::checked_in_header_is_current` fails when they differ
//!   (`CD_UPDATE_HEADER=1 cargo test -p cd-ffi header` rewrites it).
//!
//! # Example (C)
//! ```c
//! #include <cd.h>
//! int x = 0, error;
//! struct cd_addrspec as[1] = {{&x, sizeof(x), READ_WRITE, GLOBAL}};
//! cd_handle cd = create_cd(NULL, NULL, COMM_LOGGING_DISABLED, "root", &error);
//! add_to_cd_via_copy(cd, as, 1);
//! x = 42;
//! restore_cd(cd);                  /* x == 0 again */
//! if (advance_cd_point_in_time(cd) == FAILURE)
//!     fprintf(stderr, "%s\n", cd_error_string(cd_last_error()));
//! commit_cd(cd);
//! ```
#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals)]

#[cfg(not(target_pointer_width = "64"))]
compile_error!("libcd hands out 64-bit CD handles as pointers: it needs a 64-bit target");

mod boundary;
mod persist;
mod timeline;
mod trace;

/// The MPI wrappers (`MPI_X` and `PMPI_X`) that libcd exports, from cd-mpi-intercept.
pub use cd_mpi_intercept as mpi_intercept;

pub mod api;
pub mod device;
pub mod error;
pub mod ext;
pub mod mpi_log;
pub mod types;

pub use api::*;
pub use device::*;
pub use error::*;
pub use ext::*;
pub use mpi_log::*;
pub use types::*;
