//! The per-CD MPI log: records in FIFO order in an arena of chunks, and a replay cursor.
//!
//! A rank logs a record per MPI call for as long as a CD is active, so a log is hot (one append per
//! call) and can grow large (every receive's data since the last advance). Records are therefore
//! not separate heap buffers: they are packed, each behind an 8-byte length header and padded to 8
//! bytes (so every record starts 8-byte aligned), into chunks that grow from 4 KiB to 1 MiB; a
//! record larger than a quarter of that gets a chunk of its own and the open chunk stays open for
//! the small records that follow. The blocks of a discarded log's heap chunks are kept (up to 64
//! MiB) for the next chunks, so a CD advanced every few iterations reuses warm memory instead of
//! faulting fresh pages in. A log is a list of segments, each a run of records in one chunk; a
//! commit or restore moves the child's segments (and chunks) to the parent without copying a byte,
//! like store segments do. The chunk a log writes into (its open chunk) passes from a parent to its
//! first child at creation and back at the merge, so a child per iteration does not leave a mostly
//! empty chunk behind each time.
//!
//! Four files, one job each: [`LogEntry`], the record other crates see (`entry`); the memory
//! records live in, heap or spill file (`chunk`); the lock-free lane a thread appends to and
//! its handshake, which the loom models check (`lane`); and here the [`Log`] itself: segments,
//! folding, merging, replay.
//!
//! The C API's `add_MPI_log_to_cd` hands over a `malloc`'d buffer that `get_MPI_log_from_cd`
//! must return as is (the spec: "MPI log entry originally provided by add_MPI_log_to_cd"), so
//! such an entry is kept as its own segment ([`LogEntry::new`]) instead of being copied.
//!
//! `restore_cd` moves the cursor to the first record; each read hands out the next one until
//! the log is exhausted, which ends the replay. Records stay in the log after they are handed
//! out: a second restore replays them again. Appending during a replay is an error (the spec's
//! rule), since the re-executing rank must consume its history before it makes new history.

use crate::error::{CdError, Result};
use chunk::{count_range, record_size, warn_spill_failed, Chunk, HEADER, NEVER};
use lane::{lock_free, OpenChunk};
use std::sync::Arc;

mod chunk;
mod entry;
mod lane;

pub use chunk::{
    log_spill_bytes, log_spill_file, log_spilled_total, set_log_spill_bytes, set_log_spill_dir,
    DEFAULT_LOG_SPILL, LOG_DIR_ENV, LOG_SPILL_ENV,
};
pub use entry::{LogEntry, LogPayload};
#[cfg(all(test, loom))]
pub(crate) use lane::LaneState;
pub(crate) use lane::{Attempt, Lane};

/// The first heap chunk of a log.
const MIN_CHUNK: usize = 4 << 10;
/// Heap chunks grow (doubling) up to this.
const MAX_HEAP_CHUNK: usize = 1 << 20;
/// The size of a spilled chunk (or of its one record, if larger).
const SPILL_CHUNK: usize = 16 << 20;
/// Heap records above this size get a chunk of their own.
const OWN_CHUNK: usize = MAX_HEAP_CHUNK / 4;
/// A replay drops the spilled pages it has passed in steps of this size.
const RELEASE_STEP: usize = 1 << 20;

/// A run of the log: records at `start .. end` of a chunk, or one entry of its own (`0 .. 1`).
struct Segment {
    start: usize,
    end: usize,
    backing: Backing,
}

/// Where a segment's records are: in a chunk of the log's arena, or in one entry of their own.
enum Backing {
    Arena(Arc<Chunk>),
    Entry(LogEntry),
}

/// A replay position: segment `seg`, at byte `off` of it (the end of a segment's range once
/// its records are consumed, so that records appended to it later are found).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Cursor {
    seg: usize,
    off: usize,
}

