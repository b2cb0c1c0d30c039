//! Containment Domains: nested, application-directed checkpoint and restore.
//!
//! A containment domain (CD) saves selected application memory at a point in time, so that a
//! failed piece of work can restore that memory and run again in isolation. This crate is the
//! semantics of the spec (`shared/seeds/containment-domains-api.txt`), without MPI: the tree
//! of CDs, their entries and stores, file positions and MPI log FIFOs. The C library
//! (`cd-ffi`) and the PMPI layer (`cd-mpi-intercept`) sit on top of it.
//!
//! The modules form layers with no import circle: ids, errors, counters and the MPI log at the
//! bottom, then memory spaces, the store, one CD (`node`), the registry, each thread's state
//! (active CDs, cached MPI mode, the callback mark), the copies to and from application memory,
//! then one module per operation. `cd-core/ARCHITECTURE.md` draws them, says why each seam is
//! where it is, and maps each spec rule to the one module that owns it.
//!
//! # Brief overview
//! - [`create_cd`] makes a root or child CD and pushes it on the calling thread's stack of
//!   active CDs ([`CdRef::Current`] is the spec's `CURRENT_CD`).
//! - [`add_to_cd_via_copy`], [`add_to_cd_via_parent`], [`add_to_cd_via_regen`] add address
//!   ranges ([`AddrSpec`]); [`delete_from_cd`] removes them; [`add_file_to_cd`] and
//!   [`delete_file_from_cd`] track file offsets.
//! - [`advance_cd_point_in_time`] moves a CD's point in time to now, atomically;
//!   [`restore_cd`] brings memory back ("oldest wins"); [`commit_cd`] merges a child into
//!   its parent, or discards a root.
//! - [`add_mpi_log_to_cd`], [`get_mpi_log_from_cd`], [`delete_mpi_log_from_cd`]: the FIFO the
//!   interposition layer fills and replays, by the spec's names.
//! - [`log_mode`], [`log_append_with`], [`log_next`], [`log_mark_unreplayable`] (and
//!   [`mark_log_unreplayable`] for a given CD's log),
//!   [`set_restore_hook`]: the same for the PMPI wrappers, on the calling thread's active CD,
//!   with the decision of what a call does cached per thread (no lock); logs past
//!   [`LOG_SPILL_ENV`] bytes spill to unlinked files.
//! - [`set_persist_hooks`], [`with_saved_entries`], [`load_saved_entries`],
//!   [`recovered_version`]: how a persistence layer persists a root CD whose `storage_info`
//!   sets `dir` at every advance and brings it back after a restart ([`StorageInfo`] lists the
//!   keys).
//! - The safe, typed layer for Rust programs (`Domain`, nested children, device buffers) is in
//!   the facade crate `containment`, which builds on these functions.
//! - [`memory_held`], [`memory_limit`] and [`pool_budget`]: the bytes the runtime holds in
//!   stores, the pool and MPI logs, the cap `CD_MEMORY_LIMIT` puts on them (an add or advance
//!   past it fails with [`CdError::MemoryLimit`] and changes nothing), and the pool's share of
//!   the node (`CD_POOL_BYTES`).
//! - [`cd_advice`]: when to advance, per CD level, from the measured advance cost and the
//!   observed (or `CD_MTBF`) mean time between faults (Young/Daly; see [`Advice`]).
//! - [`register_memory_space`] and [`map_device_region`] let GPU codes protect device memory
//!   with their own copy functions; [`advance_cd_point_in_time_async`] drains device ranges
//!   in the background, and [`remap_device_region`] follows allocations that a GPU reset
//!   moved.
//!
//! # Design
//! Each CD keeps two [interval maps](interval::IntervalMap): its entries (labels and
//! restoration type, merged when equal) and its data segments (slices of immutable, shared
//! buffers). An advance copies the READ_WRITE ranges into a fresh buffer and swaps segments
//! only once every copy succeeded; a commit moves segments to the parent without copying. So
//! atomicity costs no undo log, and the spec's "1 GB then 9 bytes" example copies 9 bytes.
//! A device range whose space checksums blocks (the built-in CUDA space) is brought up to
//! date by its next synchronous advance with only its changed blocks, written into its saved
//! copy at the swap, when nothing can fail and no one else holds that copy (module `delta`).
//! Handles are generation-tagged slots: a stale or made-up handle is an error, never a
//! dangling pointer. Locks are per CD, taken ancestors first (see `node`).
//!
//! # Example
//! ```
//! use cd_core::{create_cd, add_to_cd_via_copy, restore_cd, advance_cd_point_in_time, commit_cd};
//! use cd_core::{Access, AddrSpec, LoggingMode};
//!
//! let mut x = [1u64, 2, 3];
//! let cd = create_cd(None, None, LoggingMode::Disabled, Some("doc-example")).unwrap();
//! // SAFETY: `x` outlives the CD and nothing else touches it during these calls.
//! unsafe {
//!     add_to_cd_via_copy(cd, &[AddrSpec::of(&x, Access::ReadWrite)]).unwrap();
//!     x[0] = 100;
//!     restore_cd(cd).unwrap();
//!     assert_eq!(x, [1, 2, 3]);
//!     x[1] = 20;
//!     advance_cd_point_in_time(cd).unwrap();
//!     x[1] = 99;
//!     restore_cd(cd).unwrap();
//! }
//! assert_eq!(x, [1, 20, 3]);
//! commit_cd(cd).unwrap();
//! ```

