//! Regen functions: how `add_to_cd_via_regen` entries get their data back.
//!
//! Only the value lives here; `restore` calls it, as a guarded callback. So this module stays
//! in the vocabulary layer, below the per-thread state that guarding a callback needs.

use crate::types::AddrSpec;
use std::sync::Arc;

/// The shared body of a regen function.
type RegenFn = Arc<dyn Fn(&[AddrSpec]) -> i32 + Send + Sync>;

/// A function that regenerates application memory for the ranges it is given.
///
/// It returns 0 on success, as the spec's `int (*regen)(struct cd_addrspec[], int)` does. The
/// ranges it receives may differ from those added: ranges split and merge as their labels
/// change. It must be idempotent, and it must not call the CD API (that call would fail with
/// [`CdError::Reentrant`](crate::CdError::Reentrant)). Two `Regen` values with the same
/// [`id`](Regen::id) are the same function: their adjacent ranges merge, and a restore calls the
/// function once for all of them.
#[derive(Clone)]
pub struct Regen {
    id: usize,
    /// Called only by `restore`, as a guarded callback (`callback::regen`).
    pub(crate) f: RegenFn,
}

impl Regen {
    /// A regen function identified by itself (clones share the identity).
    pub fn new(f: impl Fn(&[AddrSpec]) -> i32 + Send + Sync + 'static) -> Regen {
        let f: RegenFn = Arc::new(f);
        Regen {
            // The allocation's address as a number: an identity, never made a pointer again.
            id: Arc::as_ptr(&f).cast::<()>().addr(),
            f,
        }
    }

    /// A regen function with an explicit identity, such as a C function pointer's address.
    pub fn with_id(id: usize, f: impl Fn(&[AddrSpec]) -> i32 + Send + Sync + 'static) -> Regen {
        Regen { id, f: Arc::new(f) }
    }

    /// The identity of this function.
    pub fn id(&self) -> usize {
        self.id
    }
}

impl PartialEq for Regen {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl std::fmt::Debug for Regen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Regen({:#x})", self.id)
    }
}
