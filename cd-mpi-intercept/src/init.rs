//! `MPI_Init`, `MPI_Init_thread` and `MPI_Finalize`: set-up and the statistics summary.
//!
//! At initialization the rank is handed to cd-core (CD identities carry it), the restore hook
//! is installed (it drains receives in flight before `restore_cd` rewrites memory),
//! `CD_MPI_STATS` is read, and the linking library's [`crate::Hooks`] run (libcd installs
//! persistence there); at `MPI_Finalize` its `before_finalize` runs while MPI still works. Message
//! counting (module `traffic`) starts here when `CD_STORAGE_INFO` sets `dir` or in a ULFM job,
//! else at the first persistent `create_cd`. rsmpi programs call `MPI_Init_thread`, C programs usually `MPI_Init`:
//! both are hooked. In a ULFM job, a process spawned to replace a lost rank joins the repaired
//! world at the end of its `MPI_Init` (`recovery::join`), and after a repair `MPI_Finalize`
//! first completes what the repair started (`recovery::repair::finalize`).

use crate::abi;
use crate::boundary::{untraced, Guard};
use crate::pmpi::{real, safe, Call};
use crate::{engine, errors, hooks, recovery, stats, traffic};
use std::ffi::{c_char, c_int};

/// The restore hook: drains the requests in flight (see `engine`), which in-job recovery, if it
/// took their posts, forgets (with the collective a drained one was a part of).
fn restoring(cds: &[cd_core::CdHandle]) -> cd_core::Result<()> {
    engine::drain_in_flight(cds, |request| {
        recovery::requests::forget(&[request]);
        recovery::composite::drained(request);
    })
}

fn after_init() {
    let _guard = Guard::enter();
    stats::init();
    traffic::init();
    cd_core::set_rank(safe::world_rank().max(0) as u32);
    cd_core::set_restore_hook(restoring);
    errors::init();
    if errors::ulfm_mode() {
        // every call reaches its handler, so that MPI_Comm_free forgets the handler the
        // application chose for the communicator
        crate::intercept();
        if errors::repair_wanted() {
            // what each rank received, by tag, says what a repair resends
            traffic::count_by_tag();
            // what a replacement would re-execute before its create_cd is kept from here
            recovery::prologue::begin();
            // a kept persistent request's activation, for the drain and a replay's end
            recovery::register_activations();
            if !recovery::join::spawned() {
                // where this rank's choices are kept, and the world's twin (a replacement's
                // are made at its join)
                recovery::choices::open(abi::predefined().comm_world);
                crate::derived::world_twin(false);
            }
            // a rank that stops containing tells its partner (see `recovery::choices`)
            errors::on_stop(recovery::choices::mark_stopped);
        }
    }
    if let Some(hooks) = hooks::hooks() {
        (hooks.after_init)();
    }
    if errors::ulfm_mode() {
        // a replacement joins the repaired world (its rank is the lost one's from here)
        recovery::join::join_if_replacement();
    }
    let rank = safe::world_rank();
    tracing::debug!(rank, family = abi::FAMILY, "MPI interposer ready");
}

/// `MPI_Init`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn init(argc: *mut c_int, argv: *mut *mut *mut c_char) -> c_int {
    // SAFETY: forwarded.
    let rc = unsafe { real::Init(argc, argv) };
    if rc == abi::SUCCESS {
        after_init();
        stats::count(Call::Init);
    }
    rc
}

/// `MPI_Init_thread`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn init_thread(
    argc: *mut c_int,
    argv: *mut *mut *mut c_char,
    required: c_int,
    provided: *mut c_int,
) -> c_int {
    // SAFETY: forwarded.
    let rc = unsafe { real::Init_thread(argc, argv, required, provided) };
    if rc == abi::SUCCESS {
        after_init();
        stats::count(Call::Init_thread);
    }
    rc
}

/// `MPI_Finalize`.
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn finalize() -> c_int {
    stats::count(Call::Finalize);
    if let Some(hooks) = hooks::hooks() {
        untraced(hooks.before_finalize);
    }
    let recovery_lines = if errors::ulfm_mode() {
        recovery::repair::statistics()
    } else {
        Vec::new()
    };
    stats::write(safe::world_rank(), recovery_lines);
    recovery::choices::close();
    if recovery::repair::finalize() {
        // a survivor of a repair: Open MPI 5.0's finalize would hang (see `recovery::repair`)
        return abi::SUCCESS;
    }
    // SAFETY: forwarded.
    unsafe { real::Finalize() }
}
