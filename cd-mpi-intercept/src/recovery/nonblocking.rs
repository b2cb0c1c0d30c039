//! The nonblocking collectives that survive a lost process: `MPI_Ibarrier`, `MPI_Ibcast`,
//! `MPI_Iallreduce` and `MPI_Iallgather`, the nonblocking forms of the collectives of
//! [`super::calls`], on the same communicators; and `MPI_Ireduce` and `MPI_Igather`, run as
//! an `MPI_Iallreduce` and an `MPI_Iallgather` like `MPI_Reduce` and `MPI_Gather`
//! ([`super::rooted`]), whose scratch result and in-place input the runtime holds until the
//! request completes ([`super::held`]).
//!
//! Each is posted as the application asked and tracked ([`super::requests`]): its result goes
//! into the journal when a completion call completes it. A repair that interrupts one gives
//! it the result a survivor served, when some survivor completed it, or posts it again on the
//! rebuilt communicator (every rank that did not complete it does, the replacement when it gets
//! there: nonblocking collectives match only nonblocking ones). A replacement still catching up
//! takes its result at once from what it was served, and its request is already complete.

use super::allform::{transformed, Scratch};
use super::calls::{self, Chan};
use super::held::{self, Buffers};
use super::requests::{self, Collective, Kind};
use super::rooted::{gather_form, reduce_form};
use super::{catchup, journal, repair};
use crate::abi::{self, Comm, Datatype, Op, Request};
use crate::pmpi::{safe, Call};
use crate::{stats, traffic};
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Nonblocking collectives posted by this process (their order).
static POSTED: AtomicU64 = AtomicU64::new(0);

/// Posts `kind` (`call`) with its result in `count` of `datatype` at `result`, or serves it (see
/// the module docs). `reads_result`: the call reads the result buffer as its input; `buffers`:
/// the runtime's memory it uses (an all-form's), kept until the request completes.
///
/// # Safety
/// The MPI function's contract: the buffers stay the application's until the request
/// completes.
#[allow(clippy::too_many_arguments)]
unsafe fn post(
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
    stats::count(call);
    journal::collective_started(chan.0);
    let served = |data: Vec<u8>| {
        if traffic::on() {
            traffic::collective(chan.comm());
        }
        // SAFETY: the caller's result buffer.
        if !unsafe { journal::unpack(&data, result, count, datatype) } {
            return abi::ERR_TRUNCATE;
        }
        journal::collective_packed(chan.0, &data);
        // SAFETY: the caller's request.
        unsafe { calls::complete_request(0, request) }
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
    unsafe {
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
    }
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
    unsafe {
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
    }
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
    unsafe {
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
    unsafe {
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
    }
}

/// `MPI_Ireduce`: in a ULFM job, an `MPI_Iallreduce` (see [`super::rooted`]'s `MPI_Reduce`),
/// its memory held until the request completes.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn ireduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    op: Op,
    root: c_int,
    comm: Comm,
    request: *mut Request,
) -> c_int {
    if !transformed(comm) {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request)
        };
    }
    let at_root = safe::comm_rank(comm) == root;
    // SAFETY: the MPI function's contract.
    let form = unsafe { reduce_form(sendbuf, recvbuf, count, datatype, at_root) };
    let (send, result) = (form.send, form.result);
    let kind = Kind::Allreduce {
        sendbuf: send.expose_provenance(),
        op,
    };
    // SAFETY: `send` and `result` hold `count` of `datatype` (the caller's, or `form`'s).
    unsafe {
        post_all_form(
            Call::Ireduce,
            comm,
            kind,
            result,
            count,
            datatype,
            request,
            form.buffers,
            |r| crate::coll::iallreduce(send, result, count, datatype, op, comm, r),
        )
    }
}

/// `MPI_Igather`: in a ULFM job, an `MPI_Iallgather` (see [`super::rooted`]'s `MPI_Gather`),
/// its memory held until the request completes.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn igather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Datatype,
    root: c_int,
    comm: Comm,
    request: *mut Request,
) -> c_int {
    if !transformed(comm) {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::igather(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request,
            )
        };
    }
    let size = safe::comm_size(comm);
    let at_root = safe::comm_rank(comm) == root;
    // SAFETY: the MPI function's contract.
    let g = unsafe {
        gather_form(
            sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, size, at_root,
        )
    };
    let (send, result) = (g.form.send, g.form.result);
    let (scount, stype, block, datatype) = (g.sendcount, g.sendtype, g.block, g.datatype);
    let kind = Kind::Allgather {
        sendbuf: send.expose_provenance(),
        sendcount: scount,
        sendtype: stype,
        recvcount: block,
    };
    // SAFETY: `result` holds `size` blocks of `block` of `datatype` (the caller's, or `g`'s).
    unsafe {
        post_all_form(
            Call::Igather,
            comm,
            kind,
            result,
            block.saturating_mul(size),
            datatype,
            request,
            g.form.buffers,
            |r| crate::coll::iallgather(send, scount, stype, result, block, datatype, comm, r),
        )
    }
}

/// Posts a rooted collective's nonblocking all-form `kind` (`call`), with its result in
/// `count` of `datatype` at `result` and the runtime's `buffers` behind it: through [`post`]
/// when recovery takes the call, else through the ordinary handler (`ordinary`), its buffers
/// held by the request's handle ([`held`]); every rank runs the all-form either way.
///
/// # Safety
/// As [`post`]; `ordinary` posts the same all-form.
#[allow(clippy::too_many_arguments)]
unsafe fn post_all_form(
    call: Call,
    comm: Comm,
    kind: Kind,
    result: *mut c_void,
    count: c_int,
    datatype: Datatype,
    request: *mut Request,
    buffers: Vec<Scratch>,
    ordinary: impl FnOnce(*mut Request) -> c_int,
) -> c_int {
    let buffers: Buffers = Arc::new(buffers);
    let Some(chan) = calls::covers(comm) else {
        stats::count(call);
        let rc = ordinary(request);
        if rc == abi::SUCCESS {
            // SAFETY: MPI wrote the handle.
            held::hold(unsafe { *request }, buffers);
        }
        return rc;
    };
    // SAFETY: the caller's contract; `buffers` lives with the request's entry.
    unsafe {
        post(
            call, chan, kind, result, count, datatype, false, request, buffers,
        )
    }
}
