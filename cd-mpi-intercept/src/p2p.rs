//! Point-to-point calls: sends are logged as events and dropped when re-executed; receives and
//! probes log their status and data and are served from the log when re-executed.
//!
//! Nonblocking posts (sends, receives, nonblocking collectives) log only their post number;
//! the completion call that completes them logs the data (see `wait`). Persistent requests are
//! made for real and their handles logged (a replay hands out the same ones); each `MPI_Start`
//! is a post. Matched probes log the message handle they got: a replayed `MPI_Mrecv` is served
//! from the log, and one that goes live after the replay receives the still pending message.

use crate::abi::{self, Comm, Datatype, Message, Request, Status};
use crate::engine::{self, Delivery, Route, Tracked};
use crate::pmpi::{real, Call};
use crate::record::{Header, Piece, Reader, Writer};
use crate::stats;
use crate::traffic::{self, Counts};
use std::borrow::Borrow;
use std::ffi::{c_int, c_void};

/// A blocking send of any mode: `real` reaches MPI, and counts the message itself unless
/// `counts` (in-job recovery's covered send does, `crate::recovery`).
///
/// # Safety
/// `real` is the MPI call with its contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn send_mode(
    call: Call,
    real: impl FnOnce() -> c_int,
    count: c_int,
    datatype: Datatype,
    dest: c_int,
    tag: c_int,
    comm: Comm,
    counts: bool,
) -> c_int {
    // Built where it is used: when recording, after `real` returns, so that the datatype's
    // lookup is not on the way to the message.
    let header = || Header::data(call, dest, tag, count.into(), datatype, comm);
    let route = engine::route(call);
    let counted = counts && engine::counted(&route);
    let rc = match route {
        Route::Direct => real(),
        Route::Record(guard) => {
            let rc = real();
            if rc == abi::SUCCESS {
                engine::log_header(&guard, &header());
            }
            rc
        }
        Route::Replay(_guard, reader) => {
            return match engine::expect(&reader, &header(), comm) {
                Ok(()) => {
                    stats::dropped();
                    abi::SUCCESS
                }
                Err(code) => code,
            }
        }
    };
    if counted && rc == abi::SUCCESS {
        traffic::sent(comm, dest);
    }
    rc
}

macro_rules! blocking_sends {
    ($($fn:ident / $large:ident => $call:ident / $Large:ident;)*) => {$(
        /// The wrapper of the MPI send of this name.
        ///
        /// # Safety
        /// The MPI function's contract.
        pub(crate) unsafe fn $fn(buf: *const c_void, count: c_int, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm) -> c_int {
            // SAFETY: forwarded.
            unsafe { send_mode(Call::$call, || real::$call(buf, count, datatype, dest, tag, comm), count, datatype, dest, tag, comm, true) }
        }

        /// The wrapper of the large-count MPI send of this name: as its int form's when the
        /// count fits.
        ///
        /// # Safety
        /// The MPI function's contract.
        #[cfg(mpi4_full)]
        pub(crate) unsafe fn $large(buf: *const c_void, count: i64, datatype: Datatype, dest: c_int, tag: c_int, comm: Comm) -> c_int {
            // SAFETY: the application's arguments, forwarded unchanged.
            let run = || unsafe { real::$Large(buf, count, datatype, dest, tag, comm) };
            crate::large::narrow_or_pass!(crate::large::sent(Call::$Large, run, comm, dest), count);
            // SAFETY: forwarded.
            unsafe { send_mode(Call::$Large, run, count, datatype, dest, tag, comm, true) }
        }
    )*};
}

blocking_sends! {
    send / send_c => Send / Send_c;
    ssend / ssend_c => Ssend / Ssend_c;
    bsend / bsend_c => Bsend / Bsend_c;
    rsend / rsend_c => Rsend / Rsend_c;
}

/// A nonblocking post (a send, a receive or a nonblocking collective): recorded, it gets a post
/// number and is tracked until a completion call logs it; replayed, it gets a virtual request.
/// A post that reaches MPI is counted as `counts` says (when messages are counted).
///
/// # Safety
/// `request` must be writable; `run` is the MPI call with its contract.
#[inline(always)]
pub(crate) unsafe fn post(
    header: Header,
    comm: Comm,
    delivery: impl FnOnce() -> Delivery,
    run: impl FnOnce(*mut Request) -> c_int,
    request: *mut Request,
    counts: impl FnOnce() -> Counts,
) -> c_int {
    // SAFETY: forwarded.
    unsafe { post_checked(header, &[], comm, delivery, run, request, counts) }
}

