//! Routing each call (straight to MPI, recorded, or replayed), appending its record, and
//! reporting a re-executed call that does not match its record as an MPI error.

use super::virtuals::replay_ended;
use crate::abi::{self, Comm, Status};
use crate::boundary::Guard;
use crate::pmpi::{safe, Call};
use crate::record::{Corrupt, Header, Piece, Reader, Writer};
use crate::stats;
use cd_core::LogMode;
use std::borrow::Borrow;
use std::ffi::{c_int, CString};

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
    kind: crate::types::DatatypeInfo,
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
