//! The calls that survive a lost process: each keeps what the journal needs, and when MPI
//! reports a failure (through the runtime's error handler, which returns the code while one of
//! these is in MPI) it repairs the world and completes the call on the repaired one.
//!
//! Every function here is the table's handler for its call: it takes the call when recovery is
//! on, the call is on `MPI_COMM_WORLD` or a communicator derived from it that the runtime
//! follows (`crate::derived`), and it is the application's own (not the runtime's); it calls
//! the ordinary handler otherwise. While a CD logs, a call taken here runs within its ordinary
//! handler ([`logged`]): that handler logs it, or serves it from the log when a CD
//! re-executes after a transient fault, and recovery makes the call that reaches MPI. How each
//! completes after a repair:
//! - a send was copied into the journal before it went out: after the repair, the resend of
//!   what its receiver lacks delivers it, so the send is complete;
//! - a receive that did not complete is posted again on the repaired world, where the
//!   sender's resend (or its live send) matches it;
//! - a collective: if another survivor completed it, its result is served; otherwise it runs
//!   again on the repaired world with every rank (a replacement joins it when it gets there);
//! - a nonblocking send or receive is finished by the repair ([`requests`]), and `MPI_Wait`
//!   and `MPI_Waitall` complete it on the repaired world.
//!
//! A replacement still catching up drops the sends its peers already have and takes its
//! collective results from what it was served ([`super::catchup`]).

use super::requests::{self, Receive};
use super::{catchup, choices, journal, repair};
use crate::abi::{self, Comm, Datatype, Op, Request, Status};
use crate::pmpi::{real, Call};
use crate::{derived, stats, traffic};
use std::ffi::{c_int, c_void};

/// The communicator of a covered call: the world or one derived from it (`crate::derived`),
/// by its identity, which a repair keeps while it rebuilds the communicator.
#[derive(Clone, Copy)]
pub(super) struct Chan(pub(super) u64);

impl Chan {
    /// The real communicator now.
    pub(super) fn comm(self) -> Comm {
        derived::current(self.0)
    }

    /// The world rank of its rank `rank`.
    fn world(self, rank: c_int) -> c_int {
        derived::world_rank(self.0, rank)
    }
}

/// The communicator of this point-to-point call on `comm`, if it is one recovery takes (see
/// the module docs).
#[inline]
pub(super) fn covers_p2p(comm: Comm) -> Option<Chan> {
    p2p_channel(comm)
}

/// [`covers_p2p`] for a collective or a probe: not on an intercommunicator, whose collectives'
/// results differ between its two groups (no survivor of one could serve a replacement of the
/// other).
#[inline]
pub(super) fn covers(comm: Comm) -> Option<Chan> {
    intra_channel(comm)
}

/// [`covers_p2p`] for a receive from `source`. A wildcard source (`MPI_ANY_SOURCE`) is a choice a
/// replacement must repeat: covered where it is recorded ([`choices`]), else it stops the
/// containment of later losses.
#[inline]
pub(super) fn covers_receive(comm: Comm, source: c_int) -> Option<Chan> {
    receive_channel(comm, source)
}

/// Whether recovery takes this process's calls now (see the module docs): the application's,
/// not the runtime's own (inside a CD that logs, whether it does is decided before the call
/// enters its ordinary handler, whose guard is the runtime's: [`logged`]).
#[inline]
fn taking() -> bool {
    super::keeping() && !crate::boundary::inside()
}

#[inline]
fn p2p_channel(comm: Comm) -> Option<Chan> {
    taking().then(|| derived::channel(comm)).flatten().map(Chan)
}

#[inline]
fn intra_channel(comm: Comm) -> Option<Chan> {
    taking()
        .then(|| derived::intra_channel(comm))
        .flatten()
        .map(Chan)
}

#[inline]
fn receive_channel(comm: Comm, source: c_int) -> Option<Chan> {
    let chan = p2p_channel(comm)?;
    if source == abi::ANY_SOURCE
        && !choices::admit(
            "the application received with MPI_ANY_SOURCE in the program's start, whose match \
             a replacement could not repeat (in-job recovery records choices from the first \
             version on)",
        )
    {
        return None;
    }
    Some(chan)
}

/// Whether a CD logs in this process. The calls that recovery takes then run within their
/// ordinary handler, which logs them, or
/// serves them from the log when a CD re-executes (then MPI, the journal and the repair are
/// not reached), and counts them in the statistics; the covered call still counts its
/// messages, before a repair may compare the counts.
#[inline]
pub(super) fn logged() -> bool {
    cd_core::logging_anywhere()
}

