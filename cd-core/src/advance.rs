//! `advance_cd_point_in_time`, and what every advance shares: the ranges it copies, making a
//! new point current (the implicit commit into the parent, new segments, demotion, files,
//! log), and settling an asynchronous advance whose drain ended.
//!
//! The synchronous advance and the asynchronous one (`advance_async`) capture their point
//! differently but make it current through the one [`apply_advance`]. The synchronous one
//! saves device ranges differentially where their space can (`delta`: only the changed blocks,
//! written into the saved copy at the swap); the asynchronous one copies every range whole.
//! [`settle`] lives here, not in `advance_async`, because every operation calls it first:
//! keeping it in the lower module is what lets the operation modules depend on `advance`
//! without a circle.
//!
//! # Copying with no lock held
//!
//! An advance checks and lists its ranges with the parent's and the CD's locks held, copies
//! them holding only the CD's busy flag, then locks parent and child again to swap (step 3 of
//! [`advance_cd_point_in_time`]; the asynchronous advance does the same). Siblings thus copy
//! at the same time. The staged bytes stand for a copy made at the swap if, at the swap, the
//! CD's READ_WRITE COPY ranges are exactly those copied: the caller promised that no one
//! writes them during the call, so their bytes are the same at either moment, and the swap
//! replaces their data whole. What may change meanwhile, and why it does not matter:
//! - this CD's ranges: an add, delete, promotion (concurrent adds on one handle are allowed)
//!   or a device remap. Any change to the READ_WRITE COPY ranges fails the comparison and the
//!   advance stages again; other changes (READ_ONLY adds, PARENT or REGEN entries, data of
//!   READ_ONLY ranges) are not touched by the swap, and demotion applies to what is there then.
//! - this CD's files and log: read at the swap (offsets) and cleared at the swap (log), so an
//!   MPI call logged during the copy is before the new point, as it would be had it come
//!   before the call.
//! - the saved copy a differential advance patches (`delta`): checked again at the swap (still
//!   the CD's bytes of the range, held by no one else), else the advance stages again; the
//!   patch and the copy it is written into make the bytes at the staging as a whole copy
//!   would.
//! - a child created meanwhile: refused at the swap, as before the copy.
//! - the parent: it only enters through the implicit commit, which runs entirely at the swap
//!   under both locks, so sibling merges, adds or children coming and going in between are
//!   simply seen there. A restore of the parent (or any ancestor) discards this CD, and the
//!   swap then fails with a stale handle: the restore won. Its writes to application memory
//!   may overlap the copy only in that case, since the restore holds this CD's lock from
//!   before its first write to the discard.
//! - another exclusive operation on this CD (commit, restore, advance): held off by the busy
//!   flag for the whole call.

use crate::access;
use crate::active;
use crate::callback;
use crate::delta;
use crate::error::{CdError, Result};
use crate::ids::CdRef;
use crate::merge::{check_merge, merge_into_parent};
use crate::node::{feed_mark, file_offsets, Exclusive, How, Node, Pending, State};
use crate::space::SpaceId;
use crate::stats::Stats;
use crate::store::Segment;
use crate::types::Access;
use std::sync::atomic::Ordering;
use std::sync::{Arc, MutexGuard};
use tracing::{debug_span, field::Empty};

/// What an advance did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdvanceReport {
    /// Bytes copied from application memory: the READ_WRITE COPY entries.
    pub bytes_copied: usize,
    /// Address ranges copied.
    pub ranges_copied: usize,
}