/// A CD's MPI log.
#[derive(Default)]
pub(crate) struct Log {
    segments: Vec<Segment>,
    open: Option<OpenChunk>,
    /// `Some` while replaying: the next record to hand out.
    cursor: Option<Cursor>,
    records: usize,
    /// Bytes of the records.
    bytes: usize,
    /// Bytes of the records in spilled chunks.
    spilled: usize,
    /// Bytes the CD's ancestors' logs held when it was created: they count toward the spill
    /// threshold, since this log merges into theirs.
    inherited: usize,
    /// Bumped when the log is discarded, so that replay positions taken before are not reused.
    generation: u64,
    /// The first call logged that cannot be replayed, if any.
    unreplayable: Option<&'static str>,
    /// The heap chunks of the interval last discarded ([`Log::clear`]), reused by this one: a
    /// CD advanced every few iterations logs about as much in each interval, and fresh memory
    /// would cost a page fault (and the kernel's zeroing) every 4 KiB. Chunks not reused by the
    /// time of the next discard are freed then, so this holds at most one interval's log.
    recycled: Vec<Chunk>,
    /// Records folded in (or merged from a log that had not counted them) since the CD's
    /// statistics last took the count ([`Log::fold`]).
    uncounted: usize,
}

impl Log {
    /// Appends an entry of its own (the spec's `add_MPI_log_to_cd`); refused while replaying.
    pub(crate) fn push(&mut self, entry: LogEntry) -> Result<()> {
        if self.cursor.is_some() {
            return Err(CdError::LogReplaying);
        }
        let len = entry.bytes().len();
        if len == 0 {
            return Err(CdError::EmptyLogEntry);
        }
        self.segments.push(Segment {
            start: 0,
            end: 1,
            backing: Backing::Entry(entry),
        });
        self.records += 1;
        self.uncounted += 1;
        self.bytes += len;
        Ok(())
    }

    /// Appends a record of `len` bytes written in place by `fill`; refused while replaying.
    pub(crate) fn append_with(&mut self, len: usize, fill: impl FnOnce(&mut [u8])) -> Result<()> {
        if self.cursor.is_some() {
            return Err(CdError::LogReplaying);
        }
        if len == 0 {
            return Err(CdError::EmptyLogEntry);
        }
        let need = record_size(len).ok_or(CdError::OutOfMemory { bytes: len })?;
        // Records the owner published without the lock come first.
        self.fold_lane();
        let room = self
            .open
            .as_ref()
            .filter(|o| o.lane.is_mine())
            .map_or(0, |o| o.lane.room());
        if need > OWN_CHUNK && room < need {
            let chunk = self.new_chunk(need, None)?;
            if chunk.is_spilled() {
                // A spill chunk has room for more: it becomes the lane.
                self.replace_open(Lane::new(chunk, 0));
            } else {
                // A heap chunk holds just this record: the lane stays for the next ones.
                let chunk = Arc::new(chunk);
                // SAFETY: the chunk is new and not shared yet; `need` fits (it was sized so).
                let record = unsafe { std::slice::from_raw_parts_mut(chunk.ptr.as_ptr(), need) };
                record[..HEADER].copy_from_slice(&(len as u64).to_le_bytes());
                fill(&mut record[HEADER..HEADER + len]);
                self.add_range(&chunk, 0, need, 1, len);
                return Ok(());
            }
        } else if room < need {
            let old_cap = self.open.as_ref().map(|o| o.lane.chunk.cap);
            let chunk = self.new_chunk(need, old_cap)?;
            self.replace_open(Lane::new(chunk, 0));
        }
        let lane = match &self.open {
            Some(open) => Arc::clone(&open.lane),
            None => unreachable!("a lane with room was just made"),
        };
        match lane.try_append(len, fill) {
            Attempt::Done => {}
            // The lane is this thread's, open and has room: only a panic in `fill` ends the
            // append otherwise, and it does not get here.
            Attempt::Refused(_) | Attempt::Orphaned(_) => unreachable!("own open lane"),
        }
        self.fold_lane();
        Ok(())
    }

