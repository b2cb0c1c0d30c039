//! One CD: its place in the tree, its entries and data, files, log, and the commit merge.
//!
//! # Locking
//! Each CD's mutable state sits behind its own mutex. When an operation needs several CDs it
//! locks them ancestors first, then descendants (commit and an advance's swap: parent then
//! child; restore: the ancestors it reads, the restored CD, then its descendants in
//! pre-order). One order for all means no deadlock. The operations the spec calls unsafe to
//! run concurrently on one handle (commit, restore, advance) also claim the CD's `busy` flag,
//! so that a second thread gets [`CdError::ConcurrentOperation`] at once instead of queueing
//! behind the first.
//!
//! No copy of application memory runs with an ancestor locked, so threads working on sibling
//! CDs do not wait for each other's copies: an advance copies holding only the busy flag and
//! locks parent and child for the swap (see `advance`), a restore resolves its PARENT bytes
//! to the ancestors' immutable segments and releases them before it copies (see `restore`),
//! and an add copies under its own CD's lock only.

use crate::error::{CdError, Fate, Result};
use crate::ids::CdHandle;
use crate::interval::{IntervalMap, Piece};
use crate::log::{Cursor, Log};
use crate::primitive::sync::{
    self,
    atomic::{AtomicU64, AtomicU8},
};
use crate::regen::Regen;
use crate::space::{Drain, SpaceId};
use crate::stats::Stats;
use crate::storage_info::StorageInfo;
use crate::store::{Buffer, Saved, Segment, INLINE};
use crate::types::{Access, Restoration, Scope};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// How an entry gets its data back.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum How {
    Copy,
    Parent,
    Regen(Regen),
}

impl How {
    pub(crate) fn restoration(&self) -> Restoration {
        match self {
            How::Copy => Restoration::Copy,
            How::Parent => Restoration::Parent,
            How::Regen(_) => Restoration::Regen,
        }
    }
}

/// The labels of an address range in a CD.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Entry {
    pub(crate) how: How,
    pub(crate) access: Access,
    pub(crate) scope: Scope,
    pub(crate) space: SpaceId,
    /// The start of the device region holding the range (0 for host memory): part of the
    /// label, so that entries never merge across a region boundary.
    pub(crate) region: usize,
    /// The saved bytes of a COPY entry of at most [`INLINE`] bytes, kept in the entry itself
    /// rather than in [`State::data`]: a tiny add then inserts into one map, not two (see
    /// BENCHMARKS.md, the tiny add). An entry holding bytes never merges with a neighbour;
    /// [`State::labelled`] shows the entries merged all the same.
    pub(crate) inline: Option<[u8; INLINE]>,
}

impl Entry {
    /// Whether `other` has the same labels (restoration, access, scope, space, region),
    /// whatever bytes either holds inline.
    pub(crate) fn same_label(&self, other: &Entry) -> bool {
        self.how == other.how
            && self.access == other.access
            && self.scope == other.scope
            && self.space == other.space
            && self.region == other.region
    }
}

impl Piece for Entry {
    fn skip(&self, offset: usize) -> Self {
        Entry {
            inline: self.inline.map(|bytes| {
                let mut shifted = [0; INLINE];
                shifted[..INLINE - offset].copy_from_slice(&bytes[offset..]);
                shifted
            }),
            ..self.clone()
        }
    }
    fn continues(&self, _: usize, next: &Self) -> bool {
        self.inline.is_none() && next.inline.is_none() && self.same_label(next)
    }
    fn isolated(&self) -> bool {
        self.inline.is_some()
    }
}

/// The mutable part of a CD.
#[derive(Default)]
pub(crate) struct State {
    /// Address ranges with their labels, merged except where an entry holds its bytes
    /// inline ([`Entry::inline`]).
    pub(crate) entries: IntervalMap<Entry>,
    /// The saved bytes of the COPY entries that do not hold them inline: read both through
    /// [`State::saved`].
    pub(crate) data: IntervalMap<Segment>,
    /// Monitored file descriptors and their saved offsets.
    pub(crate) files: BTreeMap<i32, i64>,
    pub(crate) log: Log,
    /// Where the replay feeding this CD stood at its point in time, if one did (see
    /// [`FeedMark`]).
    pub(crate) feed_mark: Option<FeedMark>,
    /// Live children, oldest first.
    pub(crate) children: Vec<Arc<Node>>,
    pub(crate) stats: Stats,
    /// A persistent root CD's ranges in add order (see `persist`); empty for other CDs.
    pub(crate) adds: Vec<AddRecord>,
    /// The persisted version a persistent root CD recovered at create.
    pub(crate) recovered: Option<u64>,
    /// An asynchronous advance whose drain has not completed (see `advance_async`); the
    /// node's `draining` flag mirrors whether it is set.
    pub(crate) pending: Option<Pending>,
}

