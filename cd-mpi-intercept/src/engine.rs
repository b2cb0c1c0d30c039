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
//! drained at restore, and the thread goes on recording.
//!
//! # Requests in flight at `restore_cd`
//! A receive posted before the fault but not completed would write into the buffer later, after
//! the restore rewrote it. So the restore hook *drains* every tracked receive of the restoring
//! thread before any memory is written: it cancels it and waits for the cancel to settle; a
//! receive that had already matched completes instead, and its data and status are kept for the
//! re-executed receive. Cancelling is preferred to waiting because the message may depend on
//! this rank's own re-execution (waiting could deadlock); a cancelled receive is simply posted
//! again when the re-execution reaches it live. Sends in flight are left to complete: their data
//! has left (or leaves) as it is, and the re-executed send is dropped.

use crate::abi::{self, Comm, Datatype, Request, Status};
use crate::boundary::{self, Guard};
use crate::exports::{real, Call, CancelFn, FreeFn, QueryFn};
use crate::record::{Corrupt, Header, Piece, Reader, Writer};
use crate::stats;
use cd_core::LogMode;
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

/// Routes a call: one thread-local read when no CD logs.
#[inline]
pub(crate) fn route(call: Call) -> Route {
    stats::count(call);
    match cd_core::log_mode() {
        LogMode::Off => Route::Direct,
        _ if boundary::inside() => Route::Direct,
        LogMode::Record => Route::Record(Guard::enter()),
        LogMode::Replay => begin_replay(call),
    }
}

#[cold]
fn begin_replay(call: Call) -> Route {
    let guard = Guard::enter();
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
            replay_ended();
            Route::Record(guard)
        }
        Err(error) => {
            tracing::warn!(call = call.name(), %error, "no replay log; going live");
            Route::Record(guard)
        }
    }
}

/// Appends a record, reporting a failure through `tracing` (the call itself succeeded).
///
/// # Safety
/// As [`Writer::append`].
pub(crate) unsafe fn log(writer: Writer) {
    // SAFETY: forwarded.
    match unsafe { writer.append() } {
        Ok(()) => {}
        Err(error) => {
            stats::log_failed();
            tracing::warn!(%error, "MPI log record not appended");
        }
    }
}