/// [`post`] with `check`: matching arguments the header has no room for (`MPI_Isendrecv`'s
/// receive side), recorded and compared at replay like [`receive_into`]'s.
///
/// # Safety
/// As [`post`].
pub(crate) unsafe fn post_checked(
    header: Header,
    check: &[c_int],
    comm: Comm,
    delivery: impl FnOnce() -> Delivery,
    run: impl FnOnce(*mut Request) -> c_int,
    request: *mut Request,
    counts: impl FnOnce() -> Counts,
) -> c_int {
    let route = engine::route(header.call);
    if engine::counted(&route) {
        let counts = counts();
        // SAFETY: forwarded.
        let rc = unsafe { post_routed(route, header, check, comm, delivery, run, request) };
        if rc == abi::SUCCESS {
            // SAFETY: MPI wrote the request.
            traffic::posted(counts, unsafe { *request });
        }
        return rc;
    }
    // SAFETY: forwarded.
    unsafe { post_routed(route, header, check, comm, delivery, run, request) }
}

/// [`post`] once routed.
///
/// # Safety
/// As [`post`].
unsafe fn post_routed(
    route: Route,
    header: Header,
    check: &[c_int],
    comm: Comm,
    delivery: impl FnOnce() -> Delivery,
    run: impl FnOnce(*mut Request) -> c_int,
    request: *mut Request,
) -> c_int {
    match route {
        Route::Direct => run(request),
        Route::Record(guard) => {
            let rc = run(request);
            if rc == abi::SUCCESS {
                let seq = engine::next_seq();
                let delivery = delivery();
                // SAFETY: MPI wrote the request.
                engine::track(unsafe { *request }, Tracked::new(seq, delivery, guard.cx()));
                let mut w = Writer::new(&header);
                w.u64(seq);
                write_check(&mut w, check);
                // SAFETY: no data pieces.
                unsafe { engine::log_record(&guard, &w) };
            }
            rc
        }
        Route::Replay(_guard, mut reader) => {
            if let Err(code) = engine::expect(&reader, &header, comm) {
                return code;
            }
            let Ok(seq) = reader.u64() else {
                return engine::corrupt(header.call, comm);
            };
            if let Err(code) = expect_check(&mut reader, check, header.call, comm) {
                return code;
            }
            let delivery = delivery();
            if matches!(delivery, Delivery::Nothing) {
                stats::dropped();
            }
            // SAFETY: `request` is the application's out-parameter.
            unsafe { engine::virtual_request(seq, delivery, request) }
        }
    }
}

/// A nonblocking send (`receives` false) or receive made as `call` with the application's
/// arguments, `run` reaching MPI (see [`post`]); counted here unless `counts` is false (then
/// `run` counts it: in-job recovery's covered posts, `crate::recovery`).
///
/// # Safety
/// `request` must be writable; `run` is the MPI call with its contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn post_message(
    call: Call,
    run: impl FnOnce(*mut Request) -> c_int,
    buf: *const c_void,
    count: c_int,
    datatype: Datatype,
    peer: c_int,
    tag: c_int,
    comm: Comm,
    request: *mut Request,
    receives: bool,
    counts: bool,
) -> c_int {
    let header = Header::data(call, peer, tag, count.into(), datatype, comm);
    let delivery = || match receives {
        true => receive(buf, count, datatype, peer, tag, comm),
        false => Delivery::Nothing,
    };
    let counted = || match (counts, receives) {
        (false, _) => Counts::Nothing,
        (true, true) => receive_on(comm, peer),
        (true, false) => send_to(comm, peer),
    };
    // SAFETY: forwarded.
    unsafe { post(header, comm, delivery, run, request, counted) }
}