impl State {
    /// Folds the records the log's owner published without the lock into the log, and counts
    /// them (with any the log gained otherwise since) in the CD's and the process's
    /// statistics: one atomic load when there is nothing new.
    pub(crate) fn count_log(&mut self) {
        let records = self.log.fold();
        if records > 0 {
            let stats = Stats {
                log_entries: records as u64,
                ..Stats::default()
            };
            self.stats.absorb(&stats);
            stats.publish();
        }
    }

    /// Fails with [`CdError::HasChildren`] unless the CD has no live children: the rule of
    /// commit and advance.
    pub(crate) fn refuse_children(&self, operation: &'static str) -> Result<()> {
        if self.children.is_empty() {
            Ok(())
        } else {
            Err(CdError::HasChildren {
                operation,
                children: self.children.len(),
            })
        }
    }

    /// The entries merged wherever neighbours have the same labels, as users see them.
    pub(crate) fn labelled(&self) -> impl Iterator<Item = (usize, usize, &Entry)> + '_ {
        let mut pieces = self.entries.iter().peekable();
        std::iter::from_fn(move || {
            let (start, mut end, entry) = pieces.next()?;
            while let Some((_, next_end, _)) =
                pieces.next_if(|&(s, _, next)| s == end && entry.same_label(next))
            {
                end = next_end;
            }
            Some((start, end, entry))
        })
    }

    /// The saved bytes inside `start .. end`, inline ones and store segments alike, as
    /// `(start, end, bytes)` with each piece unclipped (`bytes` is all of `start .. end`), in
    /// address order.
    pub(crate) fn saved(&self, start: usize, end: usize) -> Vec<(usize, usize, &[u8])> {
        let mut pieces: Vec<(usize, usize, &[u8])> = self
            .entries
            .overlapping_raw(start, end)
            .filter_map(|(s, e, entry)| Some((s, e, &entry.inline.as_ref()?[..e - s])))
            .collect();
        let inline = pieces.len();
        pieces.extend(
            self.data
                .overlapping_raw(start, end)
                .map(|(s, e, segment)| (s, e, segment.bytes(e - s))),
        );
        if inline > 0 && inline < pieces.len() {
            pieces.sort_unstable_by_key(|&(s, _, _)| s);
        }
        pieces
    }

    /// The saved bytes inside `start .. end`, owned and clipped to it, in address order.
    pub(crate) fn segments(&self, start: usize, end: usize) -> Vec<(usize, usize, Saved)> {
        let mut pieces: Vec<(usize, usize, Saved)> = self
            .entries
            .overlapping(start, end)
            .filter_map(|(s, e, entry)| Some((s, e, Saved::Inline(entry.inline?))))
            .collect();
        let inline = pieces.len();
        pieces.extend(
            self.data
                .overlapping(start, end)
                .map(|(s, e, segment)| (s, e, Saved::Stored(segment))),
        );
        if inline > 0 && inline < pieces.len() {
            pieces.sort_unstable_by_key(|&(s, _, _)| s);
        }
        pieces
    }

    /// The first part of `start .. end` without saved bytes, if any.
    pub(crate) fn unsaved(&self, start: usize, end: usize) -> Option<(usize, usize)> {
        let mut cursor = start;
        for (s, e, _) in self.saved(start, end) {
            if s > cursor {
                return Some((cursor, s));
            }
            cursor = cursor.max(e);
        }
        (cursor < end).then_some((cursor, end))
    }

    /// The number of saved bytes, inline and in the store.
    pub(crate) fn stored_bytes(&self) -> usize {
        let inline: usize = self
            .entries
            .iter()
            .filter(|(_, _, entry)| entry.inline.is_some())
            .map(|(s, e, _)| e - s)
            .sum();
        inline + self.data.covered_bytes()
    }

    /// Makes `segment` the saved bytes of `start .. end` (a COPY range of the CD), in place of
    /// what the store or the entries held there.
    pub(crate) fn resave(&mut self, start: usize, end: usize, segment: Segment) {
        self.data.remove(start, end);
        // Mostly one entry without inline bytes covers the range: one descent tells.
        let plain = matches!(self.entries.containing(start),
            Some((_, e, entry)) if e >= end && entry.inline.is_none());
        if !plain
            && self
                .entries
                .overlapping_raw(start, end)
                .any(|(_, _, entry)| entry.inline.is_some())
        {
            self.entries.update(start, end, |entry| entry.inline = None);
        }
        self.data.insert_uncovered(start, end, segment);
    }
}

