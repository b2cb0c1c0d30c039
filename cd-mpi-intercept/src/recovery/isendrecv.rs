//! `MPI_Isendrecv` (MPI-4: MPICH 4, Open MPI 5) when a loss is contained: its receive and its
//! send posted through recovery's `MPI_Irecv` and `MPI_Isend` ([`super::calls`]: journaled,
//! resent, dropped while a replacement catches up, posted again after a repair, a wildcard
//! source recorded as a choice, and inside a CD that logs, logged and replayed as those two),
//! under one request that reports the receive's status ([`super::composite`]). Open MPI
//! 5.0.11's own `MPI_Isendrecv` never completes once its peer is lost (no failure is reported
//! on it), so no survivor could start a repair from it. On a communicator recovery does not
//! follow it is made as usual (`crate::mpi4`), and a later loss ends the job clearly.
//! `MPI_Isendrecv_replace` is made as usual always (its send would have to be copied before its
//! receive lands in the same buffer).

use super::calls;
use super::composite;
use crate::abi::{self, Comm, Datatype, Request};
use crate::pmpi::Call;
use crate::stats;
use std::ffi::{c_int, c_void};

/// `MPI_Isendrecv`.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn isendrecv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Datatype,
    source: c_int,
    recvtag: c_int,
    comm: Comm,
    request: *mut Request,
) -> c_int {
    let ordinary = || {
        // SAFETY: forwarded.
        unsafe {
            crate::mpi4::isendrecv(
                sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                recvtag, comm, request,
            )
        }
    };
    if calls::covers_p2p(comm).is_none() {
        return ordinary();
    }
    stats::count(Call::Isendrecv);
    let null = abi::predefined().request_null;
    let (mut receive, mut send) = (null, null);
    // SAFETY: the caller's receive buffer, its until the request completes (MPI's contract).
    let rc = unsafe {
        calls::irecv(
            recvbuf,
            recvcount,
            recvtype,
            source,
            recvtag,
            comm,
            &mut receive,
        )
    };
    if rc != abi::SUCCESS {
        return rc;
    }
    // SAFETY: the caller's send buffer, likewise.
    let rc = unsafe { calls::isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &mut send) };
    if rc != abi::SUCCESS {
        return rc;
    }
    // SAFETY: the caller's out-parameter; part 0, the receive, reports.
    unsafe { composite::stand_for(vec![receive, send], Vec::new(), None, Some(0), request) }
}