/// Makes a persistent request: for real in every mode (a local call), its handle logged while
/// recording and handed out again from the log when replayed (the request still exists:
/// `MPI_Request_free` defers while logging). What each start counts is remembered in every
/// mode (counting may begin later).
///
/// # Safety
/// `request` must be writable; `run` is the MPI call with its contract.
pub(crate) unsafe fn make_persistent(
    header: Header,
    comm: Comm,
    delivery: impl FnOnce() -> Delivery,
    run: impl FnOnce(*mut Request) -> c_int,
    request: *mut Request,
    counts: impl FnOnce() -> Counts,
) -> c_int {
    match engine::route(header.call) {
        Route::Direct => {
            let rc = run(request);
            if rc == abi::SUCCESS {
                // SAFETY: MPI wrote the request.
                let handle = unsafe { *request };
                engine::register_persistent(handle, delivery());
                traffic::made_persistent(handle, counts());
            }
            rc
        }
        Route::Record(guard) => {
            let rc = run(request);
            if rc == abi::SUCCESS {
                // SAFETY: MPI wrote the request.
                let handle = unsafe { *request };
                engine::register_persistent(handle, delivery());
                traffic::made_persistent(handle, counts());
                let mut w = Writer::new(&header);
                w.u64(handle.bits());
                // SAFETY: no data pieces.
                unsafe { engine::log_record(&guard, &w) };
            }
            rc
        }
        Route::Replay(_guard, mut reader) => {
            if let Err(code) = engine::expect(&reader, &header, comm) {
                return code;
            }
            let Ok(bits) = reader.u64() else {
                return engine::corrupt(header.call, comm);
            };
            let handle = Request::from_bits(bits);
            engine::register_persistent(handle, delivery());
            traffic::made_persistent(handle, counts());
            // SAFETY: `request` is the application's out-parameter.
            unsafe { request.write(handle) };
            abi::SUCCESS
        }
    }
}

/// What a send counts: a message to `dest`.
fn send_to(comm: Comm, dest: c_int) -> Counts {
    Counts::Send(comm, dest)
}

/// What a receive counts: a pending receive on `comm`; nothing from `MPI_PROC_NULL` (whose
/// status MPICH 4.0 completes with source 0, not `MPI_PROC_NULL`).
fn receive_on(comm: Comm, source: c_int) -> Counts {
    if source == abi::PROC_NULL {
        Counts::Nothing
    } else {
        Counts::Receive(comm)
    }
}

/// What a send delivers: nothing.
fn nothing(_: *const c_void, _: c_int, _: Datatype, _: c_int, _: c_int, _: Comm) -> Delivery {
    Delivery::Nothing
}

/// What a receive delivers: its buffer, and its source and tag.
fn receive(
    buf: *const c_void,
    count: c_int,
    datatype: Datatype,
    source: c_int,
    tag: c_int,
    comm: Comm,
) -> Delivery {
    Delivery::Receive {
        dest: Piece {
            buf,
            count,
            datatype,
            comm,
        },
        source,
        tag,
    }
}

/// Defines the nonblocking and persistent point-to-point wrappers and their large-count forms:
/// `via` names how the request is made ([`post`] or [`make_persistent`]), `delivers` what it
/// delivers, `counts` what it counts.
macro_rules! posts {
    ($($fn:ident / $large:ident => $call:ident / $Large:ident($buf:ty) via $how:ident delivers $delivery:ident counts $counts:ident;)*) => {$(
        #[doc = concat!("The wrapper of `MPI_", stringify!($call), "`.")]
        ///
        /// # Safety
        /// The MPI function's contract.
        pub(crate) unsafe fn $fn(buf: $buf, count: c_int, datatype: Datatype, peer: c_int, tag: c_int, comm: Comm, request: *mut Request) -> c_int {
            // SAFETY: the application's arguments, forwarded unchanged.
            let run = |r| unsafe { real::$call(buf, count, datatype, peer, tag, comm, r) };
            posts!(@made $how $delivery $counts $call (buf, count, datatype, peer, tag, comm) run request)
        }

        #[doc = concat!("The wrapper of `MPI_", stringify!($Large), "`: as its int form's when the count fits.")]
        ///
        /// # Safety
        /// The MPI function's contract.
        #[cfg(mpi4_full)]
        pub(crate) unsafe fn $large(buf: $buf, count: i64, datatype: Datatype, peer: c_int, tag: c_int, comm: Comm, request: *mut Request) -> c_int {
            // SAFETY: the application's arguments, forwarded unchanged.
            let run = |r| unsafe { real::$Large(buf, count, datatype, peer, tag, comm, r) };
            crate::large::narrow_or_pass!(posts!(@beyond $how $counts $Large (comm, peer) run request), count);
            posts!(@made $how $delivery $counts $Large (buf, count, datatype, peer, tag, comm) run request)
        }
    )*};
    // beyond INT_MAX: passed through, counted as the int form counts (see `large`)
    (@beyond post $counts:ident $Large:ident ($comm:ident, $peer:ident) $run:ident $request:ident) => {
        // SAFETY: the application's arguments.
        unsafe { crate::large::posted(Call::$Large, $run, $request, || $counts($comm, $peer)) }
    };
    (@beyond make_persistent $counts:ident $Large:ident ($comm:ident, $peer:ident) $run:ident $request:ident) => {
        // SAFETY: the application's arguments.
        unsafe {
            crate::large::persistent(
                Call::$Large,
                crate::large::start_refusal!($Large),
                $run,
                $request,
                || $counts($comm, $peer),
            )
        }
    };
    (@made post $delivery:ident $counts:ident $call:ident
        ($buf:ident, $count:ident, $datatype:ident, $peer:ident, $tag:ident, $comm:ident) $run:ident $request:ident) => {
        // SAFETY: forwarded.
        unsafe {
            post_message(
                Call::$call,
                $run,
                $buf as *const c_void,
                $count,
                $datatype,
                $peer,
                $tag,
                $comm,
                $request,
                posts!(@receives $delivery),
                true,
            )
        }
    };
    (@receives receive) => { true };
    (@receives nothing) => { false };
    (@made $how:ident $delivery:ident $counts:ident $call:ident
        ($buf:ident, $count:ident, $datatype:ident, $peer:ident, $tag:ident, $comm:ident) $run:ident $request:ident) => {{
        let header = Header::data(Call::$call, $peer, $tag, $count.into(), $datatype, $comm);
        // SAFETY: forwarded.
        unsafe {
            $how(
                header,
                $comm,
                || $delivery($buf as *const c_void, $count, $datatype, $peer, $tag, $comm),
                $run,
                $request,
                || $counts($comm, $peer),
            )
        }
    }};
}

