//! The names of CDs: [`CdHandle`] and [`CdRef`], plain values at the bottom of the crate.
//!
//! They sit apart from the registry that resolves them (`registry`) so that the error type can
//! name a CD without importing the registry, and the registry can hold `Arc<Node>` while each
//! node names itself by handle: without this module those three formed one import circle.

/// Names one CD. Cheap to copy; validated on every use.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct CdHandle {
    /// The registry slot (see `registry`).
    pub(crate) index: u32,
    /// The slot's generation when the CD was registered; never 0.
    pub(crate) generation: u32,
}

impl CdHandle {
    /// The handle as 64 bits (what the C API hands out as `cd_handle`).
    pub fn to_bits(self) -> u64 {
        (u64::from(self.generation) << 32) | u64::from(self.index)
    }

    /// A handle from 64 bits. Any value is accepted here; lookups reject invalid ones.
    pub fn from_bits(bits: u64) -> CdHandle {
        CdHandle {
            index: bits as u32,
            generation: (bits >> 32) as u32,
        }
    }
}

impl std::fmt::Display for CdHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cd#{}.{}", self.index, self.generation)
    }
}

/// Which CD an operation applies to: a handle, or the calling thread's active CD.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CdRef {
    /// The calling thread's active CD (the spec's `CURRENT_CD`).
    Current,
    /// A given CD.
    Handle(CdHandle),
}

impl From<CdHandle> for CdRef {
    fn from(handle: CdHandle) -> Self {
        CdRef::Handle(handle)
    }
}
