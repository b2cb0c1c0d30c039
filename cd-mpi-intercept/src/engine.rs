//! The per-thread engine: routes each call (straight to MPI, recorded, or replayed), tracks the
//! requests it must log at completion, hands out the requests of a replay, and drains requests
//! still in flight when `restore_cd` rewinds the thread.
//!
//! # Requests
//! A request posted while recording is *tracked* (its post number and where its data goes), so
//! that the Wait/Test call that completes it logs the received bytes. During a replay a posting
//! call gets a *virtual* request: a generalized request (`MPI_Grequest_start`), a real MPI
//! object, so that it can be stored, converted to Fortran, and mixed with live requests in any
//! Wait/Test array. The logged completion (which requests, in which order, with which status and
//! data: the determinants) completes it. When the log runs out while virtual requests are still
//! open, they are the requests that were in flight at the fault: each is then bound to a live
//! request (a receive is posted again for real, in posting order) or completed with the data
//! drained at restore, and the thread goes on recording. A restore during a re-execution
//! (a second fault before its replay was consumed, or before it completed the requests bound
//! when the replay ended) leaves that re-execution's virtual requests behind: the next replay
//! hands the same posts out again, and each one left behind is discarded then, its drained
//! data kept for the new one (else it would be bound a second time: a receive posted again
//! for real takes a later message).
//!
//! # Requests in flight at `restore_cd`
//! A request posted before the fault but not completed would touch application memory later,
//! after the restore rewrote it: a receive would write into it, a send (or a collective's
//! contribution) may still read from it, since MPI reads a send buffer whenever it moves the
//! data. So the restore hook *drains* every tracked request the restore rolls back (posted by
//! the restored CD, a live descendant or a CD that ended: the CD active at the post is kept
//! with it) before any memory is written; one a live ancestor posted before the restored CD
//! began is not posted again by the re-execution, and stays in flight for the ancestor to
//! complete. Then:
//! - a receive is cancelled and the cancel waited for; one that had already matched completes
//!   instead, and its data and status are kept for the re-executed receive. Cancelling is
//!   preferred to waiting because the message may depend on this rank's own re-execution
//!   (waiting could deadlock); a cancelled receive is posted again when the re-execution
//!   reaches it live. (A receive that had already completed inside MPI before the fault gives
//!   the bytes its buffer holds at restore: if the fault itself corrupted them, they are what
//!   the re-execution gets. Receiving into log memory instead of the application's buffer
//!   would close this; it is not done yet.)
//! - a nonblocking collective cannot be cancelled (MPI 3.1, 5.12): it is completed (the other
//!   ranks are live and join it) and its outputs are kept;
//! - a send is given up to `CD_MPI_DRAIN_SENDS_MS` milliseconds (default 1000) to complete
//!   (`MPI_Request_get_status`, which leaves the request to whoever completes it later):
//!   an eager send completes at once, a rendezvous send as soon as its receiver posts. A send
//!   whose receiver first waits for something this rank has not sent yet cannot complete
//!   before the re-execution: it is left in flight (counted as `sends.unsettled`) and may then
//!   carry restored data. The re-executed send is dropped either way.

use crate::abi::{self, Comm, Datatype, Request, Status};
use crate::boundary::Guard;
use crate::pmpi::{real, safe, Call, CancelFn, FreeFn, QueryFn};
use crate::record::{Corrupt, Header, Piece, Pieces, Reader, Writer};
use crate::stats;
use cd_core::LogMode;
use smallvec::smallvec;
use std::borrow::Borrow;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::ffi::{c_int, c_void, CString};

/// Where a call goes.
pub(crate) enum Route {
    /// Straight to MPI: no logging CD, or the runtime's own traffic.
    Direct,
    /// To MPI, then into the log.
    Record(Guard),
    /// Served from the log: the record this call must match.
    Replay(Guard, Reader),
}

/// Routes a call: no thread-local access while no CD in the process logs, else one (the
/// thread's context, which the guard keeps for the append: see `boundary`). Always inlined: a
/// `Route` returned through memory was read back right after the call and stalled on the
/// store.
#[inline(always)]
pub(crate) fn route(call: Call) -> Route {
    stats::count(call);
    if !cd_core::logging_anywhere() {
        return Route::Direct;
    }
    // SAFETY: kept in the guard, within this call (see `boundary`).
    let Some(cx) = (unsafe { cd_core::thread_cx() }) else {
        return Route::Direct;
    };
    let mode = cx.mode();
    if mode == LogMode::Off {
        return Route::Direct;
    }
    let Some(guard) = Guard::try_enter_in(cx) else {
        return Route::Direct;
    };
    match mode {
        LogMode::Replay => begin_replay(call, guard),
        _ => Route::Record(guard),
    }
}

/// Whether a call routed so is the application's own traffic and messages are counted
/// (persistence in use): a direct call outside the interposer, or a recorded one. Replayed
/// calls never reach MPI, and the runtime's own calls are inside the guard.
#[inline]
pub(crate) fn counted(route: &Route) -> bool {
    crate::traffic::on()
        && match route {
            Route::Direct => !crate::boundary::inside(),
            Route::Record(_) => true,
            Route::Replay(..) => false,
        }
}

#[cold]
fn begin_replay(call: Call, guard: Guard) -> Route {
    let _span = tracing::debug_span!("replay", call = call.name()).entered();
    match cd_core::log_next() {
        Ok(Some(entry)) => match Reader::new(entry) {
            Ok(reader) => {
                stats::replayed();
                Route::Replay(guard, reader)
            }
            Err(Corrupt) => {
                tracing::error!(call = call.name(), "unreadable MPI log record; going live");
                Route::Record(guard)
            }
        },
        Ok(None) => {
            replay_ended(guard.cx());
            Route::Record(guard)
        }
        Err(error) => {
            tracing::warn!(call = call.name(), %error, "no replay log; going live");
            Route::Record(guard)
        }
    }
}

