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

/// [`catch`] in the call's span.
#[cold]
#[inline(never)]
fn traced(name: &'static str, body: impl FnOnce() -> c_int) -> c_int {
    let _span = tracing::trace_span!("mpi", call = name).entered();
    catch_panics(name, body)
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
