//! A replacement's `MPI_Init`: it finds the parent that spawned it (the survivors), learns
//! which lost rank it replaces, joins the merge and the reordering that make the repaired
//! world, and takes part in the steps every rank of it takes ([`super::resync::sync`]): its
//! files are rebuilt there and its catch-up is prepared, before its application's `main` goes
//! on. The application then sees an ordinary restart: `MPI_COMM_WORLD` is the repaired world
//! (its rank the lost one's), `MPI_Comm_get_parent` gives `MPI_COMM_NULL`, and `create_cd`
//! finds the rebuilt version.

use super::repair::{self, REPLACEMENT_ENV};
use crate::abi::{self, Comm};
use crate::boundary::Guard;
use crate::loss::LOST_EXIT_CODE;
use crate::pmpi::{real, safe, Call};
use crate::stats;
use std::ffi::c_int;

/// At `MPI_Init`, in ULFM mode: joins the repaired world if the survivors spawned this
/// process. A replacement that cannot join ends with one line (the survivors' watchdog ends
/// them too).
pub(crate) fn join_if_replacement() {
    if !spawned() {
        return;
    }
    let mut parent = abi::predefined().comm_null;
    // SAFETY: writes one handle.
    unsafe { real::Comm_get_parent(&mut parent) };
    if parent == abi::predefined().comm_null {
        return;
    }
    let _guard = Guard::enter();
    crate::pmpi::world::set_replacement();
    crate::errors::install(parent);
    if let Err(e) = crate::errors::covered(|| join(parent)) {
        let line = format!(
            "libcd: a replacement spawned for a lost rank could not join the job: {e}; the job \
             ends (exit status {LOST_EXIT_CODE})\n"
        );
        let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
        // SAFETY: ends the process; its parent's watchdog ends the survivors.
        unsafe { libc::_exit(LOST_EXIT_CODE) }
    }
}

/// Whether the survivors of a loss spawned this process (its environment says so).
pub(crate) fn spawned() -> bool {
    std::env::var(REPLACEMENT_ENV).is_ok_and(|v| v == "1")
}

fn join(parent: Comm) -> Result<(), String> {
    let int = abi::predefined().int;
    let mut header = [0 as c_int; 2];
    // SAFETY: our buffers, sized as the counts say (the survivors' root sends as many).
    let rc = unsafe { real::Bcast(header.as_mut_ptr().cast(), 2, int, 0, parent) };
    if rc != abi::SUCCESS {
        return Err(format!(
            "learning which rank it replaces: {}",
            safe::error_string(rc)
        ));
    }
    let mut lost = vec![0 as c_int; header[0].max(0) as usize];
    // SAFETY: as above.
    let rc = unsafe { real::Bcast(lost.as_mut_ptr().cast(), header[0], int, 0, parent) };
    if rc != abi::SUCCESS {
        return Err(format!(
            "learning which rank it replaces: {}",
            safe::error_string(rc)
        ));
    }
    // the replacements are the merge's high group, in spawn order
    let survivors = header[1] - header[0];
    let repaired = repair::merge(parent, true, |merged_rank| {
        let index = usize::try_from(merged_rank - survivors).map_err(|_| "not a replacement")?;
        lost.get(index)
            .copied()
            .ok_or_else(|| "more replacements than lost ranks".to_owned())
    })?;
    let identity = safe::comm_rank(repaired);
    tracing::warn!(rank = identity, "replacement joined the repaired world");
    super::resync::sync(repaired, true, &lost)?;
    crate::derived::world_twin(true);
    Ok(())
}

/// `MPI_Comm_get_parent`: a replacement's parent is the runtime's business, not the
/// application's (`MPI_COMM_NULL`).
///
/// # Safety
/// The MPI function's contract.
pub(crate) unsafe fn comm_get_parent(parent: *mut Comm) -> c_int {
    stats::count(Call::Comm_get_parent);
    if crate::pmpi::world::is_replacement() {
        if parent.is_null() {
            return abi::ERR_ARG;
        }
        // SAFETY: a non-null out-parameter, writable by the caller's contract.
        unsafe { parent.write(abi::predefined().comm_null) };
        return abi::SUCCESS;
    }
    // SAFETY: forwarded.
    unsafe { real::Comm_get_parent(parent) }
}
