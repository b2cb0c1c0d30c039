//! `MPI_Probe` and `MPI_Iprobe` while a loss is contained, on the world and the communicators
//! derived from it, through repairs. What they find is a choice a replacement must repeat
//! ([`super::choices`]): the source a probe from `MPI_ANY_SOURCE` found, and whether
//! `MPI_Iprobe` found a message at all (and which). A replacement repeats an `MPI_Iprobe` that
//! found nothing without asking MPI, and one that found a message by waiting for that message
//! (`MPI_Probe` of the recorded source): its peers resend it, or send it live. The matched
//! probes (`MPI_Mprobe`, `MPI_Improbe`) are choices the same way: [`super::matched`].

use super::calls::{self, Chan};
use super::choices::{self, Kind};
use super::repair;
use crate::abi::{self, Comm, Message, Status};
use crate::pmpi::{real, Call};
use std::ffi::c_int;

/// Why a probe in the program's start stops containment.
pub(super) const IN_START: &str =
    "the application probed with MPI_Iprobe or from MPI_ANY_SOURCE in the \
                        program's start, whose outcome a replacement could not repeat (in-job \
                        recovery records choices from the first version on)";

/// A blocking probe on `chan` (`probe` on its communicator now) until it finds a message,
/// through repairs.
pub(super) fn until_found(chan: Chan, probe: impl Fn(Comm) -> c_int) -> c_int {
    loop {
        let rc = repair::covered(|| probe(chan.comm()));
        if !repair::is_failure(rc) {
            return rc;
        }
        repair::repair();
    }
}

/// A blocking probe of `source` until it finds a message, through repairs.
///
/// # Safety
/// `status` is writable.
unsafe fn wait_for(chan: Chan, source: c_int, tag: c_int, status: *mut Status) -> c_int {
    // SAFETY: forwarded, with the caller's status.
    until_found(chan, |comm| unsafe {
        real::Probe(source, tag, comm, status)
    })
}

/// `MPI_Probe`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn probe(source: c_int, tag: c_int, comm: Comm, status: *mut Status) -> c_int {
    let wildcard = source == abi::ANY_SOURCE;
    let chan = calls::covers(comm).filter(|_| !wildcard || choices::admit(IN_START));
    let Some(chan) = chan else {
        // SAFETY: forwarded.
        return unsafe { crate::p2p::probe(source, tag, comm, status) };
    };
    // SAFETY: forwarded, with a writable status.
    let live = move |status| unsafe { covered_probe(chan, source, tag, status) };
    if !calls::logged() {
        return live(status);
    }
    let header = crate::p2p::probe_header(Call::Probe, source, tag, comm);
    let run = |_: *mut c_int, _: *mut Message, st| live(st);
    // SAFETY: forwarded.
    unsafe { crate::p2p::probing(header, comm, None, None, status, run, || live(status)) }
}

/// [`probe`] taken by recovery.
///
/// # Safety
/// The MPI function's contract.
unsafe fn covered_probe(chan: Chan, source: c_int, tag: c_int, status: *mut Status) -> c_int {
    let wildcard = source == abi::ANY_SOURCE;
    calls::count_call(Call::Probe);
    let mut own = Status::zeroed();
    let status = if abi::is_status_ignore(status) {
        &mut own as *mut Status
    } else {
        status
    };
    let from = match wildcard.then(|| choices::repeat(Kind::Probe)).flatten() {
        Some(r) => r.index(),
        None => source,
    };
    // SAFETY: a writable status.
    let rc = unsafe { wait_for(chan, from, tag, status) };
    if wildcard && rc == abi::SUCCESS {
        // SAFETY: MPI wrote it.
        let found = unsafe { &*status };
        choices::chose_probe(Kind::Probe, true, found.source(), found.tag());
    }
    rc
}

/// `MPI_Iprobe`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn iprobe(
    source: c_int,
    tag: c_int,
    comm: Comm,
    flag: *mut c_int,
    status: *mut Status,
) -> c_int {
    let chan = calls::covers(comm).filter(|_| !flag.is_null() && choices::admit(IN_START));
    let Some(chan) = chan else {
        // SAFETY: forwarded.
        return unsafe { crate::p2p::iprobe(source, tag, comm, flag, status) };
    };
    // SAFETY: forwarded, with a writable flag and status.
    let live = move |flag, status| unsafe { covered_iprobe(chan, source, tag, flag, status) };
    if !calls::logged() {
        return live(flag, status);
    }
    let header = crate::p2p::probe_header(Call::Iprobe, source, tag, comm);
    let run = |f, _: *mut Message, st| live(f, st);
    // SAFETY: forwarded.
    unsafe {
        crate::p2p::probing(header, comm, Some(flag), None, status, run, || {
            live(flag, status)
        })
    }
}

/// [`iprobe`] taken by recovery.
///
/// # Safety
/// The MPI function's contract; `flag` is writable.
unsafe fn covered_iprobe(
    chan: Chan,
    source: c_int,
    tag: c_int,
    flag: *mut c_int,
    status: *mut Status,
) -> c_int {
    calls::count_call(Call::Iprobe);
    let mut own = Status::zeroed();
    let status = if abi::is_status_ignore(status) {
        &mut own as *mut Status
    } else {
        status
    };
    if let Some(r) = choices::repeat(Kind::Iprobe) {
        let rc = match r.flag() {
            // SAFETY: a writable status.
            true => unsafe { wait_for(chan, r.index(), tag, status) },
            false => abi::SUCCESS,
        };
        let found = r.flag() && rc == abi::SUCCESS;
        // SAFETY: the caller's flag.
        unsafe { flag.write(c_int::from(found)) };
        choices::chose_probe(Kind::Iprobe, found, r.index(), tag);
        return rc;
    }
    // SAFETY: forwarded, with the caller's flag and a writable status.
    let rc = repair::covered(|| unsafe { real::Iprobe(source, tag, chan.comm(), flag, status) });
    if repair::is_failure(rc) {
        repair::repair();
        // nothing found this time: the application probes again, on the repaired world
        // SAFETY: the caller's flag.
        unsafe { flag.write(0) };
    } else if rc != abi::SUCCESS {
        return rc;
    }
    // SAFETY: written by MPI or above.
    let found = unsafe { flag.read() } != 0;
    let (from, with) = if found {
        // SAFETY: MPI wrote it, having found a message.
        unsafe { ((*status).source(), (*status).tag()) }
    } else {
        (0, 0)
    };
    choices::chose_probe(Kind::Iprobe, found, from, with);
    abi::SUCCESS
}
