//! In-job recovery's stand-ins for the persistent requests it starts itself. Inside a CD that
//! logs, the engine tracks the application's handle of such a request while its activation is
//! another request (`crate::recovery`'s kept requests, started on the repaired world); the
//! drain at a restore and the end of a replay reach MPI through these, which recovery
//! registers at `MPI_Init` in a ULFM job that contains losses. A receive the drain cancelled
//! is posted again at the end of the replay through recovery too, so that it survives a loss
//! like the one it stands for.

use crate::abi::{Comm, Datatype, Request};
use std::ffi::{c_int, c_void};
use std::sync::OnceLock;

/// What recovery lends the engine.
pub(crate) struct Activations {
    /// The activation standing in MPI for the kept request `handle`, if it is active; with
    /// `ends` the drain completes or cancels it, and the request is inactive from then on.
    pub(crate) standing: fn(Request, bool) -> Option<Request>,
    /// Starts the kept request `handle` again as it was last started (`None`: not one).
    ///
    /// # Safety
    /// Its buffer is the application's, valid until the activation completes (MPI's contract
    /// for `MPI_Start`).
    pub(crate) start: unsafe fn(Request) -> Option<c_int>,
    /// Posts a receive again as recovery posts the application's (`None`: not one it covers).
    ///
    /// # Safety
    /// `MPI_Irecv`'s contract.
    pub(crate) receive: ReceiveFn,
}

/// [`Activations::receive`]: `MPI_Irecv`'s arguments.
pub(crate) type ReceiveFn =
    unsafe fn(*mut c_void, c_int, Datatype, c_int, c_int, Comm, *mut Request) -> Option<c_int>;

static ACTIVATIONS: OnceLock<Activations> = OnceLock::new();

/// Registers recovery's stand-ins (once).
pub(crate) fn register(activations: Activations) {
    let _ = ACTIVATIONS.set(activations);
}

/// [`Activations::standing`], where registered.
pub(super) fn standing(handle: Request, ends: bool) -> Option<Request> {
    ACTIVATIONS.get().and_then(|a| (a.standing)(handle, ends))
}

/// [`Activations::start`], where registered.
///
/// # Safety
/// As [`Activations::start`].
pub(super) unsafe fn start(handle: Request) -> Option<c_int> {
    // SAFETY: the caller's contract.
    ACTIVATIONS.get().and_then(|a| unsafe { (a.start)(handle) })
}

/// [`Activations::receive`], where registered.
///
/// # Safety
/// As [`Activations::receive`].
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn receive(
    buf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    source: c_int,
    tag: c_int,
    comm: Comm,
    request: *mut Request,
) -> Option<c_int> {
    // SAFETY: the caller's contract.
    ACTIVATIONS
        .get()
        .and_then(|a| unsafe { (a.receive)(buf, count, datatype, source, tag, comm, request) })
}