    /// Makes `lane` the one this log appends to; the previous one closes (its records up to
    /// the seal folded first), and the room left in it is not used again.
    fn replace_open(&mut self, lane: Arc<Lane>) {
        self.close();
        self.open = Some(OpenChunk {
            lane,
            folded: 0,
            folded_tally: (0, 0),
        });
    }

    /// Moves the records published in the lane since the last fold into the segments; returns
    /// how many records the log gained since the last call (also by [`Log::append`] of a log
    /// that had not counted its own): for its CD's statistics. Cheap when nothing is new:
    /// one atomic load. Everyone who reads or restructures the log calls it first (the CD's
    /// lock does).
    pub(crate) fn fold(&mut self) -> usize {
        self.fold_lane();
        std::mem::take(&mut self.uncounted)
    }

    /// [`Log::fold`] without taking the count.
    /// The counts come from the lane's tally when the owner folds its open lane (the
    /// common case: the thread that logs also advances, commits and restores), else from
    /// the records' headers.
    fn fold_lane(&mut self) {
        if let Some(open) = &self.open {
            let (end, from) = (open.lane.end(), open.folded);
            if end > from {
                let chunk = Arc::clone(&open.lane.chunk);
                let (tally, before) = (open.lane.tally(), open.folded_tally);
                let (records, bytes) = match tally {
                    Some((records, bytes)) => {
                        let added = (records - before.0, bytes - before.1);
                        debug_assert_eq!(added, count_range(&chunk, from, end), "lane tally");
                        self.add_range(&chunk, from, end, added.0, added.1);
                        added
                    }
                    None => self.fold_range(&chunk, from, end),
                };
                if let Some(open) = &mut self.open {
                    open.folded = end;
                    open.folded_tally = (before.0 + records, before.1 + bytes);
                }
            }
        }
    }

    /// Adds the complete records at `from .. to` of `chunk` (written before, and published
    /// with a release store or under the lock) to the log, counting them from their headers;
    /// returns how many records and bytes they are.
    fn fold_range(&mut self, chunk: &Arc<Chunk>, from: usize, to: usize) -> (usize, usize) {
        let (records, bytes) = count_range(chunk, from, to);
        self.add_range(chunk, from, to, records, bytes);
        (records, bytes)
    }

    /// Adds `records` complete records of `bytes` bytes at `from .. to` of `chunk` to the log.
    fn add_range(
        &mut self,
        chunk: &Arc<Chunk>,
        from: usize,
        to: usize,
        records: usize,
        bytes: usize,
    ) {
        self.push_arena(chunk, from, to);
        self.records += records;
        self.uncounted += records;
        self.bytes += bytes;
        if chunk.is_spilled() {
            self.spilled += bytes;
            chunk::count_spilled(bytes);
        }
    }

    /// Closes the lane (sealing it, its records up to the seal folded) and lets it go.
    pub(crate) fn close(&mut self) {
        if let Some(open) = &self.open {
            open.lane.seal();
        }
        self.fold_lane();
        self.open = None;
    }

    /// The lane the calling thread may append to without the lock (see
    /// [`Lane::try_append`]): this log's, if the calling thread is its owner, it is open and
    /// the process allows lock-free appends.
    pub(crate) fn writer_lane(&self) -> Option<Arc<Lane>> {
        let open = self.open.as_ref()?;
        (lock_free() && open.lane.is_mine() && !open.lane.state.is_closed())
            .then(|| Arc::clone(&open.lane))
    }

    /// A chunk for a record of `need` bytes: in a file past the spill threshold, else on the
    /// heap, twice the size of the previous one (of `old_cap` bytes) up to 1 MiB.
    fn new_chunk(&mut self, need: usize, old_cap: Option<usize>) -> Result<Chunk> {
        let held = (self.inherited as u64).saturating_add(self.bytes as u64);
        let threshold = log_spill_bytes().unwrap_or(NEVER);
        if held >= threshold {
            match Chunk::file(need.max(SPILL_CHUNK)) {
                Ok(chunk) => return Ok(chunk),
                Err(e) => warn_spill_failed(&e),
            }
        }
        let grown = old_cap.map_or(MIN_CHUNK, |cap| cap.saturating_mul(2));
        let cap = grown.clamp(MIN_CHUNK, MAX_HEAP_CHUNK).max(need);
        match self.take_recycled(need, cap) {
            Some(chunk) => Ok(chunk),
            None => Chunk::heap(cap),
        }
    }

