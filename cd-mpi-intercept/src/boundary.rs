//! The panic boundary of the wrappers and the re-entrancy guard.
//!
//! No panic may unwind into the MPI application: every exported wrapper runs its body through
//! [`catch`], which turns a panic into `MPI_ERR_INTERN` and reports it through `tracing`.
//!
//! The guard marks the thread as "inside the interposer": the runtime's own MPI calls (the
//! wrappers call the real functions directly, but MPI-IO and other MPI code call `MPI_*` and
//! `PMPI_*` internally, and cd-redset calls MPI on the runtime's behalf) then pass straight
//! through, neither logged nor replayed.

use crate::abi;
use std::cell::Cell;
use std::ffi::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

thread_local! {
    static INSIDE: Cell<bool> = const { Cell::new(false) };
}

/// Runs a wrapper body, turning a panic into `MPI_ERR_INTERN`.
#[inline]
pub(crate) fn catch(name: &'static str, body: impl FnOnce() -> c_int) -> c_int {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(code) => code,
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".to_owned());
            tracing::error!(call = name, %message, "panic inside the MPI interposer");
            abi::ERR_INTERN
        }
    }
}

/// While alive, the calling thread's MPI calls pass straight through the wrappers.
pub struct Guard {
    was_inside: bool,
}

impl Guard {
    /// Enters the interposer on this thread.
    pub fn enter() -> Guard {
        Guard {
            was_inside: INSIDE.with(|i| i.replace(true)),
        }
    }

    /// Enters the interposer unless the thread is already inside: `None` then (the call
    /// passes through). One thread-local access for both.
    #[inline]
    pub(crate) fn try_enter() -> Option<Guard> {
        if INSIDE.with(|i| i.replace(true)) {
            None
        } else {
            Some(Guard { was_inside: false })
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let was = self.was_inside;
        INSIDE.with(|i| i.set(was));
    }
}

/// Whether the calling thread is inside the interposer (or the runtime's own MPI traffic).
#[inline]
pub(crate) fn inside() -> bool {
    INSIDE.with(|i| i.get())
}

/// Runs `f` as the runtime's own MPI traffic: never logged, never replayed.
pub fn untraced<R>(f: impl FnOnce() -> R) -> R {
    let _guard = Guard::enter();
    f()
}