/// Appends a record, reporting a failure through `tracing` (the call itself succeeded): for
/// calls made rarely (communicator constructors), which have no guard at hand.
///
/// # Safety
/// As [`Writer::append`].
pub(crate) unsafe fn log(writer: Writer) {
    // SAFETY: forwarded.
    if let Err(error) = unsafe { writer.append(None) } {
        log_failed(error);
    }
}

/// [`log`] of a record built in place, in the thread context the call's guard holds (no
/// thread-local access of its own). By reference, since moving a `Writer` (about 250 bytes)
/// cost a `memcpy` and a stall reading it back.
///
/// # Safety
/// As [`Writer::append`].
#[inline(always)]
pub(crate) unsafe fn log_record(guard: &Guard, writer: &Writer<impl Borrow<Header>>) {
    // SAFETY: forwarded.
    if let Err(error) = unsafe { writer.append(guard.cx()) } {
        log_failed(error);
    }
}

/// [`log_record`] of a record of the header alone (a blocking send's), written without a
/// [`Writer`] where the guard holds the thread's context ([`crate::record::append_header`]).
#[inline(always)]
pub(crate) fn log_header(guard: &Guard, header: &Header) {
    let result = match guard.cx() {
        Some(cx) => crate::record::append_header(cx, header),
        // SAFETY: no data pieces.
        None => unsafe { Writer::new(header).append(None) },
    };
    if let Err(error) = result {
        log_failed(error);
    }
}

/// Logs the record of a completed receive of `piece` (its count the elements received) with
/// its check words and status, when it has the common shape that
/// [`crate::record::append_received`] writes directly; whether it did (appended, or the
/// failure reported). `false`: the caller logs it with a [`Writer`].
///
/// # Safety
/// The piece must be readable: `count` elements of its datatype at `buf`.
#[inline(always)]
pub(crate) unsafe fn log_received(
    guard: &Guard,
    header: &Header,
    check: &[c_int],
    status: &Status,
    piece: Piece,
    kind: crate::types::Kind,
) -> bool {
    let Some(cx) = guard.cx() else {
        return false;
    };
    // SAFETY: forwarded.
    match unsafe { crate::record::append_received(cx, header, check, status, piece, kind) } {
        Some(Ok(())) => true,
        Some(Err(error)) => {
            log_failed(error);
            true
        }
        None => false,
    }
}

/// Counts and reports a record the log refused.
#[cold]
fn log_failed(error: cd_core::CdError) {
    stats::log_failed();
    tracing::warn!(%error, "MPI log record not appended");
}

/// Checks that a replayed record is the call being re-executed; on a mismatch, reports both
/// calls through the communicator's error handler and returns the error code.
pub(crate) fn expect(reader: &Reader, want: &Header, comm: Comm) -> Result<(), c_int> {
    if reader.header == *want {
        return Ok(());
    }
    Err(mismatch(
        &format!(
            "CD replay mismatch: re-executed {want}, logged {}; a re-execution must repeat \
             the logged MPI calls in order",
            reader.header
        ),
        comm,
    ))
}

/// Reports a replay error (unreadable or mismatching record) with its own MPI error code whose
/// string is `message`, through the communicator's error handler.
pub(crate) fn mismatch(message: &str, comm: Comm) -> c_int {
    stats::mismatch();
    tracing::error!("{message}");
    let code = error_code(message);
    safe::comm_call_errhandler(comm, code);
    code
}

/// A corrupt record, as an MPI error.
pub(crate) fn corrupt(call: Call, comm: Comm) -> c_int {
    mismatch(
        &format!(
            "CD replay: the MPI log record for {} is unreadable",
            call.name()
        ),
        comm,
    )
}

fn error_code(message: &str) -> c_int {
    static CLASS: std::sync::OnceLock<c_int> = std::sync::OnceLock::new();
    let class = *CLASS.get_or_init(|| safe::add_error_class().unwrap_or(abi::ERR_OTHER));
    if class == abi::ERR_OTHER {
        return class;
    }
    let Ok(code) = safe::add_error_code(class) else {
        return class;
    };
    // MPI refuses strings of MPI_MAX_ERROR_STRING bytes or more (Open MPI's limit is 256).
    let mut text = message.replace('\0', " ");
    let limit = usize::try_from(abi::MAX_ERROR_STRING)
        .unwrap_or(256)
        .saturating_sub(1);
    if text.len() > limit {
        let mut end = limit.saturating_sub(3);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("...");
    }
    let text = CString::new(text).expect("no NUL left");
    if let Err(rc) = safe::add_error_string(code, &text) {
        tracing::warn!(rc, "MPI_Add_error_string refused the mismatch description");
    }
    code
}

/// What a tracked or virtual request delivers.
#[derive(Clone, Debug)]
pub(crate) enum Delivery {
    /// A send (or `MPI_Comm_idup`, `MPI_Ibarrier`): nothing.
    Nothing,
    /// A receive: its buffer and matching arguments.
    Receive {
        dest: Piece,
        source: c_int,
        tag: c_int,
    },
    /// A nonblocking collective: its output buffers, whole.
    Outputs(Pieces),
}

impl Delivery {
    /// The pieces of memory a completion with `status` filled.
    fn pieces(&self, status: &Status) -> Pieces {
        self.filled(status).0
    }