/// A range as it was added to a persistent root CD.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AddRecord {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) restoration: Restoration,
}

/// An asynchronous advance whose drain has not completed, kept in its CD's state.
pub(crate) struct Pending {
    /// Declared before `buffer`, so dropped first: each waits until its copies stopped
    /// writing `buffer`.
    pub(crate) drains: Vec<(String, Box<dyn Drain>)>,
    /// The new point's bytes: host ranges written at the call, device ranges by the drains.
    pub(crate) buffer: Buffer,
    pub(crate) targets: Vec<(usize, usize, SpaceId)>,
    pub(crate) offsets: Vec<(i32, i64)>,
    pub(crate) mark: Option<FeedMark>,
    /// Re-adds of covered ground (promotions, demotions) made while the drain ran, in order:
    /// already applied to the entries, and applied again after the advance's demotion when
    /// the point becomes current (see `access::replay`).
    pub(crate) relabels: Vec<(usize, usize, Access)>,
}

/// A CD created (or advanced) while an ancestor's log was being replayed consumes that
/// replay instead of logging. Restoring it must replay again what it consumed since its point
/// in time, so it records where the replay stood then: the ancestor, its log's generation, and
/// the position.
pub(crate) struct FeedMark {
    pub(crate) feeder: Arc<Node>,
    pub(crate) generation: u64,
    pub(crate) cursor: Cursor,
}

/// An exclusive operation in progress on a CD (the `busy` flag's values).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub(crate) enum Exclusive {
    Commit = 1,
    Restore = 2,
    Advance = 3,
}

impl Exclusive {
    fn name(code: u8) -> &'static str {
        match code {
            1 => "commit_cd",
            2 => "restore_cd",
            _ => "advance_cd_point_in_time",
        }
    }
}

/// A CD's `busy` flag: the [`Exclusive`] operation running on it, 0 when none. A type of its
/// own so that the loom model (`tests/loom.rs`) runs this very code.
pub(crate) struct BusyFlag(AtomicU8);

impl BusyFlag {
    pub(crate) fn new() -> BusyFlag {
        BusyFlag(AtomicU8::new(0))
    }

    /// Claims the flag for `op`, or returns the code of the operation that holds it.
    #[inline]
    pub(crate) fn claim(&self, op: Exclusive) -> std::result::Result<BusyGuard<'_>, u8> {
        match self
            .0
            .compare_exchange(0, op as u8, Ordering::Acquire, Ordering::Acquire)
        {
            Ok(_) => Ok(BusyGuard(self)),
            Err(running) => Err(running),
        }
    }
}

/// Clears a CD's `busy` flag when the exclusive operation ends.
pub(crate) struct BusyGuard<'a>(&'a BusyFlag);

impl Drop for BusyGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        self.0 .0.store(0, Ordering::Release);
    }
}

/// What a CD publishes to the threads' lock-free caches of their MPI mode (see `active`,
/// "Validating the cache"): whether it is retired, whether its own log is being replayed,
/// and the epoch that guards both. Writers change a flag, then bump the epoch (release);
/// readers load the epoch (acquire), then the flags. A type of its own so that the loom
/// models (`tests/loom.rs`) run this very code.
pub(crate) struct Published {
    /// 0 while live; then 1 + the `Fate` code.
    retired: AtomicU8,
    /// Whether the CD's own log is being replayed (mirrors the log).
    replaying: sync::atomic::AtomicBool,
    /// Bumped after every change of the flags, and whenever what the MPI layer does on a
    /// thread whose active CD is this one may have changed otherwise (a replay starting or
    /// ending in an ancestor that feeds it). Only grows.
    epoch: AtomicU64,
}

impl Published {
    fn new() -> Published {
        Published {
            retired: AtomicU8::new(0),
            replaying: sync::atomic::AtomicBool::new(false),
            epoch: AtomicU64::new(0),
        }
    }

    /// The epoch; load it before the flags it guards.
    #[inline]
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// 0 while live, else 1 + the `Fate` code.
    #[inline]
    fn retired(&self) -> u8 {
        self.retired.load(Ordering::Acquire)
    }

    /// Whether the CD's own log is being replayed.
    #[inline]
    fn is_replaying(&self) -> bool {
        self.replaying.load(Ordering::Acquire)
    }

    /// Moves the epoch on: every cached answer that saw an older one is no longer current.
    fn bump(&self) {
        self.epoch.fetch_add(1, Ordering::AcqRel);
    }

    /// Publishes whether the CD's log is being replayed; bumps the epoch when that changed.
    fn set_replaying(&self, on: bool) {
        if self.replaying.swap(on, Ordering::AcqRel) != on {
            self.bump();
        }
    }

