//! Running user callbacks (regen functions, device copies) safely.
//!
//! Callbacks run while the runtime holds CD locks. A callback that calls back into the CD API
//! would deadlock on those locks, and a panicking callback would unwind through them. So the
//! runtime marks the thread while a callback runs (every API call checks the mark and returns
//! [`CdError::Reentrant`]) and catches panics, turning them into errors. The same holds for the
//! MPI layer's restore hook and the closure that writes a log record; only `log_mode`, which
//! takes no lock, skips the check (the MPI wrappers call it from inside them).

use crate::error::{CdError, Result};
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

thread_local! {
    static IN_CALLBACK: Cell<bool> = const { Cell::new(false) };
}

/// Fails with [`CdError::Reentrant`] when called from inside a callback.
pub(crate) fn check() -> Result<()> {
    if IN_CALLBACK.with(Cell::get) {
        Err(CdError::Reentrant)
    } else {
        Ok(())
    }
}

/// Marks the thread as inside a callback until the returned guard drops, after checking
/// (in the same thread-local access) that it was not: [`check`] and [`marked`] at once, for
/// the log append that runs on every logged MPI call.
pub(crate) fn enter() -> Result<Unmark> {
    if IN_CALLBACK.with(|c| c.replace(true)) {
        Err(CdError::Reentrant)
    } else {
        Ok(Unmark)
    }
}

/// Clears the callback mark when dropped.
pub(crate) struct Unmark;

impl Drop for Unmark {
    fn drop(&mut self) {
        IN_CALLBACK.with(|c| c.set(false));
    }
}

/// Runs `f` marked as a callback; a panic unwinds on (the runtime's state is consistent at
/// every call of this).
pub(crate) fn marked<R>(f: impl FnOnce() -> R) -> R {
    IN_CALLBACK.with(|c| c.set(true));
    let _unmark = Unmark;
    f()
}

/// Runs `f` marked as a callback; `None` if it panicked.
fn run<R>(f: impl FnOnce() -> R) -> Option<R> {
    marked(|| catch_unwind(AssertUnwindSafe(f)).ok())
}

/// Runs a device copy function.
pub(crate) fn guard<T>(
    f: impl FnOnce() -> std::result::Result<T, String>,
) -> std::result::Result<T, String> {
    run(f).unwrap_or_else(|| Err("the copy function panicked".to_owned()))
}

/// Runs the MPI layer's restore hook; a panic refuses the restore.
pub(crate) fn restore_hook(f: impl FnOnce() -> Result<()>) -> Result<()> {
    run(f).unwrap_or_else(|| {
        Err(CdError::RestoreRefused(
            "the restore hook panicked".to_owned(),
        ))
    })
}

/// Runs a regen function; a panic counts as status -1.
pub(crate) fn regen(f: impl FnOnce() -> i32) -> i32 {
    run(f).unwrap_or(-1)
}
