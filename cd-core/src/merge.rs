//! What a child leaves its parent when it ends: the spec's commit rules, and the sibling rule
//! of MPI logs.
//!
//! A child's state reaches its parent on `commit_cd`, on the implicit commit of an advance
//! (synchronous or settled asynchronously), and, for logs only, when a restore discards
//! descendants and merges their logs into the restored CD. All of them go through this
//! module, so the rule "a child's log goes up only if the child never existed beside a
//! sibling" ([`log_goes_up`]) is written once; promotion of the parent's entries is
//! `access`'s.

use crate::access;
use crate::error::Result;
use crate::log::Log;
use crate::node::{Entry, How, Node, State};
use crate::types::{Access, Scope};
use std::sync::atomic::Ordering;

/// The sibling rule: whether a child's MPI log goes up into its parent's (commit, advance,
/// restore of an ancestor) rather than being dropped. A child that ever existed beside a
/// sibling drops its log: the siblings' records would interleave in no replayable order.
/// The same test decides whether a new child may continue its parent's open log chunk
/// (`create`), and whether a descendant's unreplayable call makes a restore's replay
/// unreplayable (`restore`).
pub(crate) fn log_goes_up(child_had_siblings: bool) -> bool {
    !child_had_siblings
}

/// Moves the child's log into the parent's by [`log_goes_up`]; the child's log is left empty
/// either way. Where the parent's log may be replaying, callers check [`check_merge`] first.
pub(crate) fn merge_log(parent: &mut Log, child: &mut Log, child_had_siblings: bool) {
    let log = std::mem::take(child);
    if log_goes_up(child_had_siblings) {
        parent.append(log);
    }
}

/// Commits `child`'s state into its parent's: the spec's commit rules, shared by `commit_cd`
/// and the implicit commit of an advance.
///
/// - GLOBAL entries only in the child move up (with their data, shared, not copied);
/// - where both hold a range, the parent's entry wins, but a READ_WRITE child entry promotes a
///   READ_ONLY parent entry (never a regen one, which cannot be READ_WRITE);
/// - CONSTRAINED entries never move up;
/// - files only in the child move up;
/// - the child's log goes up by [`merge_log`]. Callers first check [`check_merge`].
pub(crate) fn merge_into_parent(
    parent: &mut State,
    parent_node: &Node,
    child: &mut State,
    child_had_siblings: bool,
) {
    let moved: Vec<(usize, usize, Entry)> = child
        .entries
        .iter()
        .filter(|(_, _, e)| e.scope == Scope::Global)
        .map(|(s, e, entry)| (s, e, entry.clone()))
        .collect();
    for (start, end, entry) in moved {
        if entry.access == Access::ReadWrite {
            access::promote_under(&mut parent.entries, start, end);
        }
        for (gs, ge) in parent.entries.fill_gaps(start, end, &entry) {
            match entry.how {
                How::Copy => {
                    for (ds, de, segment) in child.data.overlapping(gs, ge) {
                        parent.data.insert_uncovered(ds, de, segment);
                    }
                }
                How::Parent => parent_node
                    .has_parent_entries
                    .store(true, Ordering::Relaxed),
                How::Regen(_) => {}
            }
        }
    }
    for (&fd, &offset) in &child.files {
        parent.files.entry(fd).or_insert(offset);
    }
    merge_log(&mut parent.log, &mut child.log, child_had_siblings);
}

/// Checks that committing a child (its state `child`) into its parent's state may append its
/// log there (see [`merge_into_parent`]).
pub(crate) fn check_merge(parent: &State, child: &State, child_had_siblings: bool) -> Result<()> {
    if log_goes_up(child_had_siblings) {
        parent.log.check_append(&child.log)
    } else {
        Ok(())
    }
}