    /// [`Delivery::pieces`], with a receive's bytes when its message ended in a partial
    /// element (see [`Received`]).
    fn filled(&self, status: &Status) -> (Pieces, Option<u64>) {
        match self {
            Delivery::Nothing => (Pieces::new(), None),
            Delivery::Receive { dest, .. } => {
                let got = received_count(status, dest, crate::types::kind(dest.datatype));
                (
                    smallvec![Piece {
                        count: got.count,
                        ..*dest
                    }],
                    got.partial,
                )
            }
            Delivery::Outputs(pieces) => (pieces.clone(), None),
        }
    }
}

/// A request posted while recording, until it completes.
#[derive(Clone, Debug)]
pub(crate) struct Tracked {
    pub seq: u64,
    pub delivery: Delivery,
    /// The CD active on the thread when it was posted: a restore leaves the requests of a
    /// live ancestor of the restored CD to the ancestor.
    cd: Option<cd_core::CdHandle>,
}

impl Tracked {
    /// A request posted now, as post `seq`, in the active CD of the thread whose context is
    /// `cx` (the call's guard holds it: no second thread-local access).
    pub(crate) fn new(seq: u64, delivery: Delivery, cx: Option<cd_core::ThreadCx<'_>>) -> Tracked {
        let cd = cx.and_then(|cx| cx.active_cd());
        Tracked { seq, delivery, cd }
    }
}

/// The state of a virtual request.
#[derive(Clone, Copy, Debug)]
enum Bound {
    /// Its completion is still to come from the log.
    Open,
    /// Bound after the replay to a live request that stands in for it.
    Live(Request),
    /// Completed (generalized request marked complete) with data delivered after the replay.
    Done,
}

/// What the application's handle of a virtual request is.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// A generalized request this module started, with its state.
    Greq(*mut GreqState),
    /// The application's own persistent request, started again by a replayed `MPI_Start`
    /// (in MPI it stays inactive: the log completes it).
    Persistent,
}

/// A request handed out during a replay.
pub(crate) struct Virtual {
    pub seq: u64,
    pub delivery: Delivery,
    bound: Bound,
    kind: Kind,
    /// The data drained at restore that completed it when the replay ended, kept until the
    /// application completes it: a restore before then rewinds the re-execution that got it,
    /// and the next one needs it again (see [`discard_rewound`]).
    drained: Option<Drained>,
}

/// Data and status of a request drained at restore: the packed bytes of each piece of its
/// delivery, `None` when it was cancelled before any data arrived.
#[derive(Clone)]
struct Drained {
    status: Status,
    data: Option<Vec<Vec<u8>>>,
}

#[derive(Default)]
struct ThreadState {
    next_seq: u64,
    live: HashMap<Request, Tracked>,
    virtuals: HashMap<Request, Virtual>,
    drained: BTreeMap<u64, Drained>,
    /// Persistent requests made on this thread, with what each start delivers.
    persistent: HashMap<Request, Delivery>,
}

thread_local! {
    static STATE: RefCell<ThreadState> = RefCell::new(ThreadState::default());
}

/// The next post number of this thread.
pub(crate) fn next_seq() -> u64 {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.next_seq += 1;
        s.next_seq
    })
}

/// Starts tracking a request posted while recording.
pub(crate) fn track(request: Request, tracked: Tracked) {
    STATE.with(|s| s.borrow_mut().live.insert(request, tracked));
}

/// Stops tracking a request (completed or freed), returning what was tracked.
pub(crate) fn untrack(request: Request) -> Option<Tracked> {
    STATE.with(|s| s.borrow_mut().live.remove(&request))
}

/// Whether any virtual request is alive on this thread (the common answer is no).
pub(crate) fn has_virtuals() -> bool {
    STATE.with(|s| !s.borrow().virtuals.is_empty())
}

/// Remembers a persistent request made on this thread and what each of its starts delivers.
pub(crate) fn register_persistent(request: Request, delivery: Delivery) {
    STATE.with(|s| s.borrow_mut().persistent.insert(request, delivery));
}

/// Forgets a persistent request freed in MPI.
pub(crate) fn unregister_persistent(request: Request) {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        if !s.persistent.is_empty() {
            s.persistent.remove(&request);
        }
    });
}

/// What a start of `request` delivers, if it is a persistent request made on this thread.
pub(crate) fn persistent_delivery(request: Request) -> Option<Delivery> {
    STATE.with(|s| s.borrow().persistent.get(&request).cloned())
}

/// Whether `request` is a persistent request made on this thread.
pub(crate) fn is_persistent(request: Request) -> bool {
    STATE.with(|s| {
        let s = s.borrow();
        !s.persistent.is_empty() && s.persistent.contains_key(&request)
    })
}

struct GreqState {
    status: Status,
}

unsafe extern "C" fn greq_query(extra: *mut c_void, status: *mut Status) -> c_int {
    // SAFETY: `extra` is the GreqState this module allocated for the request, alive until
    // greq_free; `status` is MPI's own status slot.
    unsafe {
        let state = &*extra.cast::<GreqState>();
        if !status.is_null() {
            status.write(state.status);
        }
    }
    abi::SUCCESS
}

unsafe extern "C" fn greq_free(extra: *mut c_void) -> c_int {
    // SAFETY: MPI calls free exactly once, with the pointer Grequest_start was given, which came
    // from Box::into_raw.
    drop(unsafe { Box::from_raw(extra.cast::<GreqState>()) });
    abi::SUCCESS
}

unsafe extern "C" fn greq_cancel(_extra: *mut c_void, _complete: c_int) -> c_int {
    abi::SUCCESS
}

