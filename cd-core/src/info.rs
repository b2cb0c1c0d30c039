//! Queries that change nothing: [`cd_info`], [`cd_entries`], [`cd_files`],
//! [`cd_saved_bytes`], [`global_stats`], and the process rank used in CD identities.

use crate::active;
use crate::advance::settle;
use crate::advice::{level_advice, Advice};
use crate::callback;
use crate::error::{CdError, Result};
use crate::ids::{CdHandle, CdRef};
use crate::memory;
use crate::registry;
use crate::space::SpaceId;
use crate::stats::Stats;
use crate::storage_info::StorageInfo;
use crate::types::{validate_specs, Access, AddrSpec, Restoration, Scope};
use std::sync::atomic::{AtomicU32, Ordering};

/// A snapshot of the process-wide counters, and of the memory the runtime holds.
///
/// Log entries are counted when a CD's log folds them in (see `log`), so the live CDs' logs
/// are folded first; a CD locked by another thread at that moment is skipped (its records are
/// counted when that thread's operation folds them).
pub fn global_stats() -> Stats {
    for node in registry::live_nodes() {
        node.try_fold_log();
    }
    let held = memory::memory_held();
    Stats {
        store_bytes: held.stores,
        pool_bytes: held.pool,
        log_bytes: held.logs,
        peak_bytes: held.peak,
        ..Stats::counters()
    }
}

static RANK: AtomicU32 = AtomicU32::new(0);

/// Sets this process's rank, used in CD identities (the MPI layer calls it at `MPI_Init`).
pub fn set_rank(rank: u32) {
    RANK.store(rank, Ordering::Relaxed);
}

/// This process's rank (0 without MPI).
pub fn rank() -> u32 {
    RANK.load(Ordering::Relaxed)
}

/// A description of one CD.
#[derive(Debug, Clone)]
pub struct CdInfo {
    /// The CD's handle.
    pub handle: CdHandle,
    /// The parent's handle (`None` for a root).
    pub parent: Option<CdHandle>,
    /// The root CD's name (shared by the tree).
    pub name: Option<String>,
    /// The rank of the process (0 without MPI).
    pub rank: u32,
    /// 0 for a root, its parent's depth + 1 otherwise.
    pub depth: u32,
    /// The smallest index no live sibling had when the CD was created.
    pub sibling_index: u32,
    /// Whether the CD logs MPI traffic.
    pub logging: bool,
    /// Whether the CD ever existed at the same time as a sibling (its log is then discarded).
    pub had_siblings: bool,
    /// The parsed `storage_info`.
    pub storage_info: StorageInfo,
    /// Live children.
    pub children: usize,
    /// Address ranges (merged entries).
    pub ranges: usize,
    /// Bytes covered by entries.
    pub tracked_bytes: usize,
    /// Bytes saved in the store.
    pub stored_bytes: usize,
    /// Monitored files.
    pub files: usize,
    /// MPI log entries.
    pub log_entries: usize,
    /// Bytes of the MPI log entries.
    pub log_bytes: usize,
    /// Bytes of the MPI log entries kept in spill files rather than memory.
    pub log_spilled_bytes: usize,
    /// Whether a replay of the log is in progress.
    pub replaying: bool,
    /// What happened to this CD so far.
    pub stats: Stats,
    /// The advice on when to advance the CD, its level's ([`cd_advice`](crate::cd_advice)).
    pub advice: Advice,
}

/// Describes a CD.
pub fn cd_info(cd: impl Into<CdRef>) -> Result<CdInfo> {
    callback::check()?;
    let node = active::resolve(cd.into())?;
    settle(&node, false)?;
    let advice = level_advice(node.root_name.as_deref(), node.depth);
    let state = node.lock_live()?;
    Ok(CdInfo {
        handle: node.handle,
        parent: node.parent.as_ref().map(|p| p.handle),
        name: node.root_name.as_deref().map(str::to_owned),
        rank: rank(),
        depth: node.depth,
        sibling_index: node.sibling_index,
        logging: node.logging,
        had_siblings: node.had_siblings.load(Ordering::Relaxed),
        storage_info: node.storage.clone(),
        children: state.children.len(),
        ranges: state.labelled().count(),
        tracked_bytes: state.entries.covered_bytes(),
        stored_bytes: state.stored_bytes(),
        files: state.files.len(),
        log_entries: state.log.len(),
        log_bytes: state.log.bytes(),
        log_spilled_bytes: state.log.spilled(),
        replaying: state.log.is_replaying(),
        stats: state.stats,
        advice,
    })
}

/// One entry of a CD, as [`cd_entries`] lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryInfo {
    /// First byte.
    pub address: usize,
    /// Length in bytes.
    pub length: usize,
    /// READ_ONLY or READ_WRITE.
    pub access: Access,
    /// GLOBAL or CONSTRAINED.
    pub scope: Scope,
    /// COPY, PARENT or REGEN.
    pub restoration: Restoration,
    /// The memory space ([`HOST`](crate::HOST) for host memory).
    pub space: SpaceId,
}

/// The entries of a CD, merged, in address order.
pub fn cd_entries(cd: impl Into<CdRef>) -> Result<Vec<EntryInfo>> {
    callback::check()?;
    let node = active::resolve(cd.into())?;
    settle(&node, false)?;
    let state = node.lock_live()?;
    Ok(state
        .labelled()
        .map(|(s, e, entry)| EntryInfo {
            address: s,
            length: e - s,
            access: entry.access,
            scope: entry.scope,
            restoration: entry.how.restoration(),
            space: entry.space,
        })
        .collect())
}

/// The saved offsets of the files a CD monitors, by descriptor.
pub fn cd_files(cd: impl Into<CdRef>) -> Result<Vec<(i32, i64)>> {
    callback::check()?;
    let node = active::resolve(cd.into())?;
    settle(&node, false)?;
    let state = node.lock_live()?;
    Ok(state.files.iter().map(|(&fd, &off)| (fd, off)).collect())
}

/// The bytes a CD saved in its store for `address .. address + length`.
///
/// Every byte must be held by a COPY entry of this CD (parent and regen entries save nothing).
/// This shows a CD's contents — the "CD contents" rows of the spec's tables — without
/// restoring it.
pub fn cd_saved_bytes(cd: impl Into<CdRef>, address: usize, length: usize) -> Result<Vec<u8>> {
    callback::check()?;
    let (start, end) = validate_specs(&[AddrSpec::new(
        address,
        length,
        Access::ReadOnly,
        Scope::Global,
    )])?[0];
    let node = active::resolve(cd.into())?;
    settle(&node, false)?;
    let state = node.lock_live()?;
    if let Some((address, end)) = state.unsaved(start, end) {
        return Err(CdError::RangeNotFound { address, end });
    }
    let mut bytes = Vec::with_capacity(length);
    for (s, e, piece) in state.saved(start, end) {
        let (cs, ce) = (s.max(start), e.min(end));
        bytes.extend_from_slice(&piece[cs - s..ce - s]);
    }
    Ok(bytes)
}