mod access;
mod active;
mod add;
mod advance;
mod advance_async;
mod advice;
mod callback;
mod commit;
mod copy;
mod create;
mod delta;
mod device;
mod drain_track;
mod error;
pub mod fault;
mod files;
mod ids;
mod info;
pub mod interval;
mod log;
mod memory;
mod merge;
mod mpi;
mod node;
mod persist;
mod primitive;
mod regen;
mod registry;
mod restore;
mod space;
mod stats;
mod storage_info;
mod store;
mod types;

pub use active::current_cd;
pub use add::{add_to_cd_via_copy, add_to_cd_via_parent, add_to_cd_via_regen, delete_from_cd};
pub use advance::{advance_cd_point_in_time, AdvanceReport};
pub use advance_async::{advance_cd_point_in_time_async, advance_test, advance_wait, AsyncAdvance};
pub use advice::{
    all_advice, cd_advice, daly_interval, given_mtbf, level_advice, young_interval, Advice,
    Measured, MtbfSource, CHEAP_NS, CHEAP_SAMPLE, MTBF_ENV,
};
pub use commit::commit_cd;
pub use create::create_cd;
pub use device::{device_reset, remap_device_region, unmap_device_region};
pub use error::{c_str, panic_message, CdError, ErrorCode, Fate, Result};
pub use files::{add_file_to_cd, delete_file_from_cd};
pub use ids::{CdHandle, CdRef};
pub use info::{
    cd_entries, cd_files, cd_info, cd_saved_bytes, global_stats, rank, set_rank, CdInfo, EntryInfo,
};
pub use log::{
    log_spill_bytes, log_spill_file, log_spilled_total, set_log_spill_bytes, set_log_spill_dir,
    LogEntry, LogPayload, DEFAULT_LOG_SPILL, LOG_DIR_ENV, LOG_SPILL_ENV,
};
pub use memory::{
    charge_log_memory, local_ranks, memory_held, memory_limit, pool_budget, release_log_memory,
    set_memory_limit, MemoryHeld, LOCAL_RANKS_ENV, MEMORY_LIMIT_ENV, POOL_BYTES_ENV,
};
pub use mpi::{
    add_mpi_log_to_cd, cd_is_live, delete_mpi_log_from_cd, get_mpi_log_from_cd, log_append,
    log_append_with, log_mark_unreplayable, log_mode, log_next, logging_anywhere,
    mark_log_unreplayable, set_restore_hook, thread_cx, RestoreHook, ThreadCx,
};
pub use persist::{
    load_saved_entries, recovered_version, set_persist_hooks, with_saved_entries, PersistHooks,
    SavedEntry,
};
pub use regen::Regen;
pub use restore::{restore_cd, RestoreReport};
pub use space::{
    map_device_region, register_memory_space, register_recognising_space, BlockPatch, Changes,
    DeviceMemory, Drain, DrainCopy, SavedSums, SpaceId, HOST,
};
pub use stats::Stats;
pub use storage_info::{
    FlushSettings, PersistScheme, PersistSettings, StorageInfo, KNOWN_KEYS, STORAGE_INFO_ENV,
};
pub use store::StoreBytes;
pub use types::{Access, AddrSpec, LogMode, LoggingMode, Restoration, Scope};