posts! {
    isend / isend_c => Isend / Isend_c(*const c_void) via post delivers nothing counts send_to;
    issend / issend_c => Issend / Issend_c(*const c_void) via post delivers nothing counts send_to;
    ibsend / ibsend_c => Ibsend / Ibsend_c(*const c_void) via post delivers nothing counts send_to;
    irsend / irsend_c => Irsend / Irsend_c(*const c_void) via post delivers nothing counts send_to;
    irecv / irecv_c => Irecv / Irecv_c(*mut c_void) via post delivers receive counts receive_on;
    send_init / send_init_c => Send_init / Send_init_c(*const c_void) via make_persistent delivers nothing counts send_to;
    ssend_init / ssend_init_c => Ssend_init / Ssend_init_c(*const c_void) via make_persistent delivers nothing counts send_to;
    bsend_init / bsend_init_c => Bsend_init / Bsend_init_c(*const c_void) via make_persistent delivers nothing counts send_to;
    rsend_init / rsend_init_c => Rsend_init / Rsend_init_c(*const c_void) via make_persistent delivers nothing counts send_to;
    recv_init / recv_init_c => Recv_init / Recv_init_c(*mut c_void) via make_persistent delivers receive counts receive_on;
}

/// Defines the int and large-count wrappers of a receiving call over one body: the int form
/// runs `body` with its `real::X`, the large-count form (MPI-4) narrows `narrow`, the counts
/// its record holds, and runs the same body under its own name with its `real::X_c` and the
/// application's arguments, or passes through as unreplayable when one does not fit.
/// `body` gets the call being made as `call` and the real MPI call as `run`, a closure over
/// the out-parameter named by `out`, which the body may replace by its own. `beyond` is the
/// large-count form's pass-through when a count does not fit (`large`), with `call` and `run`
/// too: it counts what `body` counts.
macro_rules! receives {
    ($(
        $(#[$doc:meta])*
        $fn:ident / $large:ident => $Call:ident / $Large:ident
            ($($a:ident : $t:ty | $tl:ty),*) narrow($($c:ident),*) out($out:ident : $out_t:ty)
            beyond $beyond:block
            |$call:ident, $run:ident| $body:block
    )*) => {$(
        $(#[$doc])*
        ///
        /// # Safety
        /// The MPI function's contract.
        #[allow(clippy::too_many_arguments)]
        pub(crate) unsafe fn $fn($($a: $t,)* $out: $out_t) -> c_int {
            let $call = Call::$Call;
            // SAFETY: the application's arguments, forwarded unchanged.
            let $run = |$out| unsafe { real::$Call($($a,)* $out) };
            $body
        }

        #[doc = concat!("The wrapper of `MPI_", stringify!($Large), "`: as its int form's when its counts fit.")]
        ///
        /// # Safety
        /// The MPI function's contract.
        #[cfg(mpi4_full)]
        #[allow(clippy::too_many_arguments)]
        pub(crate) unsafe fn $large($($a: $tl,)* $out: $out_t) -> c_int {
            let $call = Call::$Large;
            // SAFETY: the application's arguments, forwarded unchanged.
            let $run = |$out| unsafe { real::$Large($($a,)* $out) };
            crate::large::narrow_or_pass!($beyond, $($c),*);
            $body
        }
    )*};
}

#[cfg(mpi4)]
pub(crate) use receives;

receives! {
    /// `MPI_Imrecv`: a receive of a matched message (the matching was logged by the probe).
    imrecv / imrecv_c => Imrecv / Imrecv_c
        (buf: *mut c_void | *mut c_void, count: c_int | i64, datatype: Datatype | Datatype, message: *mut Message | *mut Message)
        narrow(count) out(request: *mut Request)
        // SAFETY: forwarded; the matched message is read before MPI nulls it.
        beyond { unsafe { crate::large::posted(call, run, request, || traffic::message_comm(*message).map_or(Counts::Nothing, Counts::Receive)) } }
        // SAFETY: forwarded.
        |call, run| { unsafe { imrecv_via(call, run, buf, count, datatype, message, request, true) } }

    /// `MPI_Recv`.
    recv / recv_c => Recv / Recv_c
        (buf: *mut c_void | *mut c_void, count: c_int | i64, datatype: Datatype | Datatype, source: c_int | c_int, tag: c_int | c_int, comm: Comm | Comm)
        narrow(count) out(status: *mut Status)
        // SAFETY: forwarded.
        beyond { unsafe { crate::large::received(call, run, status, || Some((comm, source != abi::PROC_NULL, None))) } }
        // SAFETY: forwarded.
        |call, run| { unsafe { recv_via(call, run, buf, count, datatype, source, tag, comm, status, true) } }

    /// `MPI_Mrecv`.
    mrecv / mrecv_c => Mrecv / Mrecv_c
        (buf: *mut c_void | *mut c_void, count: c_int | i64, datatype: Datatype | Datatype, message: *mut Message | *mut Message)
        narrow(count) out(status: *mut Status)
        // SAFETY: forwarded; the matched message is read before MPI nulls it.
        beyond { unsafe { crate::large::received(call, run, status, || traffic::message_comm(*message).map(|c| (c, true, None))) } }
        // SAFETY: forwarded.
        |call, run| { unsafe { mrecv_via(call, run, buf, count, datatype, message, status, true) } }

    /// `MPI_Sendrecv`: the send half is an event, the receive half logs its data.
    sendrecv / sendrecv_c => Sendrecv / Sendrecv_c
        (sendbuf: *const c_void | *const c_void, sendcount: c_int | i64, sendtype: Datatype | Datatype, dest: c_int | c_int, sendtag: c_int | c_int,
         recvbuf: *mut c_void | *mut c_void, recvcount: c_int | i64, recvtype: Datatype | Datatype, source: c_int | c_int, recvtag: c_int | c_int, comm: Comm | Comm)
        narrow(sendcount, recvcount) out(status: *mut Status)
        // SAFETY: forwarded.
        beyond { unsafe { crate::large::received(call, run, status, || Some((comm, source != abi::PROC_NULL, Some(dest)))) } }
        // SAFETY: forwarded.
        |call, run| {
            unsafe {
                sendrecv_via(
                    call, run, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                    source, recvtag, comm, status, true,
                )
            }
        }

    /// `MPI_Sendrecv_replace`.
    sendrecv_replace / sendrecv_replace_c => Sendrecv_replace / Sendrecv_replace_c
        (buf: *mut c_void | *mut c_void, count: c_int | i64, datatype: Datatype | Datatype, dest: c_int | c_int, sendtag: c_int | c_int,
         source: c_int | c_int, recvtag: c_int | c_int, comm: Comm | Comm)
        narrow(count) out(status: *mut Status)
        // SAFETY: forwarded.
        beyond { unsafe { crate::large::received(call, run, status, || Some((comm, source != abi::PROC_NULL, Some(dest)))) } }
        |call, run| {
            let header = Header::data(call, dest, sendtag, count.into(), datatype, comm);
            let piece = Piece {
                buf,
                count,
                datatype,
                comm,
            };
            // SAFETY: forwarded.
            unsafe {
                receive_into(
                    header,
                    &[source, recvtag],
                    piece,
                    true,
                    status,
                    run,
                    || Some((comm, source != abi::PROC_NULL, Some(dest))),
                )
            }
        }
}

/// `MPI_Recv` made as `call` (its int form, or its large-count form whose count fits), with
/// `run` reaching MPI; its message is counted here unless `counts` is false (then `run` counts
/// it: in-job recovery's covered receive, `crate::recovery`).
///
/// # Safety
/// `run` is the MPI call with its contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn recv_via(
    call: Call,
    run: impl FnOnce(*mut Status) -> c_int,
    buf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    source: c_int,
    tag: c_int,
    comm: Comm,
    status: *mut Status,
    counts: bool,
) -> c_int {
    let header = Header::data(call, source, tag, count.into(), datatype, comm);
    let dest = Piece {
        buf,
        count,
        datatype,
        comm,
    };
    let counted = move || counts.then_some((comm, source != abi::PROC_NULL, None));
    // SAFETY: forwarded.
    unsafe { receive_into(header, &[], dest, false, status, run, counted) }
}

/// `MPI_Mrecv` of the matched `message` as [`recv_via`] makes `MPI_Recv`; the handle is nulled
/// as MPI would.
///
/// # Safety
/// `run` is the MPI call with its contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn mrecv_via(
    call: Call,
    run: impl FnOnce(*mut Status) -> c_int,
    buf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    message: *mut Message,
    status: *mut Status,
    counts: bool,
) -> c_int {
    let world = abi::predefined().comm_world;
    let header = Header::data(call, 0, 0, count.into(), datatype, world);
    let dest = Piece {
        buf,
        count,
        datatype,
        comm: world,
    };
    // SAFETY: the application's handle, read before MPI nulls it.
    let matched = unsafe { *message };
    let counted = move || {
        counts
            .then(|| traffic::message_comm(matched).map(|c| (c, true, None)))
            .flatten()
    };
    // SAFETY: forwarded.
    let rc = unsafe { receive_into(header, &[], dest, false, status, run, counted) };
    if rc == abi::SUCCESS {
        // SAFETY: the application's handle.
        unsafe { message.write(abi::predefined().message_null) };
    }
    rc
}