    /// The smallest recycled chunk with room for `need` bytes, preferring one of at least
    /// `cap` (the size a new one would get).
    fn take_recycled(&mut self, need: usize, cap: usize) -> Option<Chunk> {
        let best = self
            .recycled
            .iter()
            .enumerate()
            .filter(|(_, c)| c.cap >= need)
            .min_by_key(|(_, c)| (c.cap < cap, c.cap))
            .map(|(i, _)| i)?;
        Some(self.recycled.swap_remove(best))
    }

    /// Adds records `start .. end` of `chunk`, extending the last segment when they follow it.
    /// The chunk is cloned (an atomic increment) only for a new segment: most records extend
    /// the last one.
    fn push_arena(&mut self, chunk: &Arc<Chunk>, start: usize, end: usize) {
        if let Some(last) = self.segments.last_mut() {
            if let Backing::Arena(c) = &last.backing {
                if Arc::ptr_eq(c, chunk) && last.end == start {
                    last.end = end;
                    return;
                }
            }
        }
        self.segments.push(Segment {
            start,
            end,
            backing: Backing::Arena(Arc::clone(chunk)),
        });
    }

    /// The next record of the replay; `None` (and the replay ends) when exhausted or not
    /// replaying.
    pub(crate) fn next(&mut self) -> Option<LogEntry> {
        let mut cur = self.cursor?;
        while let Some(seg) = self.segments.get(cur.seg) {
            if cur.off < seg.end {
                let entry = match &seg.backing {
                    Backing::Entry(entry) => Some((entry.clone(), seg.end)),
                    Backing::Arena(chunk) => {
                        let mut header = [0; HEADER];
                        // SAFETY: a segment's range holds whole records, written before they
                        // were added to it; `cur.off` is the start of one of them.
                        header.copy_from_slice(unsafe { chunk.slice(cur.off, HEADER) });
                        let len = usize::try_from(u64::from_le_bytes(header)).unwrap_or(usize::MAX);
                        record_size(len)
                            .and_then(|size| cur.off.checked_add(size))
                            .filter(|&end| end <= seg.end)
                            .map(|end| {
                                let entry =
                                    LogEntry::arena(Arc::clone(chunk), cur.off + HEADER, len);
                                (entry, end)
                            })
                    }
                };
                if let Some((entry, next)) = entry {
                    if let Backing::Arena(chunk) = &seg.backing {
                        // What lies before this record, each time a step boundary is crossed
                        // (pages already dropped cost the kernel next to nothing).
                        if next / RELEASE_STEP > cur.off / RELEASE_STEP {
                            chunk.release(seg.start, cur.off);
                        }
                    }
                    cur.off = next;
                    self.cursor = Some(cur);
                    return Some(entry);
                }
            }
            if let Backing::Arena(chunk) = &seg.backing {
                chunk.release(seg.start, seg.end);
            }
            cur.seg += 1;
            cur.off = self.segments.get(cur.seg).map_or(0, |s| s.start);
        }
        self.cursor = None;
        None
    }

    /// Starts a replay from the first record (after `restore_cd`); an empty log has nothing
    /// to replay and does not start one. Returns whether a replay is in progress. The lane
    /// closes, whoever owns it: its owner's next append takes the lock, and fails while the
    /// replay lasts.
    pub(crate) fn start_replay(&mut self) -> bool {
        self.close();
        self.cursor = self.segments.first().map(|s| Cursor {
            seg: 0,
            off: s.start,
        });
        self.cursor.is_some()
    }

