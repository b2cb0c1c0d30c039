//! `MPI_Comm_idup` and `MPI_Comm_idup_with_info` in a ULFM job that contains losses: followed
//! like `MPI_Comm_dup` (`crate::derived`), though the new communicator is usable only once the
//! request completes. Its identity is taken when it is posted, as collectives are posted in one
//! order on every rank and complete in any ([`derived::idup_posted`]); its twin is an
//! `MPI_Comm_idup` of the same parent posted with it (a blocking duplicate there could wait for
//! ranks that have not reached the call); both are followed when the application's request,
//! which stands for the two ([`super::composite`]), completes. A replacement re-executing it
//! gets the communicator its repair rebuilt, the request complete at once.
//!
//! Inside a CD that logs, or on a communicator recovery does not follow, it goes to the
//! ordinary handler, and a later loss ends the job clearly (`crate::errors::communicator_made`).
//! So does a loss while the duplicate is still pending (its request is not one recovery
//! finishes on the repaired world).

use super::composite;
use crate::abi::{self, Comm, Request};
use crate::derived::{self, Kin};
use crate::pmpi::{real, Call};
use std::ffi::c_int;

/// `MPI_Comm_idup`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn comm_idup(comm: Comm, newcomm: *mut Comm, request: *mut Request) -> c_int {
    // SAFETY: forwarded.
    unsafe {
        idup(Call::Comm_idup, comm, newcomm, request, |n, r| {
            real::Comm_idup(comm, n, r)
        })
        .unwrap_or_else(|| crate::comm::comm_idup(comm, newcomm, request))
    }
}

/// `MPI_Comm_idup_with_info`.
///
/// # Safety
/// The MPI function's contract.
#[cfg(mpi4)]
pub(crate) unsafe fn comm_idup_with_info(
    comm: Comm,
    info: crate::abi::Info,
    newcomm: *mut Comm,
    request: *mut Request,
) -> c_int {
    // SAFETY: forwarded.
    unsafe {
        idup(Call::Comm_idup_with_info, comm, newcomm, request, |n, r| {
            real::Comm_idup_with_info(comm, info, n, r)
        })
        .unwrap_or_else(|| crate::comm::comm_idup_with_info(comm, info, newcomm, request))
    }
}

/// The duplicate `post` makes of `comm` into `newcomm`, followed (see the module docs);
/// `None` where the ordinary handler takes the call.
///
/// # Safety
/// The MPI function's contract: `newcomm` and `request` are writable, `newcomm` until the
/// request completes.
unsafe fn idup(
    call: Call,
    comm: Comm,
    newcomm: *mut Comm,
    request: *mut Request,
    post: impl FnOnce(*mut Comm, *mut Request) -> c_int,
) -> Option<c_int> {
    let ours = super::keeping()
        && !crate::boundary::inside()
        && !cd_core::logging_anywhere()
        && derived::follows(Call::Comm_dup, comm);
    if !ours {
        return None;
    }
    crate::stats::count(call);
    let in_start = crate::errors::in_start();
    if crate::pmpi::world::is_replacement() {
        if let Some(rebuilt) = derived::prebuilt(comm, Kin::Child, in_start, || None) {
            // SAFETY: the caller's out-parameters.
            return Some(unsafe {
                newcomm.write(rebuilt);
                crate::engine::completed_request(request)
            });
        }
    }
    let id = derived::idup_posted(comm)?;
    let rc = post(newcomm, request);
    if rc != abi::SUCCESS {
        return Some(rc);
    }
    let (mut twin, mut twin_request) =
        (abi::predefined().comm_null, abi::predefined().request_null);
    // SAFETY: our own handles, written by MPI; the same parent, in the same order everywhere.
    let rc = unsafe { real::Comm_idup(comm, &mut twin, &mut twin_request) };
    if rc != abi::SUCCESS {
        return Some(rc);
    }
    // SAFETY: the caller's request, just written.
    let parts = vec![unsafe { *request }, twin_request];
    let place = newcomm.expose_provenance();
    let then: composite::Then = Box::new(move || {
        let newcomm = std::ptr::with_exposed_provenance::<Comm>(place);
        // SAFETY: the application's out-parameter, which MPI's contract keeps until the
        // request completes, now holding the complete duplicate.
        let new = unsafe { newcomm.read() };
        derived::idup_complete(id, new, twin, in_start);
    });
    // SAFETY: the caller's request, now standing for both.
    Some(unsafe { composite::stand_for(parts, Vec::new(), Some(then), None, request) })
}
