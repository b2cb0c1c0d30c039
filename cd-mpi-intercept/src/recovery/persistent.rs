//! Persistent point-to-point requests in a ULFM job whose losses are contained: each
//! activation (`MPI_Start`) is posted as the nonblocking call it stands for.
//!
//! A persistent request is bound to the communicator it was made on, and a repair replaces
//! that communicator; MPI cannot move a request to another. The application, though, keeps the
//! handle `MPI_Send_init` gave it for the whole run. So in such a job the runtime keeps each
//! persistent request's arguments (on the world or a communicator derived from it:
//! `crate::derived`), and every `MPI_Start` posts the send or receive on the communicator that
//! channel means now: on a communicator recovery covers, journaled, dropped while a replacement
//! catches up, posted again after a repair, its wildcard match recorded, like any `MPI_Isend`
//! or `MPI_Irecv` ([`super::calls`]); before the first version, through the ordinary
//! handlers of those calls. Inside a CD that logs, the start runs within its ordinary handler,
//! which logs it or serves it from the log ([`start_logged`]). Buffered and ready sends are
//! posted as `MPI_Ibsend` and `MPI_Irsend`, which recovery does not cover (a loss after one
//! ends the job clearly, as after those calls).
//!
//! The completion calls lend the activation's request in place of the application's handle
//! while they reach MPI ([`super::kept`]). The request `MPI_Send_init` made is never started:
//! it keeps the application's handle unique until `MPI_Request_free`.

use super::calls::{self, Chan};
use super::kept::{any, give_back, lend, made, with, Made, Mode};
use super::{completion, held};
use crate::abi::{self, Comm, Datatype, Request, Status};
use crate::pmpi::Call;
use crate::stats;
use std::ffi::{c_int, c_void};

macro_rules! inits {
    ($($fn:ident => $mode:ident, $buf:ty;)*) => {$(
        #[doc = concat!("`MPI_", stringify!($fn), "`: made as usual, and kept (see the module docs).")]
        ///
        /// # Safety
        /// The MPI function's contract.
        pub(crate) unsafe fn $fn(
            buf: $buf,
            count: c_int,
            datatype: Datatype,
            peer: c_int,
            tag: c_int,
            comm: Comm,
            request: *mut Request,
        ) -> c_int {
            // SAFETY: forwarded.
            let rc = unsafe { crate::p2p::$fn(buf, count, datatype, peer, tag, comm, request) };
            if rc == abi::SUCCESS && crate::errors::repair_wanted() && !crate::boundary::inside() {
                if let Some(channel) = crate::derived::channel(comm) {
                    let kept = Made {
                        mode: Mode::$mode,
                        buf: buf.expose_provenance(),
                        count,
                        datatype,
                        peer,
                        tag,
                        channel,
                        made_on: comm,
                        active: None,
                        on: None,
                    };
                    // SAFETY: MPI wrote the handle.
                    let handle = unsafe { *request };
                    with(|m| m.insert(handle.bits(), kept));
                }
            }
            rc
        }
    )*};
}

inits! {
    send_init => Standard, *const c_void;
    ssend_init => Synchronous, *const c_void;
    bsend_init => Buffered, *const c_void;
    rsend_init => Ready, *const c_void;
    recv_init => Receive, *mut c_void;
}

/// The communicator recovery covers `m`'s activations on now, if any; found before a start
/// enters the ordinary handler (whose guard recovery's gate would take for the runtime's own
/// call).
fn channel(m: &Made) -> Option<Chan> {
    let comm = m.comm();
    match m.mode {
        Mode::Standard | Mode::Synchronous => calls::covers_p2p(comm),
        Mode::Receive => (m.peer != abi::PROC_NULL)
            .then(|| calls::covers_receive(comm, m.peer))
            .flatten(),
        Mode::Buffered | Mode::Ready => None,
    }
}

