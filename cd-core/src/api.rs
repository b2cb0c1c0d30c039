//! The operations of the spec, by their spec names.
//!
//! Each function validates everything it can before it changes anything, so a failed call
//! leaves the CD as it was. The ones that read or write application memory through raw
//! addresses are `unsafe`; their contract is the spec's: every range in the CD must stay
//! allocated, and nobody else may write it while the call runs (restore also writes it).

use crate::advance_async::settle;
use crate::callback;
use crate::error::{CdError, Fate, Result};
use crate::handle;
use crate::ids::{CdHandle, CdRef};
use crate::log::LogEntry;
use crate::node::{
    check_merge, feed_mark, merge_into_parent, resolve_through, Entry, Exclusive, How, Node, State,
};
use crate::regen::Regen;
use crate::space::{self, Location, SpaceId};
use crate::stats::Stats;
use crate::storage_info::StorageInfo;
use crate::store::{self, Buffer, Segment, INLINE};
use crate::types::{validate_specs, Access, AddrSpec, LoggingMode, Restoration, Scope, Small};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use tracing::debug_span;

static RANK: AtomicU32 = AtomicU32::new(0);

/// Sets this process's rank, used in CD identities (the MPI layer calls it at `MPI_Init`).
pub fn set_rank(rank: u32) {
    RANK.store(rank, Ordering::Relaxed);
}

/// This process's rank (0 without MPI).
pub fn rank() -> u32 {
    RANK.load(Ordering::Relaxed)
}

/// Creates a CD and makes it the calling thread's active CD.
///
/// `parent` is `None` for a root CD. A root must choose a logging mode (not `Inherit`) and
/// may have a `name`, unique among the live roots of the process; a child takes no name, and
/// its logging mode must match its parent's (`Inherit` always does). A child given no
/// `storage_info` takes its parent's; a root takes `$CD_STORAGE_INFO` if set.
pub fn create_cd(
    parent: Option<CdRef>,
    storage_info: Option<&str>,
    logging: LoggingMode,
    name: Option<&str>,
) -> Result<CdHandle> {
    let _span = debug_span!("create_cd", ?parent, ?logging, name).entered();
    callback::check()?;
    let handle = match parent {
        None => create_root(storage_info, logging, name)?,
        Some(parent) => {
            let parent = handle::resolve(parent)?;
            settle(&parent, true)?;
            create_child(parent, storage_info, logging, name)?
        }
    };
    handle::push_active(handle);
    Stats {
        creates: 1,
        ..Stats::default()
    }
    .publish();
    Ok(handle)
}

fn create_root(
    storage_info: Option<&str>,
    logging: LoggingMode,
    name: Option<&str>,
) -> Result<CdHandle> {
    let logging = match logging {
        LoggingMode::Enabled => true,
        LoggingMode::Disabled => false,
        LoggingMode::Inherit => return Err(CdError::RootInheritsLogging),
    };
    let storage = StorageInfo::for_root(storage_info)?;
    let name: Option<Arc<str>> = match name {
        Some(n) if n.is_empty() || n.contains('\0') => return Err(CdError::BadName(n.to_owned())),
        Some(n) => Some(n.into()),
        None => None,
    };
    let hooks = match storage.persist()? {
        Some(_) => Some(crate::persist::hooks().ok_or_else(|| {
            CdError::Persist(
                "storage_info sets \"dir\" (a persistent CD) but no persistence layer is \
                 loaded: persistent CDs need MPI, initialized through libcd's MPI_Init"
                    .to_owned(),
            )
        })?),
        None => None,
    };
    if let Some(name) = &name {
        handle::claim_root_name(name)?;
    }
    let handle = handle::register(|handle| {
        Arc::new(Node::new(handle, None, name, 0, 0, logging, storage, false))
    });
    if let Some(hooks) = hooks {
        match (hooks.created)(handle) {
            Ok(recovered) => {
                handle::lookup(handle)?.lock().recovered = recovered;
            }
            Err(e) => {
                // discarding a fresh root cannot fail; the error to report is the hook's
                let _ = commit_cd(handle);
                return Err(e);
            }
        }
    }
    Ok(handle)
}