/// Starts a generalized request that completes with `status`.
fn start_greq(status: Status) -> Result<(Request, *mut GreqState), c_int> {
    let state = Box::into_raw(Box::new(GreqState { status }));
    let mut handle = abi::predefined().request_null;
    // SAFETY: valid callbacks and an extra_state they own.
    let rc = unsafe {
        real::Grequest_start(
            greq_query as QueryFn,
            greq_free as FreeFn,
            greq_cancel as CancelFn,
            state.cast(),
            &mut handle,
        )
    };
    if rc != abi::SUCCESS {
        // SAFETY: MPI did not take the state.
        drop(unsafe { Box::from_raw(state) });
        return Err(rc);
    }
    Ok((handle, state))
}

/// Hands out a virtual request for a posting call re-executed during a replay.
///
/// # Safety
/// `request` must be writable.
pub(crate) unsafe fn virtual_request(seq: u64, delivery: Delivery, request: *mut Request) -> c_int {
    discard_rewound(seq);
    let (handle, state) = match start_greq(Status::zeroed()) {
        Ok(started) => started,
        Err(rc) => return rc,
    };
    STATE.with(|s| {
        s.borrow_mut().virtuals.insert(
            handle,
            Virtual {
                seq,
                delivery,
                bound: Bound::Open,
                kind: Kind::Greq(state),
                drained: None,
            },
        )
    });
    // SAFETY: the caller's contract.
    unsafe { request.write(handle) };
    abi::SUCCESS
}

/// A replayed `MPI_Start` of the persistent `request`: its completion comes from the log.
pub(crate) fn virtual_start(seq: u64, request: Request) {
    let delivery = persistent_delivery(request).unwrap_or(Delivery::Nothing);
    if matches!(delivery, Delivery::Nothing) {
        stats::dropped();
    }
    discard_rewound(seq);
    STATE.with(|s| {
        s.borrow_mut().virtuals.insert(
            request,
            Virtual {
                seq,
                delivery,
                bound: Bound::Open,
                kind: Kind::Persistent,
                drained: None,
            },
        )
    });
}

/// Discards the virtual requests of post `seq` that a replay is about to hand out again: a
/// post number is handed out once per execution, so one still here was handed out by a
/// re-execution that a later `restore_cd` rewound before the application completed it (a
/// second fault before the first re-execution's replay was consumed, or before it completed
/// the requests that were in flight at the first). Left alone, it would be bound when the
/// replay ends like a request in flight at the fault: a receive posted for real a second
/// time, which takes a later message. Its generalized request (or a persistent request's
/// stand-in) is completed and freed, and data drained at the first restore that completed it
/// goes back for the request handed out now.
fn discard_rewound(seq: u64) {
    let rewound: Vec<(Request, Virtual)> = STATE.with(|s| {
        let mut s = s.borrow_mut();
        let handles: Vec<Request> = s
            .virtuals
            .iter()
            .filter(|(_, v)| v.seq == seq)
            .map(|(h, _)| *h)
            .collect();
        handles
            .into_iter()
            .filter_map(|h| s.virtuals.remove(&h).map(|v| (h, v)))
            .collect()
    });
    for (handle, v) in rewound {
        tracing::debug!(seq, "a rewound re-execution's request is handed out again");
        let ours = match (v.kind, v.bound) {
            (Kind::Greq(_), Bound::Done) => Some((handle, false)),
            (Kind::Greq(_), _) => Some((handle, true)),
            // a drained persistent receive's completed stand-in
            (Kind::Persistent, Bound::Live(standin)) => Some((standin, false)),
            (Kind::Persistent, _) => None,
        };
        if let Some((mut h, complete)) = ours {
            // SAFETY: a generalized request this module started and the application can no
            // longer complete (its handle was in the rewound state): complete and free it.
            unsafe {
                if complete {
                    real::Grequest_complete(h);
                }
                real::Wait(
                    &mut h,
                    std::ptr::without_provenance_mut::<Status>(abi::STATUS_IGNORE),
                );
            }
        }
        if let Some(drained) = v.drained {
            STATE.with(|s| s.borrow_mut().drained.insert(seq, drained));
        }
    }
}

/// Completes and frees a virtual request with `status` (its data already delivered); a
/// persistent one is only forgotten (MPI completed its stand-in, if any).
fn finish_virtual(handle: Request, status: &Status) {
    let v = STATE.with(|s| s.borrow_mut().virtuals.remove(&handle));
    if let Some(Virtual {
        bound,
        kind: Kind::Greq(state),
        ..
    }) = v
    {
        let mut h = handle;
        // SAFETY: `state` lives until greq_free, which the Wait below triggers.
        unsafe {
            (*state).status = *status;
            if !matches!(bound, Bound::Done) {
                real::Grequest_complete(h);
            }
            real::Wait(
                &mut h,
                std::ptr::without_provenance_mut::<Status>(abi::STATUS_IGNORE),
            );
        }
    }
}

/// Why a logged completion was not served.
pub(crate) enum Unserved {
    /// The record is unreadable.
    Corrupt,
    /// The application's slot holds another request than the one the log completes there:
    /// what differs, for the mismatch report.
    Other(String),
}

impl From<Corrupt> for Unserved {
    fn from(_: Corrupt) -> Self {
        Unserved::Corrupt
    }
}