/// Counts `call` in the statistics, unless its ordinary handler does ([`logged`]).
#[inline]
pub(super) fn count_call(call: Call) {
    if !logged() {
        stats::count(call);
    }
}

/// For a receive from `source`: the wildcard receive's place and the source a replacement
/// repeats (else `source`).
fn wildcard(source: c_int) -> (Option<u64>, c_int) {
    if source != abi::ANY_SOURCE {
        return (None, source);
    }
    let (place, repeat) = choices::wildcard();
    (Some(place), repeat.map_or(source, |(s, _)| s))
}

/// A receive from `MPI_ANY_SOURCE` at `place` completed with `status`.
fn matched(place: Option<u64>, status: &Status) {
    if let Some(place) = place {
        choices::matched(place, status.source(), status.tag());
    }
}

/// Counts the call (`None`: its caller counts it) and its message for the statistics and the
/// persist's check.
#[inline]
fn count_send(call: impl Into<Option<Call>>, chan: Chan, dest: c_int) {
    if let Some(call) = call.into() {
        count_call(call);
    }
    if traffic::on() && dest >= 0 {
        traffic::sent(chan.comm(), dest);
    }
}

#[inline]
fn count_receive(chan: Chan, status: &Status) {
    if traffic::on() {
        traffic::received(chan.comm(), status.source(), status.tag());
    }
}

fn count_collective(call: Call, chan: Chan) {
    count_call(call);
    journal::collective_started(chan.0);
    if traffic::on() {
        traffic::collective(chan.comm());
    }
}

/// A blocking send of the standard or synchronous mode.
///
/// # Safety
/// The MPI function's contract.
unsafe fn send_mode(
    call: Call,
    chan: Chan,
    buf: *const c_void,
    count: c_int,
    datatype: Datatype,
    dest: c_int,
    tag: c_int,
) -> c_int {
    count_send(call, chan, dest);
    if dest < 0 {
        // MPI_PROC_NULL: nothing to keep, nothing to fail
        // SAFETY: forwarded.
        return unsafe { real::Send(buf, count, datatype, dest, tag, chan.comm()) };
    }
    let to = chan.world(dest);
    // SAFETY: the caller's buffer holds the message (its contract).
    unsafe { journal::sent(chan.0, to, tag, buf, count, datatype) };
    if catchup::drop_send(chan.0, to, tag) {
        return abi::SUCCESS;
    }
    let rc = repair::covered(|| {
        let comm = chan.comm();
        // SAFETY: forwarded.
        unsafe {
            match call {
                Call::Ssend => real::Ssend(buf, count, datatype, dest, tag, comm),
                _ => real::Send(buf, count, datatype, dest, tag, comm),
            }
        }
    });
    if repair::is_failure(rc) {
        repair::repair();
        // the resend of what the receiver lacks delivers it
        return abi::SUCCESS;
    }
    rc
}

macro_rules! covered_sends {
    ($($fn:ident => $call:ident;)*) => {$(
        #[doc = concat!("`MPI_", stringify!($call), "`.")]
        ///
        /// # Safety
        /// The MPI function's contract.
        pub(crate) unsafe fn $fn(
            buf: *const c_void,
            count: c_int,
            datatype: Datatype,
            dest: c_int,
            tag: c_int,
            comm: Comm,
        ) -> c_int {
            let Some(chan) = p2p_channel(comm) else {
                // SAFETY: forwarded.
                return unsafe { crate::p2p::$fn(buf, count, datatype, dest, tag, comm) };
            };
            // SAFETY: forwarded.
            let live = || unsafe { send_mode(Call::$call, chan, buf, count, datatype, dest, tag) };
            if !logged() {
                return live();
            }
            // SAFETY: forwarded.
            unsafe { crate::p2p::send_mode(Call::$call, live, count, datatype, dest, tag, comm, false) }
        }
    )*};
}

covered_sends! {
    send => Send;
    ssend => Ssend;
}

/// A receive on the world until it completes, through repairs; counts it.
///
/// # Safety
/// The MPI function's contract; `status` is not `MPI_STATUS_IGNORE`.
unsafe fn receive(
    chan: Chan,
    buf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    source: c_int,
    tag: c_int,
    status: *mut Status,
) -> c_int {
    loop {
        let rc = repair::covered(|| {
            // SAFETY: forwarded.
            unsafe { real::Recv(buf, count, datatype, source, tag, chan.comm(), status) }
        });
        if repair::is_failure(rc) {
            repair::repair();
            continue;
        }
        if rc == abi::SUCCESS {
            // SAFETY: MPI wrote the status.
            count_receive(chan, unsafe { &*status });
        }
        return rc;
    }
}

