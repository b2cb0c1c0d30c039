//! Matched probes while a loss is contained: `MPI_Mprobe` and `MPI_Improbe` on the world and
//! the communicators derived from it, and the receives of what they matched (`MPI_Mrecv`,
//! `MPI_Imrecv`).
//!
//! What a matched probe finds is a choice, like a plain probe's ([`super::probes`]): the source
//! `MPI_Mprobe` from `MPI_ANY_SOURCE` matched, and whether `MPI_Improbe` matched a message at
//! all (and which). Each is recorded at the partner ([`super::choices`]) before the application
//! sees it, and a replacement repeats it: one that matched nothing without asking MPI, one that
//! matched by a blocking `MPI_Mprobe` of the recorded source, which the resent (or live)
//! message matches.
//!
//! The matched message is received through the covered receive path: `MPI_Mrecv` counts it as
//! received from its source, and `MPI_Imrecv` is tracked like an `MPI_Irecv` of that source and
//! tag ([`super::requests`]): a repair that interrupts it posts that receive again on the
//! repaired world, where the resend matches it.
//!
//! A message matched and not yet received when a repair comes cannot be carried across it: its
//! handle names a message of the revoked world, which MPI may no longer deliver, and its
//! sender resends it on the repaired world, where nothing has matched it. Receiving the resend
//! by its source and tag instead would be right only if no other receive or probe of that
//! source could take it first, which this rank cannot know of the calls its application makes
//! next. So that case (a loss between a matched probe and its receive, or inside `MPI_Mrecv`)
//! ends the job clearly ([`unreceived`], checked at the repair); the common one, a matched
//! probe and its receive with no loss in between, is contained.

use super::calls::{self, Chan};
use super::choices::{self, Kind};
use super::probes::{until_found, IN_START};
use super::repair;
use super::requests::{self, Receive};
use crate::abi::{self, Comm, Datatype, Message, Request, Status};
use crate::pmpi::{real, world, Call};
use crate::traffic;
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::Mutex;

/// Why a repair ends the job when this rank holds a matched message not yet received.
pub(super) const UNRECEIVED: &str = "a message the application matched with MPI_Mprobe or \
                                     MPI_Improbe was not received yet; a repair cannot carry a \
                                     matched message across (its handle names a message of the \
                                     revoked world)";

/// A message a covered probe matched: its communicator, source and tag.
#[derive(Clone, Copy)]
struct Matched {
    chan: Chan,
    source: c_int,
    tag: c_int,
}

/// The matched messages not yet received, by handle.
static MATCHED: Mutex<Option<HashMap<u64, Matched>>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut HashMap<u64, Matched>) -> R) -> R {
    f(MATCHED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new))
}

/// Whether this rank holds a matched message not yet received (a repair then ends the job:
/// see the module docs).
pub(super) fn unreceived() -> bool {
    with(|m| !m.is_empty())
}

/// The probe on `chan` matched `message` with `status`: kept until it is received (and known
/// to the traffic counts, should its receive not be covered).
fn matched(chan: Chan, message: Message, status: &Status) {
    traffic::probed(message, chan.comm());
    let m = Matched {
        chan,
        source: status.source(),
        tag: status.tag(),
    };
    with(|all| all.insert(message.bits(), m));
}

/// A matched probe's writable status: the caller's, or `own`.
fn writable(status: *mut Status, own: &mut Status) -> *mut Status {
    if abi::is_status_ignore(status) {
        own
    } else {
        status
    }
}

/// A blocking matched probe of `source` on `chan` until it matches, through repairs.
///
/// # Safety
/// `message` and `status` are writable.
unsafe fn mprobe_until_found(
    chan: Chan,
    source: c_int,
    tag: c_int,
    message: *mut Message,
    status: *mut Status,
) -> c_int {
    // SAFETY: forwarded, with the caller's message and status.
    until_found(chan, |comm| unsafe {
        real::Mprobe(source, tag, comm, message, status)
    })
}

