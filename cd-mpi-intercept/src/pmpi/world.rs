//! Which real communicator the application's `MPI_COMM_WORLD` means.
//!
//! Until a process is lost it is the library's own `MPI_COMM_WORLD`, and nothing is
//! translated. After an in-job repair (`crate::recovery`) the world is a communicator the
//! runtime built (survivors and replacements, each replacement at the lost rank's number), and
//! the replacement's own `MPI_COMM_WORLD` holds only itself: from then on every exported
//! function maps the handle `MPI_COMM_WORLD` onto the repaired world before anything else
//! ([`inbound`]), and the runtime's own calls ask [`current`]. It sits in the raw layer because
//! the raw layer's callers, the exported shims and the handlers, all need it.

use crate::abi::{self, Comm};
use std::any::TypeId;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

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

/// Makes `comm` the world from now on (after a repair, or when a replacement joins).
pub(crate) fn replace(comm: Comm) {
    CURRENT.store(comm.bits(), Ordering::Release);
    REPLACED.store(true, Ordering::Release);
}

/// Whether the world was replaced.
pub(crate) fn replaced() -> bool {
    REPLACED.load(Ordering::Relaxed)
}

/// One argument of an exported function, on its way in: the handle `MPI_COMM_WORLD` becomes
/// [`current`]; every other value (and every argument of another type) passes unchanged. For
/// a type other than [`Comm`] this compiles to nothing (the type test is a constant).
#[inline(always)]
pub(crate) fn inbound<T: Copy + 'static>(value: T) -> T {
    if TypeId::of::<T>() != TypeId::of::<Comm>() || !REPLACED.load(Ordering::Relaxed) {
        return value;
    }
    // SAFETY: `T` is `Comm` (same type id), so this copies a `Comm` as itself.
    let comm: Comm = unsafe { std::mem::transmute_copy(&value) };
    let mapped = if comm == abi::predefined().comm_world {
        current()
    } else {
        comm
    };
    // SAFETY: as above, `T` is `Comm`.
    unsafe { std::mem::transmute_copy(&mapped) }
}
