//! The hooks through which a persistence layer takes part in a persistent root CD's life, and
//! the two accessors it needs: reading a CD's saved entries and loading persisted bytes into a
//! new CD's store.
//!
//! cd-core knows nothing of files, MPI or redundancy: a root CD whose `storage_info` sets
//! `dir` (see `storage_info`) is *persistent*, and cd-core calls the [`PersistHooks`] the MPI
//! layer registered at `MPI_Init` — at create, after every advance and before a restore. The
//! layer decides what persisting means (`cd-persist` writes files protected by cd-redset).
//!
//! # Entries by order, not by address
//!
//! A restarted process runs its setup again, and its buffers land at other addresses. So a
//! persistent root CD remembers the ranges it was given, in the order of the add calls
//! ([`SavedEntry`]), and a restart matches the persisted entries to the new CD's by that
//! order, their restoration kind and their length ([`load_saved_entries`]).

use crate::active;
use crate::callback;
use crate::error::{CdError, Result};
use crate::ids::{CdHandle, CdRef};
use crate::node::AddRecord;
use crate::registry;
use crate::store::{Buffer, Segment};
use crate::types::Restoration;
use std::sync::{Arc, RwLock};

/// The functions a persistence layer registers with [`set_persist_hooks`].
///
/// Each runs on the calling thread without any CD lock held, so it may call the CD API
/// ([`with_saved_entries`], [`load_saved_entries`], [`crate::cd_info`]). Each is collective
/// in the layer's sense where noted: every rank must create and advance its persistent root
/// CDs in the same order.
#[derive(Clone, Copy, Debug)]
pub struct PersistHooks {
    /// A persistent root CD was created (collective): prepares its storage and looks for a
    /// persisted version to recover, returning its number if one was found (and rebuilt where
    /// needed). An error fails `create_cd`, which then leaves no CD behind.
    pub created: fn(CdHandle) -> Result<Option<u64>>,
    /// A persistent root CD advanced (collective): persists its new point in time. An error
    /// is returned by the advance, whose in-memory part stands.
    pub advanced: fn(CdHandle) -> Result<()>,
    /// `restore_cd` is about to restore a persistent root CD (local): loads a recovered
    /// version into the store first, if one is pending. An error refuses the restore.
    pub before_restore: fn(CdHandle) -> Result<()>,
}

static HOOKS: RwLock<Option<PersistHooks>> = RwLock::new(None);

/// Registers the persistence layer (the MPI layer does, at `MPI_Init`). One per process:
/// setting it again replaces it. Without one, creating a persistent CD fails.
pub fn set_persist_hooks(hooks: PersistHooks) {
    *HOOKS.write().unwrap_or_else(|e| e.into_inner()) = Some(hooks);
}

/// The registered hooks, if any.
pub(crate) fn hooks() -> Option<PersistHooks> {
    *HOOKS.read().unwrap_or_else(|e| e.into_inner())
}

/// One range added to a persistent root CD, in add order, as [`with_saved_entries`] shows it.
#[derive(Debug)]
pub struct SavedEntry<'a> {
    /// How a restore brings the range back.
    pub restoration: Restoration,
    /// Length in bytes.
    pub length: usize,
    /// The saved bytes, in order, straight from the store (COPY entries; empty otherwise).
    pub pieces: Vec<&'a [u8]>,
}

/// Runs `f` on the saved entries of persistent root CD `cd`, in add order, with the CD's lock
/// held (so `f` may not call the CD API: it gets [`CdError::Reentrant`]).
pub fn with_saved_entries<R>(cd: CdHandle, f: impl FnOnce(&[SavedEntry<'_>]) -> R) -> Result<R> {
    callback::check()?;
    let node = registry::lookup(cd)?;
    let state = node.lock_live()?;
    let mut entries = Vec::with_capacity(state.adds.len());
    for (i, add) in state.adds.iter().enumerate() {
        let mut pieces = Vec::new();
        if add.restoration == Restoration::Copy {
            if let Some((s, e)) = state.unsaved(add.start, add.end) {
                return Err(CdError::Persist(format!(
                    "entry {i} ({:#x}, {} bytes) lost bytes {s:#x}..{e:#x} to delete_from_cd; \
                     a persistent CD can only delete whole entries",
                    add.start,
                    add.end - add.start
                )));
            }
            // unclipped, so that the pieces borrow the store (no segment is cloned)
            for (s, e, bytes) in state.saved(add.start, add.end) {
                let (cs, ce) = (s.max(add.start), e.min(add.end));
                pieces.push(&bytes[cs - s..ce - s]);
            }
        }
        entries.push(SavedEntry {
            restoration: add.restoration,
            length: add.end - add.start,
            pieces,
        });
    }
    Ok(callback::marked(|| f(&entries)))
}

/// Replaces the saved bytes of persistent root CD `cd` with persisted ones.
///
/// `persisted` lists the persisted entries (restoration, length) in add order; they must match
/// the CD's own entries one for one, else [`CdError::PersistMismatch`] says where, and nothing
/// changes. `fill(i, dst)` then writes the bytes of COPY entry `i` into `dst` (its length),
/// straight into a fresh store buffer; its error leaves the CD as it was. A following
/// `restore_cd` brings the bytes into application memory.
pub fn load_saved_entries(
    cd: CdHandle,
    persisted: &[(Restoration, usize)],
    mut fill: impl FnMut(usize, &mut [u8]) -> std::result::Result<(), String>,
) -> Result<()> {
    callback::check()?;
    let node = registry::lookup(cd)?;
    let mut state = node.lock_live()?;
    let adds = state.adds.clone();
    if adds.len() != persisted.len() {
        return Err(CdError::PersistMismatch(format!(
            "the persisted version has {} entries, the CD has {}",
            persisted.len(),
            adds.len()
        )));
    }
    for (i, (add, &(restoration, length))) in adds.iter().zip(persisted).enumerate() {
        let have = (add.restoration, add.end - add.start);
        if have != (restoration, length) {
            return Err(CdError::PersistMismatch(format!(
                "entry {i} was persisted as {} of {length} bytes, the CD has {} of {} bytes",
                restoration.name(),
                have.0.name(),
                have.1
            )));
        }
    }
    let copies: Vec<(usize, AddRecord)> = adds
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, a)| a.restoration == Restoration::Copy)
        .collect();
    let total: usize = copies.iter().map(|(_, a)| a.end - a.start).sum();
    if total == 0 {
        return Ok(());
    }
    let mut buffer = Buffer::new(total)?;
    let mut offset = 0;
    for &(i, a) in &copies {
        let dst = &mut buffer.as_mut_slice()[offset..offset + (a.end - a.start)];
        callback::marked(|| fill(i, dst)).map_err(CdError::Persist)?;
        offset += a.end - a.start;
    }
    // Nothing can fail from here on.
    let buffer = Arc::new(buffer);
    let mut offset = 0;
    for (_, a) in copies {
        state.resave(a.start, a.end, Segment::new(Arc::clone(&buffer), offset));
        offset += a.end - a.start;
    }
    Ok(())
}

/// The version a persistent root CD recovered at create, if any: `restore_cd` brings it
/// back. `None` for a CD that started fresh, and for a CD that is not persistent.
pub fn recovered_version(cd: impl Into<CdRef>) -> Result<Option<u64>> {
    callback::check()?;
    let node = active::resolve(cd.into())?;
    let state = node.lock_live()?;
    Ok(state.recovered)
}
