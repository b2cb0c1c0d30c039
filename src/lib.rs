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
//! - `redset` (cargo feature `mpi`, on by default): redundancy across MPI ranks (XOR,
//!   Reed-Solomon, partner copies), which persistent CDs use and which protects any list of
//!   files. It links an MPI library, so a program without MPI (GPU only, say) builds with
//!   `default-features = false`.
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

mod advance_async;
mod device;
mod domain;
mod error;
pub mod guide;
mod siblings;
mod tree;

pub use advance_async::PendingAdvance;
pub use cd_core::{
    AdvanceReport, Advice, CdError, CdHandle, CdInfo, DeviceMemory, Fate, LogEntry, LoggingMode,
    RestoreReport, SpaceId, Stats, StorageInfo, HOST,
};
pub use cd_cuda::{enable as enable_cuda, status as cuda_status, CudaMemory, DeviceBuffer};
pub use device::{Device, DeviceAlloc, DevicePtrMut, Stream};
pub use domain::{Builder, Child, ChildBuilder, Domain};
pub use error::{CommitError, Error, Result};
pub use siblings::Sibling;
pub use tree::{DeviceKey, Key};

/// The spec's API by its names (crate `cd-core`): the layer under [`Domain`].
///
/// This is the application's part of cd-core, re-exported by name: the spec's functions and
/// types, then the runtime's documented extensions (inspection, memory and log limits,
/// `storage_info`, device memory). Everything is cd-core's item, except
/// [`create_cd`](raw::create_cd), which enables the built-in CUDA space first. See cd-core's
/// [crate documentation](cd_core) for the semantics.
///
/// cd-core's plumbing for its sibling crates is not here: each item has one rightful caller,
/// and a second one would break it (a second `set_restore_hook` or `set_persist_hooks`
/// replaces the first; a record appended or read outside the PMPI wrappers puts their replay
/// out of step). That is the PMPI wrappers' per-call interface (`thread_cx`, `log_mode`,
/// `log_append_with`, `log_next`, `log_mark_unreplayable`, `set_restore_hook`, `cd_is_live`,
/// ...), the persistence layer's hooks (`set_persist_hooks`, `with_saved_entries`,
/// `load_saved_entries`), and cd-core's `fault` and `interval` modules (a test hook and a
/// data structure).
///
/// ```compile_fail,E0432
/// use containment::raw::set_persist_hooks; // libcd's MPI_Init registers them, no one else
/// ```
pub mod raw {
    // The spec's operations; `CURRENT_CD` is `CdRef::Current` (`current_cd`: its handle).
    pub use cd_core::{
        add_file_to_cd, add_mpi_log_to_cd, add_to_cd_via_copy, add_to_cd_via_parent,
        add_to_cd_via_regen, advance_cd_point_in_time, commit_cd, current_cd, delete_file_from_cd,
        delete_from_cd, delete_mpi_log_from_cd, get_mpi_log_from_cd, restore_cd,
    };
    // The spec's types, what the operations report, and the errors.
    pub use cd_core::{
        Access, AddrSpec, AdvanceReport, CdError, CdHandle, CdRef, ErrorCode, Fate, LogEntry,
        LogPayload, LoggingMode, Regen, Restoration, RestoreReport, Result, Scope,
    };
    // Extensions: what a CD holds, statistics, the rank in CD names, a persistent CD's version.
    pub use cd_core::{
        cd_entries, cd_files, cd_info, cd_saved_bytes, global_stats, rank, recovered_version,
        set_rank, CdInfo, EntryInfo, Stats,
    };
    // Extensions: advice on when to advance (Young/Daly, from measured costs and CD_MTBF).
    pub use cd_core::{
        all_advice, cd_advice, daly_interval, given_mtbf, level_advice, young_interval, Advice,
        Measured, MtbfSource, MTBF_ENV,
    };
    // Extensions: the memory the runtime holds, and where MPI logs spill.
    pub use cd_core::{
        log_spill_bytes, log_spilled_total, memory_held, memory_limit, pool_budget,
        set_log_spill_bytes, set_log_spill_dir, set_memory_limit, MemoryHeld, DEFAULT_LOG_SPILL,
        LOG_DIR_ENV, LOG_SPILL_ENV, MEMORY_LIMIT_ENV, POOL_BYTES_ENV,
    };
    // Extensions: `storage_info` parsed.
    pub use cd_core::{
        FlushSettings, PersistScheme, PersistSettings, StorageInfo, KNOWN_KEYS, STORAGE_INFO_ENV,
    };
    // Extensions: device memory through registered copy functions, asynchronous advances, and
    // recovery from a GPU reset.
    pub use cd_core::{
        advance_cd_point_in_time_async, advance_test, advance_wait, device_reset,
        map_device_region, register_memory_space, register_recognising_space, remap_device_region,
        unmap_device_region, AsyncAdvance, DeviceMemory, Drain, DrainCopy, SpaceId, HOST,
    };

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
        cd_cuda::create_cd(parent, storage_info, logging, name)
    }
}

/// Redundancy across MPI ranks (crate `cd-redset`): SINGLE, PARTNER, XOR and Reed-Solomon,
/// with rebuild, on-disk compatible with ECP-VeloC redset 0.4. Only with the `mpi` feature (on
/// by default), since it links an MPI library.
#[cfg(feature = "mpi")]
pub mod redset {
    pub use cd_redset::*;
}