/// `MPI_Recv`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn recv(
    buf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    source: c_int,
    tag: c_int,
    comm: Comm,
    status: *mut Status,
) -> c_int {
    let Some(chan) = receive_channel(comm, source) else {
        // SAFETY: forwarded.
        return unsafe { crate::p2p::recv(buf, count, datatype, source, tag, comm, status) };
    };
    // SAFETY: forwarded.
    let live = |status| unsafe { covered_recv(chan, buf, count, datatype, source, tag, status) };
    if !logged() {
        return live(status);
    }
    // SAFETY: forwarded.
    unsafe {
        crate::p2p::recv_via(
            Call::Recv,
            live,
            buf,
            count,
            datatype,
            source,
            tag,
            comm,
            status,
            false,
        )
    }
}

/// [`recv`] taken by recovery.
///
/// # Safety
/// The MPI function's contract.
unsafe fn covered_recv(
    chan: Chan,
    buf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    source: c_int,
    tag: c_int,
    status: *mut Status,
) -> c_int {
    count_call(Call::Recv);
    let mut own = Status::zeroed();
    let status = if status.is_null() {
        &mut own as *mut Status
    } else {
        status
    };
    let (place, source) = wildcard(source);
    // SAFETY: forwarded, with a status to read the source from.
    let rc = unsafe { receive(chan, buf, count, datatype, source, tag, status) };
    if rc == abi::SUCCESS {
        // SAFETY: MPI wrote it.
        matched(place, unsafe { &*status });
    }
    rc
}

/// `MPI_Sendrecv`: the send and the receive as two requests, so that after a failure the
/// runtime knows whether the receive completed.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn sendrecv(
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
    status: *mut Status,
) -> c_int {
    // SAFETY: forwarded.
    unsafe {
        sendrecv_as(
            Call::Sendrecv,
            sendbuf,
            sendcount,
            sendtype,
            dest,
            sendtag,
            recvbuf,
            recvcount,
            recvtype,
            source,
            recvtag,
            comm,
            status,
        )
    }
}

/// [`sendrecv`] counted and logged as `call` (`MPI_Sendrecv_replace` runs as an
/// `MPI_Sendrecv` from a copy: `super::sendrecv`).
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn sendrecv_as(
    call: Call,
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
    status: *mut Status,
) -> c_int {
    let Some(chan) = receive_channel(comm, source) else {
        // SAFETY: forwarded.
        return unsafe {
            crate::p2p::sendrecv(
                sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                recvtag, comm, status,
            )
        };
    };
    // SAFETY: forwarded.
    let live = |status| unsafe {
        covered_sendrecv(
            call, chan, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
            source, recvtag, status,
        )
    };
    if !logged() {
        return live(status);
    }
    // SAFETY: forwarded.
    unsafe {
        crate::p2p::sendrecv_via(
            call, live, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
            recvtag, comm, status, false,
        )
    }
}