/// `MPI_Mprobe`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn mprobe(
    source: c_int,
    tag: c_int,
    comm: Comm,
    message: *mut Message,
    status: *mut Status,
) -> c_int {
    let wildcard = source == abi::ANY_SOURCE;
    let chan = calls::covers(comm)
        .filter(|_| source != abi::PROC_NULL && (!wildcard || choices::admit(IN_START)));
    let Some(chan) = chan else {
        // SAFETY: forwarded.
        return unsafe { crate::p2p::mprobe(source, tag, comm, message, status) };
    };
    // SAFETY: forwarded, with a writable message and status.
    let live = move |message, status| unsafe { covered_mprobe(chan, source, tag, message, status) };
    if !calls::logged() {
        return live(message, status);
    }
    let header = crate::p2p::probe_header(Call::Mprobe, source, tag, comm);
    let run = |_: *mut c_int, m, st| live(m, st);
    // SAFETY: forwarded.
    unsafe {
        crate::p2p::probing(header, comm, None, Some(message), status, run, || {
            live(message, status)
        })
    }
}

/// [`mprobe`] taken by recovery.
///
/// # Safety
/// The MPI function's contract.
unsafe fn covered_mprobe(
    chan: Chan,
    source: c_int,
    tag: c_int,
    message: *mut Message,
    status: *mut Status,
) -> c_int {
    let wildcard = source == abi::ANY_SOURCE;
    calls::count_call(Call::Mprobe);
    let mut own = Status::zeroed();
    let status = writable(status, &mut own);
    let from = match wildcard.then(|| choices::repeat(Kind::Mprobe)).flatten() {
        Some(r) => r.index(),
        None => source,
    };
    // SAFETY: the caller's message and a writable status.
    let rc = unsafe { mprobe_until_found(chan, from, tag, message, status) };
    if rc == abi::SUCCESS {
        // SAFETY: MPI wrote both.
        let (m, found) = unsafe { (*message, &*status) };
        matched(chan, m, found);
        if wildcard {
            choices::chose_probe(Kind::Mprobe, true, found.source(), found.tag());
        }
    }
    rc
}

/// `MPI_Improbe`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn improbe(
    source: c_int,
    tag: c_int,
    comm: Comm,
    flag: *mut c_int,
    message: *mut Message,
    status: *mut Status,
) -> c_int {
    let chan = calls::covers(comm)
        .filter(|_| source != abi::PROC_NULL && !flag.is_null() && choices::admit(IN_START));
    let Some(chan) = chan else {
        // SAFETY: forwarded.
        return unsafe { crate::p2p::improbe(source, tag, comm, flag, message, status) };
    };
    // SAFETY: forwarded, with a writable flag, message and status.
    let live = move |f, m, st| unsafe { covered_improbe(chan, source, tag, f, m, st) };
    if !calls::logged() {
        return live(flag, message, status);
    }
    let header = crate::p2p::probe_header(Call::Improbe, source, tag, comm);
    // SAFETY: forwarded.
    unsafe {
        crate::p2p::probing(
            header,
            comm,
            Some(flag),
            Some(message),
            status,
            live,
            || live(flag, message, status),
        )
    }
}

/// [`improbe`] taken by recovery.
///
/// # Safety
/// The MPI function's contract; `flag` is writable.
unsafe fn covered_improbe(
    chan: Chan,
    source: c_int,
    tag: c_int,
    flag: *mut c_int,
    message: *mut Message,
    status: *mut Status,
) -> c_int {
    calls::count_call(Call::Improbe);
    let mut own = Status::zeroed();
    let status = writable(status, &mut own);
    let found = match choices::repeat(Kind::Improbe) {
        Some(r) if r.flag() => {
            // SAFETY: the caller's message and a writable status.
            let rc = unsafe { mprobe_until_found(chan, r.index(), tag, message, status) };
            if rc != abi::SUCCESS {
                return rc;
            }
            true
        }
        Some(_) => false,
        None => {
            // SAFETY: forwarded, with the caller's flag and message and a writable status.
            let rc = repair::covered(|| unsafe {
                real::Improbe(source, tag, chan.comm(), flag, message, status)
            });
            if repair::is_failure(rc) {
                // nothing matched this time: the application probes again, on the repaired
                // world
                repair::repair();
                false
            } else if rc != abi::SUCCESS {
                return rc;
            } else {
                // SAFETY: MPI wrote it.
                unsafe { flag.read() != 0 }
            }
        }
    };
    // SAFETY: the caller's flag.
    unsafe { flag.write(c_int::from(found)) };
    if !found {
        choices::chose_probe(Kind::Improbe, false, 0, 0);
        return abi::SUCCESS;
    }
    // SAFETY: MPI wrote the message and the status.
    let (m, st) = unsafe { (*message, &*status) };
    matched(chan, m, st);
    choices::chose_probe(Kind::Improbe, true, st.source(), st.tag());
    abi::SUCCESS
}

