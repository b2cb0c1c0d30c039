//! In-job recovery from a lost process (ULFM): a replacement takes the lost rank's place, its
//! persisted CD is rebuilt from the survivors' redundancy, and it re-executes from that
//! version alone, fed by its peers, while the survivors never roll back.
//!
//! # When it is on
//! In ULFM mode ([`crate::errors`]) once the first version of a persistent CD completes
//! ([`version_complete`], called by the linking library after each persist): a loss before
//! that has nothing to restore the lost rank from and ends the job clearly
//! ([`crate::loss`]). `CD_ULFM_REPAIR=0` keeps it off (every loss ends the job). Off, nothing
//! here costs anything but one relaxed load in the wrappers it covers.
//!
//! # What each rank keeps ([`journal`])
//! While on, every rank keeps, since the last complete version: a packed copy of every message
//! it sent on the world, how many it received from each rank (by communicator and tag:
//! `crate::by_tag`), and the result of every collective on the world; and its message counts
//! at that version. The persist proved that no message crosses a version, so these are exactly
//! what a rank restored to the version has not yet received.
//!
//! # The repair ([`repair`])
//! A survivor whose call reports a process failure (or the revocation another survivor made)
//! revokes the world (and the communicators derived from it, so that no survivor waits on one
//! for another that is repairing), shrinks it, and agrees with the others that the loss can be
//! contained;
//! then spawns one replacement per lost rank (this executable, its arguments), merges, and
//! reorders so that each replacement has the lost rank's number: that communicator is the
//! world from now on ([`crate::pmpi::world`]). The replacement's `MPI_Init` joins the same
//! steps ([`join`], [`resync`]): each replacement gets the choices its lost rank made since
//! the version from its partner ([`choices`]), and the communicators derived from the world
//! are rebuilt on it (`crate::derived`). Then, on the repaired world, every rank exchanges its
//! counts; the
//! survivors' persisted files are used to rebuild the replacement's (the linking library's
//! [`crate::Hooks::rebuild`]); a survivor serves the collective results the replacement (and
//! any survivor whose own collective was interrupted) lacks; and every survivor resends, to
//! every rank, what that rank had not received (to the replacement: everything since the
//! version). Each survivor then completes the call it was in on the repaired world.
//!
//! # The replacement's catch-up ([`catchup`])
//! Its application starts at `main`, re-executes the program's start, whose messages and
//! collective results its peers kept for the whole run ([`prologue`]), finds the rebuilt
//! version at `create_cd` and restores it. From there its sends are dropped while the
//! survivors already have them (their receive counts since the version say how many), its
//! receives are matched by the resent messages, its collectives are served from the
//! survivor's results, and its choices repeat the lost rank's; then it is live.
//!
//! # Covered, and not yet
//! The calls that survive a loss are those of [`calls`] and [`completion`]: blocking
//! point-to-point (`Send`, `Ssend`, `Recv`, `Sendrecv`), `Isend`, `Issend` and `Irecv`,
//! `Sendrecv_replace` and MPI-4's `Isendrecv(_replace)` (as their parts: [`sendrecv`]), and the
//! activations of persistent requests ([`persistent`]), completed by `Wait`, `Waitall`, `Test`
//! or `Testall`, and the collectives whose result is the same on every rank (`Barrier`,
//! `Bcast`, `Allreduce`, `Allgather`, and their nonblocking forms: [`nonblocking`];
//! `Allgatherv`: [`spread`]), and those run so that every rank holds what their result is made
//! of ([`allform`]): `Reduce`, `Gather` and `Scatter` ([`rooted`]), their nonblocking forms
//! and those of `Scan`, `Exscan`, `Reduce_scatter_block`, `Reduce_scatter`, `Alltoall` and
//! `Allgatherv`
//! ([`nonblocking_allform`], their memory held until they complete: [`held`]), `Scan`, `Exscan`,
//! `Reduce_scatter_block` and `Reduce_scatter` ([`reduced`]), `Alltoall`, `Gatherv`,
//! `Scatterv`, `Alltoallv` and `Alltoallw` ([`spread`]), `Neighbor_allgather(v)` and
//! `Neighbor_alltoall(v/w)` ([`neighbors`]), and `Igatherv`, `Iscatterv`, `Ialltoallv` and
//! `Ialltoallw`, unrolled into point-to-point messages on each communicator's twin
//! ([`unrolled`]) under one request ([`composite`]), and the nonblocking neighbourhood
//! collectives likewise ([`unrolled_neighbors`]); on `MPI_COMM_WORLD` and on the communicators
//! derived from it with `MPI_Comm_dup`, `MPI_Comm_idup` ([`idup`]), `MPI_Comm_split`,
//! `MPI_Comm_split_type`,
//! `MPI_Comm_create`, `MPI_Comm_create_group`, `MPI_Intercomm_create` (point-to-point only),
//! `MPI_Intercomm_merge`, `MPI_Cart_create`, `MPI_Cart_sub` and the graph constructors
//! (rebuilt after a repair: `crate::derived`). Inside CDs that log, the calls above are
//! covered too: each runs within the ordinary handler (a blocking all-form, within the handler
//! of the collective it runs as: [`allform::all_form`]; a persistent request's start and
//! completion under the application's handle, its activation lent within: [`kept`]), which
//! logs it or serves it from the log when the CD re-executes ([`calls::logged`]); a restore
//! forgets the requests it drains. The choices a replacement must repeat (a receive's wildcard
//! source, `Waitany` and the like, a test's flag, what a probe found: [`probes`], what a
//! matched probe matched, received by `Mrecv` or `Imrecv`: [`matched`]) are recorded at a
//! partner ([`choices`]). A loss seen in any other call (other
//! collectives: the persistent ones, the large-count forms, those on an intercommunicator; a
//! persist under way), after a communicator made otherwise, after a choice that is not
//! recorded (a choice in the start, more than the partner's window holds: `crate::errors`, a
//! tracked request given to `MPI_Cancel` or `MPI_Request_get_status`, or but for a send to
//! `MPI_Request_free`: [`completion`]), after a start that
//! communicated otherwise ([`prologue`]), after other traffic since the version (at the repair
//! each survivor checks that its journal accounts for all its message counts:
//! [`journal::holds`]), while a survivor holds a matched message not yet received
//! ([`matched`]), or during a repair, ends the job with one line per rank as before, and a
//! relaunch restores the persisted version.

