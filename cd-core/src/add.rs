//! Adding and deleting address ranges: `add_to_cd_via_copy`, `add_to_cd_via_parent`,
//! `add_to_cd_via_regen` and `delete_from_cd`.
//!
//! All three adds share one body: validate everything (ranges, memory spaces, the parent rule,
//! promotion rules), copy the uncovered bytes into one staged buffer, and only then change the
//! CD, so that a failed add leaves it as it was. Re-adding covered ground changes only the
//! access label, by the rule in `access`.
//!
//! The commonest add, one range on new ground (a scalar or an array added once), takes a path
//! of its own after the same checks: no lists, no overlap pass, one lookup that also finds the
//! neighbours its entry merges with, then the inserts (see BENCHMARKS.md, the tiny add). Every
//! other add (lists, re-adds of covered ground) takes the general path.
//!
//! Copied data of up to 16 bytes (`INLINE`) is kept in the entry itself, not in the data map:
//! a tiny add (a scalar) is then one insert into one map, which is most of what it costs.

use crate::access;
use crate::active;
use crate::advance::settle;
use crate::callback;
use crate::copy;
use crate::error::{CdError, Result};
use crate::ids::CdRef;
use crate::interval::Probe;
use crate::node::{resolve_through, AddRecord, Entry, How, Node, State};
use crate::regen::Regen;
use crate::space::{self, Location};
use crate::stats::Stats;
use crate::store::{Buffer, Segment, INLINE};
use crate::types::{validate_specs, AddrSpec, Small};
use std::sync::atomic::Ordering;
use std::sync::{Arc, MutexGuard};
use tracing::debug_span;

/// Adds ranges whose data is copied into the CD store now (`add_to_cd_via_copy`).
///
/// Where a range overlaps one already in the CD, the old entry keeps its data and restoration
/// type; only the uncovered parts are copied. Re-adding as READ_WRITE promotes an entry, and
/// re-adding as READ_ONLY demotes it, without copying. The call is atomic: on error nothing
/// was added.
///
/// # Safety
/// Every range must be readable for the duration of the call (host memory), and must stay
/// allocated for as long as it is in this CD or an ancestor it is committed to, as the spec
/// requires. Ranges in registered device regions are read with the device's copy function.
pub unsafe fn add_to_cd_via_copy(cd: impl Into<CdRef>, specs: &[AddrSpec]) -> Result<()> {
    let cd = cd.into();
    let _span = debug_span!(
        "add_to_cd_via_copy",
        ?cd,
        ranges = specs.len(),
        bytes = bytes(specs)
    )
    .entered();
    // SAFETY: forwarded from the caller.
    unsafe { add_entries(cd, specs, How::Copy) }
}

/// Adds ranges whose data a restore takes from the nearest ancestor holding them
/// (`add_to_cd_via_parent`).
///
/// Every byte must be held by some ancestor, and the nearest ancestor holding it must not
/// regenerate it (directly or through its own parent entries).
pub fn add_to_cd_via_parent(cd: impl Into<CdRef>, specs: &[AddrSpec]) -> Result<()> {
    let cd = cd.into();
    let _span = debug_span!(
        "add_to_cd_via_parent",
        ?cd,
        ranges = specs.len(),
        bytes = bytes(specs)
    )
    .entered();
    // SAFETY: parent entries read no application memory when added.
    unsafe { add_entries(cd, specs, How::Parent) }
}

/// Adds ranges that a restore regenerates with `regen` (`add_to_cd_via_regen`).
///
/// Regen entries must be READ_ONLY: advance never updates them.
pub fn add_to_cd_via_regen(cd: impl Into<CdRef>, specs: &[AddrSpec], regen: Regen) -> Result<()> {
    let cd = cd.into();
    let _span = debug_span!(
        "add_to_cd_via_regen",
        ?cd,
        ranges = specs.len(),
        bytes = bytes(specs)
    )
    .entered();
    // SAFETY: regen entries read no application memory when added.
    unsafe { add_entries(cd, specs, How::Regen(regen)) }
}

