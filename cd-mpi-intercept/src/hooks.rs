//! What the library that links the interposer adds to `MPI_Init`, `MPI_Finalize` and the
//! statistics: libcd wires persistence (cd-persist) in through these, so the interposer
//! depends on cd-core alone and knows nothing of redundancy or files.

use std::sync::OnceLock;

/// Work another layer adds to MPI's set-up and tear-down, and to the statistics.
#[derive(Clone, Copy, Debug)]
pub struct Hooks {
    /// Runs at the end of a successful `MPI_Init` (or `MPI_Init_thread`), once the rank is
    /// known and the restore hook set, inside the interposer's guard.
    pub after_init: fn(),
    /// Runs at `MPI_Finalize` while MPI still works, inside the guard.
    pub before_finalize: fn(),
    /// `key value` pairs added to the per-rank statistics (`CD_MPI_STATS`).
    pub statistics: fn() -> Vec<(String, u64)>,
    /// What a relaunch of the job restores (the persisted versions of this rank's persistent
    /// CDs, in words), for the line a rank writes when a process loss ends a ULFM job;
    /// `None` when nothing is persisted.
    pub persisted: fn() -> Option<String>,
    /// This process's persistent CDs, described for a replacement of a lost rank (in-job
    /// recovery in a ULFM job): the bytes [`Hooks::rebuild`] gets on the replacement.
    pub description: fn() -> Vec<u8>,
    /// Rebuilds the newest complete version of every persistent CD on every rank of the
    /// repaired world (collective): `None` on a survivor, the survivors' description on a
    /// replacement, whose application's `create_cd` then finds that version.
    pub rebuild: fn(Option<&[u8]>) -> Result<(), String>,
}

static HOOKS: OnceLock<Hooks> = OnceLock::new();

/// Installs `hooks`, once per process; `false` if some were installed already (they stay).
pub fn set_hooks(hooks: Hooks) -> bool {
    HOOKS.set(hooks).is_ok()
}

/// The installed hooks, if any.
pub(crate) fn hooks() -> Option<&'static Hooks> {
    HOOKS.get()
}