/// [`sendrecv`] taken by recovery.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
unsafe fn covered_sendrecv(
    call: Call,
    chan: Chan,
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
    status: *mut Status,
) -> c_int {
    count_send(call, chan, dest);
    let (place, source) = wildcard(source);
    let mut own = Status::zeroed();
    let status = if status.is_null() {
        &mut own as *mut Status
    } else {
        status
    };
    let send_live = dest >= 0 && {
        let to = chan.world(dest);
        // SAFETY: the caller's buffer holds the message.
        unsafe { journal::sent(chan.0, to, sendtag, sendbuf, sendcount, sendtype) };
        !catchup::drop_send(chan.0, to, sendtag)
    };
    let null = abi::predefined().request_null;
    let mut requests = [null, null];
    let mut statuses = [Status::zeroed(), Status::zeroed()];
    let rc = repair::covered(|| {
        let comm = chan.comm();
        // SAFETY: forwarded; the requests are completed below, before the buffers are
        // given back.
        unsafe {
            let rc = real::Irecv(
                recvbuf,
                recvcount,
                recvtype,
                source,
                recvtag,
                comm,
                &mut requests[0],
            );
            if rc != abi::SUCCESS {
                return rc;
            }
            if send_live {
                let rc = real::Isend(
                    sendbuf,
                    sendcount,
                    sendtype,
                    dest,
                    sendtag,
                    comm,
                    &mut requests[1],
                );
                if rc != abi::SUCCESS {
                    return rc;
                }
            }
            real::Waitall(2, requests.as_mut_ptr(), statuses.as_mut_ptr())
        }
    });
    if rc == abi::SUCCESS {
        // SAFETY: the caller's status (or ours).
        unsafe { *status = statuses[0] };
        count_receive(chan, &statuses[0]);
        matched(place, &statuses[0]);
        return rc;
    }
    if !repair::is_failure(rc) && rc != abi::ERR_IN_STATUS {
        return rc;
    }
    // which half completed: requests still active are released (they fail once the world is
    // revoked; a receive from MPI_ANY_SOURCE left active by a failure may match first)
    let mut received = requests[0] == null && statuses[0].error() == abi::SUCCESS;
    // (not `repair::covered`: the repair below is for the world the halves ran on)
    crate::errors::covered(|| {
        for (k, r) in requests.iter_mut().enumerate().filter(|(_, r)| **r != null) {
            let mut last = Status::zeroed();
            // SAFETY: our own request; its buffer is the caller's, alive for this call.
            let rc = unsafe { real::Wait(r, &mut last) };
            if k == 0 && rc == abi::SUCCESS {
                statuses[0] = last;
                received = true;
            }
        }
    });
    let failed = !received
        || statuses.iter().any(|s| repair::is_failure(s.error()))
        || repair::is_failure(rc);
    if !failed {
        return rc;
    }
    repair::repair();
    if received {
        // SAFETY: the caller's status (or ours).
        unsafe { *status = statuses[0] };
        count_receive(chan, &statuses[0]);
        matched(place, &statuses[0]);
        return abi::SUCCESS;
    }
    // SAFETY: forwarded.
    let rc = unsafe { receive(chan, recvbuf, recvcount, recvtype, source, recvtag, status) };
    if rc == abi::SUCCESS {
        // SAFETY: MPI wrote it.
        matched(place, unsafe { &*status });
    }
    rc
}

/// A collective whose result (`count` of `datatype` at `result`, on every rank the same) is
/// served, journaled, or made by `run` on the world, through repairs. `saved` is what `run`
/// reads from `result` (`MPI_IN_PLACE`), put back before a run again.
///
/// # Safety
/// `result` holds `count` elements of `datatype` (the MPI call's contract).
pub(super) unsafe fn collective(
    call: Call,
    chan: Chan,
    result: *mut c_void,
    count: c_int,
    datatype: Datatype,
    in_place: bool,
    run: impl Fn(Comm) -> c_int,
) -> c_int {
    count_collective(call, chan);
    let serve = |data: Vec<u8>| {
        // SAFETY: the caller's result buffer (its contract).
        if !unsafe { journal::unpack(&data, result, count, datatype) } {
            return abi::ERR_TRUNCATE;
        }
        journal::collective_packed(chan.0, &data);
        abi::SUCCESS
    };
    if let Some(data) = catchup::next_collective(chan.0) {
        return serve(data);
    }
    // SAFETY: the caller's buffer (its contract).
    let saved = in_place.then(|| unsafe { journal::pack(result, count, datatype) });
    loop {
        let rc = repair::covered(|| run(chan.comm()));
        if rc == abi::SUCCESS {
            // SAFETY: MPI wrote the result.
            unsafe { journal::collective(chan.0, result, count, datatype) };
            return rc;
        }
        match after_failure(rc, chan) {
            Err(rc) => return rc,
            Ok(Some(data)) => return serve(data),
            Ok(None) => {}
        }
        if let Some(saved) = &saved {
            // SAFETY: the caller's buffer, as it was on entry.
            unsafe { journal::unpack(saved, result, count, datatype) };
        }
    }
}

/// After a collective's MPI call on `chan` returned `rc` (not success): `Err(rc)` when that is
/// not a process failure (the call returns it); else the world is repaired, and `Ok` holds the
/// result a survivor served, if one completed the collective (else it runs again).
pub(super) fn after_failure(rc: c_int, chan: Chan) -> Result<Option<Vec<u8>>, c_int> {
    if !repair::is_failure(rc) {
        return Err(rc);
    }
    repair::repair();
    Ok(catchup::next_collective(chan.0))
}