/// The bytes the ranges of an add cover, for its span (evaluated only when the span is on).
fn bytes(specs: &[AddrSpec]) -> usize {
    specs.iter().map(|s| s.length).sum()
}

/// The shared body of the three add functions.
///
/// # Safety
/// For `How::Copy`, as [`add_to_cd_via_copy`]; otherwise none.
unsafe fn add_entries(cd: CdRef, specs: &[AddrSpec], how: How) -> Result<()> {
    callback::check()?;
    // Most adds are of one range on new ground: checked without building lists, one lookup
    // tells it is new and finds the neighbours its entry merges with, so that its insertion
    // needs one more descent of the tree, not two, and none of the overlap work.
    if let [spec] = specs {
        let (s, e) = spec.bounds()?;
        access::check_new(&how, specs)?;
        let at = space::space_of(s, e)?;
        let node = active::resolve(cd)?;
        let mut state = lock_for_add(&node, &[(s, e)], &how)?;
        // A few bytes to copy live in the entry (read in `add_uncovered`): such an entry
        // merges with no neighbour, which `probe` must know.
        let inline = (how == How::Copy && e - s <= INLINE).then_some([0; INLINE]);
        let entry = Entry {
            how,
            access: spec.access,
            scope: spec.scope,
            space: at.space,
            region: at.region,
            inline,
        };
        return match state.entries.probe(s, e, &entry) {
            // SAFETY: forwarded from the caller.
            Some(probe) => unsafe { add_uncovered(&node, &mut state, s, e, entry, probe, at) },
            // SAFETY: as above.
            None => unsafe {
                add_locked(
                    &node,
                    state,
                    specs,
                    &[(s, e)],
                    &[at],
                    smallvec::smallvec![false],
                    entry.how,
                )
            },
        };
    }
    let bounds = validate_specs(specs)?;
    access::check_new(&how, specs)?;
    let spaces = bounds
        .iter()
        .map(|&(s, e)| space::space_of(s, e))
        .collect::<Result<Small<Location>>>()?;
    let node = active::resolve(cd)?;
    let state = lock_for_add(&node, &bounds, &how)?;
    let uncovered = bounds
        .iter()
        .map(|&(s, e)| state.entries.is_uncovered(s, e))
        .collect();
    // SAFETY: forwarded from the caller.
    unsafe { add_locked(&node, state, specs, &bounds, &spaces, uncovered, how) }
}

/// Locks the CD's state for an add of `bounds`, once the parent rule holds for a parent add
/// and no asynchronous advance is in flight, unless the add only relabels ground the CD holds.
fn lock_for_add<'a>(
    node: &'a Arc<Node>,
    bounds: &[(usize, usize)],
    how: &How,
) -> Result<MutexGuard<'a, State>> {
    // A re-add of ground the CD holds (a promotion) does not wait for an asynchronous advance
    // in flight: it is recorded in it (see `access::replay`). Any other add waits for it.
    let mut settled = settle(node, false)?;
    if *how == How::Parent {
        check_parent_holds(node, bounds)?;
    }
    loop {
        let state = node.lock_live()?;
        if settled
            || state.pending.is_none()
            || bounds
                .iter()
                .all(|&(s, e)| state.entries.gaps(s, e).is_empty())
        {
            return Ok(state);
        }
        drop(state);
        settled = settle(node, true)?;
    }
}

