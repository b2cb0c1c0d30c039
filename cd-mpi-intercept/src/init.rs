//! `MPI_Init`, `MPI_Init_thread` and `MPI_Finalize`: set-up and the statistics summary.
//!
//! At initialization the rank is handed to cd-core (CD identities carry it), the restore hook
//! is installed (it drains receives in flight before `restore_cd` rewrites memory), so are
//! the persistence hooks (`cd-persist`, run as the runtime's own untraced MPI traffic), and
//! `CD_MPI_STATS` is read. Message counting (module `traffic`) starts here when
//! `CD_STORAGE_INFO` sets `dir`, else at the first persistent `create_cd`. rsmpi programs call
//! `MPI_Init_thread`, C programs usually `MPI_Init`: both are hooked.

use crate::abi;
use crate::boundary::{untraced, Guard};
use crate::pmpi::{real, safe, Call};
use crate::{engine, stats, traffic};
use std::ffi::{c_char, c_int};

fn after_init() {
    let _guard = Guard::enter();
    stats::init();
    traffic::init();
    let rank = safe::world_rank();
    cd_core::set_rank(rank.max(0) as u32);
    cd_core::set_restore_hook(engine::drain_in_flight);
    cd_core::set_persist_hooks(cd_core::PersistHooks {
        created: |cd| {
            // every rank counts from here on, if it did not from MPI_Init
            traffic::start();
            untraced(|| cd_persist::created(cd))
        },
        advanced: |cd| untraced(|| cd_persist::advanced(cd, traffic::snapshot)),
        before_restore: |cd| untraced(|| cd_persist::before_restore(cd)),
    });
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
    // A persistent CD's last background flush is completed while MPI still works.
    crate::boundary::untraced(cd_persist::finalize);
    stats::write(safe::world_rank());
    // SAFETY: forwarded.
    unsafe { real::Finalize() }
}
