//! The exchanges that recovery posts as their parts, each part through recovery's own
//! point-to-point calls ([`super::calls`]: journaled, resent, dropped while a replacement
//! catches up, posted again after a repair, a wildcard source recorded as a choice, and inside
//! a CD that logs, logged and replayed as those calls):
//! - `MPI_Isendrecv` (MPI-4: MPICH 4, Open MPI 5): its receive and its send, under one request
//!   that reports the receive's status ([`super::composite`]). Open MPI 5.0.11's own never
//!   completes once its peer is lost (no failure is reported on it), so no survivor could start
//!   a repair from it;
//! - `MPI_Sendrecv_replace` and `MPI_Isendrecv_replace`: the same from a copy of what is sent
//!   (the receive lands in the buffer the send reads), held until the call completes.
//!
//! On a communicator recovery does not follow they are made as usual (`crate::p2p`,
//! `crate::mpi4`), and a later loss ends the job clearly.

use super::allform::Scratch;
use super::calls;
use crate::abi::{Comm, Datatype, Status};
use crate::pmpi::Call;
use std::ffi::{c_int, c_void};
#[cfg(mpi4)]
use {
    super::composite,
    crate::abi::{self, Request},
    crate::stats,
};

/// `MPI_Sendrecv_replace`.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn sendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: Comm,
    status: *mut Status,
) -> c_int {
    if calls::covers_p2p(comm).is_none() {
        // SAFETY: forwarded.
        return unsafe {
            crate::p2p::sendrecv_replace(
                buf, count, datatype, dest, sendtag, source, recvtag, comm, status,
            )
        };
    }
    // SAFETY: the caller's buffer holds `count` elements of `datatype`.
    let mut sent = unsafe { Scratch::copy_of(buf, count, datatype) };
    // SAFETY: the copy for the send, the caller's buffer for the receive.
    unsafe {
        calls::sendrecv_as(
            Call::Sendrecv_replace,
            sent.buf(),
            count,
            datatype,
            dest,
            sendtag,
            buf,
            count,
            datatype,
            source,
            recvtag,
            comm,
            status,
        )
    }
}

/// `MPI_Isendrecv`.
///
/// # Safety
/// The MPI function's contract.
#[cfg(mpi4)]
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
    if calls::covers_p2p(comm).is_none() {
        // SAFETY: forwarded.
        return unsafe {
            crate::mpi4::isendrecv(
                sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                recvtag, comm, request,
            )
        };
    }
    let send = (sendbuf, sendcount, sendtype, dest, sendtag);
    let receive = (recvbuf, recvcount, recvtype, source, recvtag);
    // SAFETY: the caller's buffers and request (MPI's contract).
    unsafe { exchange(Call::Isendrecv, send, receive, None, comm, request) }
}

/// `MPI_Isendrecv_replace`.
///
/// # Safety
/// The MPI function's contract.
#[cfg(mpi4)]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn isendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: Comm,
    request: *mut Request,
) -> c_int {
    if calls::covers_p2p(comm).is_none() {
        // SAFETY: forwarded.
        return unsafe {
            crate::mpi4::isendrecv_replace(
                buf, count, datatype, dest, sendtag, source, recvtag, comm, request,
            )
        };
    }
    // SAFETY: the caller's buffer holds `count` elements of `datatype`.
    let mut sent = unsafe { Scratch::copy_of(buf, count, datatype) };
    let send = (sent.buf().cast_const(), count, datatype, dest, sendtag);
    let receive = (buf, count, datatype, source, recvtag);
    // SAFETY: the copy, held by the request until it completes, and the caller's buffer and
    // request (MPI's contract).
    unsafe {
        exchange(
            Call::Isendrecv_replace,
            send,
            receive,
            Some(sent),
            comm,
            request,
        )
    }
}

/// A nonblocking exchange's send: buffer, count, datatype, destination, tag.
#[cfg(mpi4)]
type Send = (*const c_void, c_int, Datatype, c_int, c_int);
/// A nonblocking exchange's receive: buffer, count, datatype, source, tag.
#[cfg(mpi4)]
type Receive = (*mut c_void, c_int, Datatype, c_int, c_int);

/// Posts `receive` then `send` on `comm` through recovery's `MPI_Irecv` and `MPI_Isend`, and
/// makes `request` stand for them, reporting the receive's status and holding `copy` (the
/// sent data of a replace form) until both complete; counted as `call`.
///
/// # Safety
/// The buffers are valid until the request completes; `request` is writable.
#[cfg(mpi4)]
unsafe fn exchange(
    call: Call,
    send: Send,
    receive: Receive,
    copy: Option<Scratch>,
    comm: Comm,
    request: *mut Request,
) -> c_int {
    stats::count(call);
    let null = abi::predefined().request_null;
    let (mut received, mut sent) = (null, null);
    let (buf, count, datatype, source, tag) = receive;
    // SAFETY: the caller's contract.
    let rc = unsafe { calls::irecv(buf, count, datatype, source, tag, comm, &mut received) };
    if rc != abi::SUCCESS {
        return rc;
    }
    let (buf, count, datatype, dest, tag) = send;
    // SAFETY: the caller's contract.
    let rc = unsafe { calls::isend(buf, count, datatype, dest, tag, comm, &mut sent) };
    if rc != abi::SUCCESS {
        return rc;
    }
    let held = copy.into_iter().collect();
    // SAFETY: the caller's out-parameter; part 0, the receive, reports.
    unsafe { composite::stand_for(vec![received, sent], held, None, Some(0), request) }
}