/// `MPI_Barrier`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn barrier(comm: Comm) -> c_int {
    let Some(chan) = intra_channel(comm) else {
        // SAFETY: forwarded.
        return unsafe { crate::coll::barrier(comm) };
    };
    let byte = abi::predefined().byte;
    // SAFETY: an empty result.
    let live = || unsafe {
        collective(
            Call::Barrier,
            chan,
            std::ptr::null_mut(),
            0,
            byte,
            false,
            |c| real::Barrier(c),
        )
    };
    if !logged() {
        return live();
    }
    // SAFETY: forwarded.
    unsafe { crate::coll::via::barrier(comm, live, false) }
}

/// `MPI_Bcast`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn bcast(
    buffer: *mut c_void,
    count: c_int,
    datatype: Datatype,
    root: c_int,
    comm: Comm,
) -> c_int {
    let Some(chan) = intra_channel(comm) else {
        // SAFETY: forwarded.
        return unsafe { crate::coll::bcast(buffer, count, datatype, root, comm) };
    };
    // SAFETY: forwarded; the root's buffer is its input, kept for a run again.
    let live = || unsafe {
        collective(Call::Bcast, chan, buffer, count, datatype, true, |c| {
            real::Bcast(buffer, count, datatype, root, c)
        })
    };
    if !logged() {
        return live();
    }
    // SAFETY: forwarded.
    unsafe { crate::coll::via::bcast(buffer, count, datatype, root, comm, live, false) }
}

/// `MPI_Allreduce`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn allreduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    op: Op,
    comm: Comm,
) -> c_int {
    let Some(chan) = intra_channel(comm) else {
        // SAFETY: forwarded.
        return unsafe { crate::coll::allreduce(sendbuf, recvbuf, count, datatype, op, comm) };
    };
    let in_place = sendbuf.addr() == abi::IN_PLACE;
    // SAFETY: forwarded.
    let live = || unsafe {
        collective(
            Call::Allreduce,
            chan,
            recvbuf,
            count,
            datatype,
            in_place,
            |c| real::Allreduce(sendbuf, recvbuf, count, datatype, op, c),
        )
    };
    if !logged() {
        return live();
    }
    // SAFETY: forwarded.
    unsafe { crate::coll::via::allreduce(sendbuf, recvbuf, count, datatype, op, comm, live, false) }
}

/// `MPI_Allgather`.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn allgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Datatype,
    comm: Comm,
) -> c_int {
    let Some(chan) = intra_channel(comm) else {
        // SAFETY: forwarded.
        return unsafe {
            crate::coll::allgather(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
            )
        };
    };
    let total = recvcount.saturating_mul(crate::pmpi::safe::comm_size(comm));
    let in_place = sendbuf.addr() == abi::IN_PLACE;
    // SAFETY: forwarded; the result is `size` blocks of `recvcount`.
    let live = || unsafe {
        collective(
            Call::Allgather,
            chan,
            recvbuf,
            total,
            recvtype,
            in_place,
            |c| {
                real::Allgather(
                    sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, c,
                )
            },
        )
    };
    if !logged() {
        return live();
    }
    // SAFETY: forwarded.
    unsafe {
        crate::coll::via::allgather(
            sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, live, false,
        )
    }
}

/// A nonblocking send of the standard or synchronous mode on `chan`, counted as `call` (`None`:
/// `MPI_Start`, which posts a persistent send this way and counts itself:
/// `super::persistent`).
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn post_send(
    call: Option<Call>,
    synchronous: bool,
    chan: Chan,
    buf: *const c_void,
    count: c_int,
    datatype: Datatype,
    dest: c_int,
    tag: c_int,
    request: *mut Request,
) -> c_int {
    count_send(call, chan, dest);
    let post = |comm: Comm| {
        // SAFETY: forwarded.
        unsafe {
            match synchronous {
                true => real::Issend(buf, count, datatype, dest, tag, comm, request),
                false => real::Isend(buf, count, datatype, dest, tag, comm, request),
            }
        }
    };
    if dest < 0 {
        // MPI_PROC_NULL: nothing to keep, nothing to fail
        return post(chan.comm());
    }
    let to = chan.world(dest);
    // SAFETY: the caller's buffer holds the message.
    unsafe { journal::sent(chan.0, to, tag, buf, count, datatype) };
    if catchup::drop_send(chan.0, to, tag) {
        // SAFETY: the caller's request.
        return unsafe { crate::engine::completed_request(request) };
    }
    let rc = repair::covered(|| post(chan.comm()));
    if rc == abi::SUCCESS {
        // SAFETY: MPI wrote the handle.
        requests::posted_send(unsafe { *request });
        return rc;
    }
    if repair::is_failure(rc) {
        repair::repair();
        // the resend delivers it
        // SAFETY: the caller's request.
        return unsafe { crate::engine::completed_request(request) };
    }
    rc
}

