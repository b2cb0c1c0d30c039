//! `restore_cd`: bring application memory back to a CD's point in time.
//!
//! The restored CD and all its live descendants take part. They restore newest to oldest —
//! the leaves first, the restored CD last — so that where several hold the same range the
//! oldest wins. Inside one CD, COPY entries go first, then PARENT entries (whose bytes come
//! from the nearest ancestor holding them, even above the restored CD), then REGEN entries, so
//! that a regen function may read memory already restored. Monitored files seek back to their
//! saved offsets. Only when all of that succeeded are the descendants discarded, their logs
//! merged into the restored CD's (a child that had siblings has its log dropped instead), and
//! the restored CD's log set up for replay. On error nothing is discarded, and the restore may
//! be tried again.
//!
//! # A restore that fails
//! Everything that can be checked is checked before the first byte is written, so that such a
//! failure leaves memory untouched: an unreplayable log and the MPI hook (below), PARENT bytes
//! no ancestor holds any more ([`CdError::ParentDataMissing`]), device ranges whose space no
//! longer holds them ([`CdError::DeviceCopy`]: freed, or a device reset), and monitored files
//! that cannot seek ([`CdError::FileNotSeekable`]). The saved bytes themselves are in memory
//! and cannot fail to read. Two failures can only happen midway: a device copy the driver
//! refuses, and a regen function that returns nonzero. The latter names, in
//! [`CdError::RegenFailed`], exactly the ranges not restored: the failing call's, the CD's
//! later regen calls', and every range of the CDs that restore after it (older ones, the
//! restored CD last); every other range holds its restored bytes. A regen that fails for
//! good thus leaves those ranges for the application to rebuild (or to discard the CD).
//!
//! Before any memory is written, the restore checks that the log it would replay holds no call
//! marked unreplayable, and calls the MPI layer's restore hook (see `mpi`), either of which
//! may refuse it. A CD created during an ancestor's replay also rewinds that replay to where
//! it stood at the CD's point in time (see `node::FeedMark`).
//!
//! # Locks, and who wins against concurrent operations
//! The restore locks the ancestors it reads (root first), then the restored CD and its
//! descendants in pre-order: the one order of all operations. It resolves its PARENT entries
//! to the ancestors' saved segments (slices of immutable shared buffers) and releases the
//! ancestors before it copies a byte; it holds its own subtree's locks until the descendants
//! are discarded. So siblings restore at the same time, and a sibling's advance or commit
//! into the parent does not wait for this copy. Only a restore that rewinds an ancestor's
//! replay (an MPI replay feeding this CD) keeps the ancestors locked throughout, since it
//! changes that ancestor's log at the end.
//!
//! When a CD is restored while its children come and go (the spec's "oldest wins"),
//! whichever locks the child first wins:
//! - a child's commit or advance that swaps before the parent's restore locks the child has
//!   happened before the restore: what it merged into the parent is the parent's now, and the
//!   restore restores it (or leaves it, by the spec's rules, as any merged entry);
//! - one that comes after finds the child discarded (a stale handle,
//!   `Fate::DiscardedByRestore`) and changes nothing. An advance whose copy overlapped the
//!   restore's writes is always in this case (the restore holds the child's lock from before
//!   its first write);
//! - a child's own restore holds the child's lock while it writes, so the parent's restore
//!   writes after it (the parent's bytes, the oldest, win), or, if the parent's restore locked
//!   the child first, the child's restore finds it discarded.

use crate::active;
use crate::callback;
use crate::copy;
use crate::error::{CdError, Fate, Result};
use crate::ids::{CdHandle, CdRef};
use crate::merge;
use crate::mpi;
use crate::node::{resolve_through, Exclusive, How, Node, State};
use crate::registry;
use crate::space::{self, SpaceId, HOST};
use crate::stats::Stats;
use crate::store::Saved;
use crate::types::{Access, AddrSpec};
use std::sync::atomic::Ordering;
use std::sync::{Arc, MutexGuard};
use tracing::{debug_span, field::Empty};

/// What a restore did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestoreReport {
    /// Bytes written into application memory from CD stores.
    pub bytes_restored: usize,
    /// Regen function calls made.
    pub regen_calls: usize,
    /// Descendant CDs discarded.
    pub discarded: usize,
    /// MPI log entries ready for replay in the restored CD.
    pub log_entries: usize,
}

