//! The panic boundary of the wrappers and the re-entrancy guard.
//!
//! No panic may unwind into the MPI application: every exported wrapper runs its body through
//! [`catch`], which turns a panic into `MPI_ERR_INTERN` and reports it through `tracing`.
//!
//! The guard marks the thread as "inside the interposer": the runtime's own MPI calls (the
//! wrappers call the real functions directly, but MPI-IO and other MPI code call `MPI_*` and
//! `PMPI_*` internally, and cd-redset calls MPI on the runtime's behalf) then pass straight
//! through, neither logged nor replayed.
//!
//! The guard's flag lives in cd-core's per-thread state ([`cd_core::ThreadCx`]), next to the
//! thread's logging mode and log lane, so that a logged call reaches all three with one
//! thread-local access (libcd is a shared object: each access is a call to `__tls_get_addr`).
//! The guard keeps that context for the record's append. While cd-core's state of a thread
//! is being destroyed (thread exit) a flag of this module's own stands in.

use crate::abi;
use cd_core::ThreadCx;
use std::cell::Cell;
use std::ffi::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs the body of the wrapper of `name` (`MPI_Send`), turning a panic into
/// `MPI_ERR_INTERN`; in a `tracing` span of the call when `TRACE` spans may be wanted.
///
/// While tracing is off (no subscriber, or none that wants `TRACE`) that costs one relaxed
/// load and a branch: the span is opened out of line, since even a disabled span, built and
/// entered and dropped around every call, cost about a nanosecond per logged call.
#[inline]
pub(crate) fn catch(name: &'static str, body: impl FnOnce() -> c_int) -> c_int {
    if tracing::Level::TRACE <= tracing::level_filters::STATIC_MAX_LEVEL
        && tracing::Level::TRACE <= tracing::level_filters::LevelFilter::current()
    {
        return traced(name, body);
    }
    catch_panics(name, body)
}

/// [`catch`] in the call's span, whose `route` says what became of the call (see
/// [`traced_route`]).
#[cold]
#[inline(never)]
fn traced(name: &'static str, body: impl FnOnce() -> c_int) -> c_int {
    let span = tracing::trace_span!("mpi", call = name, route = tracing::field::Empty);
    if span.is_disabled() {
        let _entered = span.entered();
        return catch_panics(name, body);
    }
    let route = traced_route();
    if route == "replayed" {
        begin_recovery();
    }
    span.record("route", tracing::field::display(route));
    let entered = span.entered();
    let code = catch_panics(name, body);
    if route == "replayed" {
        // Served from the log if the CD still replays; else the log ran out at this call,
        // which went live.
        let served = if traced_route() != "replayed" {
            "logged"
        } else if is_send(name) {
            "dropped send"
        } else {
            "replayed"
        };
        entered.record("route", tracing::field::display(served));
    }
    drop(entered);
    end_recovery_if_live();
    code
}

/// Whether a call is a plain send (`MPI_Send`, `MPI_Isend`, `MPI_Ssend`, `MPI_Ibsend_c`,
/// ...), which a replay drops: sent before the fault, not sent again. `MPI_Sendrecv` is not
/// (its receive is served from the log).
fn is_send(name: &str) -> bool {
    let name = name.strip_prefix("MPI_").unwrap_or(name);
    let name = name.strip_suffix("_c").unwrap_or(name);
    matches!(
        name,
        "Send" | "Isend" | "Ssend" | "Issend" | "Bsend" | "Ibsend" | "Rsend" | "Irsend"
    )
}

thread_local! {
    /// The `recovery` span open on this thread, and the calls made in it: only on the traced
    /// path ([`traced`]), so a call whose span is off never reaches it.
    static RECOVERY: std::cell::RefCell<Option<(tracing::span::EnteredSpan, u64)>> =
        const { std::cell::RefCell::new(None) };
}

/// Opens the thread's `recovery` span at a call made while its CD replays, unless one is
/// open: the replay after a `restore_cd` as one span (entered, so the calls replayed are
/// inside it), from the first call the log serves to the call that goes live.
fn begin_recovery() {
    let _ = RECOVERY.try_with(|open| {
        let mut open = open.borrow_mut();
        let (_, calls) = open.get_or_insert_with(|| {
            let span = tracing::info_span!("recovery", calls = tracing::field::Empty);
            (span.entered(), 0)
        });
        *calls += 1;
    });
}