/// The general add, on the locked state: checks the ranges that overlap entries (`uncovered`
/// says which do not), copies the uncovered bytes, then changes the CD.
///
/// # Safety
/// For `How::Copy`, as [`add_to_cd_via_copy`]; otherwise none.
unsafe fn add_locked(
    node: &Node,
    mut state: MutexGuard<'_, State>,
    specs: &[AddrSpec],
    bounds: &[(usize, usize)],
    spaces: &[Location],
    uncovered: Small<bool>,
    how: How,
) -> Result<()> {
    let entry_of = |i: usize| Entry {
        how: how.clone(),
        access: specs[i].access,
        scope: specs[i].scope,
        space: spaces[i].space,
        region: spaces[i].region,
        inline: None,
    };
    for ((spec, &(s, e)), _) in specs
        .iter()
        .zip(bounds)
        .zip(&uncovered)
        .filter(|(_, &u)| !u)
    {
        for (os, _, old) in state.entries.overlapping(s, e) {
            if old.scope != spec.scope {
                return Err(CdError::ScopeChange {
                    address: os,
                    existing: old.scope.name(),
                });
            }
            access::check_readd(&old, spec.access, os)?;
        }
    }
    let gaps: Small<Small<(usize, usize)>> = bounds
        .iter()
        .zip(&uncovered)
        .map(|(&(s, e), &u)| {
            if u {
                smallvec::smallvec![(s, e)]
            } else {
                Small::from_vec(state.entries.gaps(s, e))
            }
        })
        .collect();
    let copied: usize = if how == How::Copy {
        gaps.iter().flatten().map(|(s, e)| e - s).sum()
    } else {
        0
    };
    let staged = if copied > INLINE || (copied > 0 && gaps.iter().flatten().count() > 1) {
        let mut buffer = Buffer::new(copied)?;
        let mut offset = 0;
        for (list, at) in gaps.iter().zip(spaces) {
            for &(s, e) in list {
                let dst = &mut buffer.as_mut_slice()[offset..offset + (e - s)];
                // SAFETY: `s .. e` is part of a range the caller vouched for.
                unsafe { copy::read_app(dst, s, at.space)? };
                offset += e - s;
            }
        }
        Some(Staged::Buffer(Arc::new(buffer)))
    } else if copied > 0 {
        // A single gap of a few bytes: kept inline, no buffer.
        let (i, &(s, e)) = gaps
            .iter()
            .enumerate()
            .find_map(|(i, list)| list.first().map(|gap| (i, gap)))
            .expect("one gap");
        let mut bytes = [0; INLINE];
        // SAFETY: as above.
        unsafe { copy::read_app(&mut bytes[..e - s], s, spaces[i].space)? };
        Some(Staged::Inline(bytes))
    } else {
        None
    };

    // Nothing can fail from here on.
    let mut offset = 0;
    for (i, spec) in specs.iter().enumerate() {
        let ((s, e), list) = (bounds[i], &gaps[i]);
        if !uncovered[i] {
            access::relabel(&mut state.entries, s, e, spec.access);
            if let Some(pending) = state.pending.as_mut() {
                pending.relabels.push((s, e, spec.access));
            }
        }
        let entry = entry_of(i);
        for &(gs, ge) in list {
            match &staged {
                Some(Staged::Buffer(buffer)) => {
                    state.entries.insert_uncovered(gs, ge, entry.clone());
                    let segment = Segment::new(Arc::clone(buffer), offset);
                    state.data.insert_uncovered(gs, ge, segment);
                    offset += ge - gs;
                }
                Some(Staged::Inline(bytes)) => {
                    let inline = Some(*bytes);
                    state.entries.insert_uncovered(
                        gs,
                        ge,
                        Entry {
                            inline,
                            ..entry.clone()
                        },
                    );
                }
                None => state.entries.insert_uncovered(gs, ge, entry.clone()),
            }
        }
    }
    if node.persistent {
        // a range that adds new ground is an entry of its own; a re-add of covered ground (a
        // promotion after an advance) is not
        let added = bounds.iter().zip(&gaps).filter(|(_, g)| !g.is_empty());
        state.adds.extend(added.map(|(&(start, end), _)| AddRecord {
            start,
            end,
            restoration: how.restoration(),
        }));
    }
    if how == How::Parent && gaps.iter().any(|g| !g.is_empty()) {
        node.has_parent_entries.store(true, Ordering::Relaxed);
    }
    let stats = Stats {
        adds: 1,
        bytes_added: copied as u64,
        ..Stats::default()
    };
    state.stats.absorb(&stats);
    stats.publish();
    Ok(())
}