/// The restored CD and its descendants in pre-order, each with its parent's position.
struct Subtree {
    nodes: Vec<Arc<Node>>,
    parents: Vec<Option<usize>>,
}

impl Subtree {
    fn collect(root: &Arc<Node>) -> Subtree {
        fn walk(node: &Arc<Node>, parent: Option<usize>, tree: &mut Subtree) {
            let me = tree.nodes.len();
            tree.nodes.push(Arc::clone(node));
            tree.parents.push(parent);
            let children = node.lock().children.clone();
            for child in &children {
                walk(child, Some(me), tree);
            }
        }
        let mut tree = Subtree {
            nodes: Vec::new(),
            parents: Vec::new(),
        };
        walk(root, None, &mut tree);
        tree
    }

    fn needs_ancestors(&self) -> bool {
        self.nodes
            .iter()
            .any(|n| n.has_parent_entries.load(Ordering::Relaxed))
    }

    /// Whether the locked states still describe exactly this subtree.
    fn matches(&self, states: &[MutexGuard<'_, State>]) -> bool {
        states.iter().enumerate().all(|(i, state)| {
            let children: Vec<&Arc<Node>> = (0..self.nodes.len())
                .filter(|&j| self.parents[j] == Some(i))
                .map(|j| &self.nodes[j])
                .collect();
            state.children.len() == children.len()
                && state
                    .children
                    .iter()
                    .zip(children)
                    .all(|(a, b)| Arc::ptr_eq(a, b))
        })
    }
}

/// Restores application memory to the CD's point in time (`restore_cd`).
///
/// Refused, changing nothing, with [`CdError::Unreplayable`] when the MPI log it would replay
/// holds a call marked unreplayable, and with the restore hook's error when the MPI layer's
/// hook refuses (see [`crate::set_restore_hook`]).
///
/// # Safety
/// Every range in the CD and its descendants must be allocated and writable, and no other
/// thread may access those ranges during the call: restore overwrites them.
pub unsafe fn restore_cd(cd: impl Into<CdRef>) -> Result<RestoreReport> {
    let started = crate::advice::now_ns();
    let cd = cd.into();
    let span = debug_span!(
        "restore_cd",
        ?cd,
        name = Empty,
        bytes = Empty,
        log_entries = Empty
    );
    let _span = span.enter();
    callback::check()?;
    let node = active::resolve(cd)?;
    if !span.is_disabled() {
        span.record("name", node.root_name.as_deref());
    }
    if node.persistent {
        if let Some(hooks) = crate::persist::hooks() {
            (hooks.before_restore)(node.handle)?;
        }
    }
    let _busy = node.begin(Exclusive::Restore)?;
    // An advance in flight in the subtree (only leaves can have one: creating a child waits
    // for its parent's) becomes current if its drain completed, and is dropped otherwise.
    for n in &Subtree::collect(&node).nodes {
        crate::advance::settle_or_drop(n);
    }
    // Only create and advance set it, and the busy flag holds off an advance.
    let rewinds = node.lock().feed_mark.is_some();
    loop {
        let tree = Subtree::collect(&node);
        let with_ancestors = rewinds || tree.needs_ancestors();
        let mut ancestors: Vec<Arc<Node>> = Vec::new();
        if with_ancestors {
            let mut next = node.parent.clone();
            while let Some(a) = next {
                next = a.parent.clone();
                ancestors.push(a);
            }
            ancestors.reverse(); // root first: lock order is ancestors first
        }
        let mut ancestor_states: Vec<MutexGuard<'_, State>> =
            ancestors.iter().map(|a| a.lock()).collect();
        let mut states: Vec<MutexGuard<'_, State>> = tree.nodes.iter().map(|n| n.lock()).collect();
        node.check_live()?;
        if !tree.matches(&states) || with_ancestors != (rewinds || tree.needs_ancestors()) {
            continue; // the tree changed between collecting and locking: look again
        }
        // The ancestor whose replay this CD consumed, if its log still holds that replay.
        let rewind = states[0].feed_mark.as_ref().and_then(|mark| {
            let at = ancestors
                .iter()
                .position(|a| Arc::ptr_eq(a, &mark.feeder))?;
            let holds = mark.feeder.is_live() && ancestor_states[at].log.holds(mark.generation);
            holds.then_some((at, mark))
        });
        if let Some(call) = unreplayable(&tree, &states)
            .or_else(|| rewind.and_then(|(at, _)| ancestor_states[at].log.unreplayable()))
        {
            return Err(CdError::Unreplayable { call });
        }
        let rewind = rewind.map(|(at, mark)| (at, mark.generation, mark.cursor));
        let cds: Vec<CdHandle> = tree.nodes.iter().map(|n| n.handle).collect();
        mpi::run_restore_hook(&cds)?;
        // Where every PARENT entry's bytes are, resolved now, with the ancestors locked: their
        // segments are slices of immutable shared buffers, so the copies below need no lock.
        let from_above = {
            // Nearest ancestor first.
            let above: Vec<&State> = ancestor_states.iter().rev().map(|g| &**g).collect();
            resolve_parent_entries(&tree, &states, &above)?
        };
        check_writable(&states, &from_above)?;
        // The ancestors are released before any byte is copied, unless the restore rewinds
        // an ancestor's replay at the end (it must then stay as it was checked).
        if rewind.is_none() {
            ancestor_states.clear();
        }
        // SAFETY: forwarded from the caller.
        let mut report = unsafe { restore_all(&tree, &states, &from_above)? };
        if let Some((at, generation, cursor)) = rewind {
            let feeder = &ancestors[at];
            ancestor_states[at].log.rewind(generation, cursor);
            feeder.sync_replay(&ancestor_states[at]);
            // Every CD below it, on every branch, is fed by it again.
            registry::bump_below(feeder);
        }
        drop(ancestor_states);
        report.discarded = tree.nodes.len() - 1;
        finish(&tree, &mut states);
        report.log_entries = states[0].log.len();
        let ended = crate::advice::now_ns();
        let stats = Stats {
            restores: 1,
            bytes_restored: report.bytes_restored as u64,
            regen_calls: report.regen_calls as u64,
            restore_ns: ended - started,
            ..Stats::default()
        };
        crate::advice::record_restore(&node.root_name, node.depth, started, ended);
        states[0].stats.absorb(&stats);
        stats.publish();
        drop(states);
        for discarded in &tree.nodes[1..] {
            registry::retire(discarded.handle, Fate::DiscardedByRestore);
            active::pop_active(discarded.handle);
        }
        if !span.is_disabled() {
            span.record("bytes", report.bytes_restored);
            span.record("log_entries", report.log_entries);
        }
        return Ok(report);
    }
}

/// A piece of a PARENT entry with the ancestor segment holding its bytes: `start .. end` in
/// `space`.
struct FromAbove {
    start: usize,
    end: usize,
    space: SpaceId,
    segment: Saved,
}

/// For every CD of the subtree (by position), where its PARENT entries' bytes are: the
/// nearest ancestor's saved segment for each byte, within the subtree or above it (`above`,
/// nearest first). Fails, before anything is written, when an ancestor regenerates a byte or
/// none holds it any more.
fn resolve_parent_entries(
    tree: &Subtree,
    states: &[MutexGuard<'_, State>],
    above: &[&State],
) -> Result<Vec<Vec<FromAbove>>> {
    let mut all = Vec::with_capacity(tree.nodes.len());
    for (i, state) in states.iter().enumerate() {
        let mut pieces = Vec::new();
        for (s, e, entry) in state.entries.iter() {
            if entry.how != How::Parent {
                continue;
            }
            let mut chain: Vec<&State> = Vec::new();
            let mut up = tree.parents[i];
            while let Some(j) = up {
                chain.push(&states[j]);
                up = tree.parents[j];
            }
            chain.extend_from_slice(above);
            let mut pending = vec![(s, e)];
            for ancestor in chain {
                pending = resolve_through(ancestor, &pending, |os, oe| {
                    for (start, end, segment) in ancestor.segments(os, oe) {
                        pieces.push(FromAbove {
                            start,
                            end,
                            space: entry.space,
                            segment,
                        });
                    }
                    Ok(())
                })?;
                if pending.is_empty() {
                    break;
                }
            }
            if let Some(&(address, end)) = pending.first() {
                return Err(CdError::ParentDataMissing { address, end });
            }
        }
        all.push(pieces);
    }
    Ok(all)
}

/// Restores every CD of the subtree into application memory, newest to oldest.
///
/// # Safety
/// As [`restore_cd`].
unsafe fn restore_all(
    tree: &Subtree,
    states: &[MutexGuard<'_, State>],
    from_above: &[Vec<FromAbove>],
) -> Result<RestoreReport> {
    let mut report = RestoreReport {
        bytes_restored: 0,
        regen_calls: 0,
        discarded: 0,
        log_entries: 0,
    };
    // Reverse pre-order visits every CD after all its descendants, and younger siblings
    // (created later) before older ones.
    for i in (0..tree.nodes.len()).rev() {
        // SAFETY: forwarded from the caller.
        let done = unsafe { restore_one(&states[i], &from_above[i], &mut report) };
        if let Err(CdError::RegenFailed {
            status,
            ranges,
            mut not_restored,
        }) = done
        {
            // The CDs still to restore (older ones) were not restored at all.
            for state in &states[..i] {
                not_restored.extend(state.entries.iter().map(|(s, e, _)| (s, e)));
            }
            return Err(CdError::RegenFailed {
                status,
                ranges,
                not_restored: union(not_restored),
            });
        }
        done?;
    }
    Ok(report)
}

/// Checks, before anything is written, what a restore can check: every device range is still
/// memory of its space, and every monitored file can seek.
fn check_writable(states: &[MutexGuard<'_, State>], from_above: &[Vec<FromAbove>]) -> Result<()> {
    let device_ranges = states
        .iter()
        .flat_map(|state| state.entries.iter())
        .filter(|(_, _, entry)| entry.space != HOST)
        .map(|(s, e, entry)| (s, e, entry.space))
        .chain(
            from_above
                .iter()
                .flatten()
                .filter(|piece| piece.space != HOST)
                .map(|piece| (piece.start, piece.end, piece.space)),
        );
    for (s, e, space) in device_ranges {
        let device = space::device(space)?;
        if space::space_of(s, e).map(|at| at.space).ok() != Some(space) {
            return Err(CdError::DeviceCopy {
                space: device.name().to_owned(),
                message: format!(
                    "restore: {s:#x}..{e:#x} is no longer memory of this space (freed or \
                     unmapped); nothing was restored"
                ),
            });
        }
    }
    for &fd in states.iter().flat_map(|state| state.files.keys()) {
        // SAFETY: lseek is memory safe on any descriptor; SEEK_CUR by 0 moves nothing.
        if unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) } < 0 {
            return Err(CdError::FileNotSeekable {
                fd,
                message: std::io::Error::last_os_error().to_string(),
            });
        }
    }
    Ok(())
}

/// The sorted union of `ranges`, adjacent ones joined.
fn union(mut ranges: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    ranges.sort_unstable();
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
    for (s, e) in ranges {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Restores one CD: COPY entries, then PARENT entries, then REGEN entries, then files.
///
/// # Safety
/// As [`restore_cd`].
unsafe fn restore_one(
    state: &State,
    from_above: &[FromAbove],
    report: &mut RestoreReport,
) -> Result<()> {
    for (s, e, entry) in state.labelled() {
        if entry.how == How::Copy {
            // SAFETY: forwarded from the caller.
            report.bytes_restored += unsafe { write_saved(state, s, e, entry.space)? };
        }
    }
    for piece in from_above {
        let len = piece.end - piece.start;
        // SAFETY: the piece lies in a PARENT range of the CD, which the caller vouched for.
        unsafe { copy::write_app(piece.start, piece.segment.bytes(len), piece.space)? };
        report.bytes_restored += len;
    }
    let mut calls: Vec<(&crate::Regen, Vec<AddrSpec>)> = Vec::new();
    for (s, e, entry) in state.entries.iter() {
        if let How::Regen(regen) = &entry.how {
            let spec = AddrSpec::new(s, e - s, Access::ReadOnly, entry.scope);
            match calls.iter_mut().find(|(r, _)| *r == regen) {
                Some((_, specs)) => specs.push(spec),
                None => calls.push((regen, vec![spec])),
            }
        }
    }
    for (k, (regen, specs)) in calls.iter().enumerate() {
        let status = callback::regen(|| (regen.f)(specs));
        report.regen_calls += 1;
        if status != 0 {
            // This call's ranges and those of the calls after it are not restored; the
            // caller adds the CDs that restore later.
            let not_restored = calls[k..]
                .iter()
                .flat_map(|(_, specs)| specs.iter().map(|s| (s.address, s.address + s.length)))
                .collect();
            return Err(CdError::RegenFailed {
                status,
                ranges: specs.len(),
                not_restored,
            });
        }
    }
    for (&fd, &offset) in &state.files {
        // SAFETY: lseek is memory safe on any descriptor.
        if unsafe { libc::lseek(fd, offset, libc::SEEK_SET) } < 0 {
            return Err(CdError::FileNotSeekable {
                fd,
                message: std::io::Error::last_os_error().to_string(),
            });
        }
    }
    Ok(())
}

/// Writes the saved bytes of `s .. e` (all held by `state`'s store) back; returns the count.
///
/// # Safety
/// As [`restore_cd`].
unsafe fn write_saved(state: &State, s: usize, e: usize, space: SpaceId) -> Result<usize> {
    let mut written = 0;
    for (ps, pe, piece) in state.saved(s, e) {
        let (ds, de) = (ps.max(s), pe.min(e));
        // SAFETY: `ds .. de` lies in a range of the CD, which the caller vouched for.
        unsafe { copy::write_app(ds, &piece[ds - ps..de - ps], space)? };
        written += de - ds;
    }
    Ok(written)
}

/// The unreplayable call in the log the restore would replay: the restored CD's own, or a
/// descendant's that the restore merges into it (every CD on the way up never had siblings).
fn unreplayable(tree: &Subtree, states: &[MutexGuard<'_, State>]) -> Option<&'static str> {
    (0..tree.nodes.len()).find_map(|i| {
        let call = states[i].log.unreplayable()?;
        let mut at = i;
        while let Some(parent) = tree.parents[at] {
            if !merge::log_goes_up(tree.nodes[at].had_siblings.load(Ordering::Relaxed)) {
                return None;
            }
            at = parent;
        }
        Some(call)
    })
}

/// After a successful restore: merge or drop the descendants' logs, start the replay, and
/// retire the descendants. The restored CD's replay starts afresh, so merging into it is
/// allowed even while it replays.
fn finish(tree: &Subtree, states: &mut [MutexGuard<'_, State>]) {
    for i in (1..tree.nodes.len()).rev() {
        let parent = tree.parents[i].expect("only the restored CD has no parent here");
        // taken out first: two guards of one slice cannot be borrowed mutably at once
        let mut child_log = std::mem::take(&mut states[i].log);
        merge::merge_log(
            &mut states[parent].log,
            &mut child_log,
            tree.nodes[i].had_siblings.load(Ordering::Relaxed),
        );
        tree.nodes[i].mark_retired(&mut states[i], Fate::DiscardedByRestore);
    }
    states[0].children.clear();
    states[0].log.start_replay();
    tree.nodes[0].sync_replay(&states[0]);
    // Threads whose active CD this is look again, even if it was replaying already.
    tree.nodes[0].bump();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{create_cd, LoggingMode};

    /// Discarded subtrees are freed: no parent/children reference cycle keeps their nodes.
    #[test]
    fn discarded_subtrees_are_freed() {
        let top = create_cd(None, None, LoggingMode::Disabled, Some("restore-frees")).unwrap();
        let kid = create_cd(Some(top.into()), None, LoggingMode::Inherit, None).unwrap();
        let grandkid = create_cd(Some(kid.into()), None, LoggingMode::Inherit, None).unwrap();
        let nodes = [kid, grandkid].map(|h| Arc::downgrade(&registry::lookup(h).unwrap()));
        // SAFETY: the CDs hold no memory.
        unsafe { restore_cd(top).unwrap() };
        assert!(
            nodes.iter().all(|w| w.upgrade().is_none()),
            "discarded nodes were freed"
        );
        crate::commit_cd(top).unwrap();
    }
}