/// Resolves one logged completion during a replay: delivers its data and, if the application's
/// handle is the virtual request of the same post, completes it. Returns the handle the
/// application's slot gets (`MPI_REQUEST_NULL`, or the unchanged handle of a persistent
/// request) and the status.
///
/// The data goes where the re-executed post said (its buffers may have moved since); a
/// completion of a request posted before the replayed span goes where the log says. A slot
/// (`index` in the application's array) holding the virtual request of another post, or a
/// request that is not virtual while the logged post was re-executed as one, is a mismatch
/// ([`Unserved::Other`]), found before anything is written for this completion.
///
/// # Safety
/// The destinations named by the virtual request or the record must be writable.
pub(crate) unsafe fn replay_completion(
    reader: &mut Reader,
    handle: Request,
    index: usize,
) -> Result<(Request, Status), Unserved> {
    let seq = reader.u64()?;
    let status = reader.status()?;
    let pieces = reader.int()?;
    // `posted`: where the data goes; `own`: the slot's virtual request completes
    let (posted, own, held) = STATE.with(|s| {
        let s = s.borrow();
        match s.virtuals.get(&handle) {
            Some(v) if v.seq == seq => (Some(v.delivery.pieces(&status)), true, None),
            // the log's post completed at once too: its pieces (if any) hold no data
            Some(v) if at_once(&v.delivery) => (None, true, None),
            Some(v) => (None, false, Some(format!("the request of post {}", v.seq))),
            None if seq != 0 && s.virtuals.values().any(|v| v.seq == seq) => (
                None,
                false,
                Some("a request not posted by the re-execution".to_owned()),
            ),
            None => (None, false, None),
        }
    });
    if let Some(held) = held {
        return Err(Unserved::Other(format!(
            "slot {index} holds {held}, the log completes post {seq} there"
        )));
    }
    if posted.as_ref().is_some_and(|p| p.len() != pieces as usize) {
        return Err(Unserved::Corrupt);
    }
    for k in 0..pieces.max(0) as usize {
        let logged = Piece {
            // The application's buffer, exposed when the completion was logged
            // (`record_completion`).
            buf: std::ptr::with_exposed_provenance::<c_void>(reader.u64()? as usize),
            count: reader.int()?,
            datatype: Datatype::from_bits(reader.u64()?),
            comm: Comm::from_bits(reader.u64()?),
        };
        let dest = posted.as_ref().map_or(logged, |p| Piece {
            count: logged.count,
            ..p[k]
        });
        // SAFETY: the re-executed program posted the same receive or collective.
        unsafe { reader.unpack_into(dest.buf.cast_mut(), dest.count, dest.datatype, dest.comm)? };
    }
    if own {
        finish_virtual(handle, &status);
    }
    let slot = if is_persistent(handle) {
        handle
    } else {
        abi::predefined().request_null
    };
    Ok((slot, status))
}

/// Whether a request that delivers so may have completed at once in MPI, under a handle MPI
/// hands out for every such request (MPICH's builtin completed requests: a send to
/// `MPI_PROC_NULL`, an eager send, a receive from `MPI_PROC_NULL`; Open MPI's
/// `ompi_request_empty` for both kinds to and from `MPI_PROC_NULL`): recorded, two of them in
/// one array were tracked under one handle, so the log may name the other one's post in its
/// slot. Either completes the slot the same way: no data.
fn at_once(delivery: &Delivery) -> bool {
    match delivery {
        Delivery::Nothing => true,
        Delivery::Receive { source, .. } => *source == abi::PROC_NULL,
        Delivery::Outputs(_) => false,
    }
}

/// Writes one completion into a record being built (see [`replay_completion`]).
pub(crate) fn record_completion(
    writer: &mut Writer<impl Borrow<Header>>,
    seq: u64,
    status: &Status,
    delivery: &Delivery,
) {
    let (pieces, partial) = delivery.filled(status);
    writer.u64(seq).status(status).int(pieces.len() as c_int);
    for piece in pieces {
        writer
            .u64(piece.buf.expose_provenance() as u64)
            .int(piece.count)
            .u64(piece.datatype.bits())
            .u64(piece.comm.bits())
            .piece_received(piece, partial);
    }
}

/// What a receive got.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Received {
    /// Its elements (the whole posted count if MPI cannot say).
    pub count: c_int,
    /// The bytes received, when the message ends in a partial element of the datatype
    /// (`MPI_Get_count` is `MPI_UNDEFINED`): only they may be delivered again, and `count`
    /// (the posted count) only bounds them.
    pub partial: Option<u64>,
}

/// What a receive got.
///
/// Read from the status itself where the bytes received are plainly there (see
/// [`count_word`]) and the datatype's size is known (`kind`, what is known of `dest`'s
/// datatype): no call into MPI. Else `MPI_Get_count`.
#[inline]
pub(crate) fn received_count(status: &Status, dest: &Piece, kind: crate::types::Kind) -> Received {
    if let Some(bytes) = status_bytes(status) {
        let size = kind.size;
        if size > 0 && bytes % size == 0 {
            return Received {
                count: c_int::try_from(bytes / size).map_or(dest.count, |n| n.min(dest.count)),
                partial: None,
            };
        }
    }
    get_count(status, dest)
}

/// The bytes a status says were received, when its count word holds them alone: the other
/// hidden words (the high part of a count of 2 GiB or more, the cancelled flag) are zero.
#[inline]
fn status_bytes(status: &Status) -> Option<u64> {
    let at = count_word()?;
    let bytes = status.as_bytes();
    let word = |i: usize| {
        c_int::from_ne_bytes([
            bytes[4 * i],
            bytes[4 * i + 1],
            bytes[4 * i + 2],
            bytes[4 * i + 3],
        ])
    };
    let clear = (0..abi::STATUS_INTS)
        .filter(|&i| i != at && !is_public(i))
        .all(|i| word(i) == 0);
    let count = word(at);
    (clear && count >= 0).then_some(count as u64)
}