/// Posts an activation of `m` on its communicator now, covered on `chan` where recovery covers
/// it ([`channel`]); returns its request.
///
/// # Safety
/// The buffer `m` names is the application's, valid until the activation completes (MPI's
/// contract for `MPI_Start`).
unsafe fn activate(m: &Made, chan: Option<Chan>) -> Result<Request, c_int> {
    let comm = m.comm();
    let mut posted = abi::predefined().request_null;
    let request = &mut posted as *mut Request;
    let (count, datatype, peer, tag) = (m.count, m.datatype, m.peer, m.tag);
    let send = std::ptr::with_exposed_provenance::<c_void>(m.buf);
    let receive = std::ptr::with_exposed_provenance_mut::<c_void>(m.buf);
    // SAFETY: the application's arguments to `*_init`, and the caller's contract.
    let rc = unsafe {
        match (m.mode, chan) {
            (Mode::Standard, Some(chan)) => post_send(false, chan, send, m, request),
            (Mode::Synchronous, Some(chan)) => post_send(true, chan, send, m, request),
            (Mode::Receive, Some(chan)) => {
                calls::post_receive(None, chan, receive, count, datatype, peer, tag, request)
            }
            (Mode::Standard, None) => {
                crate::p2p::isend(send, count, datatype, peer, tag, comm, request)
            }
            (Mode::Synchronous, None) => {
                crate::p2p::issend(send, count, datatype, peer, tag, comm, request)
            }
            (Mode::Buffered, _) => {
                crate::p2p::ibsend(send, count, datatype, peer, tag, comm, request)
            }
            (Mode::Ready, _) => crate::p2p::irsend(send, count, datatype, peer, tag, comm, request),
            (Mode::Receive, None) => {
                crate::p2p::irecv(receive, count, datatype, peer, tag, comm, request)
            }
        }
    };
    if rc == abi::SUCCESS {
        Ok(posted)
    } else {
        Err(rc)
    }
}

/// [`activate`]'s covered send.
///
/// # Safety
/// As [`activate`].
unsafe fn post_send(
    synchronous: bool,
    chan: Chan,
    buf: *const c_void,
    m: &Made,
    request: *mut Request,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        calls::post_send(
            None,
            synchronous,
            chan,
            buf,
            m.count,
            m.datatype,
            m.peer,
            m.tag,
            request,
        )
    }
}

/// Starts the kept request under `handle`: `None` when it is not one.
///
/// # Safety
/// As [`activate`].
unsafe fn start_kept(handle: Request) -> Option<c_int> {
    let m = made(handle)?;
    // SAFETY: the caller's contract.
    Some(unsafe { start_made(handle, &m, channel(&m)) })
}

/// Starts `m`, kept under `handle`, on `chan` ([`channel`]).
///
/// # Safety
/// As [`activate`].
unsafe fn start_made(handle: Request, m: &Made, chan: Option<Chan>) -> c_int {
    if m.active.is_some() {
        // starting an active request is erroneous: raised as MPI would
        crate::pmpi::safe::comm_call_errhandler(m.comm(), abi::ERR_REQUEST);
        return abi::ERR_REQUEST;
    }
    // SAFETY: the caller's contract.
    match unsafe { activate(m, chan) } {
        Ok(posted) => {
            with(|t| {
                t.get_mut(&handle.bits()).map(|k| {
                    k.active = Some(posted);
                    k.on = chan;
                })
            });
            abi::SUCCESS
        }
        Err(rc) => rc,
    }
}

/// At the end of a replay (`crate::engine::Activations::start`): starts the kept request
/// `handle` again, on the channel its last activation was covered on (the re-executed start
/// came from the log; its receive, in flight at the fault, was cancelled at the restore).
///
/// # Safety
/// As [`activate`].
pub(super) unsafe fn restart(handle: Request) -> Option<c_int> {
    let m = made(handle)?;
    // SAFETY: the caller's contract.
    Some(unsafe { start_made(handle, &m, m.on) })
}