    /// Publishes the CD's retirement with `code` (1 + the `Fate` code): retired, replaying
    /// nothing, then the bump.
    fn retire(&self, code: u8) {
        self.retired.store(code, Ordering::Release);
        self.replaying.store(false, Ordering::Release);
        self.bump();
    }
}

/// One CD.
pub(crate) struct Node {
    pub(crate) handle: CdHandle,
    pub(crate) parent: Option<Arc<Node>>,
    /// The root's name, shared by the whole tree.
    pub(crate) root_name: Option<Arc<str>>,
    pub(crate) depth: u32,
    pub(crate) sibling_index: u32,
    /// Whether MPI traffic is logged (INHERIT resolved).
    pub(crate) logging: bool,
    pub(crate) storage: StorageInfo,
    /// A root CD whose `storage_info` sets `dir`: the persistence hooks take part in it.
    pub(crate) persistent: bool,
    /// Whether this CD ever existed at the same time as a sibling.
    pub(crate) had_siblings: AtomicBool,
    /// Whether this CD ever held a PARENT entry (restore then locks the ancestors too).
    pub(crate) has_parent_entries: AtomicBool,
    /// Whether `state.pending` holds an asynchronous advance (changed with `state` locked):
    /// lets operations skip settling it without a lock.
    pub(crate) draining: AtomicBool,
    busy: BusyFlag,
    /// Retirement, replay and the epoch guarding them, for the threads' cached
    /// [`crate::LogMode`]s: valid while the epochs they saw are unchanged. Changed only with
    /// `state` locked.
    published: Published,
    state: Mutex<State>,
}

/// Nodes in memory that log MPI calls (created with logging, not yet dropped).
static LOGGING_NODES: AtomicUsize = AtomicUsize::new(0);

/// Whether no CD that logs exists in the process, so that no thread's MPI calls log or replay
/// (a thread's mode needs its active CD to log): one relaxed load, which lets the MPI
/// wrappers of a program without such CDs skip even the thread-local read. A thread sees its
/// own creations in program order; other threads' CDs do not bear on its mode.
#[inline]
pub(crate) fn none_logging() -> bool {
    LOGGING_NODES.load(Ordering::Relaxed) == 0
}

impl Drop for Node {
    fn drop(&mut self) {
        if self.logging {
            LOGGING_NODES.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl Node {
    /// A new node; `parent` is `None` for a root.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        handle: CdHandle,
        parent: Option<Arc<Node>>,
        root_name: Option<Arc<str>>,
        depth: u32,
        sibling_index: u32,
        logging: bool,
        storage: StorageInfo,
        had_siblings: bool,
    ) -> Node {
        if logging {
            LOGGING_NODES.fetch_add(1, Ordering::Relaxed);
        }
        let persistent = parent.is_none() && matches!(storage.persist(), Ok(Some(_)));
        Node {
            handle,
            parent,
            root_name,
            depth,
            sibling_index,
            logging,
            storage,
            persistent,
            had_siblings: AtomicBool::new(had_siblings),
            has_parent_entries: AtomicBool::new(false),
            draining: AtomicBool::new(false),
            busy: BusyFlag::new(),
            published: Published::new(),
            state: Mutex::new(State::default()),
        }
    }

    /// Whether the CD is still live (not committed or discarded).
    pub(crate) fn is_live(&self) -> bool {
        self.published.retired() == 0
    }

    fn fate(&self) -> Option<Fate> {
        match self.published.retired() {
            0 => None,
            1 => Some(Fate::Committed),
            2 => Some(Fate::DiscardedByRestore),
            _ => Some(Fate::Gone),
        }
    }

    /// Locks the state, whether or not the CD is live, with the log's published records
    /// folded in (see `log`, "Lock-free appends"): whoever locks a CD sees its whole log.
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means a panic elsewhere; the state itself is always consistent
        // between operations (they validate before they mutate), so carry on.
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.count_log();
        state
    }

    /// Folds the log's published records in and counts them, if the CD is not locked now
    /// (for a snapshot of the process's statistics, which must not wait on a CD).
    pub(crate) fn try_fold_log(&self) {
        if let Ok(mut state) = self.state.try_lock() {
            state.count_log();
        }
    }

    /// Locks the state of a live CD.
    pub(crate) fn lock_live(&self) -> Result<MutexGuard<'_, State>> {
        let state = self.lock();
        self.check_live()?;
        Ok(state)
    }