mod allform;
mod arena;
pub(crate) mod calls;
pub(crate) mod catchup;
pub(crate) mod choices;
pub(crate) mod completion;
pub(crate) mod composite;
mod held;
mod idup;
pub(crate) mod join;
pub(crate) mod journal;
mod kept;
mod matched;
mod neighbors;
mod nonblocking;
mod nonblocking_allform;
mod packed;
mod persistent;
mod probes;
pub(crate) mod prologue;
mod reduced;
pub(crate) mod repair;
pub(crate) mod requests;
mod resync;
mod rooted;
mod sendrecv;
mod spread;
mod unrolled;
mod unrolled_neighbors;

pub(crate) use calls::{
    allgather, allreduce, barrier, bcast, irecv, isend, issend, recv, send, sendrecv, ssend,
};
pub(crate) use composite::{
    cancel, request_free, request_get_status, test, testall, testany, testsome, wait, waitall,
    waitany, waitsome,
};
pub(crate) use idup::comm_idup;
#[cfg(mpi4)]
pub(crate) use idup::comm_idup_with_info;
pub(crate) use join::comm_get_parent;
pub(crate) use matched::{improbe, imrecv, mprobe, mrecv};
pub(crate) use neighbors::{
    neighbor_allgather, neighbor_allgatherv, neighbor_alltoall, neighbor_alltoallv,
    neighbor_alltoallw,
};
pub(crate) use nonblocking::{iallgather, iallreduce, ibarrier, ibcast};
pub(crate) use nonblocking_allform::{
    iallgatherv, ialltoall, iexscan, igather, ireduce, ireduce_scatter, ireduce_scatter_block,
    iscan, iscatter,
};
pub(crate) use persistent::{
    bsend_init, recv_init, rsend_init, send_init, ssend_init, start, startall,
};
pub(crate) use probes::{iprobe, probe};
pub(crate) use sendrecv::sendrecv_replace;
#[cfg(mpi4)]
pub(crate) use sendrecv::{isendrecv, isendrecv_replace};

/// Lends the engine the kept persistent requests' activations ([`kept`], [`persistent`]).
pub(crate) fn register_activations() {
    crate::engine::register_activations(crate::engine::Activations {
        standing: kept::standing,
        start: persistent::restart,
        receive: calls::receive_again,
    });
}
pub(crate) use reduced::{exscan, reduce_scatter, reduce_scatter_block, scan};
pub(crate) use rooted::{gather, reduce, scatter};
pub(crate) use spread::{allgatherv, alltoall, alltoallv, alltoallw, gatherv, scatterv};
pub(crate) use unrolled::{ialltoallv, ialltoallw, igatherv, iscatterv};
pub(crate) use unrolled_neighbors::{
    ineighbor_allgather, ineighbor_allgatherv, ineighbor_alltoall, ineighbor_alltoallv,
    ineighbor_alltoallw,
};

use std::sync::atomic::{AtomicU64, Ordering};

/// Persists completed since `MPI_Init` (every rank counts the same ones).
static COMPLETED: AtomicU64 = AtomicU64::new(0);

/// Whether in-job recovery is on (one relaxed load).
#[inline(always)]
pub(crate) fn on() -> bool {
    crate::errors::containing()
}

pub(crate) use crate::errors::keeping;

/// A persistent `create_cd` (called by the linking library on every rank): every rank counts
/// its messages from here on (for the persist's consistency check, if it did not from
/// `MPI_Init`), and in a ULFM job the program's start ends here (module `prologue`).
pub fn persistent_create() {
    crate::traffic::count_messages();
    if prologue::end() && crate::pmpi::world::is_replacement() {
        // a replacement counts what it receives from `MPI_Init`, its journal from the version
        // it restores: what its start received is not traffic since the version
        journal::set_received_at(prologue::received_all());
    }
}

/// A persist completed on every rank: the journal starts again from this version, and in a
/// ULFM job a loss can be contained from now on. Called by the linking library (libcd) after
/// each successful persist of a persistent CD.
pub fn version_complete() {
    COMPLETED.fetch_add(1, Ordering::Relaxed);
    choices::version_complete();
    if !crate::errors::start_containing() {
        return;
    }
    crate::derived::version_complete();
    let counts = crate::traffic::message_counts();
    let received = crate::derived::channels()
        .into_iter()
        .map(|c| (c, crate::derived::received(c)))
        .collect();
    journal::version_complete(
        journal::AtVersion {
            sent: counts.sent,
            received: counts.received,
            collectives: counts.collectives,
        },
        received,
    );
}

/// Persists completed since `MPI_Init` (a replacement takes the survivors' number).
pub(crate) fn completed() -> u64 {
    COMPLETED.load(Ordering::Relaxed)
}

/// Sets the number of completed persists (a replacement, from the survivors).
pub(crate) fn set_completed(n: u64) {
    COMPLETED.store(n, Ordering::Relaxed);
}
