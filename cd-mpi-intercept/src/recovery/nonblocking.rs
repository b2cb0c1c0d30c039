//! The nonblocking collectives that survive a lost process: `MPI_Ibarrier`, `MPI_Ibcast`,
//! `MPI_Iallreduce` and `MPI_Iallgather`, the nonblocking forms of the collectives of
//! [`super::calls`], on the same communicators ([`post`] also posts the nonblocking all-forms
//! of [`super::nonblocking_allform`]).
//!
//! Each is posted as the application asked and tracked ([`super::requests`]), within its
//! ordinary handler while a CD logs ([`calls::logged`]): its result goes
//! into the journal when a completion call completes it. A repair that interrupts one gives
//! it the result a survivor served, when some survivor completed it, or posts it again on the
//! rebuilt communicator (every rank that did not complete it does, the replacement when it gets
//! there: nonblocking collectives match only nonblocking ones). A replacement still catching up
//! takes its result at once from what it was served, and its request is already complete.

use super::calls::{self, Chan};
use super::held::Buffers;
use super::requests::{self, Collective, Kind};
use super::{catchup, journal, repair};
use crate::abi::{self, Comm, Datatype, Op, Request};
use crate::pmpi::Call;
use crate::traffic;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicU64, Ordering};

/// Nonblocking collectives posted by this process (their order).
static POSTED: AtomicU64 = AtomicU64::new(0);

/// Posts `kind` (`call`) with its result in `count` of `datatype` at `result`, or serves it (see
/// the module docs). `reads_result`: the call reads the result buffer as its input; `buffers`:
/// what the request holds (an all-form's memory and finish: [`super::held`]).
///
/// # Safety
/// The MPI function's contract: the buffers stay the application's until the request
/// completes.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn post(
    call: Call,
    chan: Chan,
    kind: Kind,
    result: *mut c_void,
    count: c_int,
    datatype: Datatype,
    reads_result: bool,
    request: *mut Request,
    buffers: Buffers,
) -> c_int {
    calls::count_call(call);
    journal::collective_started(chan.0);
    let finishing = buffers.clone();
    let served = |data: Vec<u8>| {
        if traffic::on() {
            traffic::collective(chan.comm());
        }
        // SAFETY: the caller's result buffer.
        if !unsafe { journal::unpack(&data, result, count, datatype) } {
            return abi::ERR_TRUNCATE;
        }
        journal::collective_packed(chan.0, &data);
        finishing.finish();
        // SAFETY: the caller's request.
        unsafe { crate::engine::completed_request(request) }
    };
    if let Some(data) = catchup::next_collective(chan.0) {
        return served(data);
    }
    let collective = Collective {
        channel: chan.0,
        kind,
        result: result.expose_provenance(),
        count,
        datatype,
        // SAFETY: the caller's buffer.
        input: reads_result.then(|| unsafe { journal::pack(result, count, datatype) }),
        seq: POSTED.fetch_add(1, Ordering::Relaxed),
        buffers,
    };
    loop {
        let comm = chan.comm();
        // SAFETY: the caller's buffers and request.
        let rc = repair::covered(|| unsafe { collective.post(comm, request) });
        if rc == abi::SUCCESS {
            // SAFETY: MPI wrote the handle.
            let posted = unsafe { *request };
            if traffic::on() {
                traffic::collective_posted(posted, comm);
            }
            requests::posted_collective(posted, collective);
            return rc;
        }
        // a failure seen at the post: after the repair, served or posted on the rebuilt one
        match calls::after_failure(rc, chan) {
            Err(rc) => return rc,
            Ok(Some(data)) => return served(data),
            Ok(None) => {}
        }
    }
}

/// `MPI_Ibarrier`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn ibarrier(comm: Comm, request: *mut Request) -> c_int {
    let Some(chan) = calls::covers(comm) else {
        // SAFETY: forwarded.
        return unsafe { crate::coll::ibarrier(comm, request) };
    };
    let byte = abi::predefined().byte;
    // SAFETY: an empty result.
    let live = |request| unsafe {
        post(
            Call::Ibarrier,
            chan,
            Kind::Barrier,
            std::ptr::null_mut(),
            0,
            byte,
            false,
            request,
            Buffers::default(),
        )
    };
    if !calls::logged() {
        return live(request);
    }
    // SAFETY: forwarded.
    unsafe { crate::coll::via::ibarrier(comm, request, live, false) }
}

/// `MPI_Ibcast`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn ibcast(
    buffer: *mut c_void,
    count: c_int,
    datatype: Datatype,
    root: c_int,
    comm: Comm,
    request: *mut Request,
) -> c_int {
    let Some(chan) = calls::covers(comm) else {
        // SAFETY: forwarded.
        return unsafe { crate::coll::ibcast(buffer, count, datatype, root, comm, request) };
    };
    // SAFETY: forwarded; the root's buffer is its input.
    let live = |request| unsafe {
        post(
            Call::Ibcast,
            chan,
            Kind::Bcast { root },
            buffer,
            count,
            datatype,
            true,
            request,
            Buffers::default(),
        )
    };
    if !calls::logged() {
        return live(request);
    }
    // SAFETY: forwarded.
    unsafe { crate::coll::via::ibcast(buffer, count, datatype, root, comm, request, live, false) }
}

/// `MPI_Iallreduce`.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn iallreduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    op: Op,
    comm: Comm,
    request: *mut Request,
) -> c_int {
    let Some(chan) = calls::covers(comm) else {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request)
        };
    };
    let in_place = sendbuf.addr() == abi::IN_PLACE;
    let kind = Kind::Allreduce {
        sendbuf: sendbuf.expose_provenance(),
        op,
    };
    // SAFETY: forwarded.
    let live = |request| unsafe {
        post(
            Call::Iallreduce,
            chan,
            kind,
            recvbuf,
            count,
            datatype,
            in_place,
            request,
            Buffers::default(),
        )
    };
    if !calls::logged() {
        return live(request);
    }
    // SAFETY: forwarded.
    unsafe {
        crate::coll::via::iallreduce(
            sendbuf, recvbuf, count, datatype, op, comm, request, live, false,
        )
    }
}

/// `MPI_Iallgather`.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn iallgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Datatype,
    comm: Comm,
    request: *mut Request,
) -> c_int {
    let Some(chan) = calls::covers(comm) else {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::iallgather(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
            )
        };
    };
    let total = recvcount.saturating_mul(crate::pmpi::safe::comm_size(comm));
    let kind = Kind::Allgather {
        sendbuf: sendbuf.expose_provenance(),
        sendcount,
        sendtype,
        recvcount,
    };
    // SAFETY: forwarded; the result is `size` blocks of `recvcount`.
    let live = |request| unsafe {
        post(
            Call::Iallgather,
            chan,
            kind,
            recvbuf,
            total,
            recvtype,
            sendbuf.addr() == abi::IN_PLACE,
            request,
            Buffers::default(),
        )
    };
    if !calls::logged() {
        return live(request);
    }
    // SAFETY: forwarded.
    unsafe {
        crate::coll::via::iallgather(
            sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request, live, false,
        )
    }
}
