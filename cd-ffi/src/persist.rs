//! Persistent CDs wired into MPI: libcd is where the MPI interposer and the persistence layer
//! (cd-persist, over cd-redset) meet, so neither depends on the other.
//!
//! When the library is loaded, [`HOOKS`] go to the interposer: at `MPI_Init` they hand
//! cd-core the persistence hooks (a persistent `create_cd` before `MPI_Init` is refused
//! with cd-core's clear error), at `MPI_Finalize` they complete the background flushes, they
//! add persistence's counters to `CD_MPI_STATS`, they say what a relaunch restores when
//! a process loss ends a ULFM job, and they rebuild a replacement's files when the job
//! contains the loss (each completed persist tells the interposer, whose journal for in-job
//! recovery starts again from that version). Each hook runs cd-persist's collective
//! steps as the runtime's own MPI traffic ([`untraced`]), never logged or replayed.

use cd_mpi_intercept::{untraced, Hooks, MessageCounts};

/// What libcd adds to the interposer's `MPI_Init`, `MPI_Finalize` and statistics.
const HOOKS: Hooks = Hooks {
    after_init: || {
        cd_core::set_persist_hooks(cd_core::PersistHooks {
            created: |cd| {
                // every rank counts messages from here on, if it did not from MPI_Init, and
                // the program's start ends (in-job recovery re-executes it in a replacement)
                cd_mpi_intercept::persistent_create();
                untraced(|| cd_persist::created(cd))
            },
            advanced: |cd| {
                untraced(|| cd_persist::advanced(cd, traffic))?;
                // the interposer's journal starts again from this version (in-job recovery)
                cd_mpi_intercept::version_complete();
                Ok(())
            },
            before_restore: |cd| untraced(|| cd_persist::before_restore(cd)),
        })
    },
    // a persistent CD's last background flush completes while MPI still works
    before_finalize: cd_persist::finalize,
    statistics: cd_persist::stats::totals,
    persisted: cd_persist::describe,
    description: cd_persist::replacement::description,
    rebuild: |description| untraced(|| cd_persist::replacement::rebuild(description)).map(drop),
};

/// The interposer's message counts, as the persist's consistency check takes them.
fn traffic() -> cd_persist::Traffic {
    let MessageCounts {
        sent,
        received,
        collectives,
        pending_receives,
        pending_collectives,
        since_init,
    } = cd_mpi_intercept::message_counts();
    cd_persist::Traffic {
        sent,
        received,
        collectives,
        pending_receives,
        pending_collectives,
        since_init,
    }
}

/// Hands [`HOOKS`] to the interposer when the library is loaded (before `main`, and at
/// `dlopen`), so that they are in place at `MPI_Init` whatever the program calls first.
// Why a constructor is sound here: `install` only stores function pointers in a `OnceLock`
// (no allocation, no other constructor's state), and a panic cannot happen there.
#[used]
#[link_section = ".init_array"]
pub(crate) static INSTALL: extern "C" fn() = install;

extern "C" fn install() {
    cd_mpi_intercept::set_hooks(HOOKS);
}