fn create_child(
    parent: Arc<Node>,
    storage_info: Option<&str>,
    logging: LoggingMode,
    name: Option<&str>,
) -> Result<CdHandle> {
    if name.is_some() {
        return Err(CdError::ChildNamed);
    }
    let storage = match storage_info {
        Some(text) => StorageInfo::parse(text)?,
        None => parent.storage.clone(),
    };
    if storage_info.is_some() && storage.persist()?.is_some() {
        return Err(CdError::StorageInfo(
            "key \"dir\": only root CDs persist; a child's storage_info cannot set it".to_owned(),
        ));
    }
    let logging = match logging {
        LoggingMode::Inherit => parent.logging,
        mode => {
            let wanted = mode == LoggingMode::Enabled;
            if wanted != parent.logging {
                return Err(CdError::LoggingMismatch {
                    parent: LoggingMode::describe(parent.logging),
                    child: LoggingMode::describe(wanted),
                });
            }
            wanted
        }
    };
    // Taken before the parent's lock: the feeding CD may be above it.
    let mark = feed_mark(&parent);
    let mut state = parent.lock_live()?;
    let sibling_index = (0..)
        .find(|i| !state.children.iter().any(|c| c.sibling_index == *i))
        .expect("a free index below 2^32");
    let had_siblings = !state.children.is_empty();
    for sibling in &state.children {
        sibling.had_siblings.store(true, Ordering::Relaxed);
    }
    let handle = handle::register(|handle| {
        Arc::new(Node::new(
            handle,
            Some(Arc::clone(&parent)),
            parent.root_name.clone(),
            parent.depth + 1,
            sibling_index,
            logging,
            storage,
            had_siblings,
        ))
    });
    let node = handle::lookup(handle).expect("just registered");
    if logging {
        let mut child = node.lock();
        if !had_siblings {
            state.log.hand_down(&mut child.log);
        }
        child.feed_mark = mark;
    }
    state.children.push(node);
    Ok(handle)
}

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
    let _span = debug_span!("add_to_cd_via_copy", ?cd, ranges = specs.len()).entered();
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
    let _span = debug_span!("add_to_cd_via_parent", ?cd, ranges = specs.len()).entered();
    // SAFETY: parent entries read no application memory when added.
    unsafe { add_entries(cd, specs, How::Parent) }
}

/// Adds ranges that a restore regenerates with `regen` (`add_to_cd_via_regen`).
///
/// Regen entries must be READ_ONLY: advance never updates them.
pub fn add_to_cd_via_regen(cd: impl Into<CdRef>, specs: &[AddrSpec], regen: Regen) -> Result<()> {
    let cd = cd.into();
    let _span = debug_span!("add_to_cd_via_regen", ?cd, ranges = specs.len()).entered();
    // SAFETY: regen entries read no application memory when added.
    unsafe { add_entries(cd, specs, How::Regen(regen)) }
}