/// The add of one range that no entry of the CD touches (`probe` found its neighbours): the
/// common case, with none of the overlap bookkeeping of [`add_entries`]'s general path.
///
/// # Safety
/// For a `How::Copy` entry, `start .. end` is readable as [`add_to_cd_via_copy`] requires.
unsafe fn add_uncovered(
    node: &Node,
    state: &mut State,
    start: usize,
    end: usize,
    mut entry: Entry,
    probe: Probe,
    at: Location,
) -> Result<()> {
    let len = end - start;
    let copied = if entry.how == How::Copy { len } else { 0 };
    let segment = if let Some(bytes) = &mut entry.inline {
        // A few bytes: kept in the entry, no buffer, no data segment.
        // SAFETY: `start .. end` is the range the caller vouched for.
        unsafe { copy::read_app(&mut bytes[..len], start, at.space)? };
        None
    } else if copied > 0 {
        let mut buffer = Buffer::new(len)?;
        // SAFETY: as above.
        unsafe { copy::read_app(buffer.as_mut_slice(), start, at.space)? };
        Some(Segment::new(Arc::new(buffer), 0))
    } else {
        None
    };

    // Nothing can fail from here on.
    let restoration = entry.how.restoration();
    if entry.how == How::Parent {
        node.has_parent_entries.store(true, Ordering::Relaxed);
    }
    state.entries.insert_probed(start, end, entry, probe);
    if let Some(segment) = segment {
        state.data.insert_uncovered(start, end, segment);
    }
    if node.persistent {
        state.adds.push(AddRecord {
            start,
            end,
            restoration,
        });
    }
    let stats = Stats {
        adds: 1,
        bytes_added: copied as u64,
        ..Stats::default()
    };
    state.stats.absorb(&stats);
    stats.publish();
    Ok(())
}

/// The bytes an add copied, before they enter the store.
enum Staged {
    Buffer(Arc<Buffer>),
    Inline([u8; INLINE]),
}

/// Checks that every byte of `bounds` resolves, through the nearest ancestor holding it, to
/// an entry with saved data: the rule of `add_to_cd_via_parent`.
fn check_parent_holds(node: &Node, bounds: &[(usize, usize)]) -> Result<()> {
    let mut pending: Vec<(usize, usize)> = bounds.to_vec();
    let mut ancestor = node.parent.clone().ok_or(CdError::NoParent)?;
    loop {
        pending = resolve_through(&ancestor.lock(), &pending, |_, _| Ok(()))?;
        if pending.is_empty() {
            return Ok(());
        }
        ancestor = match &ancestor.parent {
            Some(parent) => Arc::clone(parent),
            None => {
                let (address, end) = pending[0];
                return Err(CdError::NotInAncestor { address, end });
            }
        };
    }
}

/// Removes ranges from the CD (`delete_from_cd`); only this CD is searched.
///
/// Every byte of every range must be in the CD, else nothing is removed. Parts of entries
/// outside the ranges stay.
pub fn delete_from_cd(cd: impl Into<CdRef>, specs: &[AddrSpec]) -> Result<()> {
    let cd = cd.into();
    let _span = debug_span!("delete_from_cd", ?cd, ranges = specs.len()).entered();
    callback::check()?;
    let bounds = validate_specs(specs)?;
    let node = active::resolve(cd)?;
    settle(&node, true)?;
    let mut state = node.lock_live()?;
    for &(s, e) in &bounds {
        if let Some(&(address, end)) = state.entries.gaps(s, e).first() {
            return Err(CdError::RangeNotFound { address, end });
        }
    }
    for &(s, e) in &bounds {
        state.entries.remove(s, e);
        state.data.remove(s, e);
        // a persistent CD forgets the adds deleted whole
        state.adds.retain(|a| !(s <= a.start && a.end <= e));
    }
    Ok(())
}