    /// Fails with [`CdError::StaleHandle`] if the CD was retired.
    pub(crate) fn check_live(&self) -> Result<()> {
        match self.fate() {
            None => Ok(()),
            Some(fate) => Err(CdError::StaleHandle {
                handle: self.handle,
                fate,
            }),
        }
    }

    /// The epoch (see [`Published`]); load it before reading what it guards.
    #[inline]
    pub(crate) fn epoch(&self) -> u64 {
        self.published.epoch()
    }

    /// Invalidates the threads' cached modes for this CD.
    pub(crate) fn bump(&self) {
        self.published.bump();
    }

    /// Whether the CD's own log is being replayed.
    pub(crate) fn is_replaying(&self) -> bool {
        self.published.is_replaying()
    }

    /// Publishes whether the log in `state` (this CD's, locked) is being replayed; bumps the
    /// epoch when that changed.
    pub(crate) fn sync_replay(&self, state: &State) {
        self.published.set_replaying(state.log.is_replaying());
    }

    /// Marks the CD retired; call with its state locked, then [`crate::registry::retire`].
    pub(crate) fn mark_retired(&self, state: &mut State, fate: Fate) {
        state.entries.clear();
        state.data.clear();
        state.files.clear();
        // Closed first: a thread appending to this CD's log right now learns that its record
        // is in no log (see `log`), and its append fails instead of vanishing.
        state.log.close();
        state.log = Log::default();
        state.feed_mark = None;
        // Waits for its copies to stop and releases its memory.
        state.pending = None;
        self.draining.store(false, Ordering::Release);
        // Published last, under the lock, so that lock-free readers see the retirement with
        // its bump (readers that lock see all of it at once).
        self.published.retire(match fate {
            Fate::Committed => 1,
            Fate::DiscardedByRestore => 2,
            Fate::Gone => 3,
        });
        // Children hold their parent's `Arc`: dropping ours breaks the cycle, so a discarded
        // subtree is freed.
        state.children.clear();
    }

    /// Claims the CD for an exclusive operation, or reports the one already running.
    pub(crate) fn begin(&self, op: Exclusive) -> Result<BusyGuard<'_>> {
        self.busy
            .claim(op)
            .map_err(|running| CdError::ConcurrentOperation {
                operation: Exclusive::name(op as u8),
                running: Exclusive::name(running),
            })
    }
}

/// The outermost CD whose own log is being replayed among `node` and its ancestors: the one
/// whose records are the oldest, so the replay that feeds a thread whose active CD is `node`.
pub(crate) fn outermost_replaying(node: &Arc<Node>) -> Option<Arc<Node>> {
    let mut found = None;
    let mut next = Some(node);
    while let Some(n) = next {
        if n.is_replaying() {
            found = Some(n);
        }
        next = n.parent.as_ref();
    }
    found.cloned()
}

/// The feed mark of a CD whose parent is `parent`, taken now: where the replay that would feed
/// it stands. Locks only the feeding CD, briefly, so call it before taking other CD locks.
pub(crate) fn feed_mark(parent: &Arc<Node>) -> Option<FeedMark> {
    if !parent.logging {
        return None;
    }
    let feeder = outermost_replaying(parent)?;
    let (generation, cursor) = feeder.lock().log.position()?;
    Some(FeedMark {
        feeder,
        generation,
        cursor,
    })
}

/// One step of resolving PARENT bytes through the ancestors: splits the `pending` ranges over
/// `ancestor`'s entries. Parts it saved (COPY) are handed to `saved`; parts it also takes from
/// its parent, or does not hold, are returned to try the next ancestor; a part it regenerates
/// is an error (descendants may not refer to regen entries).
pub(crate) fn resolve_through(
    ancestor: &State,
    pending: &[(usize, usize)],
    mut saved: impl FnMut(usize, usize) -> Result<()>,
) -> Result<Vec<(usize, usize)>> {
    let mut next = Vec::new();
    for &(s, e) in pending {
        let mut cursor = s;
        for (os, oe, entry) in ancestor.entries.overlapping(s, e) {
            if os > cursor {
                next.push((cursor, os));
            }
            match entry.how {
                How::Copy => saved(os, oe)?,
                How::Parent => next.push((os, oe)),
                How::Regen(_) => {
                    return Err(CdError::RegenAncestor {
                        address: os,
                        end: oe,
                    })
                }
            }
            cursor = oe;
        }
        if cursor < e {
            next.push((cursor, e));
        }
    }
    Ok(next)
}

/// The current offset of every file the CD monitors (what an advance records).
pub(crate) fn file_offsets(state: &State) -> Result<Vec<(i32, i64)>> {
    state
        .files
        .keys()
        .map(|&fd| Ok((fd, file_offset(fd)?)))
        .collect()
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