/// Whether word `i` of a status is one of its public fields.
fn is_public(i: usize) -> bool {
    i == abi::STATUS_SOURCE || i == abi::STATUS_TAG || i == abi::STATUS_ERROR
}

/// The word of `MPI_Status` where this MPI keeps the bytes received (MPICH's `count_lo`,
/// Open MPI's low half of `_ucount`), learned once: `MPI_Status_set_elements` with
/// `MPI_BYTE` on zeroed statuses must put each of two counts in that one word alone. `None`
/// when it does not (another layout): receives then ask `MPI_Get_count`.
fn count_word() -> Option<usize> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    const UNKNOWN: usize = usize::MAX;
    const NONE: usize = usize::MAX - 1;
    static WORD: AtomicUsize = AtomicUsize::new(UNKNOWN);
    let at = match WORD.load(Ordering::Relaxed) {
        UNKNOWN => {
            let at = learn_count_word().unwrap_or(NONE);
            WORD.store(at, Ordering::Relaxed);
            at
        }
        at => at,
    };
    (at != NONE).then_some(at)
}

#[cold]
fn learn_count_word() -> Option<usize> {
    let f = crate::resolve::lookup(c"PMPI_Status_set_elements");
    if f.is_null() {
        return None;
    }
    // SAFETY: `f` is the MPI library's `PMPI_Status_set_elements`, whose C prototype is this.
    let set: unsafe extern "C" fn(*mut Status, Datatype, c_int) -> c_int =
        unsafe { std::mem::transmute(f) };
    let byte = abi::predefined().byte;
    let mut found = None;
    for count in [0x1234_5678, 77] {
        let mut st = Status::zeroed();
        // SAFETY: a valid status to write, a predefined datatype.
        if unsafe { set(&mut st, byte, count) } != abi::SUCCESS {
            return None;
        }
        let bytes = st.as_bytes();
        let words: Vec<c_int> = bytes
            .chunks_exact(4)
            .map(|w| c_int::from_ne_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        let hidden: Vec<usize> = (0..words.len()).filter(|&i| !is_public(i)).collect();
        let at = *hidden.iter().find(|&&i| words[i] == count)?;
        if hidden.iter().any(|&i| i != at && words[i] != 0) || found.is_some_and(|f| f != at) {
            return None;
        }
        found = Some(at);
    }
    found
}

/// `MPI_Get_count`, clamped to the posted count.
#[cold]
fn get_count(status: &Status, dest: &Piece) -> Received {
    if let Ok(n) = safe::get_count(status, dest.datatype) {
        if n != abi::UNDEFINED && n >= 0 {
            return Received {
                count: n.min(dest.count),
                partial: None,
            };
        }
    }
    // A partial element (or MPI cannot say): the bytes, counted as `MPI_BYTE`s.
    let bytes = safe::get_count(status, abi::predefined().byte);
    Received {
        count: dest.count,
        partial: bytes.ok().filter(|&b| b >= 0).map(|b| b as u64),
    }
}

/// A slot of a Wait/Test array that holds a virtual request.
#[derive(Clone, Debug)]
pub(crate) struct Standin {
    /// The application's handle.
    pub handle: Request,
    pub seq: u64,
    pub delivery: Delivery,
    /// Whether MPI got a live request in its place (else the handle itself).
    pub live: bool,
    /// Whether the application's handle is a persistent request (it stays in the slot).
    pub persistent: bool,
}

/// What a live Wait/Test array becomes while virtual requests bound after a replay are in it.
pub(crate) struct Substituted {
    /// The handles MPI gets.
    pub handles: Vec<Request>,
    /// For each slot, the virtual request it stands for.
    pub standins: Vec<Option<Standin>>,
}

/// Replaces bound virtual requests by their live request (a Done one stays itself: it is a
/// completed generalized request MPI completes at once).
pub(crate) fn substitute(handles: &[Request]) -> Substituted {
    STATE.with(|s| {
        let s = s.borrow();
        let mut out = Substituted {
            handles: handles.to_vec(),
            standins: vec![None; handles.len()],
        };
        for (i, h) in handles.iter().enumerate() {
            if let Some(v) = s.virtuals.get(h) {
                let live = match v.bound {
                    Bound::Live(inner) => {
                        out.handles[i] = inner;
                        true
                    }
                    Bound::Done | Bound::Open => false,
                };
                out.standins[i] = Some(Standin {
                    handle: *h,
                    seq: v.seq,
                    delivery: v.delivery.clone(),
                    live,
                    persistent: matches!(v.kind, Kind::Persistent),
                });
            }
        }
        out
    })
}

/// After MPI completed slot `i` of a substituted array (through `inner`): frees the virtual
/// request it stood for and returns its post number and delivery.
pub(crate) fn completed_substitute(
    entry: &Standin,
    inner: Request,
    status: &Status,
) -> (u64, Delivery) {
    if entry.live {
        untrack(inner);
        finish_virtual(entry.handle, status);
    } else {
        STATE.with(|s| s.borrow_mut().virtuals.remove(&entry.handle));
    }
    (entry.seq, entry.delivery.clone())
}

/// The replay ended: binds every still-open virtual request, in posting order, in the thread
/// whose context is `cx`.
fn replay_ended(cx: Option<cd_core::ThreadCx<'_>>) {
    let mut open: Vec<(u64, Request)> = STATE.with(|s| {
        s.borrow()
            .virtuals
            .iter()
            .filter(|(_, v)| matches!(v.bound, Bound::Open))
            .map(|(h, v)| (v.seq, *h))
            .collect()
    });
    open.sort_unstable_by_key(|&(seq, _)| seq);
    tracing::debug!(open = open.len(), "replay ended: going live");
    for (seq, handle) in open {
        bind(seq, handle, cx);
    }
    STATE.with(|s| s.borrow_mut().drained.clear());
}

/// Binds one virtual request left open by the replay: it was in flight at the fault. Data
/// drained at restore is delivered now; a receive cancelled at restore is posted again; a send
/// (or a persistent request started again) is the original, still live request.
fn bind(seq: u64, handle: Request, cx: Option<cd_core::ThreadCx<'_>>) {
    let (delivery, kind) = STATE.with(|s| {
        let s = s.borrow();
        let v = &s.virtuals[&handle];
        (v.delivery.clone(), v.kind)
    });
    let drained = STATE.with(|s| s.borrow_mut().drained.remove(&seq));
    let mut kept = None;
    let bound = match (&delivery, drained) {
        (
            Delivery::Receive { .. } | Delivery::Outputs(_),
            Some(
                whole @ Drained {
                    status,
                    data: Some(_),
                },
            ),
        ) => {
            let data = whole.data.as_deref().unwrap_or_default();
            for (piece, bytes) in delivery.pieces(&status).iter().zip(data) {
                let mut position = 0;
                // SAFETY: the re-executed call's buffer; the data was packed with its datatype.
                unsafe {
                    real::Unpack(
                        bytes.as_ptr().cast(),
                        bytes.len() as c_int,
                        &mut position,
                        piece.buf.cast_mut(),
                        piece.count,
                        piece.datatype,
                        piece.comm,
                    )
                };
            }
            match kind {
                Kind::Greq(state) => {
                    // SAFETY: our own generalized request, alive until MPI frees it.
                    unsafe {
                        (*state).status = status;
                        real::Grequest_complete(handle);
                    }
                    kept = Some(whole);
                    Bound::Done
                }
                Kind::Persistent => match start_greq(status) {
                    Ok((greq, _)) => {
                        // SAFETY: our own generalized request.
                        unsafe { real::Grequest_complete(greq) };
                        kept = Some(whole);
                        Bound::Live(greq)
                    }
                    Err(rc) => {
                        tracing::error!(rc, "no stand-in request for a drained persistent receive");
                        Bound::Done
                    }
                },
            }
        }
        (Delivery::Receive { dest, source, tag }, _) => {
            let mut inner = abi::predefined().request_null;
            let rc = match kind {
                // SAFETY: the re-executed receive's own arguments.
                Kind::Greq(_) => unsafe {
                    real::Irecv(
                        dest.buf.cast_mut(),
                        dest.count,
                        dest.datatype,
                        *source,
                        *tag,
                        dest.comm,
                        &mut inner,
                    )
                },
                Kind::Persistent => {
                    inner = handle;
                    // SAFETY: the application's inactive persistent receive.
                    unsafe { real::Start(&mut inner) }
                }
            };
            if rc == abi::SUCCESS {
                if crate::traffic::on() && *source != abi::PROC_NULL {
                    // a receive posted for real again: pending until it completes
                    crate::traffic::receive_posted(inner, dest.comm);
                }
                track(inner, Tracked::new(seq, delivery.clone(), cx));
                if matches!(kind, Kind::Persistent) {
                    // Live again under its own handle: nothing stands in for it.
                    STATE.with(|s| s.borrow_mut().virtuals.remove(&handle));
                    return;
                }
                Bound::Live(inner)
            } else {
                tracing::error!(rc, "re-posting a receive after the replay failed");
                Bound::Done
            }
        }
        (Delivery::Outputs(_), _) => {
            tracing::error!(seq, "a collective in flight at the fault left no data");
            Bound::Done
        }
        (Delivery::Nothing, _) => {
            // The send was posted before the fault (and settled at restore, or still in
            // flight): the live request of the same post, still tracked, stands for it.
            let original = STATE.with(|s| {
                let s = s.borrow();
                s.live.iter().find(|(_, t)| t.seq == seq).map(|(h, _)| *h)
            });
            match (original, kind) {
                (_, Kind::Persistent) => {
                    STATE.with(|s| s.borrow_mut().virtuals.remove(&handle));
                    return;
                }
                (Some(inner), Kind::Greq(_)) => Bound::Live(inner),
                (None, Kind::Greq(_)) => {
                    // SAFETY: completing our own generalized request.
                    unsafe { real::Grequest_complete(handle) };
                    Bound::Done
                }
            }
        }
    };
    if matches!((bound, kind), (Bound::Done, Kind::Persistent)) {
        STATE.with(|s| s.borrow_mut().virtuals.remove(&handle));
        return;
    }
    STATE.with(|s| {
        if let Some(v) = s.borrow_mut().virtuals.get_mut(&handle) {
            v.bound = bound;
            v.drained = kept;
        }
    });
}

/// The restore hook: drains this thread's tracked requests that the restore rolls back,
/// before memory is rewritten (see the module docs): those of the restored CDs (`cds`: the
/// restored CD and its live descendants) and of CDs that ended (its committed children). A
/// request a live ancestor posted before the restored CD began stays in flight for the
/// ancestor to complete: the re-execution does not post it again. (One that a committed child
/// of an ancestor posted before the restored CD began is drained too; its CD is gone and
/// nothing tells it from the restored CD's own committed children's.)
pub(crate) fn drain_in_flight(cds: &[cd_core::CdHandle]) -> cd_core::Result<()> {
    let _guard = Guard::enter();
    let rolled_back = |t: &Tracked| {
        t.cd.is_none_or(|cd| cds.contains(&cd) || !cd_core::cd_is_live(cd))
    };
    let mut pending: Vec<(Request, Tracked)> = STATE.with(|s| {
        let mut s = s.borrow_mut();
        let drained: Vec<Request> = s
            .live
            .iter()
            .filter(|(_, t)| rolled_back(t))
            .map(|(r, _)| *r)
            .collect();
        drained
            .into_iter()
            .filter_map(|r| s.live.remove(&r).map(|t| (r, t)))
            .collect()
    });
    pending.sort_unstable_by_key(|(_, t)| t.seq);
    let deadline = std::time::Instant::now() + send_drain_limit();
    for (mut request, tracked) in pending {
        let posted = request;
        let mut status = Status::zeroed();
        // counted once complete (a send's or Comm_idup's entry, if any, goes back untouched)
        let taken = crate::traffic::take(&[posted]);
        let data = match tracked.delivery {
            Delivery::Nothing => {
                // The send stays tracked (and allocated): the application or the re-executed
                // post completes it later.
                let done = settle_send(request, deadline);
                crate::traffic::settle(taken, &[posted], &[], &[]);
                stats::settled(done);
                if !done {
                    tracing::warn!(
                        seq = tracked.seq,
                        "a send in flight at restore_cd did not complete: it may carry restored data"
                    );
                }
                STATE.with(|s| s.borrow_mut().live.insert(request, tracked));
                continue;
            }
            Delivery::Receive { .. } => {
                // SAFETY: a live receive this thread posted (a copy of the handle: a
                // persistent request stays allocated, a nonpersistent one is freed by the
                // Wait), into memory the restore has not rewritten yet.
                unsafe {
                    real::Cancel(&mut request);
                    real::Wait(&mut request, &mut status);
                }
                let cancelled = safe::test_cancelled(&status);
                stats::drained(!cancelled);
                // a receive that got its message is counted; a cancelled one is not
                crate::traffic::settle(taken, &[posted], &[0], &[status]);
                (!cancelled)
                    .then(|| tracked.delivery.pieces(&status).iter().map(pack).collect())
            }
            Delivery::Outputs(ref pieces) => {
                // SAFETY: a live collective this thread posted.
                unsafe { real::Wait(&mut request, &mut status) };
                crate::traffic::settle(taken, &[posted], &[0], &[status]);
                Some(pieces.iter().map(pack).collect())
            }
        };
        STATE.with(|s| {
            let mut s = s.borrow_mut();
            // A virtual request bound to this one is gone with the restored state.
            let stale: Vec<Request> = s
                .virtuals
                .iter()
                .filter(|(_, v)| v.seq == tracked.seq && !matches!(v.bound, Bound::Open))
                .map(|(h, _)| *h)
                .collect();
            for h in stale {
                if let Some(Virtual {
                    kind: Kind::Greq(_),
                    bound,
                    ..
                }) = s.virtuals.remove(&h)
                {
                    let mut h = h;
                    // SAFETY: our own generalized request: complete and free it.
                    unsafe {
                        if !matches!(bound, Bound::Done) {
                            real::Grequest_complete(h);
                        }
                        real::Wait(
                            &mut h,
                            std::ptr::without_provenance_mut::<Status>(abi::STATUS_IGNORE),
                        );
                    }
                }
            }
            s.drained.insert(tracked.seq, Drained { status, data })
        });
    }
    Ok(())
}

/// How long a restore waits for sends in flight (`CD_MPI_DRAIN_SENDS_MS`, default 1000 ms).
fn send_drain_limit() -> std::time::Duration {
    static LIMIT: std::sync::OnceLock<std::time::Duration> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        let ms = std::env::var("CD_MPI_DRAIN_SENDS_MS")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(1000);
        std::time::Duration::from_millis(ms)
    })
}