/// The shared body of the three add functions.
///
/// # Safety
/// For `How::Copy`, as [`add_to_cd_via_copy`]; otherwise none.
unsafe fn add_entries(cd: CdRef, specs: &[AddrSpec], how: How) -> Result<()> {
    callback::check()?;
    let bounds = validate_specs(specs)?;
    if matches!(how, How::Regen(_)) {
        if let Some(spec) = specs.iter().find(|s| s.access == Access::ReadWrite) {
            return Err(CdError::ReadWriteRegen {
                address: spec.address,
            });
        }
    }
    let spaces = bounds
        .iter()
        .map(|&(s, e)| space::space_of(s, e))
        .collect::<Result<Small<Location>>>()?;
    let node = handle::resolve(cd)?;
    settle(&node, true)?;
    if how == How::Parent {
        check_parent_holds(&node, &bounds)?;
    }
    let mut state = node.lock_live()?;

    // Most adds cover new ground: one lookup each tells, and spares the overlap work.
    let uncovered: Small<bool> = bounds
        .iter()
        .map(|&(s, e)| state.entries.is_uncovered(s, e))
        .collect();
    for ((spec, &(s, e)), _) in specs
        .iter()
        .zip(&bounds)
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
            if spec.access == Access::ReadWrite && matches!(old.how, How::Regen(_)) {
                return Err(CdError::PromoteRegen { address: os });
            }
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
        for (list, at) in gaps.iter().zip(&spaces) {
            for &(s, e) in list {
                let dst = &mut buffer.as_mut_slice()[offset..offset + (e - s)];
                // SAFETY: `s .. e` is part of a range the caller vouched for.
                unsafe { store::read_app(dst, s, at.space)? };
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
        unsafe { store::read_app(&mut bytes[..e - s], s, spaces[i].space)? };
        Some(Staged::Inline(bytes))
    } else {
        None
    };

    // Nothing can fail from here on.
    let mut offset = 0;
    for (i, spec) in specs.iter().enumerate() {
        let ((s, e), list, at) = (bounds[i], &gaps[i], spaces[i]);
        if !uncovered[i] {
            state.entries.update(s, e, |old| old.access = spec.access);
        }
        let entry = Entry {
            how: how.clone(),
            access: spec.access,
            scope: spec.scope,
            space: at.space,
            region: at.region,
        };
        for &(gs, ge) in list {
            state.entries.insert_uncovered(gs, ge, entry.clone());
            let segment = match &staged {
                Some(Staged::Buffer(buffer)) => Segment::new(Arc::clone(buffer), offset),
                Some(Staged::Inline(bytes)) => Segment::Inline(*bytes),
                None => continue,
            };
            state.data.insert_uncovered(gs, ge, segment);
            offset += ge - gs;
        }
    }
    if node.persistent {
        // a range that adds new ground is an entry of its own; a re-add of covered ground (a
        // promotion after an advance) is not
        let added = bounds.iter().zip(&gaps).filter(|(_, g)| !g.is_empty());
        state
            .adds
            .extend(added.map(|(&(start, end), _)| crate::node::AddRecord {
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
    let node = handle::resolve(cd)?;
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

/// The current offset of `fd`, by `lseek(fd, 0, SEEK_CUR)`.
pub(crate) fn file_offset(fd: i32) -> Result<i64> {
    if fd < 0 {
        return Err(CdError::FileNotSeekable {
            fd,
            message: "negative file descriptor".to_owned(),
        });
    }
    // SAFETY: lseek on any integer is memory safe; a bad descriptor only yields EBADF.
    let offset = unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) };
    if offset < 0 {
        return Err(CdError::FileNotSeekable {
            fd,
            message: std::io::Error::last_os_error().to_string(),
        });
    }
    Ok(offset)
}

/// Records the current position of an open file (`add_file_to_cd`); a restore seeks back to
/// it. The file's data is not saved. A descriptor already in the CD keeps its older position.
pub fn add_file_to_cd(cd: impl Into<CdRef>, fd: i32) -> Result<()> {
    let cd = cd.into();
    let _span = debug_span!("add_file_to_cd", ?cd, fd).entered();
    callback::check()?;
    let offset = file_offset(fd)?;
    let node = handle::resolve(cd)?;
    settle(&node, true)?;
    node.lock_live()?.files.entry(fd).or_insert(offset);
    Ok(())
}

/// Stops monitoring a file (`delete_file_from_cd`).
pub fn delete_file_from_cd(cd: impl Into<CdRef>, fd: i32) -> Result<()> {
    let cd = cd.into();
    let _span = debug_span!("delete_file_from_cd", ?cd, fd).entered();
    callback::check()?;
    let node = handle::resolve(cd)?;
    settle(&node, true)?;
    let mut state = node.lock_live()?;
    state
        .files
        .remove(&fd)
        .map(drop)
        .ok_or(CdError::FileNotFound(fd))
}

/// Commits a CD (`commit_cd`): a root is discarded; a child is merged into its parent by the
/// spec's rules (see [`merge_into_parent`]) and discarded. A CD with live children cannot be
/// committed. If the CD is the calling thread's active CD, the one below becomes active.
///
/// A commit that would merge MPI log records into a parent whose log is being replayed fails
/// with [`CdError::LogReplaying`] and changes nothing: the records would land in the middle of
/// the replay. It does not happen when the MPI layer follows [`crate::log_mode`] (a CD that a
/// replay feeds logs nothing); it means that records were added to the child explicitly.
pub fn commit_cd(cd: impl Into<CdRef>) -> Result<()> {
    let cd = cd.into();
    let _span = debug_span!("commit_cd", ?cd).entered();
    callback::check()?;
    let node = handle::resolve(cd)?;
    settle(&node, true)?;
    let _busy = node.begin(Exclusive::Commit)?;
    let mut parent_state = match &node.parent {
        Some(parent) => Some(parent.lock_live()?),
        None => None,
    };
    let mut state = node.lock_live()?;
    refuse_children(&state, "commit_cd")?;
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
            handle::release_root_name(name);
        }
    }
    handle::retire(node.handle, Fate::Committed);
    handle::pop_active(node.handle);
    Stats {
        commits: 1,
        ..Stats::default()
    }
    .publish();
    Ok(())
}

pub(crate) fn refuse_children(state: &State, operation: &'static str) -> Result<()> {
    if state.children.is_empty() {
        Ok(())
    } else {
        Err(CdError::HasChildren {
            operation,
            children: state.children.len(),
        })
    }
}

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
/// refuses to merge log records into a log being replayed, as [`commit_cd`] does.
///
/// # Safety
/// Every COPY range of the CD must be readable (host memory) and not written during the call.
pub unsafe fn advance_cd_point_in_time(cd: impl Into<CdRef>) -> Result<AdvanceReport> {
    let cd = cd.into();
    let _span = debug_span!("advance_cd_point_in_time", ?cd).entered();
    callback::check()?;
    let node = handle::resolve(cd)?;
    settle(&node, true)?;
    let _busy = node.begin(Exclusive::Advance)?;
    // Where a replay feeding this CD stands at its new point in time (before any lock: the
    // feeding CD may be above the parent).
    let mark = node.parent.as_ref().and_then(feed_mark);
    let mut parent_state = match &node.parent {
        Some(parent) => Some(parent.lock_live()?),
        None => None,
    };
    let mut state = node.lock_live()?;
    refuse_children(&state, "advance_cd_point_in_time")?;
    let had_siblings = node.had_siblings.load(Ordering::Relaxed);
    if let Some(parent_state) = parent_state.as_deref() {
        check_merge(parent_state, &state, had_siblings)?;
    }

    let targets = advance_targets(&state);
    let total: usize = targets.iter().map(|(s, e, _)| e - s).sum();
    let staged = if total > 0 {
        let mut buffer = Buffer::new(total)?;
        let mut offset = 0;
        for &(s, e, space) in &targets {
            let dst = &mut buffer.as_mut_slice()[offset..offset + (e - s)];
            // SAFETY: the range is in the CD, which the caller vouched for.
            unsafe { store::read_app(dst, s, space)? };
            offset += e - s;
        }
        Some(Arc::new(buffer))
    } else {
        None
    };
    let offsets = state
        .files
        .keys()
        .map(|&fd| Ok((fd, file_offset(fd)?)))
        .collect::<Result<Vec<(i32, i64)>>>()?;
    let point = NewPoint {
        targets,
        staged,
        offsets,
        mark,
    };
    let report = apply_advance(&node, parent_state.as_deref_mut(), &mut state, point);
    drop(parent_state);
    drop(state);
    drop(_busy);
    advanced_hook(&node)?;
    Ok(report)
}

/// The ranges an advance copies: the READ_WRITE entries restored by COPY, with their space.
pub(crate) fn advance_targets(state: &State) -> Vec<(usize, usize, SpaceId)> {
    state
        .entries
        .iter()
        .filter(|(_, _, e)| e.how == How::Copy && e.access == Access::ReadWrite)
        .map(|(s, e, entry)| (s, e, entry.space))
        .collect()
}

/// Everything an advance captured at its point in time, ready to become current.
pub(crate) struct NewPoint {
    /// The ranges copied, in the order their bytes lie in `staged`.
    pub(crate) targets: Vec<(usize, usize, SpaceId)>,
    /// Their bytes (`None` when there are none).
    pub(crate) staged: Option<Arc<Buffer>>,
    /// Monitored files' offsets.
    pub(crate) offsets: Vec<(i32, i64)>,
    /// Where a replay feeding the CD stood.
    pub(crate) mark: Option<crate::node::FeedMark>,
}

/// Makes `point` the CD's current point in time: the implicit commit into the parent, the
/// new segments, READ_WRITE entries demoted, files, log. Cannot fail: callers checked
/// [`refuse_children`] and [`check_merge`] with the same locks held.
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
    if let Some(buffer) = point.staged {
        let mut offset = 0;
        for &(s, e, _) in &point.targets {
            state.data.remove(s, e);
            state
                .data
                .insert_uncovered(s, e, Segment::new(Arc::clone(&buffer), offset));
            offset += e - s;
        }
    }
    let writable: Vec<(usize, usize)> = state
        .entries
        .iter()
        .filter(|(_, _, e)| e.access == Access::ReadWrite)
        .map(|(s, e, _)| (s, e))
        .collect();
    for (s, e) in writable {
        state
            .entries
            .update(s, e, |entry| entry.access = Access::ReadOnly);
    }
    state.files.extend(point.offsets);
    state.log.clear();
    node.sync_replay(state);
    state.feed_mark = point.mark;

    let stats = Stats {
        advances: 1,
        bytes_advanced: total as u64,
        ..Stats::default()
    };
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

/// Adds an MPI log entry to the CD's FIFO (`add_MPI_log_to_cd`); the CD owns it from now on.
///
/// The entry is kept as it is, not copied into the log's arena, so [`get_mpi_log_from_cd`]
/// hands out the very bytes given here (the spec: "MPI log entry originally provided by
/// add_MPI_log_to_cd"). Refused when the CD does not log communication, and while its own log
/// is being replayed. The MPI layer appends to the active CD with [`crate::log_append`]
/// instead.
pub fn add_mpi_log_to_cd(cd: impl Into<CdRef>, entry: LogEntry) -> Result<()> {
    let cd = cd.into();
    let _span = debug_span!("add_MPI_log_to_cd", ?cd, len = entry.bytes().len()).entered();
    callback::check()?;
    let node = handle::resolve(cd)?;
    if !node.logging {
        return Err(CdError::LoggingDisabled);
    }
    let mut state = node.lock_live()?;
    state.log.push(entry)?;
    let stats = Stats {
        log_entries: 1,
        ..Stats::default()
    };
    state.stats.absorb(&stats);
    stats.publish();
    Ok(())
}

/// The next entry of the replay of the CD's own log started by `restore_cd`
/// (`get_MPI_log_from_cd`); `None` when the log is exhausted (which ends the replay) or no
/// replay is in progress.
pub fn get_mpi_log_from_cd(cd: impl Into<CdRef>) -> Result<Option<LogEntry>> {
    let cd = cd.into();
    let _span = debug_span!("get_MPI_log_from_cd", ?cd).entered();
    callback::check()?;
    let node = handle::resolve(cd)?;
    let mut state = node.lock_live()?;
    let entry = state.log.next();
    node.sync_replay(&state);
    Ok(entry)
}

/// Discards the CD's MPI log (`delete_MPI_log_from_cd`), with its unreplayable mark, and ends
/// a replay of it.
pub fn delete_mpi_log_from_cd(cd: impl Into<CdRef>) -> Result<()> {
    let cd = cd.into();
    let _span = debug_span!("delete_MPI_log_from_cd", ?cd).entered();
    callback::check()?;
    let node = handle::resolve(cd)?;
    let mut state = node.lock_live()?;
    state.log.clear();
    node.sync_replay(&state);
    Ok(())
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
}

/// Describes a CD.
pub fn cd_info(cd: impl Into<CdRef>) -> Result<CdInfo> {
    callback::check()?;
    let node = handle::resolve(cd.into())?;
    settle(&node, false)?;
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
        ranges: state.entries.len(),
        tracked_bytes: state.entries.covered_bytes(),
        stored_bytes: state.data.covered_bytes(),
        files: state.files.len(),
        log_entries: state.log.len(),
        log_bytes: state.log.bytes(),
        log_spilled_bytes: state.log.spilled(),
        replaying: state.log.is_replaying(),
        stats: state.stats,
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
    /// The memory space ([`space::HOST`] for host memory).
    pub space: SpaceId,
}

/// The entries of a CD, merged, in address order.
pub fn cd_entries(cd: impl Into<CdRef>) -> Result<Vec<EntryInfo>> {
    callback::check()?;
    let node = handle::resolve(cd.into())?;
    settle(&node, false)?;
    let state = node.lock_live()?;
    Ok(state
        .entries
        .iter()
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
    let node = handle::resolve(cd.into())?;
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
    let node = handle::resolve(cd.into())?;
    settle(&node, false)?;
    let state = node.lock_live()?;
    if let Some(&(address, end)) = state.data.gaps(start, end).first() {
        return Err(CdError::RangeNotFound { address, end });
    }
    let mut bytes = Vec::with_capacity(length);
    for (s, e, segment) in state.data.overlapping(start, end) {
        bytes.extend_from_slice(segment.bytes(e - s));
    }
    Ok(bytes)
}