/// `MPI_Imrecv` of the matched `message` as [`post_message`] posts `MPI_Irecv`; the handle is
/// nulled as MPI would.
///
/// # Safety
/// `run` is the MPI call with its contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn imrecv_via(
    call: Call,
    run: impl FnOnce(*mut Request) -> c_int,
    buf: *mut c_void,
    count: c_int,
    datatype: Datatype,
    message: *mut Message,
    request: *mut Request,
    counts: bool,
) -> c_int {
    let world = abi::predefined().comm_world;
    let header = Header::data(call, 0, 0, count.into(), datatype, world);
    let (any_source, any_tag) = (abi::ANY_SOURCE, abi::ANY_TAG);
    let delivery = || receive(buf, count, datatype, any_source, any_tag, world);
    // SAFETY: the application's handle, read before MPI nulls it.
    let matched = unsafe { *message };
    let counted = move || match counts {
        true => traffic::message_comm(matched).map_or(Counts::Nothing, Counts::Receive),
        false => Counts::Nothing,
    };
    // SAFETY: forwarded.
    let rc = unsafe { post(header, world, delivery, run, request, counted) };
    if rc == abi::SUCCESS {
        // SAFETY: the application's handle.
        unsafe { message.write(abi::predefined().message_null) };
    }
    rc
}

