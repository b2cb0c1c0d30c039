//! What a rank is served after a repair instead of doing it live: a replacement's sends the
//! survivors already have (dropped), and the collective results it re-executes (copied from a
//! survivor's journal); a survivor whose own collective was interrupted gets that one result
//! the same way.

use std::collections::VecDeque;
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

#[derive(Default)]
struct Served {
    /// Sends still to drop, per world rank.
    drop: Vec<u64>,
    /// Collective results still to serve, packed, in order.
    collectives: VecDeque<Vec<u8>>,
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
    let left = served.drop.iter().any(|&d| d > 0) || !served.collectives.is_empty();
    ACTIVE.store(left, Ordering::Relaxed);
    r
}

/// Adds sends to drop (per world rank) and collective results to serve.
pub(crate) fn add(drop: &[u64], collectives: Vec<Vec<u8>>) {
    with(|s| {
        if s.drop.len() < drop.len() {
            s.drop.resize(drop.len(), 0);
        }
        for (d, &n) in s.drop.iter_mut().zip(drop) {
            *d += n;
        }
        s.collectives.extend(collectives);
    });
}

/// Whether the next send to world rank `dest` is dropped (the peer has it).
pub(crate) fn drop_send(dest: c_int) -> bool {
    if !ACTIVE.load(Ordering::Relaxed) {
        return false;
    }
    let Ok(dest) = usize::try_from(dest) else {
        return false;
    };
    with(|s| match s.drop.get_mut(dest) {
        Some(n) if *n > 0 => {
            *n -= 1;
            DROPPED.fetch_add(1, Ordering::Relaxed);
            true
        }
        _ => false,
    })
}

/// The next collective result to serve, if any.
pub(crate) fn next_collective() -> Option<Vec<u8>> {
    if !ACTIVE.load(Ordering::Relaxed) {
        return None;
    }
    let next = with(|s| s.collectives.pop_front());
    if next.is_some() {
        TAKEN.fetch_add(1, Ordering::Relaxed);
    }
    next
}
