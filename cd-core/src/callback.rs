//! Running user callbacks (regen functions, device copies) safely.
//!
//! Callbacks run while the runtime holds CD locks. A callback that calls back into the CD API
//! would deadlock on those locks, and a panicking callback would unwind through them. So the
//! runtime marks the thread while a callback runs (every API call checks the mark and returns
//! [`CdError::Reentrant`]) and catches panics, turning them into errors. The same holds for the
//! MPI layer's restore hook and the closure that writes a log record; only `log_mode`, which
//! takes no lock, skips the check (the MPI wrappers call it from inside them).

use crate::active;
use crate::error::{CdError, Result};
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

// The mark itself lives in `active`'s thread-local, next to the active-CD cache, so that the
// log append reads both in one access.

/// Fails with [`CdError::Reentrant`] when called from inside a callback.
pub(crate) fn check() -> Result<()> {
    if active::with_mark(Cell::get).unwrap_or(false) {
        Err(CdError::Reentrant)
    } else {
        Ok(())
    }
}

pub(crate) use active::marked;

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