/// `MPI_Sendrecv` as [`recv_via`] makes `MPI_Recv`.
///
/// # Safety
/// `run` is the MPI call with its contract.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn sendrecv_via(
    call: Call,
    run: impl FnOnce(*mut Status) -> c_int,
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
    counts: bool,
) -> c_int {
    let header = Header::data(call, dest, sendtag, sendcount.into(), sendtype, comm);
    let check = [
        source,
        recvtag,
        recvcount,
        crate::types::size(recvtype) as c_int,
    ];
    let piece = Piece {
        buf: recvbuf,
        count: recvcount,
        datatype: recvtype,
        comm,
    };
    let counted = move || counts.then_some((comm, source != abi::PROC_NULL, Some(dest)));
    // SAFETY: forwarded.
    unsafe { receive_into(header, &check, piece, true, status, run, counted) }
}

/// Records the matching arguments of a receive that its header has no room for (source, tag,
/// count and the datatype's size).
fn write_check<H: Borrow<Header>>(w: &mut Writer<H>, check: &[c_int]) {
    for &c in check {
        w.int(c);
    }
}

/// Compares the re-executed call's `check` with the one its record holds: a mismatch is
/// reported as [`engine::mismatch`] with both, a record too short as corrupt.
fn expect_check(reader: &mut Reader, check: &[c_int], call: Call, comm: Comm) -> Result<(), c_int> {
    let mut logged = Vec::with_capacity(check.len());
    for _ in check {
        logged.push(reader.int().map_err(|_| engine::corrupt(call, comm))?);
    }
    if logged != check {
        return Err(engine::mismatch(&format!("CD replay mismatch: the re-executed {} receives with (source/tag/count/size) {check:?}, the log holds {logged:?}", call.name()), comm));
    }
    Ok(())
}