    /// Whether a replay is in progress.
    pub(crate) fn is_replaying(&self) -> bool {
        self.cursor.is_some()
    }

    /// The replay position, with the log's generation, while replaying.
    pub(crate) fn position(&self) -> Option<(u64, Cursor)> {
        self.cursor.map(|c| (self.generation, c))
    }

    /// Whether positions taken in `generation` still apply (the log was not discarded since).
    pub(crate) fn holds(&self, generation: u64) -> bool {
        generation == self.generation
    }

    /// Replays again from `cursor`, taken by [`Log::position`] in this generation of the
    /// log; returns whether a replay is now in progress. The lane closes, as for
    /// [`Log::start_replay`].
    pub(crate) fn rewind(&mut self, generation: u64, cursor: Cursor) -> bool {
        self.close();
        if generation == self.generation && cursor.seg < self.segments.len() {
            self.cursor = Some(cursor);
        }
        self.cursor.is_some()
    }

    /// Drops every record and any unreplayable mark, and ends any replay. The lane is kept:
    /// appends go on after its fill mark (records handed out stay valid). Records its owner
    /// publishes while another thread clears land before the clear (discarded) or after (kept),
    /// whole, as they would if the append had taken the lock.
    pub(crate) fn clear(&mut self) {
        self.fold_lane();
        let uncounted = self.uncounted;
        let open = self.open.take();
        let generation = self.generation.wrapping_add(1);
        // The chunks of the previous interval that this one did not reuse go; this interval's
        // heap chunks are kept for the next (a chunk still shared, by the open chunk or a
        // record handed out, is only released).
        let recycled = std::mem::take(&mut self.segments)
            .into_iter()
            .filter_map(|segment| match segment.backing {
                Backing::Arena(chunk) => Arc::try_unwrap(chunk).ok(),
                Backing::Entry(_) => None,
            })
            .filter(|chunk| !chunk.is_spilled())
            .collect();
        *self = Log {
            open,
            generation,
            recycled,
            uncounted,
            ..Log::default()
        };
    }

    /// Whether [`Log::append`]ing `later` is allowed: not into a log being replayed, unless
    /// `later` holds no records.
    ///
    /// Records published in `later`'s lane count: if another thread writes it, it is sealed
    /// here, so that no record can arrive between this check and the append.
    pub(crate) fn check_append(&self, later: &Log) -> Result<()> {
        let unfolded = later.open.as_ref().is_some_and(|o| {
            let end = if o.lane.is_mine() {
                o.lane.end()
            } else {
                o.lane.seal()
            };
            end > o.folded
        });
        if self.is_replaying() && (later.records > 0 || unfolded) {
            Err(CdError::LogReplaying)
        } else {
            Ok(())
        }
    }

    /// Appends a later log (a child's, merged on commit or restore) to this one, with its
    /// unreplayable mark. Chunks move, no record is copied. This log keeps its lane; if it has
    /// none, it takes `later`'s when the calling thread writes that one (a child committed by
    /// the thread that logged in it), so that the chunk fills on; any other lane of `later`
    /// closes. Callers check [`Log::check_append`] first where it applies.
    pub(crate) fn append(&mut self, mut later: Log) {
        self.fold_lane();
        if self.open.is_some() || later.open.as_ref().is_some_and(|o| !o.lane.is_mine()) {
            later.close();
        } else {
            later.fold_lane();
        }
        let mut segments = std::mem::take(&mut later.segments).into_iter();
        if let Some(first) = segments.next() {
            match first.backing {
                Backing::Arena(chunk) => self.push_arena(&chunk, first.start, first.end),
                backing => self.segments.push(Segment { backing, ..first }),
            }
        }
        self.segments.extend(segments);
        self.records += later.records;
        self.bytes += later.bytes;
        self.spilled += later.spilled;
        self.uncounted += later.uncounted;
        self.unreplayable = self.unreplayable.or(later.unreplayable);
        if self.open.is_none() {
            self.open = later.open.take();
        }
    }