/// Moves the CD's point in time to now (`advance_cd_point_in_time`).
///
/// Only a CD without children can advance. A child is first committed implicitly into its
/// parent (without being invalidated). Then the READ_WRITE entries restored by COPY are copied
/// from application memory, every READ_WRITE entry is demoted to READ_ONLY, monitored files'
/// positions are updated and the CD's MPI log is discarded (which ends a replay of it). All or
/// nothing: on error the CD (and its parent) are exactly as before. The implicit commit
/// refuses to merge log records into a log being replayed, as [`commit_cd`](crate::commit_cd) does.
///
/// # Safety
/// Every COPY range of the CD must be readable (host memory) and not written during the call.
pub unsafe fn advance_cd_point_in_time(cd: impl Into<CdRef>) -> Result<AdvanceReport> {
    let started = crate::advice::advance_started();
    let cd = cd.into();
    let span = debug_span!("advance_cd_point_in_time", ?cd, name = Empty, bytes = Empty);
    let _span = span.enter();
    callback::check()?;
    let node = active::resolve(cd)?;
    if !span.is_disabled() {
        span.record("name", node.root_name.as_deref());
    }
    settle(&node, true)?;
    let _busy = node.begin(Exclusive::Advance)?;
    // Where a replay feeding this CD stands at its new point in time (before any lock: the
    // feeding CD may be above the parent).
    let mark = node.parent.as_ref().and_then(feed_mark);
    loop {
        // 1. Check and choose the ranges, and the saved copies a differential advance may
        //    patch (`delta`), with the locks held only for that.
        let (targets, bases) = {
            let (parent_state, state) = lock_pair(&node)?;
            check_advance(
                &node,
                parent_state.as_deref(),
                &state,
                "advance_cd_point_in_time",
            )?;
            let targets = advance_targets(&state);
            let bases = delta::bases(parent_state.as_deref(), &state, &targets);
            (targets, bases)
        };
        // 2. Copy them, or the changed blocks of the patched ones, with no lock held: only
        //    the busy flag, which keeps every other commit, restore and advance of this CD
        //    out. Siblings copy at the same time.
        // SAFETY: the ranges are the CD's, which the caller vouched for.
        let mut staged = unsafe { delta::stage(&targets, bases)? };
        // 3. Swap, parent then child locked: the checks that may fail, then the patches
        //    written, then nothing that can fail.
        let (mut parent_state, mut state) = lock_pair(&node)?;
        if !targets_unchanged(&state, &targets) {
            continue; // the ranges changed meanwhile: stage again (module docs)
        }
        check_advance(
            &node,
            parent_state.as_deref(),
            &state,
            "advance_cd_point_in_time",
        )?;
        let offsets = file_offsets(&state)?;
        if !delta::claim(parent_state.as_deref(), &mut state, &targets, &mut staged) {
            continue; // a saved copy to patch is shared now: stage again (`delta`)
        }
        let diff = staged.counts(&targets);
        let point = NewPoint {
            segments: staged.into_segments(),
            targets,
            diff,
            offsets,
            mark,
            started,
        };
        let report = apply_advance(&node, parent_state.as_deref_mut(), &mut state, point);
        drop(parent_state);
        drop(state);
        drop(_busy);
        advanced_hook(&node)?;
        if !span.is_disabled() {
            span.record("bytes", report.bytes_copied);
        }
        return Ok(report);
    }
}

/// The parent's state (if any) and the CD's, locked in that order.
pub(crate) fn lock_pair(
    node: &Node,
) -> Result<(Option<MutexGuard<'_, State>>, MutexGuard<'_, State>)> {
    let parent_state = match &node.parent {
        Some(parent) => Some(parent.lock_live()?),
        None => None,
    };
    let state = node.lock_live()?;
    Ok((parent_state, state))
}

/// What an advance checks before it copies and again at the swap: no children, and a log that
/// may merge into the parent's.
pub(crate) fn check_advance(
    node: &Node,
    parent_state: Option<&State>,
    state: &State,
    operation: &'static str,
) -> Result<()> {
    state.refuse_children(operation)?;
    if let Some(parent_state) = parent_state {
        check_merge(
            parent_state,
            state,
            node.had_siblings.load(Ordering::Relaxed),
        )?;
    }
    Ok(())
}

/// The ranges an advance copies: the READ_WRITE entries restored by COPY, with their space.
pub(crate) fn advance_targets(state: &State) -> Vec<(usize, usize, SpaceId)> {
    targets_of(state).collect()
}

/// Whether the ranges an advance would copy now are still `targets` (checked at the swap).
pub(crate) fn targets_unchanged(state: &State, targets: &[(usize, usize, SpaceId)]) -> bool {
    targets_of(state).eq(targets.iter().copied())
}

fn targets_of(state: &State) -> impl Iterator<Item = (usize, usize, SpaceId)> + '_ {
    state
        .labelled()
        .filter(|(_, _, e)| e.how == How::Copy && e.access == Access::ReadWrite)
        .map(|(s, e, entry)| (s, e, entry.space))
}

/// Everything an advance captured at its point in time, ready to become current.
pub(crate) struct NewPoint {
    /// The ranges saved.
    pub(crate) targets: Vec<(usize, usize, SpaceId)>,
    /// Their new saved bytes, one segment per range.
    pub(crate) segments: Vec<Segment>,
    /// What the differential advance did (`delta`): the `bytes_diffed`, `diff_bytes_copied`
    /// and `diff_blocks_changed` counters.
    pub(crate) diff: Stats,
    /// Monitored files' offsets.
    pub(crate) offsets: Vec<(i32, i64)>,
    /// Where a replay feeding the CD stood.
    pub(crate) mark: Option<crate::node::FeedMark>,
    /// When a timed synchronous advance was called (`advice::advance_started`); `None` for
    /// an untimed one (asynchronous ones are never timed: their copy overlaps the work).
    pub(crate) started: Option<u64>,
}