/// A start (`call`) of the `count` requests at `requests` inside a CD that logs: within the
/// ordinary handler, which logs it or serves it from the log when the CD re-executes
/// (`crate::wait::start_via`), the activations its live step. A start that mixes kept
/// requests with others, or with one recovery does not cover now (a buffered or ready send, a
/// receive from `MPI_ANY_SOURCE` in the start), is made as usual instead: those kept are
/// forgotten, and a later loss ends the job (their requests stay bound to the communicator they
/// were made on, which a repair replaces).
///
/// # Safety
/// The MPI function's contract.
unsafe fn start_logged(call: Call, count: c_int, requests: *mut Request) -> c_int {
    let ordinary = || match call {
        // SAFETY: forwarded.
        Call::Start => unsafe { crate::wait::start(requests) },
        // SAFETY: forwarded.
        _ => unsafe { crate::wait::startall(count, requests) },
    };
    if !super::keeping() {
        // before the first version: started as made, like any request the CD logs
        return ordinary();
    }
    // SAFETY: the caller's `count` handles.
    let handles = unsafe { completion::slice(requests, count) }.to_vec();
    let kept: Vec<(Request, Made)> = with(|t| {
        handles
            .iter()
            .filter_map(|h| t.get(&h.bits()).map(|m| (*h, *m)))
            .collect()
    });
    let chans: Vec<Option<Chan>> = kept.iter().map(|(_, m)| channel(m)).collect();
    if kept.len() < handles.len() || chans.iter().any(Option::is_none) {
        if !kept.is_empty() {
            with(|t| {
                for (h, _) in &kept {
                    t.remove(&h.bits());
                }
            });
            crate::errors::stop_containing(
                "the application started persistent requests inside a CD that logs together \
                 with others, or in a mode in-job recovery does not cover",
            );
        }
        return ordinary();
    }
    let live = || {
        for ((handle, m), chan) in kept.iter().zip(&chans) {
            // SAFETY: the caller's requests' buffers (MPI's contract).
            let rc = unsafe { start_made(*handle, m, *chan) };
            if rc != abi::SUCCESS {
                return rc;
            }
        }
        abi::SUCCESS
    };
    // SAFETY: forwarded.
    unsafe { crate::wait::start_via(call, count, requests, live, false) }
}

/// `MPI_Start`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn start(request: *mut Request) -> c_int {
    if any() && !request.is_null() {
        if calls::logged() {
            // SAFETY: forwarded.
            return unsafe { start_logged(Call::Start, 1, request) };
        }
        // SAFETY: the caller's handle; its request's buffer (MPI's contract).
        if let Some(rc) = unsafe { start_kept(*request) } {
            stats::count(Call::Start);
            return rc;
        }
    }
    // SAFETY: forwarded.
    unsafe { crate::wait::start(request) }
}

/// `MPI_Startall`: the requests made elsewhere start together as usual, then each kept one
/// (MPI starts them in no particular order).
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn startall(count: c_int, requests: *mut Request) -> c_int {
    if !any() {
        // SAFETY: forwarded.
        return unsafe { crate::wait::startall(count, requests) };
    }
    if calls::logged() {
        // SAFETY: forwarded.
        return unsafe { start_logged(Call::Startall, count, requests) };
    }
    // SAFETY: the caller's `count` handles.
    let handles = unsafe { completion::slice(requests, count) };
    let (kept, mut others): (Vec<Request>, Vec<Request>) =
        with(|t| handles.iter().partition(|h| t.contains_key(&h.bits())));
    if kept.is_empty() {
        // SAFETY: forwarded.
        return unsafe { crate::wait::startall(count, requests) };
    }
    if others.is_empty() {
        // (else the ordinary handler counts it)
        stats::count(Call::Startall);
    }
    if !others.is_empty() {
        // SAFETY: the application's requests, in an array of their number.
        let rc = unsafe { crate::wait::startall(others.len() as c_int, others.as_mut_ptr()) };
        if rc != abi::SUCCESS {
            return rc;
        }
    }
    for handle in kept {
        // SAFETY: the caller's request's buffer (MPI's contract).
        if let Some(rc) = unsafe { start_kept(handle) }.filter(|&rc| rc != abi::SUCCESS) {
            return rc;
        }
    }
    abi::SUCCESS
}