/// A blocking call that receives into `dest` (and, if `sends`, sends too): recorded with its
/// extra matching arguments `check`, its status and data; replayed from them. When messages
/// are counted, `counts` gives the communicator, whether a message is received (counted from
/// the status's source; not from `MPI_PROC_NULL`) and the destination of the send, if any.
///
/// # Safety
/// `run` is the MPI call with its contract; `dest` is where it receives.
unsafe fn receive_into(
    header: Header,
    check: &[c_int],
    dest: Piece,
    sends: bool,
    status: *mut Status,
    run: impl FnOnce(*mut Status) -> c_int,
    counts: impl FnOnce() -> Option<(Comm, bool, Option<c_int>)>,
) -> c_int {
    let (call, comm) = (header.call, dest.comm);
    let route = engine::route(call);
    let counts = if engine::counted(&route) {
        counts()
    } else {
        None
    };
    let count = |st: &Status| {
        if let Some((on, receives, send)) = counts {
            if let Some(to) = send {
                traffic::sent(on, to);
            }
            if receives {
                traffic::received(on, st.source(), st.tag());
            }
        }
    };
    match route {
        Route::Direct if counts.is_none() => run(status),
        Route::Direct => {
            let mut st = Status::zeroed();
            let rc = run(&mut st);
            if rc == abi::SUCCESS {
                count(&st);
            }
            // SAFETY: the application's status argument.
            unsafe { st.store(status) };
            rc
        }
        Route::Record(guard) => {
            let mut st = Status::zeroed();
            let rc = run(&mut st);
            if rc == abi::SUCCESS {
                count(&st);
                let kind = header.kind_of(dest.datatype);
                let got = engine::received_count(&st, &dest, kind);
                let n = got.count;
                let piece = Piece { count: n, ..dest };
                // SAFETY: the receive completed into `dest`.
                let logged = got.partial.is_none()
                    && unsafe { engine::log_received(&guard, &header, check, &st, piece, kind) };
                if !logged {
                    let mut w = Writer::new(&header);
                    write_check(&mut w, check);
                    w.status(&st).int(n).piece_received(piece, got.partial);
                    // SAFETY: the receive completed into `dest`.
                    unsafe { engine::log_record(&guard, &w) };
                }
            }
            // SAFETY: the application's status argument.
            unsafe { st.store(status) };
            rc
        }
        Route::Replay(_guard, mut reader) => {
            if let Err(code) = engine::expect(&reader, &header, comm) {
                return code;
            }
            if let Err(code) = expect_check(&mut reader, check, call, comm) {
                return code;
            }
            let served = (|| {
                let st = reader.status()?;
                let n = reader.int()?;
                if n > dest.count {
                    return Err(crate::record::Corrupt);
                }
                // SAFETY: the application's receive buffer, `count >= n` elements.
                unsafe { reader.unpack_into(dest.buf.cast_mut(), n, dest.datatype, comm)? };
                Ok::<_, crate::record::Corrupt>(st)
            })();
            match served {
                Ok(st) => {
                    if sends {
                        stats::dropped();
                    }
                    // SAFETY: the application's status argument.
                    unsafe { st.store(status) };
                    abi::SUCCESS
                }
                Err(_) => engine::corrupt(call, comm),
            }
        }
    }
}