/// Checks that a replayed record is the call being re-executed; on a mismatch, reports both
/// calls through the communicator's error handler and returns the error code.
pub(crate) fn expect(reader: &Reader, want: &Header, comm: Comm) -> Result<(), c_int> {
    if reader.header == *want {
        return Ok(());
    }
    Err(mismatch(
        &format!(
            "CD replay mismatch: the re-executed call {want} does not match the logged call {}; \
             re-execution after restore_cd must repeat the same MPI calls in the same order",
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
    // SAFETY: calling the communicator's error handler with a valid code.
    unsafe { real::Comm_call_errhandler(comm, code) };
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
    let class = *CLASS.get_or_init(|| {
        let mut class = abi::ERR_OTHER;
        // SAFETY: writes one int.
        if unsafe { real::Add_error_class(&mut class) } != abi::SUCCESS {
            class = abi::ERR_OTHER;
        }
        class
    });
    if class == abi::ERR_OTHER {
        return class;
    }
    let mut code = class;
    // SAFETY: writes one int.
    if unsafe { real::Add_error_code(class, &mut code) } != abi::SUCCESS {
        return class;
    }
    let text = CString::new(message.replace('\0', " ")).expect("no NUL left");
    // SAFETY: a NUL-terminated string that MPI copies.
    unsafe { real::Add_error_string(code, text.as_ptr()) };
    code
}

/// What a tracked or virtual request delivers.
#[derive(Clone, Debug)]
pub(crate) enum Delivery {
    /// A send: nothing.
    Nothing,
    /// A receive: its buffer and matching arguments.
    Receive {
        dest: Piece,
        source: c_int,
        tag: c_int,
    },
}

/// A request posted while recording, until it completes.
#[derive(Clone, Debug)]
pub(crate) struct Tracked {
    pub seq: u64,
    pub delivery: Delivery,
}

/// The state of a virtual request.
#[derive(Clone, Copy, Debug)]
enum Bound {
    /// Its completion is still to come from the log.
    Open,
    /// Bound to a live request after the replay ended.
    Live(Request),
    /// Completed (generalized request marked complete) with data delivered after the replay.
    Done,
}

/// A request handed out during a replay.
#[derive(Debug)]
pub(crate) struct Virtual {
    pub seq: u64,
    pub delivery: Delivery,
    bound: Bound,
    state: *mut GreqState,
}

/// Data and status of a receive drained at restore.
struct Drained {
    status: Status,
    data: Option<Vec<u8>>,
}

#[derive(Default)]
struct ThreadState {
    next_seq: u64,
    live: HashMap<Request, Tracked>,
    virtuals: HashMap<Request, Virtual>,
    drained: BTreeMap<u64, Drained>,
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

/// Hands out a virtual request for a posting call re-executed during a replay.
///
/// # Safety
/// `request` must be writable.
pub(crate) unsafe fn virtual_request(seq: u64, delivery: Delivery, request: *mut Request) -> c_int {
    let state = Box::into_raw(Box::new(GreqState {
        status: Status::zeroed(),
    }));
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
        return rc;
    }
    STATE.with(|s| {
        s.borrow_mut().virtuals.insert(
            handle,
            Virtual {
                seq,
                delivery,
                bound: Bound::Open,
                state,
            },
        )
    });
    // SAFETY: the caller's contract.
    unsafe { request.write(handle) };
    abi::SUCCESS
}

/// Completes and frees a virtual request with `status` (its data already delivered).
fn finish_virtual(handle: Request, status: &Status) {
    let v = STATE.with(|s| s.borrow_mut().virtuals.remove(&handle));
    if let Some(v) = v {
        let mut h = handle;
        // SAFETY: `state` lives until greq_free, which the Wait below triggers.
        unsafe {
            (*v.state).status = *status;
            if !matches!(v.bound, Bound::Done) {
                real::Grequest_complete(h);
            }
            real::Wait(&mut h, abi::STATUS_IGNORE as *mut Status);
        }
    }
}

/// Resolves one logged completion during a replay: delivers its data and, if the application's
/// handle is the virtual request of the same post, completes and frees it. Returns the handle
/// the application's slot gets (`MPI_REQUEST_NULL`, or the unchanged handle of a persistent
/// request).
///
/// # Safety
/// The destinations named by the virtual request or the record must be writable.
pub(crate) unsafe fn replay_completion(
    reader: &mut Reader,
    handle: Request,
) -> Result<(Request, Status), Corrupt> {
    let seq = reader.u64()?;
    let status = reader.status()?;
    let has_data = reader.int()?;
    if has_data != 0 {
        let buf = reader.u64()? as usize as *mut c_void;
        let count = reader.int()?;
        let datatype = Datatype::from_bits(reader.u64()?);
        let comm = Comm::from_bits(reader.u64()?);
        // SAFETY: the re-executed program posted the same receive into the same buffer.
        unsafe { reader.unpack_into(buf, count, datatype, comm)? };
    }
    let is_virtual = STATE.with(|s| s.borrow().virtuals.get(&handle).map(|v| v.seq)) == Some(seq);
    if is_virtual {
        finish_virtual(handle, &status);
    }
    Ok((abi::predefined().request_null, status))
}

/// Writes one completion into a record being built (see [`replay_completion`]).
pub(crate) fn record_completion(
    writer: &mut Writer,
    seq: u64,
    status: &Status,
    delivery: &Delivery,
) {
    writer.u64(seq).status(status);
    match delivery {
        Delivery::Receive { dest, .. } => {
            let count = received_count(status, dest);
            writer
                .int(1)
                .u64(dest.buf as usize as u64)
                .int(count)
                .u64(dest.datatype.bits())
                .u64(dest.comm.bits())
                .piece(Piece { count, ..*dest });
        }
        Delivery::Nothing => {
            writer.int(0);
        }
    }
}

/// The elements a receive got (the whole posted count if MPI cannot say).
pub(crate) fn received_count(status: &Status, dest: &Piece) -> c_int {
    let mut n: c_int = 0;
    // SAFETY: reads the status, writes one int.
    let rc = unsafe { real::Get_count(status, dest.datatype, &mut n) };
    if rc != abi::SUCCESS || n == abi::UNDEFINED || n < 0 {
        dest.count
    } else {
        n.min(dest.count)
    }
}

/// What a live Wait/Test array becomes while virtual requests bound after a replay are in it.
pub(crate) struct Substituted {
    /// The handles MPI gets.
    pub handles: Vec<Request>,
    /// For each slot, the virtual request it stands for.
    pub virtuals: Vec<Option<(Request, u64, Delivery, bool)>>,
}

/// Replaces bound virtual requests by their live request (a Done one stays itself: it is a
/// completed generalized request MPI completes at once).
pub(crate) fn substitute(handles: &[Request]) -> Substituted {
    STATE.with(|s| {
        let s = s.borrow();
        let mut out = Substituted {
            handles: handles.to_vec(),
            virtuals: vec![None; handles.len()],
        };
        for (i, h) in handles.iter().enumerate() {
            if let Some(v) = s.virtuals.get(h) {
                match v.bound {
                    Bound::Live(inner) => {
                        out.handles[i] = inner;
                        out.virtuals[i] = Some((*h, v.seq, v.delivery.clone(), true));
                    }
                    Bound::Done | Bound::Open => {
                        out.virtuals[i] = Some((*h, v.seq, v.delivery.clone(), false));
                    }
                }
            }
        }
        out
    })
}

/// After MPI completed slot `i` of a substituted array: frees the virtual request it stood for
/// (when it was bound to a live one) and returns its post number and delivery.
pub(crate) fn completed_substitute(
    entry: &(Request, u64, Delivery, bool),
    status: &Status,
) -> (u64, Delivery) {
    let (handle, seq, delivery, live) = entry.clone();
    if live {
        finish_virtual(handle, status);
    } else {
        STATE.with(|s| s.borrow_mut().virtuals.remove(&handle));
    }
    (seq, delivery)
}

/// The replay ended: binds every still-open virtual request, in posting order.
fn replay_ended() {
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
        bind(seq, handle);
    }
    STATE.with(|s| s.borrow_mut().drained.clear());
}

fn bind(seq: u64, handle: Request) {
    let (delivery, state) = STATE.with(|s| {
        let s = s.borrow();
        let v = &s.virtuals[&handle];
        (v.delivery.clone(), v.state)
    });
    let drained = STATE.with(|s| s.borrow_mut().drained.remove(&seq));
    let bound = match (&delivery, drained) {
        (
            Delivery::Receive { dest, .. },
            Some(Drained {
                status,
                data: Some(data),
            }),
        ) => {
            let mut position = 0;
            let count = received_count(&status, dest);
            // SAFETY: the re-executed receive's buffer; the data was packed with its datatype.
            unsafe {
                real::Unpack(
                    data.as_ptr().cast(),
                    data.len() as c_int,
                    &mut position,
                    dest.buf.cast_mut(),
                    count,
                    dest.datatype,
                    dest.comm,
                );
                (*state).status = status;
                real::Grequest_complete(handle);
            }
            Bound::Done
        }
        (Delivery::Receive { dest, source, tag }, _) => {
            let mut inner = abi::predefined().request_null;
            // SAFETY: the re-executed receive's own arguments.
            let rc = unsafe {
                real::Irecv(
                    dest.buf.cast_mut(),
                    dest.count,
                    dest.datatype,
                    *source,
                    *tag,
                    dest.comm,
                    &mut inner,
                )
            };
            if rc == abi::SUCCESS {
                Bound::Live(inner)
            } else {
                tracing::error!(rc, "re-posting a receive after the replay failed");
                Bound::Done
            }
        }
        (Delivery::Nothing, _) => {
            // The send was posted before the fault and is completing (or completed) on its
            // own: the live request of the same post, if still tracked, stands for it.
            let original = STATE.with(|s| {
                let mut s = s.borrow_mut();
                let found = s.live.iter().find(|(_, t)| t.seq == seq).map(|(h, _)| *h);
                found.inspect(|h| {
                    s.live.remove(h);
                })
            });
            match original {
                Some(inner) => Bound::Live(inner),
                None => {
                    // SAFETY: completing our own generalized request.
                    unsafe { real::Grequest_complete(handle) };
                    Bound::Done
                }
            }
        }
    };
    STATE.with(|s| {
        if let Some(v) = s.borrow_mut().virtuals.get_mut(&handle) {
            v.bound = bound;
        }
    });
}

/// The restore hook: drains this thread's tracked receives before memory is rewritten.
pub(crate) fn drain_in_flight(_cds: &[cd_core::CdHandle]) -> cd_core::Result<()> {
    let _guard = Guard::enter();
    let receives: Vec<(Request, Tracked)> = STATE.with(|s| {
        let mut s = s.borrow_mut();
        let keys: Vec<Request> = s
            .live
            .iter()
            .filter(|(_, t)| matches!(t.delivery, Delivery::Receive { .. }))
            .map(|(h, _)| *h)
            .collect();
        keys.into_iter()
            .map(|h| (h, s.live.remove(&h).expect("listed")))
            .collect()
    });
    for (mut request, tracked) in receives {
        let Delivery::Receive { dest, .. } = tracked.delivery else {
            continue;
        };
        let mut status = Status::zeroed();
        // SAFETY: a live receive request this thread posted.
        unsafe {
            real::Cancel(&mut request);
            real::Wait(&mut request, &mut status);
        }
        let mut cancelled: c_int = 0;
        // SAFETY: reads the status.
        unsafe { real::Test_cancelled(&status, &mut cancelled) };
        let data = (cancelled == 0).then(|| pack(&dest, received_count(&status, &dest)));
        stats::drained(cancelled == 0);
        STATE.with(|s| {
            s.borrow_mut()
                .drained
                .insert(tracked.seq, Drained { status, data })
        });
    }
    Ok(())
}

fn pack(dest: &Piece, count: c_int) -> Vec<u8> {
    let mut size: c_int = 0;
    // SAFETY: reads its arguments.
    unsafe { real::Pack_size(count, dest.datatype, dest.comm, &mut size) };
    let mut out = vec![0u8; size.max(0) as usize];
    let mut used: c_int = 0;
    // SAFETY: the receive completed into `dest`, which is readable; `out` has `size` bytes.
    unsafe {
        real::Pack(
            dest.buf,
            count,
            dest.datatype,
            out.as_mut_ptr().cast(),
            size,
            &mut used,
            dest.comm,
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
