//! What a rank is served after a repair instead of doing it live: a replacement's sends the
//! survivors already have (dropped), and the collective results it re-executes (copied from a
//! survivor's journal); a survivor whose own collective was interrupted gets that one result
//! the same way.

use crate::by_tag::ByTag;
use std::collections::{HashMap, VecDeque};
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

#[derive(Default)]
struct Served {
    /// Sends still to drop, by communicator (`crate::derived`), world rank and tag.
    drop: HashMap<(u64, usize, c_int), u64>,
    /// Collective results still to serve, packed, in order, by communicator.
    collectives: HashMap<u64, VecDeque<Vec<u8>>>,
}

static SERVED: Mutex<Option<Served>> = Mutex::new(None);
/// Whether anything is left to serve (one relaxed load on the live path).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Sends dropped and collective results taken, for the statistics.
pub(crate) static DROPPED: AtomicU64 = AtomicU64::new(0);
pub(crate) static TAKEN: AtomicU64 = AtomicU64::new(0);

fn with<R>(f: impl FnOnce(&mut Served) -> R) -> R {
    let mut guard = SERVED.lock().unwrap_or_else(|e| e.into_inner());
    let served = guard.get_or_insert_with(Served::default);
    let r = f(served);
    served.drop.retain(|_, &mut d| d > 0);
    served.collectives.retain(|_, c| !c.is_empty());
    let left = !served.drop.is_empty() || !served.collectives.is_empty();
    ACTIVE.store(left, Ordering::Relaxed);
    r
}

/// Adds sends to drop on communicator `channel` (per world rank and tag) and collective
/// results to serve there.
pub(crate) fn add(channel: u64, drop: &[ByTag], collectives: Vec<Vec<u8>>) {
    with(|s| {
        for (p, tags) in drop.iter().enumerate() {
            for (tag, n) in tags.iter() {
                *s.drop.entry((channel, p, tag)).or_insert(0) += n;
            }
        }
        s.collectives
            .entry(channel)
            .or_default()
            .extend(collectives);
    });
}

/// Whether the next send of `tag` on communicator `channel` to world rank `dest` is dropped
/// (the peer has it). Inlined: one relaxed load on every covered send outside a catch-up.
#[inline]
pub(crate) fn drop_send(channel: u64, dest: c_int, tag: c_int) -> bool {
    ACTIVE.load(Ordering::Relaxed) && drop_during_catch_up(channel, dest, tag)
}

fn drop_during_catch_up(channel: u64, dest: c_int, tag: c_int) -> bool {
    let Ok(dest) = usize::try_from(dest) else {
        return false;
    };
    with(|s| match s.drop.get_mut(&(channel, dest, tag)) {
        Some(n) if *n > 0 => {
            *n -= 1;
            DROPPED.fetch_add(1, Ordering::Relaxed);
            true
        }
        _ => false,
    })
}

/// The next collective result to serve on communicator `channel`, if any.
pub(crate) fn next_collective(channel: u64) -> Option<Vec<u8>> {
    if !ACTIVE.load(Ordering::Relaxed) {
        return None;
    }
    let next = with(|s| {
        s.collectives
            .get_mut(&channel)
            .and_then(VecDeque::pop_front)
    });
    if next.is_some() {
        TAKEN.fetch_add(1, Ordering::Relaxed);
    }
    next
}
