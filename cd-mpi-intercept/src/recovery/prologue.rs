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
//!
//! What the start keeps is bounded by `CD_ULFM_START_BYTES` (default 16 MiB: the packed bytes
//! and a [`Message`]'s bookkeeping each). A program past it (one that sends its state in the
//! start, or never creates a persistent CD, whose whole run is its start) frees what it kept
//! and keeps nothing more: its wrapped calls cost what they cost without in-job recovery, and a
//! loss ends the job clearly.

use crate::by_tag::ByTag;
use crate::derived;
use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::{Mutex, OnceLock};

/// The environment variable that bounds what the start keeps, in bytes.
pub const START_ENV: &str = "CD_ULFM_START_BYTES";
const DEFAULT_BYTES: u64 = 16 << 20;

/// A message: its communicator (`crate::derived`), tag and packed bytes.
pub(crate) type Message = (u64, c_int, Vec<u8>);

#[derive(Default)]
struct Start {
    /// The messages sent to each world rank, in order.
    sent: Vec<Vec<Message>>,
    /// The packed results of the collectives, in order, with their communicator.
    collectives: Vec<(u64, Vec<u8>)>,
    /// The messages received on each communicator from each world rank by the end of the
    /// start, by tag.
    received: HashMap<u64, Vec<ByTag>>,
    /// Bytes held: the packed bytes and each entry's bookkeeping.
    bytes: u64,
}

static START: Mutex<Option<Start>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut Start) -> R) -> R {
    f(START
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(Start::default))
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

/// Keeps a message sent on communicator `channel` to world rank `dest` (packed). Its memory
/// counts in `cd_stats`' `log_bytes` like the journal's.
pub(crate) fn sent(channel: u64, dest: usize, tag: c_int, data: &[u8]) {
    keep(data.len(), |s| {
        if s.sent.len() <= dest {
            s.sent.resize_with(dest + 1, Vec::new);
        }
        s.sent[dest].push((channel, tag, data.to_vec()));
    });
}

/// Keeps the packed result of a collective on communicator `channel`.
pub(crate) fn collective(channel: u64, data: &[u8]) {
    keep(data.len(), |s| s.collectives.push((channel, data.to_vec())));
}

/// Adds `len` packed bytes to the start with `add`, or, past [`budget`], gives the start up.
fn keep(len: usize, add: impl FnOnce(&mut Start)) {
    let held = (len + std::mem::size_of::<Message>()) as u64;
    let over = with(|s| {
        if s.bytes + held > budget() {
            return Some(std::mem::take(s).bytes);
        }
        add(s);
        s.bytes += held;
        None
    });
    let Some(freed) = over else {
        cd_core::charge_log_memory(held as usize);
        return;
    };
    cd_core::release_log_memory(freed as usize);
    if crate::errors::set_in_start(false) {
        crate::errors::stop_containing(
            "the program's start (before its first persistent create_cd) sent more than \
             in-job recovery keeps for a replacement to re-execute (CD_ULFM_START_BYTES)",
        );
    }
}

/// [`START_ENV`], read once (an unreadable value: the default, with a warning).
fn budget() -> u64 {
    static BYTES: OnceLock<u64> = OnceLock::new();
    *BYTES.get_or_init(|| match std::env::var(START_ENV) {
        Err(_) => DEFAULT_BYTES,
        Ok(v) => v.trim().parse().unwrap_or_else(|_| {
            tracing::warn!(value = %v, "{START_ENV} is not a byte count: using {DEFAULT_BYTES}");
            DEFAULT_BYTES
        }),
    })
}

/// The first persistent `create_cd`: the start ends (returns whether it did here). Checks
/// that it was kept whole; if not, a later loss ends the job (see the module docs).
pub(crate) fn end() -> bool {
    if !crate::errors::set_in_start(false) {
        return false;
    }
    let received: HashMap<u64, Vec<ByTag>> = derived::channels()
        .into_iter()
        .map(|c| (c, derived::received(c)))
        .collect();
    with(|s| s.received.clone_from(&received));
    if crate::pmpi::world::is_replacement() {
        // its counts include the lost rank's at the version (`traffic::preset`); its start
        // was the lost rank's, whose peers checked theirs; the constructors since, which it
        // does not call again, are counted now
        derived::start_ended();
        return true;
    }
    let counts = crate::traffic::message_counts();
    let me = crate::pmpi::safe::comm_rank(crate::pmpi::world::current());
    let whole = with(|s| {
        let kept = |p: usize| s.sent.get(p).map_or(0, |m| m.len() as u64);
        let received_kept = |p: usize| -> u64 {
            received
                .values()
                .map(|r| r.get(p).map_or(0, ByTag::total))
                .sum()
        };
        (0..counts.sent.len()).all(|p| {
            counts.sent[p] == kept(p)
                && counts.received[p] == received_kept(p)
                && (p as c_int == me || counts.collectives[p] == shared(s, p))
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
    true
}

/// The start's collectives on communicators world rank `peer` is a member of.
fn shared(s: &Start, peer: usize) -> u64 {
    let on = |c: u64| derived::rank_of(c, peer) >= 0;
    s.collectives.iter().filter(|(c, _)| on(*c)).count() as u64
}

/// The messages the start sent to world rank `peer`.
pub(crate) fn messages_to(peer: usize) -> Vec<Message> {
    with(|s| s.sent.get(peer).cloned().unwrap_or_default())
}

/// How many messages the start sent to world rank `peer`.
pub(crate) fn sent_to(peer: usize) -> u64 {
    with(|s| s.sent.get(peer).map_or(0, |m| m.len() as u64))
}

/// How many collectives the start made on communicators world rank `peer` is a member of (as
/// message counting counts them for that pair).
pub(crate) fn collectives_shared(peer: usize) -> u64 {
    with(|s| shared(s, peer))
}

/// The start's collective results on communicator `channel`.
pub(crate) fn collective_results(channel: u64) -> Vec<Vec<u8>> {
    with(|s| {
        let on = s.collectives.iter().filter(|(c, _)| *c == channel);
        on.map(|(_, r)| r.clone()).collect()
    })
}

/// The messages received on communicator `channel` from each world rank in the start, by tag.
pub(crate) fn received(channel: u64) -> Vec<ByTag> {
    with(|s| s.received.get(&channel).cloned().unwrap_or_default())
}

/// The messages received in the start on each communicator, by world rank and tag.
pub(crate) fn received_all() -> HashMap<u64, Vec<ByTag>> {
    with(|s| s.received.clone())
}

/// Bytes held, for the statistics.
pub(crate) fn bytes() -> u64 {
    with(|s| s.bytes)
}