/// The matched message the caller's handle at `message` names, if a covered probe matched it
/// (forgotten here), and its receive is covered too (forgotten in the traffic counts, which the
/// covered receive keeps).
///
/// # Safety
/// `message` is null or readable (MPI's contract for the matched receives).
unsafe fn covered_receive(message: *const Message) -> Option<Matched> {
    // SAFETY: the caller's contract.
    let message = unsafe { message.as_ref() }.copied()?;
    let m = with(|all| all.remove(&message.bits()))?;
    calls::covers(m.chan.comm())?;
    traffic::message_comm(message);
    Some(m)
}

/// A matched message's receive (`call`, made by `receive`) taken by recovery: a failure while
/// it receives ends the job (see the module docs).
fn receiving(call: Call, receive: impl FnOnce() -> c_int) -> c_int {
    calls::count_call(call);
    let rc = repair::covered(receive);
    if repair::is_failure(rc) {
        crate::loss::process_lost(world::current(), UNRECEIVED);
    }
    rc
}

/// `MPI_Mrecv`. A failure while it receives ends the job (see the module docs).
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn mrecv(
    buf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    message: *mut Message,
    status: *mut Status,
) -> c_int {
    // SAFETY: the caller's message handle (MPI's contract).
    let Some(m) = (unsafe { covered_receive(message) }) else {
        // SAFETY: forwarded.
        return unsafe { crate::p2p::mrecv(buf, count, datatype, message, status) };
    };
    // SAFETY: forwarded.
    let live = |status| unsafe { covered_mrecv(m, buf, count, datatype, message, status) };
    if !calls::logged() {
        return live(status);
    }
    let call = Call::Mrecv;
    // SAFETY: forwarded.
    unsafe { crate::p2p::mrecv_via(call, live, buf, count, datatype, message, status, false) }
}

/// [`mrecv`] taken by recovery, of the matched message `m`.
///
/// # Safety
/// The MPI function's contract.
unsafe fn covered_mrecv(
    m: Matched,
    buf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    message: *mut Message,
    status: *mut Status,
) -> c_int {
    // SAFETY: forwarded.
    let rc = receiving(Call::Mrecv, || unsafe {
        real::Mrecv(buf, count, datatype, message, status)
    });
    if rc == abi::SUCCESS && traffic::on() {
        traffic::received(m.chan.comm(), m.source, m.tag);
    }
    rc
}

/// `MPI_Imrecv`: tracked as a receive of the matched message's source and tag.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn imrecv(
    buf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    message: *mut Message,
    request: *mut Request,
) -> c_int {
    // SAFETY: the caller's message handle (MPI's contract).
    let Some(m) = (unsafe { covered_receive(message) }) else {
        // SAFETY: forwarded.
        return unsafe { crate::p2p::imrecv(buf, count, datatype, message, request) };
    };
    // SAFETY: forwarded.
    let live = |request| unsafe { covered_imrecv(m, buf, count, datatype, message, request) };
    if !calls::logged() {
        return live(request);
    }
    let call = Call::Imrecv;
    // SAFETY: forwarded.
    unsafe { crate::p2p::imrecv_via(call, live, buf, count, datatype, message, request, false) }
}

/// [`imrecv`] taken by recovery, of the matched message `m`.
///
/// # Safety
/// The MPI function's contract.
unsafe fn covered_imrecv(
    m: Matched,
    buf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    message: *mut Message,
    request: *mut Request,
) -> c_int {
    // SAFETY: forwarded.
    let rc = receiving(Call::Imrecv, || unsafe {
        real::Imrecv(buf, count, datatype, message, request)
    });
    if rc != abi::SUCCESS {
        return rc;
    }
    // SAFETY: MPI wrote the handle.
    let posted = unsafe { *request };
    let receive = Receive {
        channel: m.chan.0,
        buf: buf.expose_provenance(),
        count,
        datatype,
        source: m.source,
        tag: m.tag,
        wildcard: None,
    };
    requests::posted_receive(posted, receive);
    if traffic::on() {
        traffic::receive_posted(posted, m.chan.comm());
    }
    abi::SUCCESS
}
