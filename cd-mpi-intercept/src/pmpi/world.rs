//! Which real communicator the application's `MPI_COMM_WORLD` means.
//!
//! Until a process is lost it is the library's own `MPI_COMM_WORLD`, and nothing is
//! translated. After an in-job repair (`crate::recovery`) the world is a communicator the
//! runtime built (survivors and replacements, each replacement at the lost rank's number), and
//! the replacement's own `MPI_COMM_WORLD` holds only itself: from then on every exported
//! function maps the handle `MPI_COMM_WORLD` onto the repaired world before anything else
//! ([`inbound`]), and the runtime's own calls ask [`current`]. The communicators a survivor's
//! application derived before the repair are rebuilt too: their old handles are mapped the same
//! way ([`map`]). It sits in the raw layer because
//! the raw layer's callers, the exported shims and the handlers, all need it.

use crate::abi::{self, Comm};
use std::any::TypeId;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};

/// Whether the world was replaced (one relaxed load on every exported call's way).
static REPLACED: AtomicBool = AtomicBool::new(false);
/// The replacing communicator's handle bits, once [`REPLACED`].
static CURRENT: AtomicU64 = AtomicU64::new(0);

/// The real communicator the application's `MPI_COMM_WORLD` means now.
#[inline]
pub(crate) fn current() -> Comm {
    if REPLACED.load(Ordering::Acquire) {
        Comm::from_bits(CURRENT.load(Ordering::Acquire))
    } else {
        abi::predefined().comm_world
    }
}

/// Every communicator that has been the world in this process after the library's own (the
/// world's traffic is counted on each).
static FORMER: Mutex<Vec<u64>> = Mutex::new(Vec::new());

/// Makes `comm` the world from now on (after a repair, or when a replacement joins).
pub(crate) fn replace(comm: Comm) {
    FORMER
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(comm.bits());
    CURRENT.store(comm.bits(), Ordering::Release);
    REPLACED.store(true, Ordering::Release);
}

/// Every communicator that has been the world in this process: the library's, then each
/// repaired one.
pub(crate) fn all() -> Vec<Comm> {
    let former = FORMER.lock().unwrap_or_else(|e| e.into_inner());
    std::iter::once(abi::predefined().comm_world)
        .chain(former.iter().map(|&b| Comm::from_bits(b)))
        .collect()
}

/// Whether `comm` was the world before a repair replaced it.
pub(crate) fn is_former(comm: Comm) -> bool {
    if !REPLACED.load(Ordering::Relaxed) || comm == current() {
        return false;
    }
    comm == abi::predefined().comm_world
        || FORMER
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&comm.bits())
}

/// Whether this process replaces a lost one (spawned by a repair).
static REPLACEMENT: AtomicBool = AtomicBool::new(false);

/// This process replaces a lost one.
pub(crate) fn set_replacement() {
    REPLACEMENT.store(true, Ordering::Relaxed);
}

/// Whether this process replaces a lost one.
pub(crate) fn is_replacement() -> bool {
    REPLACEMENT.load(Ordering::Relaxed)
}

/// The application's handles of derived communicators a repair rebuilt: (old, now).
static MAPPED: RwLock<Vec<(u64, u64)>> = RwLock::new(Vec::new());

/// The application's handle `old` means `now` from now on (a survivor's derived communicator
/// after a repair rebuilt it).
pub(crate) fn map(old: Comm, now: Comm) {
    let mut mapped = MAPPED.write().unwrap_or_else(|e| e.into_inner());
    // a handle rebuilt again (a second repair) keeps one entry
    for entry in mapped.iter_mut().filter(|(_, n)| *n == old.bits()) {
        entry.1 = now.bits();
    }
    match mapped.iter_mut().find(|(o, _)| *o == old.bits()) {
        Some(entry) => entry.1 = now.bits(),
        None => mapped.push((old.bits(), now.bits())),
    }
}

/// The real communicator the application's handle `comm` means (after a repair).
pub(crate) fn mapped(comm: Comm) -> Comm {
    if !REPLACED.load(Ordering::Relaxed) {
        return comm;
    }
    if comm == abi::predefined().comm_world {
        return current();
    }
    let mapped = MAPPED.read().unwrap_or_else(|e| e.into_inner());
    mapped
        .iter()
        .find(|(o, _)| *o == comm.bits())
        .map_or(comm, |&(_, n)| Comm::from_bits(n))
}

/// Whether the world was replaced.
pub(crate) fn replaced() -> bool {
    REPLACED.load(Ordering::Relaxed)
}

/// One argument of an exported function, on its way in: the handle `MPI_COMM_WORLD` becomes
/// [`current`], a rebuilt communicator's old handle the rebuilt one ([`mapped`]); every other
/// value (and every argument of another type) passes unchanged. For
/// a type other than [`Comm`] this compiles to nothing (the type test is a constant).
#[inline(always)]
pub(crate) fn inbound<T: Copy + 'static>(value: T) -> T {
    if TypeId::of::<T>() != TypeId::of::<Comm>() || !REPLACED.load(Ordering::Relaxed) {
        return value;
    }
    // SAFETY: `T` is `Comm` (same type id), so this copies a `Comm` as itself.
    let comm: Comm = unsafe { std::mem::transmute_copy(&value) };
    let mapped = mapped(comm);
    // SAFETY: as above, `T` is `Comm`.
    unsafe { std::mem::transmute_copy(&mapped) }
}