macro_rules! covered_posts {
    ($($fn:ident => $call:ident, synchronous: $sync:expr;)*) => {$(
        #[doc = concat!("`MPI_", stringify!($call), "`.")]
        ///
        /// # Safety
        /// The MPI function's contract.
        pub(crate) unsafe fn $fn(
            buf: *const c_void,
            count: c_int,
            datatype: Datatype,
            dest: c_int,
            tag: c_int,
            comm: Comm,
            request: *mut Request,
        ) -> c_int {
            let Some(chan) = p2p_channel(comm) else {
                // SAFETY: forwarded.
                return unsafe { crate::p2p::$fn(buf, count, datatype, dest, tag, comm, request) };
            };
            // SAFETY: forwarded.
            let live = |request| unsafe { post_send(Some(Call::$call), $sync, chan, buf, count, datatype, dest, tag, request) };
            if !logged() {
                return live(request);
            }
            // SAFETY: forwarded.
            unsafe { crate::p2p::post_message(Call::$call, live, buf, count, datatype, dest, tag, comm, request, false, false) }
        }
    )*};
}

covered_posts! {
    isend => Isend, synchronous: false;
    issend => Issend, synchronous: true;
}

/// `MPI_Irecv`.
///
/// # Safety
/// The MPI function's contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn irecv(
    buf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    source: c_int,
    tag: c_int,
    comm: Comm,
    request: *mut Request,
) -> c_int {
    let chan = (source != abi::PROC_NULL)
        .then(|| receive_channel(comm, source))
        .flatten();
    let Some(chan) = chan else {
        // SAFETY: forwarded.
        return unsafe { crate::p2p::irecv(buf, count, datatype, source, tag, comm, request) };
    };
    let call = Some(Call::Irecv);
    // SAFETY: forwarded.
    let live =
        |request| unsafe { post_receive(call, chan, buf, count, datatype, source, tag, request) };
    if !logged() {
        return live(request);
    }
    // SAFETY: forwarded.
    unsafe {
        crate::p2p::post_message(
            Call::Irecv,
            live,
            buf,
            count,
            datatype,
            source,
            tag,
            comm,
            request,
            true,
            false,
        )
    }
}

/// A receive a restore cancelled, posted again at the end of the replay (the engine's
/// `Activations::receive`): on the channel of `comm`, tracked through repairs like the
/// application's, where recovery covers it; `None` elsewhere, and for a receive from
/// `MPI_ANY_SOURCE` (its post counted a choice already).
///
/// # Safety
/// `MPI_Irecv`'s contract.
pub(super) unsafe fn receive_again(
    buf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    source: c_int,
    tag: c_int,
    comm: Comm,
    request: *mut Request,
) -> Option<c_int> {
    if !super::keeping() || source == abi::PROC_NULL || source == abi::ANY_SOURCE {
        return None;
    }
    let chan = Chan(derived::channel(crate::pmpi::world::mapped(comm))?);
    // SAFETY: the caller's contract.
    Some(unsafe { post_receive(None, chan, buf, count, datatype, source, tag, request) })
}

/// A nonblocking receive on `chan`, tracked through repairs and counted as `call` (`None`:
/// `MPI_Start`, as in [`post_send`]).
///
/// # Safety
/// The MPI function's contract; `source` is not `MPI_PROC_NULL`.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn post_receive(
    call: Option<Call>,
    chan: Chan,
    buf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    source: c_int,
    tag: c_int,
    request: *mut Request,
) -> c_int {
    if let Some(call) = call {
        count_call(call);
    }
    let (wildcard, source) = wildcard(source);
    loop {
        let rc = repair::covered(|| {
            // SAFETY: forwarded.
            unsafe { real::Irecv(buf, count, datatype, source, tag, chan.comm(), request) }
        });
        if rc == abi::SUCCESS {
            // SAFETY: MPI wrote the handle.
            let posted = unsafe { *request };
            let receive = Receive {
                channel: chan.0,
                buf: buf.expose_provenance(),
                count,
                datatype,
                source,
                tag,
                wildcard,
            };
            requests::posted_receive(posted, receive);
            if traffic::on() {
                traffic::receive_posted(posted, chan.comm());
            }
            return rc;
        }
        if !repair::is_failure(rc) {
            return rc;
        }
        repair::repair();
    }
}