    /// Hands the open chunk to a new child's log, with the size of this log (which the child's
    /// merges into), so that the child goes on filling it: when the calling thread (which the
    /// child's appends come from) writes it. Another thread's lane stays with this log.
    pub(crate) fn hand_down(&mut self, child: &mut Log) {
        self.fold_lane();
        if self.open.as_ref().is_some_and(|o| o.lane.is_mine()) {
            child.open = self.open.take();
        }
        child.inherited = self.inherited.saturating_add(self.bytes);
    }

    /// Records that the log holds a call that cannot be replayed (the first one is kept).
    pub(crate) fn mark_unreplayable(&mut self, call: &'static str) {
        self.unreplayable.get_or_insert(call);
    }

    /// The call that makes the log unreplayable, if any.
    pub(crate) fn unreplayable(&self) -> Option<&'static str> {
        self.unreplayable
    }

    /// The number of records.
    pub(crate) fn len(&self) -> usize {
        self.records
    }

    /// The total size of the records in bytes.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// The bytes of the records held in spilled (file) chunks.
    pub(crate) fn spilled(&self) -> usize {
        self.spilled
    }
}

#[cfg(test)]
mod tests {
    use super::chunk::ALIGN;
    use super::*;

    fn arena(log: &mut Log, bytes: &[u8]) -> Result<()> {
        log.append_with(bytes.len(), |b| b.copy_from_slice(bytes))
    }

    fn replay(log: &mut Log) -> Vec<Vec<u8>> {
        log.start_replay();
        std::iter::from_fn(|| log.next())
            .map(|e| e.bytes().to_vec())
            .collect()
    }

    #[test]
    fn fifo_replay_and_refusal_during_replay() {
        let mut log = Log::default();
        log.push(vec![1].into()).unwrap();
        arena(&mut log, &[2, 2]).unwrap();
        assert!(log.next().is_none(), "no replay before restore");
        log.start_replay();
        assert_eq!(log.push(vec![3].into()), Err(CdError::LogReplaying));
        assert_eq!(arena(&mut log, &[3]), Err(CdError::LogReplaying));
        assert_eq!(log.next().unwrap().bytes(), [1]);
        let two = log.next().unwrap();
        assert_eq!(two.bytes(), [2, 2]);
        assert_eq!(two.bytes().as_ptr().addr() % ALIGN, 0, "aligned");
        assert!(log.next().is_none());
        assert!(!log.is_replaying());
        arena(&mut log, &[3]).unwrap();
        assert_eq!(replay(&mut log), vec![vec![1], vec![2, 2], vec![3]]);
        assert_eq!(log.push(Vec::new().into()), Err(CdError::EmptyLogEntry));
        assert_eq!(arena(&mut log, &[]), Err(CdError::EmptyLogEntry));
        assert_eq!((log.len(), log.bytes()), (3, 4));
        let mut empty = Log::default();
        assert!(!empty.start_replay(), "nothing to replay");
    }

    #[test]
    fn records_span_chunks_and_merge_without_copies() {
        let mut parent = Log::default();
        let mut child = Log::default();
        arena(&mut parent, b"p0").unwrap();
        parent.hand_down(&mut child);
        let mut expected = vec![b"p0".to_vec()];
        for i in 0..3000u32 {
            // Sizes 1..=700 cross the first chunks' boundaries.
            let record = vec![i as u8; 1 + (i as usize * 7) % 700];
            arena(&mut child, &record).unwrap();
            expected.push(record);
        }
        assert!(child.segments.len() > 3, "several chunks");
        assert_eq!(child.segments.len(), {
            let mut chunks: Vec<*const Chunk> = child
                .segments
                .iter()
                .filter_map(|s| match &s.backing {
                    Backing::Arena(c) => Some(Arc::as_ptr(c)),
                    Backing::Entry(_) => None,
                })
                .collect();
            chunks.dedup();
            chunks.len()
        });
        let first = child.segments.first().map(|s| s.start).unwrap();
        assert_eq!(
            first,
            record_size(2).unwrap(),
            "the child filled on after p0"
        );
        parent.check_append(&child).unwrap();
        parent.append(child);
        arena(&mut parent, b"after").unwrap();
        expected.push(b"after".to_vec());
        assert_eq!(replay(&mut parent), expected);
        parent.start_replay();
        let mut refused = Log::default();
        arena(&mut refused, b"x").unwrap();
        assert_eq!(parent.check_append(&refused), Err(CdError::LogReplaying));
        parent.check_append(&Log::default()).unwrap();
    }

