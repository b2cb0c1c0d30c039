//! `commit_cd`: a root is discarded; a child is merged into its parent by the rules of
//! `merge` and discarded.

use crate::active;
use crate::advance::settle;
use crate::callback;
use crate::error::{Fate, Result};
use crate::ids::CdRef;
use crate::merge::{check_merge, merge_into_parent};
use crate::node::Exclusive;
use crate::registry;
use crate::stats::Stats;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tracing::{debug_span, field::Empty};

/// Commits a CD (`commit_cd`): a root is discarded; a child is merged into its parent by the
/// spec's rules (see `merge`) and discarded. A CD with live children cannot be
/// committed. If the CD is the calling thread's active CD, the one below becomes active.
///
/// A commit that would merge MPI log records into a parent whose log is being replayed fails
/// with [`CdError::LogReplaying`](crate::CdError::LogReplaying) and changes nothing: the
/// records would land in the middle of the replay. It does not happen when the MPI layer follows
/// [`crate::log_mode`] (a CD that a replay feeds logs nothing); it means that records were added to
/// the child explicitly.
pub fn commit_cd(cd: impl Into<CdRef>) -> Result<()> {
    let cd = cd.into();
    let span = debug_span!("commit_cd", ?cd, name = Empty);
    let _span = span.enter();
    callback::check()?;
    let node = active::resolve(cd)?;
    if !span.is_disabled() {
        span.record("name", node.root_name.as_deref());
    }
    settle(&node, true)?;
    let _busy = node.begin(Exclusive::Commit)?;
    let mut parent_state = match &node.parent {
        Some(parent) => Some(parent.lock_live()?),
        None => None,
    };
    let mut state = node.lock_live()?;
    state.refuse_children("commit_cd")?;
    if let (Some(parent), Some(parent_state)) = (&node.parent, parent_state.as_deref_mut()) {
        let had_siblings = node.had_siblings.load(Ordering::Relaxed);
        check_merge(parent_state, &state, had_siblings)?;
        merge_into_parent(parent_state, parent, &mut state, had_siblings);
        parent_state.children.retain(|c| !Arc::ptr_eq(c, &node));
    }
    node.mark_retired(&mut state, Fate::Committed);
    drop(state);
    drop(parent_state);
    if node.parent.is_none() {
        if let Some(name) = &node.root_name {
            registry::release_root_name(name);
        }
    }
    registry::retire(node.handle, Fate::Committed);
    active::pop_active(node.handle);
    Stats {
        commits: 1,
        ..Stats::default()
    }
    .publish();
    Ok(())
}