/// Makes `point` the CD's current point in time: the implicit commit into the parent, the
/// new segments, READ_WRITE entries demoted, files, log. Cannot fail: callers checked
/// [`State::refuse_children`] and [`check_merge`] with the same locks held.
pub(crate) fn apply_advance(
    node: &Node,
    parent_state: Option<&mut State>,
    state: &mut State,
    point: NewPoint,
) -> AdvanceReport {
    let had_siblings = node.had_siblings.load(Ordering::Relaxed);
    if let (Some(parent), Some(parent_state)) = (&node.parent, parent_state) {
        merge_into_parent(parent_state, parent, state, had_siblings);
    }
    let total: usize = point.targets.iter().map(|(s, e, _)| e - s).sum();
    for (&(s, e, _), segment) in point.targets.iter().zip(point.segments) {
        state.resave(s, e, segment);
    }
    access::demote_all(&mut state.entries);
    state.files.extend(point.offsets);
    state.log.clear();
    node.sync_replay(state);
    state.feed_mark = point.mark;

    let mut stats = Stats {
        advances: 1,
        bytes_advanced: total as u64,
        ..point.diff
    };
    if let Some(started) = point.started {
        let ended = crate::advice::now_ns();
        stats.timed_advances = 1;
        stats.advance_ns = ended - started;
        crate::advice::record_advance(&node.root_name, node.depth, started, ended);
    }
    state.stats.absorb(&stats);
    stats.publish();
    AdvanceReport {
        bytes_copied: total,
        ranges_copied: point.targets.len(),
    }
}

/// Tells the persistence layer that a persistent CD advanced (call with no lock held).
pub(crate) fn advanced_hook(node: &Node) -> Result<()> {
    if node.persistent {
        if let Some(hooks) = crate::persist::hooks() {
            (hooks.advanced)(node.handle)?;
        }
    }
    Ok(())
}

/// Makes the CD's pending advance current if its drain completed (waiting for it when
/// `block`); `Ok(true)` when none is pending any more. Call with no CD locked.
///
/// The drain is waited for with only the CD's lock held (siblings settle at the same time);
/// parent and child are locked for the swap alone. A completed drain stays complete, so the
/// swap needs no second look at it; another thread may have settled (or a restore dropped)
/// the pending advance in between, which the swap sees as nothing pending.
pub(crate) fn settle(node: &Arc<Node>, block: bool) -> Result<bool> {
    if !node.draining.load(Ordering::Acquire) {
        return Ok(true);
    }
    {
        let mut state = node.lock();
        let Some(pending) = state.pending.as_mut() else {
            return Ok(true);
        };
        for (name, drain) in &mut pending.drains {
            let done = callback::guard(|| {
                if block {
                    drain.wait().map(|()| true)
                } else {
                    drain.is_complete()
                }
            });
            match done {
                Ok(true) => {}
                Ok(false) => return Ok(false),
                Err(message) => {
                    let space = name.clone();
                    state.pending = None;
                    node.draining.store(false, Ordering::Release);
                    return Err(CdError::DeviceCopy { space, message });
                }
            }
        }
    }
    let mut parent_state = node.parent.as_ref().map(|p| p.lock());
    let mut state = node.lock();
    let Some(pending) = state.pending.take() else {
        return Ok(true);
    };
    node.draining.store(false, Ordering::Release);
    if let Some(parent_state) = parent_state.as_deref() {
        check_merge(
            parent_state,
            &state,
            node.had_siblings.load(Ordering::Relaxed),
        )?;
    }
    let Pending {
        drains,
        buffer,
        targets,
        offsets,
        mark,
        relabels,
    } = pending;
    drop(drains);
    let buffer = Arc::new(buffer);
    let mut offset = 0;
    let segments = targets
        .iter()
        .map(|&(s, e, _)| {
            offset += e - s;
            Segment::new(Arc::clone(&buffer), offset - (e - s))
        })
        .collect();
    let point = NewPoint {
        targets,
        segments,
        diff: Stats::default(),
        offsets,
        mark,
        started: None,
    };
    apply_advance(node, parent_state.as_deref_mut(), &mut state, point);
    access::replay(&mut state.entries, &relabels);
    drop(state);
    drop(parent_state);
    advanced_hook(node)?;
    Ok(true)
}

/// For a restore: makes a completed drain's point current, or drops a pending one (waiting
/// for its copies to stop), so that the previous complete point is restored.
pub(crate) fn settle_or_drop(node: &Arc<Node>) {
    // A failed drain has already been dropped: the restore goes on from the previous point,
    // and reports the device's state itself if it cannot copy.
    if let Ok(true) | Err(_) = settle(node, false) {
        return;
    }
    let mut state = node.lock();
    state.pending = None;
    node.draining.store(false, Ordering::Release);
}