    #[test]
    fn rewind_and_generations() {
        let mut log = Log::default();
        for i in 1..=3u8 {
            arena(&mut log, &[i]).unwrap();
        }
        log.start_replay();
        assert_eq!(log.next().unwrap().bytes(), [1]);
        let (generation, at) = log.position().unwrap();
        assert_eq!(log.next().unwrap().bytes(), [2]);
        assert_eq!(log.next().unwrap().bytes(), [3]);
        assert!(log.next().is_none());
        arena(&mut log, &[4]).unwrap();
        assert!(log.rewind(generation, at));
        let rest: Vec<u8> = std::iter::from_fn(|| log.next())
            .map(|e| e.bytes()[0])
            .collect();
        assert_eq!(rest, [2, 3, 4]);
        log.mark_unreplayable("MPI_Put");
        log.mark_unreplayable("MPI_Get");
        assert_eq!(log.unreplayable(), Some("MPI_Put"));
        log.clear();
        assert_eq!(log.unreplayable(), None);
        arena(&mut log, &[5]).unwrap();
        assert!(!log.rewind(generation, at), "a position of a discarded log");
    }

    #[test]
    fn discarded_chunks_serve_the_next_interval_only() {
        let mut log = Log::default();
        // Enough records to fill several chunks past the open one, and one large record with
        // a chunk of its own.
        for i in 0..2000u32 {
            arena(&mut log, &[i as u8; 100]).unwrap();
        }
        arena(&mut log, &vec![7; OWN_CHUNK + 1]).unwrap();
        let used: Vec<usize> = log
            .segments
            .iter()
            .filter_map(|s| match &s.backing {
                Backing::Arena(c)
                    if !log
                        .open
                        .as_ref()
                        .is_some_and(|o| Arc::ptr_eq(c, &o.lane.chunk)) =>
                {
                    Some(c.ptr.as_ptr().addr())
                }
                _ => None,
            })
            .collect();
        log.clear();
        let kept: Vec<usize> = log.recycled.iter().map(|c| c.ptr.as_ptr().addr()).collect();
        assert!(!kept.is_empty());
        assert!(
            kept.iter().all(|p| used.contains(p)),
            "only this interval's chunks"
        );

        // The next interval writes into them (and reads back its own records, not old ones).
        for i in 0..2000u32 {
            arena(&mut log, &[(i + 1) as u8; 100]).unwrap();
        }
        arena(&mut log, &vec![9; OWN_CHUNK + 1]).unwrap();
        assert!(
            log.recycled.len() < kept.len(),
            "recycled chunks were reused"
        );
        let reused = log.segments.iter().any(|s| match &s.backing {
            Backing::Arena(c) => kept.contains(&c.ptr.as_ptr().addr()),
            Backing::Entry(_) => false,
        });
        assert!(reused);
        let records = replay(&mut log);
        assert_eq!(records.len(), 2001);
        for (i, r) in records[..2000].iter().enumerate() {
            assert_eq!(r, &vec![(i + 1) as u8; 100]);
        }
        assert_eq!(records[2000], vec![9; OWN_CHUNK + 1]);

        // A discard keeps the chunks of the interval just ended only.
        log.clear();
        let second = log.recycled.len();
        log.clear();
        assert!(log.recycled.len() <= second);
        assert!(log.recycled.is_empty(), "an empty interval keeps nothing");
    }
}