/// What a probe-like call reports: its flag (the Test-like forms), matched message handle
/// (the M forms) and status are logged while recording and reported from the log when
/// replayed. `run` calls MPI with our own out-parameters, `direct` with the application's.
///
/// # Safety
/// The out-parameters must be valid for the MPI function.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn probing(
    header: Header,
    comm: Comm,
    flag: Option<*mut c_int>,
    message: Option<*mut Message>,
    status: *mut Status,
    run: impl FnOnce(*mut c_int, *mut Message, *mut Status) -> c_int,
    direct: impl FnOnce() -> c_int,
) -> c_int {
    let call = header.call;
    let route = engine::route(call);
    // a matched probe's message is received later by Mrecv/Imrecv, which needs its comm
    let counted = message.is_some() && engine::counted(&route);
    let (f, m, st) = match route {
        Route::Direct if !counted => return direct(),
        Route::Direct => {
            let (mut f, mut m, mut st) = (1, abi::predefined().message_null, Status::zeroed());
            let rc = run(&mut f, &mut m, &mut st);
            if rc != abi::SUCCESS {
                return rc;
            }
            (f, m, st)
        }
        Route::Record(guard) => {
            let (mut f, mut m, mut st) = (1, abi::predefined().message_null, Status::zeroed());
            let rc = run(&mut f, &mut m, &mut st);
            if rc != abi::SUCCESS {
                return rc;
            }
            let mut w = Writer::new(&header);
            w.int(f).u64(m.bits()).status(&st);
            // SAFETY: no pieces.
            unsafe { engine::log_record(&guard, &w) };
            (f, m, st)
        }
        Route::Replay(_guard, mut reader) => {
            if let Err(code) = engine::expect(&reader, &header, comm) {
                return code;
            }
            match (reader.int(), reader.u64(), reader.status()) {
                (Ok(f), Ok(m), Ok(st)) => (f, Message::from_bits(m), st),
                _ => return engine::corrupt(call, comm),
            }
        }
    };
    if counted && f != 0 {
        traffic::probed(m, comm);
    }
    // SAFETY: the application's out-parameters.
    unsafe {
        if let Some(flag) = flag {
            flag.write(f);
        }
        if f != 0 {
            if let Some(message) = message {
                message.write(m);
            }
            st.store(status);
        }
    }
    abi::SUCCESS
}

/// The header of a probe of `source` and `tag` on `comm` made as `call`.
pub(crate) fn probe_header(call: Call, source: c_int, tag: c_int, comm: Comm) -> Header {
    Header {
        peer: source,
        tag,
        ..Header::plain(call, comm)
    }
}

/// Defines the probe wrappers: each reports through [`probing`], `mine` naming the
/// out-parameters (ours: flag `f`, message `m`, status `st`) the MPI call takes.
macro_rules! probes {
    ($(
        $(#[$doc:meta])*
        $fn:ident => $call:ident($($a:ident : $t:ty),*)
            reports($flag:expr, $message:expr, $status:ident)
            mine |$f:pat_param, $m:pat_param, $st:pat_param| ($($mine:ident),*);
    )*) => {$(
        $(#[$doc])*
        ///
        /// # Safety
        /// The MPI function's contract.
        pub(crate) unsafe fn $fn(source: c_int, tag: c_int, comm: Comm, $($a: $t),*) -> c_int {
            if crate::errors::keeping() && !crate::boundary::inside() {
                let flag: Option<*mut c_int> = $flag;
                crate::errors::probed(source, flag.is_some());
            }
            let header = probe_header(Call::$call, source, tag, comm);
            // SAFETY: forwarded.
            unsafe {
                probing(
                    header,
                    comm,
                    $flag,
                    $message,
                    $status,
                    |$f, $m, $st| real::$call(source, tag, comm, $($mine),*),
                    || real::$call(source, tag, comm, $($a),*),
                )
            }
        }
    )*};
}

probes! {
    /// `MPI_Probe`: the status found is logged (the matched source and tag are determinants).
    probe => Probe(status: *mut Status)
        reports(None, None, status) mine |_, _, st| (st);
    /// `MPI_Iprobe`: the flag and status are logged and replayed.
    iprobe => Iprobe(flag: *mut c_int, status: *mut Status)
        reports(Some(flag), None, status) mine |f, _, st| (f, st);
    /// `MPI_Mprobe`: the status and the matched message's handle are logged.
    mprobe => Mprobe(message: *mut Message, status: *mut Status)
        reports(None, Some(message), status) mine |_, m, st| (m, st);
    /// `MPI_Improbe`: the flag, status and message handle are logged.
    improbe => Improbe(flag: *mut c_int, message: *mut Message, status: *mut Status)
        reports(Some(flag), Some(message), status) mine |f, m, st| (f, m, st);
}