/// Drives a send until it completes or `deadline` passes, without freeing it; whether it
/// completed.
fn settle_send(request: Request, deadline: std::time::Instant) -> bool {
    loop {
        let mut done: c_int = 0;
        let mut status = Status::zeroed();
        // SAFETY: a live send request this thread posted; writes the flag and status.
        let rc = unsafe { real::Request_get_status(request, &mut done, &mut status) };
        if rc != abi::SUCCESS || done != 0 {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::yield_now();
    }
}

/// The packed bytes of a piece of memory.
fn pack(piece: &Piece) -> Vec<u8> {
    let size = safe::pack_size(piece.count, piece.datatype, piece.comm).unwrap_or(0);
    let mut out = vec![0u8; size.max(0) as usize];
    let mut used: c_int = 0;
    // SAFETY: the request completed into `piece`, which is readable; `out` has `size` bytes.
    unsafe {
        real::Pack(
            piece.buf,
            piece.count,
            piece.datatype,
            out.as_mut_ptr().cast(),
            size,
            &mut used,
            piece.comm,
        )
    };
    out.truncate(used.max(0) as usize);
    out
}

/// The live request standing for `handle` (itself unless it is a virtual request bound to one).
pub(crate) fn live_of(handle: Request) -> Request {
    STATE.with(
        |s| match s.borrow().virtuals.get(&handle).map(|v| v.bound) {
            Some(Bound::Live(inner)) => inner,
            _ => handle,
        },
    )
}

/// Frees a virtual request the application freed during a replay (no-op for other handles).
pub(crate) fn free_virtual(handle: Request) {
    let known = STATE.with(|s| s.borrow().virtuals.contains_key(&handle));
    if known {
        finish_virtual(handle, &Status::zeroed());
    }
}