/// `MPI_Request_free`: a kept request is forgotten; its activation, if active, is given to
/// the call as its own request (see `super::completion`).
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn request_free(request: *mut Request) -> c_int {
    let kept = match any() && !request.is_null() {
        // SAFETY: the caller's handle.
        true => with(|t| t.remove(&unsafe { *request }.bits())),
        false => None,
    };
    if let Some(mut active) = kept.and_then(|m| m.active) {
        // SAFETY: the activation's request, which the application frees with its handle.
        let rc = unsafe { completion::request_free(&mut active) };
        if rc != abi::SUCCESS {
            return rc;
        }
    }
    // SAFETY: forwarded (a kept request's own handle is inactive).
    unsafe { completion::request_free(request) }
}

/// `MPI_Cancel`: of a kept request, its activation's (an inactive one is the call's own).
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn cancel(request: *mut Request) -> c_int {
    // SAFETY: one handle, the caller's.
    let lent = lend(unsafe { completion::slice(request, 1) });
    // SAFETY: as above.
    let inactive = !lent.is_empty() && unsafe { *request } == abi::predefined().request_null;
    if inactive {
        // SAFETY: as above.
        give_back(unsafe { completion::slice(request, 1) }, &lent);
    }
    // SAFETY: forwarded, with the activation's request in place of an active kept one.
    let rc = unsafe { completion::cancel(request) };
    if !inactive {
        // SAFETY: as above.
        give_back(unsafe { completion::slice(request, 1) }, &lent);
    }
    rc
}

/// `MPI_Request_get_status`: of a kept request, its activation's (an inactive one's is empty).
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn request_get_status(
    request: Request,
    flag: *mut c_int,
    status: *mut Status,
) -> c_int {
    let mut handles = [request];
    lend(&mut handles);
    // SAFETY: forwarded, with the activation's request in place of a kept one.
    unsafe { completion::request_get_status(handles[0], flag, status) }
}

macro_rules! lending {
    ($($fn:ident($handles:ident, $n:expr; $($a:ident : $t:ty),*);)*) => {$(
        #[doc = concat!("`", stringify!($fn), "` of `super::completion`, lent the activations of kept requests (outside CDs that log: inside them, `super::completion` lends within the ordinary handler, see `super::kept`); the requests it completes that hold an all-form's memory are finished (`super::held`).")]
        ///
        /// # Safety
        /// The MPI function's contract.
        pub(crate) unsafe fn $fn($($a: $t),*) -> c_int {
            // SAFETY: the caller's handles.
            let noted = held::note(unsafe { completion::slice($handles, $n) });
            if !any() && noted.is_empty() {
                // SAFETY: forwarded.
                return unsafe { completion::$fn($($a),*) };
            }
            let lent = match calls::logged() {
                true => Vec::new(),
                // SAFETY: the caller's handles.
                false => lend(unsafe { completion::slice($handles, $n) }),
            };
            // SAFETY: forwarded, with the activations' requests in place of the kept ones.
            let rc = unsafe { completion::$fn($($a),*) };
            // SAFETY: the caller's handles, after the call.
            let handles = unsafe { completion::slice($handles, $n) };
            give_back(handles, &lent);
            held::release(handles, &noted);
            rc
        }
    )*};
}

lending! {
    wait(request, 1; request: *mut Request, status: *mut Status);
    waitall(requests, count; count: c_int, requests: *mut Request, statuses: *mut Status);
    waitany(requests, count; count: c_int, requests: *mut Request, index: *mut c_int, status: *mut Status);
    waitsome(requests, incount; incount: c_int, requests: *mut Request, outcount: *mut c_int, indices: *mut c_int, statuses: *mut Status);
    test(request, 1; request: *mut Request, flag: *mut c_int, status: *mut Status);
    testall(requests, count; count: c_int, requests: *mut Request, flag: *mut c_int, statuses: *mut Status);
    testany(requests, count; count: c_int, requests: *mut Request, index: *mut c_int, flag: *mut c_int, status: *mut Status);
    testsome(requests, incount; incount: c_int, requests: *mut Request, outcount: *mut c_int, indices: *mut c_int, statuses: *mut Status);
}
