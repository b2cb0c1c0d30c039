//! Calls that cannot be replayed in isolation: one-sided communication, MPI-IO, spawn.
//!
//! Their effect involves other ranks' memory or the file system in ways a single re-executing
//! rank cannot reproduce from a log. They go straight to MPI (under the re-entrancy guard, since
//! MPI-IO implementations call other MPI functions inside), are counted, and mark the log of the
//! active logging CD, so that `restore_cd` of a CD whose replay would have to cross one refuses
//! with an error that names the call instead of re-executing wrongly.

use crate::boundary::Guard;
use crate::pmpi::Call;
use crate::stats;
use cd_core::LogMode;
use std::ffi::c_int;

/// Runs an unreplayable call.
pub(crate) fn unreplayable(call: Call, real: impl FnOnce() -> c_int) -> c_int {
    stats::count(call);
    if cd_core::log_mode() == LogMode::Off || crate::boundary::inside() {
        return real();
    }
    let _guard = Guard::enter();
    stats::unreplayable();
    if let Err(error) = cd_core::log_mark_unreplayable(call.name()) {
        tracing::warn!(call = call.name(), %error, "cannot mark the MPI log");
    }
    real()
}
