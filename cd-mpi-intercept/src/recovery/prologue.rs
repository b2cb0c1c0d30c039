//! The program's start: the MPI traffic from `MPI_Init` to its first persistent `create_cd`.
//!
//! A replacement runs the application from `main`, so it re-executes the start before its
//! `create_cd` finds the persisted version: a `MPI_Bcast` of the input, a halo exchange that
//! sets up ghost cells. Its peers did all that long ago and will not do it again. So, in a ULFM
//! job, every rank keeps its start like the journal keeps the traffic since a version, but for
//! the whole run (it is usually small: parameters, not the state): the messages it sent, by
//! world rank, the results of its collectives, and how many messages it received from each
//! rank. After a loss the survivors resend their start's messages to the replacement before
//! anything since the version, serve it the start's collective results before those since the
//! version, and count the start's receives among the sends it drops.
//!
//! The start ends at the first persistent `create_cd` ([`end`], called by the linking library
//! from [`crate::persistent_create`]); a replacement's own start ends at its own. There every
//! rank checks that what it kept is all of its start's traffic (its message counts, counted from
//! `MPI_Init` in a ULFM job, against the start kept here; a replacement's start is the one its
//! peers checked): traffic that the calls of
//! `super::calls` did not keep (a derived communicator, another collective) means a replacement
//! could not re-execute the start, and a loss then ends the job clearly
//! ([`crate::errors::stop_containing`]).

use std::ffi::c_int;
use std::sync::Mutex;

#[derive(Default)]
struct Start {
    /// The messages sent to each world rank, in order: (tag, packed bytes).
    sent: Vec<Vec<(c_int, Vec<u8>)>>,
    /// The packed results of the collectives on the world, in order.
    collectives: Vec<Vec<u8>>,
    /// The messages received on the world from each world rank by the end of the start.
    received: Vec<u64>,
    /// Bytes held.
    bytes: u64,
}

static START: Mutex<Start> = Mutex::new(Start {
    sent: Vec::new(),
    collectives: Vec::new(),
    received: Vec::new(),
    bytes: 0,
});

fn with<R>(f: impl FnOnce(&mut Start) -> R) -> R {
    f(&mut START.lock().unwrap_or_else(|e| e.into_inner()))
}

/// At `MPI_Init` in a ULFM job with recovery on: the start is kept from here, and every
/// message is counted from here (the check at [`end`] needs all of them).
pub(crate) fn begin() {
    crate::traffic::count_from_init();
    crate::errors::set_in_start(true);
}

/// Whether this process is in its start (one relaxed load on the covered calls' path).
#[inline(always)]
pub(crate) fn active() -> bool {
    crate::errors::in_start()
}

/// Keeps a message sent to world rank `dest` (packed). Its memory counts in `cd_stats`'
/// `log_bytes` like the journal's.
pub(crate) fn sent(dest: usize, tag: c_int, data: &[u8]) {
    cd_core::charge_log_memory(data.len());
    with(|s| {
        if s.sent.len() <= dest {
            s.sent.resize_with(dest + 1, Vec::new);
        }
        s.sent[dest].push((tag, data.to_vec()));
        s.bytes += data.len() as u64;
    });
}

/// Keeps the packed result of a collective on the world.
pub(crate) fn collective(data: &[u8]) {
    cd_core::charge_log_memory(data.len());
    with(|s| {
        s.collectives.push(data.to_vec());
        s.bytes += data.len() as u64;
    });
}

/// The first persistent `create_cd`: the start ends. Checks that it was kept whole; if not,
/// a later loss ends the job (see the module docs).
pub(crate) fn end() {
    if !crate::errors::set_in_start(false) {
        return;
    }
    if super::join::is_replacement() {
        // its counts include the lost rank's at the version (`traffic::preset`); its start
        // was the lost rank's, whose peers checked theirs
        return;
    }
    let counts = crate::traffic::message_counts();
    let on_world = crate::traffic::received_on(&super::worlds());
    let whole = with(|s| {
        s.received.clone_from(&on_world);
        let me = crate::pmpi::safe::comm_rank(crate::pmpi::world::current());
        let kept = |p: usize| s.sent.get(p).map_or(0, |m| m.len() as u64);
        let collectives = s.collectives.len() as u64;
        (0..counts.sent.len()).all(|p| {
            counts.sent[p] == kept(p)
                && counts.received[p] == on_world.get(p).copied().unwrap_or(0)
                && (p as c_int == me || counts.collectives[p] == collectives)
        }) && counts.pending_receives == 0
            && counts.pending_collectives == 0
    });
    if !whole {
        crate::errors::stop_containing(
            "the program's start (before its first persistent create_cd) used MPI calls that \
             a replacement cannot re-execute (on a derived communicator, another collective, \
             or a request still pending at the create)",
        );
    }
    tracing::debug!(
        whole,
        "the program's start ended at its first persistent create_cd"
    );
}

/// The messages the start sent to world rank `peer`.
pub(crate) fn messages_to(peer: usize) -> Vec<(c_int, Vec<u8>)> {
    with(|s| s.sent.get(peer).cloned().unwrap_or_default())
}

/// How many messages the start sent to world rank `peer`.
pub(crate) fn sent_to(peer: usize) -> u64 {
    with(|s| s.sent.get(peer).map_or(0, |m| m.len() as u64))
}

/// How many collectives on the world the start made.
pub(crate) fn collective_count() -> u64 {
    with(|s| s.collectives.len() as u64)
}

/// The start's collective results.
pub(crate) fn collective_results() -> Vec<Vec<u8>> {
    with(|s| s.collectives.clone())
}

/// The messages received from each world rank in the start.
pub(crate) fn received() -> Vec<u64> {
    with(|s| s.received.clone())
}

/// Bytes held, for the statistics.
pub(crate) fn bytes() -> u64 {
    with(|s| s.bytes)
}