/// Closes the thread's `recovery` span once its CD no longer replays (this call went live, or
/// the replay was discarded), with the number of calls made in it.
fn end_recovery_if_live() {
    let _ = RECOVERY.try_with(|open| {
        let mut open = open.borrow_mut();
        let Some((_, calls)) = open.as_mut() else {
            return;
        };
        if traced_route() == "replayed" {
            return;
        }
        *calls += 1;
        if let Some((span, calls)) = open.take() {
            span.record("calls", calls);
        }
    });
}

/// What a call about to be routed will do, for the `route` field of its `mpi` span (only
/// while the wrappers' spans are traced): `live` (straight to MPI), `logged` (to MPI and
/// into the log), `replayed` (while the CD replays: [`traced`] then says `replayed`, or
/// `dropped send` for a send, or `logged` where the log ran out at this call) or `runtime`
/// (the runtime's own traffic). Read as the handler's route reads it, without routing, and
/// only on the traced path: a call whose span is off, replayed or not, does none of this.
#[cold]
fn traced_route() -> &'static str {
    if !cd_core::logging_anywhere() {
        return "live";
    }
    // SAFETY: used at once, within this call.
    let Some(cx) = (unsafe { cd_core::thread_cx() }) else {
        return "live";
    };
    if cx.layer_flag().get() {
        return "runtime";
    }
    match cx.mode() {
        cd_core::LogMode::Off => "live",
        cd_core::LogMode::Replay => "replayed",
        _ => "logged",
    }
}

/// Runs `body`, turning a panic into `MPI_ERR_INTERN`.
#[inline(always)]
fn catch_panics(name: &'static str, body: impl FnOnce() -> c_int) -> c_int {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(code) => code,
        Err(payload) => {
            let message = cd_core::panic_message(&*payload);
            tracing::error!(call = name, %message, "panic inside the MPI interposer");
            abi::ERR_INTERN
        }
    }
}

thread_local! {
    /// The flag once cd-core's thread state is gone (thread exit): no destructor, so it
    /// outlives every other thread-local of the thread.
    static LATE_INSIDE: Cell<bool> = const { Cell::new(false) };
}

/// While alive, the calling thread's MPI calls pass straight through the wrappers.
pub struct Guard {
    /// The thread's context, `None` once its locals are being destroyed. `'static` stands
    /// for "this call": a guard lives in a wrapper's frame (or a runtime call's), which the
    /// thread's locals outlive.
    cx: Option<ThreadCx<'static>>,
    was_inside: bool,
}

/// The calling thread's context (see the module docs).
#[inline(always)]
fn thread_cx() -> Option<ThreadCx<'static>> {
    // SAFETY: every caller keeps the context in a `Guard` or uses it at once, within the
    // current call, which ends before the thread's locals are destroyed.
    unsafe { cd_core::thread_cx() }
}

impl Guard {
    /// Enters the interposer on this thread.
    pub fn enter() -> Guard {
        let cx = thread_cx();
        let was_inside = match cx {
            Some(cx) => cx.layer_flag().replace(true),
            None => LATE_INSIDE.with(|i| i.replace(true)),
        };
        Guard { cx, was_inside }
    }

    /// Enters the interposer on the thread `cx` belongs to unless it is already inside:
    /// `None` then (the call passes through).
    #[inline(always)]
    pub(crate) fn try_enter_in(cx: ThreadCx<'static>) -> Option<Guard> {
        if cx.layer_flag().replace(true) {
            None
        } else {
            Some(Guard {
                cx: Some(cx),
                was_inside: false,
            })
        }
    }

    /// The thread's context, for the record's append (`None` at thread exit).
    #[inline(always)]
    pub(crate) fn cx(&self) -> Option<ThreadCx<'static>> {
        self.cx
    }
}

impl Drop for Guard {
    #[inline(always)]
    fn drop(&mut self) {
        let was = self.was_inside;
        match self.cx {
            Some(cx) => cx.layer_flag().set(was),
            None => LATE_INSIDE.with(|i| i.set(was)),
        }
    }
}

/// Whether the calling thread is inside the interposer (or the runtime's own MPI traffic).
#[inline]
pub(crate) fn inside() -> bool {
    match thread_cx() {
        Some(cx) => cx.layer_flag().get(),
        None => LATE_INSIDE.with(|i| i.get()),
    }
}

/// Runs `f` as the runtime's own MPI traffic: never logged, never replayed.
pub fn untraced<R>(f: impl FnOnce() -> R) -> R {
    let _guard = Guard::enter();
    f()
}
