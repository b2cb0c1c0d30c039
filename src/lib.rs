//! Containment Domains for Rust programs: nested, application-directed checkpoint and
//! restore.
//!
//! A containment domain (CD) saves selected application memory at a point in time, so that a
//! piece of work that failed (a transient fault, a GPU that crashed, an MPI rank that died)
//! can restore that memory and run again, without the rest of the program noticing. CDs nest:
//! a child CD protects a smaller piece of work inside its parent's, so a fault is repaired at
//! the innermost level that holds what it needs. The [`guide`] explains the model from the
//! start, with examples that run.
//!
//! # The safe layer
//! - [`Domain`] is a root CD that owns the buffers it protects ([`Domain::protect`] moves a
//!   `Vec` in and returns a [`Key`]); [`Domain::get`] / [`get_mut`](Domain::get_mut) lend
//!   them out, [`restore`](Domain::restore), [`advance`](Domain::advance) and
//!   [`commit`](Domain::commit) are the spec's operations. The borrow checker proves that no
//!   reference into a buffer is alive when a restore writes it.
//! - [`Child`] is a nested CD ([`Domain::child`]): it borrows its parent, so it cannot
//!   outlive it and the parent cannot be restored, advanced or committed while it lives;
//!   [`Child::commit`] merges it into the parent by the spec's rules.
//! - [`Sibling`]s ([`Domain::siblings`]) are concurrent children, one per disjoint piece of a
//!   buffer, each usable on its own thread.
//! - [`Builder`] and [`ChildBuilder`] set the name, the MPI logging mode and `storage_info`.
//! - [`Device`] and [`DeviceKey`]: typed buffers in device memory, allocated through a
//!   registered memory space ([`DeviceAlloc`]) or in CUDA memory ([`Device::cuda`]);
//!   [`Domain::advance_async`] drains them in the background ([`PendingAdvance`]).
//! - [`Error`] is every failure, [`CommitError`] a failed commit that hands the domain back.
//!
//! # The rest of the runtime
//! - [`raw`]: the spec's functions by their names (`create_cd`, `add_to_cd_via_copy`,
//!   `restore_cd`, ...), `unsafe` where they read or write raw address ranges: for what the
//!   safe layer does not cover (regen and parent entries, files, MPI logs, device resets).
//! - [`redset`]: redundancy across MPI ranks (XOR, Reed-Solomon, partner copies), which
//!   persistent CDs use and which protects any list of files.
//! - The built-in CUDA memory space is on by default where CUDA is present (`CD_CUDA=0`
//!   turns it off): creating a root CD ([`Domain`], [`raw::create_cd`]) enables it, so device
//!   pointers (CUDA) in CD ranges are recognised and saved through the driver, with no copy
//!   functions to register. [`enable_cuda`] enables it earlier, [`cuda_status`] says whether
//!   it is in use; [`CudaMemory`] and [`DeviceBuffer`] allocate CUDA memory through it.
//!
//! ```
//! use containment::Domain;
//!
//! let mut root = Domain::builder().name("crate-docs").create()?;
//! let u = root.protect(vec![1.0f64; 4])?;
//! {
//!     let mut child = root.child()?; // borrows `root` until it commits
//!     child.get_mut(u)?[0] = 7.0; // saved in the child first, then written
//!     child.restore()?; // a fault: back to the child's start
//!     assert_eq!(child.get(u)?[0], 1.0);
//!     child.get_mut(u)?[0] = 2.0;
//!     child.commit()?; // the parent's entry is promoted: its next advance saves u
//! }
//! root.advance()?;
//! assert_eq!(root.get(u)?, [2.0, 1.0, 1.0, 1.0]);
//! root.commit()?;
//! # Ok::<(), containment::Error>(())
//! ```

mod device;
mod domain;
mod error;
pub mod guide;
mod siblings;
mod tree;

pub use cd_core::{
    AdvanceReport, CdError, CdHandle, CdInfo, DeviceMemory, Fate, LogEntry, LoggingMode,
    RestoreReport, SpaceId, Stats, StorageInfo, HOST,
};
pub use cd_cuda::{enable as enable_cuda, status as cuda_status, CudaMemory, DeviceBuffer};
pub use device::{Device, DeviceAlloc, DevicePtrMut, PendingAdvance, Stream};
pub use domain::{Builder, Child, ChildBuilder, Domain};
pub use error::{CommitError, Error, Result};
pub use siblings::Sibling;
pub use tree::{DeviceKey, Key};

/// The spec's API by its names: the layer under [`Domain`] (crate `cd-core`).
///
/// Everything here is re-exported from `cd-core`, except [`create_cd`](raw::create_cd), which
/// enables the built-in CUDA space first; see cd-core's [crate documentation](cd_core) for the
/// semantics and `cd-core/ARCHITECTURE.md` for which module owns each spec rule.
pub mod raw {
    pub use cd_core::*;

    /// [`cd_core::create_cd`], after enabling the built-in CUDA space ([`crate::enable_cuda`])
    /// as `libcd`'s `create_cd` does: device pointers added to any CD are then recognised and
    /// copied through the driver, with no call to make first. Where CUDA is missing or
    /// `CD_CUDA=0`, nothing changes and nothing fails ([`crate::cuda_status`] says why).
    ///
    /// cd-core cannot do this itself (it has no GPU dependency), so a program that calls
    /// `cd_core::create_cd` directly calls [`crate::enable_cuda`] itself.
    pub fn create_cd(
        parent: Option<CdRef>,
        storage_info: Option<&str>,
        logging: LoggingMode,
        name: Option<&str>,
    ) -> Result<CdHandle> {
        cd_cuda::enable();
        cd_core::create_cd(parent, storage_info, logging, name)
    }
}

/// Redundancy across MPI ranks (crate `cd-redset`): SINGLE, PARTNER, XOR and Reed-Solomon,
/// with rebuild, on-disk compatible with ECP-VeloC redset 0.4.
pub mod redset {
    pub use cd_redset::*;
}
