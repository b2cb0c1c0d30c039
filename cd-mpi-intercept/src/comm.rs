//! Calls that make communicators: their results are logged, so that a re-execution gets the
//! same communicators without the collective call the other ranks would have to join.
//!
//! A communicator freed while a logging CD is active is not freed in MPI but only logged: a
//! restore may re-execute the call that made it, which then hands out the same handle again,
//! and it must still be valid. Such communicators are released by `MPI_Finalize`. (A program
//! that makes and frees a communicator in every iteration of a logged loop therefore holds
//! them until it finalizes.)

use crate::abi::{self, Comm};
use crate::engine::{self, Route};
use crate::exports::{real, Call};
use crate::record::{Header, Writer};
use std::ffi::c_int;

/// A call that makes one communicator into `newcomm`.
///
/// # Safety
/// `newcomm` must be writable.
unsafe fn making(
    call: Call,
    header: Header,
    comm: Comm,
    newcomm: *mut Comm,
    run: impl FnOnce() -> c_int,
) -> c_int {
    match engine::route(call) {
        Route::Direct => run(),
        Route::Record(_guard) => {
            let rc = run();
            if rc == abi::SUCCESS {
                let mut w = Writer::new(header);
                // SAFETY: MPI wrote the new communicator.
                w.u64(unsafe { *newcomm }.bits());
                // SAFETY: no pieces.
                unsafe { engine::log(w) };
            }
            rc
        }
        Route::Replay(_guard, mut reader) => {
            if let Err(code) = engine::expect(&reader, &header, comm) {
                return code;
            }
            match reader.u64() {
                Ok(bits) => {
                    // SAFETY: the application's out-parameter.
                    unsafe { newcomm.write(Comm::from_bits(bits)) };
                    abi::SUCCESS
                }
                Err(_) => engine::corrupt(call, comm),
            }
        }
    }
}

/// `MPI_Comm_dup`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn comm_dup(comm: Comm, newcomm: *mut Comm) -> c_int {
    // SAFETY: forwarded.
    unsafe {
        making(
            Call::Comm_dup,
            Header::plain(Call::Comm_dup, comm),
            comm,
            newcomm,
            || real::Comm_dup(comm, newcomm),
        )
    }
}

/// `MPI_Comm_split`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn comm_split(comm: Comm, color: c_int, key: c_int, newcomm: *mut Comm) -> c_int {
    let header = Header {
        peer: color,
        tag: key,
        ..Header::plain(Call::Comm_split, comm)
    };
    // SAFETY: forwarded.
    unsafe {
        making(Call::Comm_split, header, comm, newcomm, || {
            real::Comm_split(comm, color, key, newcomm)
        })
    }
}

/// `MPI_Comm_free`: logged, and deferred to `MPI_Finalize` while a CD logs (see the module
/// docs).
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn comm_free(comm: *mut Comm) -> c_int {
    // SAFETY: the application's handle.
    let handle = unsafe { *comm };
    let header = Header::plain(Call::Comm_free, handle);
    match engine::route(Call::Comm_free) {
        // SAFETY: forwarded.
        Route::Direct => unsafe { real::Comm_free(comm) },
        Route::Record(_guard) => {
            // SAFETY: no pieces; then the application's handle is nulled as MPI would.
            unsafe {
                engine::log(Writer::new(header));
                comm.write(abi::predefined().comm_null);
            }
            abi::SUCCESS
        }
        Route::Replay(_guard, reader) => match engine::expect(&reader, &header, handle) {
            Ok(()) => {
                // SAFETY: the application's handle.
                unsafe { comm.write(abi::predefined().comm_null) };
                abi::SUCCESS
            }
            Err(code) => code,
        },
    }
}
