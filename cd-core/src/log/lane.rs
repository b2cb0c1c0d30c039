//! The lock-free lane a thread appends its records to, and its handshake with whoever takes it
//! out of service.
//!
//! Every logged MPI call appends a record, so the append must cost next to nothing: no mutex, no
//! atomic read-modify-write. Records therefore go into a [`Lane`]: the open chunk, written by one
//! thread, its *owner* (the thread that made it; a CD's arena records only ever come from the
//! thread whose active CD it is, its creator). The owner writes a record past the lane's
//! `published` end and then stores the new end with a release store. The log's segments do not see
//! the record yet: whoever locks the CD *folds* the published records in first
//! ([`Log::fold`](super::Log::fold), called by `Node::lock`), so every reader and every
//! restructuring operation (commit and merge, advance and discard, restore and replay, info,
//! statistics, `add_MPI_log_to_cd`) works on a log that holds every record published before it
//! locked. The owner keeps the lane in its thread-local state
//! ([`Log::writer_lane`](super::Log::writer_lane), taken under the lock) and appends to it without
//! validating its cache again: whatever would make that append wrong drops the lane from the
//! thread's state or seals it (see `active`, "The lock-free append").
//!
//! Why no record is lost, duplicated, reordered or written into memory someone else uses:
//! - *Order and uniqueness.* Only the owner stores `published`, and only forward; a fold moves
//!   `folded .. published` (whole records, read after an acquire load of `published`) into
//!   the segments and advances `folded`, under the log's lock. Records are folded once each,
//!   in the order they were written. A locked append (a new chunk, a large record, an entry
//!   added by another thread) folds first, so it comes after every record published before.
//! - *Memory.* The owner writes only past `published`, where no reader looks; the lane keeps
//!   its chunk alive (`Arc`), so neither a discard nor the chunk recycling of an advance can
//!   hand the memory to anyone while the owner may still write it.
//! - *Taking a lane out of service* while its owner may be appending on another thread (a
//!   restore of an ancestor retiring the CD, a commit or a restore merging its log into the
//!   parent, a replay starting on it or rewound, the lane replaced; a replay closes the lane
//!   also when the owner starts it, so that no append reaches a replayed log without the
//!   lock): [`Lane::seal`] sets `closed`, then (only when the caller is not the owner)
//!   issues `membarrier(PRIVATE_EXPEDITED)`, which acts as a full fence on every running
//!   thread, then reads `published` and records it as the seal. The owner, after its release
//!   store, reads `closed` (a compiler fence in between).
//!   That is the asymmetric form of Dekker's handshake: at least one side sees the other's
//!   store. If the owner sees `closed`, it waits for the seal and learns whether its record is
//!   below it (folded: the append succeeded, it happened before the operation) or past it
//!   (in no log: it appends the record again under the lock, into whatever the CD's log is
//!   now, which fails if the CD was retired, or is being replayed). If it does not see
//!   `closed`, the sealer's read saw its record, which is then folded. The bytes of a record
//!   past the seal are never folded, and a sealed lane's room is never given to another
//!   writer, so they are harmless. A lane leaving a log without being moved is sealed (the
//!   `Drop` of [`OpenChunk`]). Operations by the owner itself run between its appends, so they
//!   need no barrier, and neither do discards by anyone (`advance`, `delete_MPI_log_from_cd`):
//!   a record published during a discard on another thread lands whole before it (discarded)
//!   or after it (kept), as a locked append would.
//! - *Moves.* The lane passes to a child at creation ([`Log::hand_down`](super::Log::hand_down))
//!   and back to the parent at a merge ([`Log::append`](super::Log::append)) only when the calling
//!   thread is its owner (then the owner's cache is dropped with the change of its CD stack);
//!   another thread's lane is sealed instead of moved.
//! - *Counts.* Records are counted when folded (`Log::fold` returns how many), in the CD's
//!   statistics and the process's, not one atomic increment per record. The owner also
//!   keeps a running count of the lane's records and bytes (its *tally*, plain stores into
//!   fields only it writes, made before each `published` store); when the owner itself folds
//!   its open lane it takes the counts from the tally (the difference from the tally at the
//!   last fold, kept with `folded`) instead of reading every record's header again, which
//!   cost a cache miss per record once the interval's log had left the cache. The tally is
//!   exact then: the owner is not appending while it folds, and its last `published` store
//!   is its own. Anyone else, and the owner on a closed lane (whose tally may count a record
//!   written past the seal), reads the headers.
//!
//! Without `membarrier` (an old kernel, a seccomp filter) or with `CD_MPI_LOG_LOCKED=1`, the
//! owner appends under the lock every time, through the same lane.

use super::chunk::{record_size, Chunk, HEADER};
#[cfg(not(loom))]
use crate::primitive::sync::atomic::compiler_fence;
#[cfg(loom)]
use crate::primitive::sync::atomic::fence;
use crate::primitive::sync::atomic::AtomicUsize;
use crate::primitive::sync::{self, yield_now};
use std::sync::atomic::{AtomicU64, AtomicUsize as StdAtomicUsize, Ordering};
use std::sync::Arc;
#[cfg(not(loom))]
use std::sync::OnceLock;

/// A token naming the calling thread, unique for the life of the process (thread-local
/// addresses can be reused by a later thread; this cannot).
pub(crate) fn thread_token() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    #[cfg(not(loom))]
    thread_local! {
        static TOKEN: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }
    // Loom runs its threads on one OS thread: a token per loom thread, so that a lane's owner
    // in a model is the model thread that made it (and a sealer on another issues the barrier).
    #[cfg(loom)]
    loom::thread_local! {
        static TOKEN: std::cell::Cell<u64> = std::cell::Cell::new(0);
    }
    TOKEN
        .try_with(|t| {
            if t.get() == 0 {
                t.set(NEXT.fetch_add(1, Ordering::Relaxed));
            }
            t.get()
        })
        // A thread whose locals are being destroyed owns no lane: a token no lane has.
        .unwrap_or(0)
}

/// The environment variable that, set to `1`, makes every append take the log's lock.
#[cfg(not(loom))]
const LOG_LOCKED_ENV: &str = "CD_MPI_LOG_LOCKED";

/// Whether lanes may be written without the log's lock: the process could register for
/// `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`, which a thread that seals another
/// thread's lane needs (see [`Lane::seal`]). Decided once, before the first lane exists.
#[cfg(not(loom))]
pub(super) fn lock_free() -> bool {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    *REGISTERED.get_or_init(|| {
        if std::env::var_os(LOG_LOCKED_ENV).is_some_and(|v| v == "1") {
            return false;
        }
        // SAFETY: membarrier takes no pointers; registering has no effect but allowing the
        // expedited command later.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_membarrier,
                MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
                0,
                0,
            )
        };
        rc == 0
    })
}

/// In the loom models, always: the barrier is modelled (see the loom [`process_fence`]).
#[cfg(loom)]
pub(super) fn lock_free() -> bool {
    true
}

#[cfg(not(loom))]
const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
#[cfg(not(loom))]
const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;

/// A full memory barrier on every running thread of the process (`membarrier`): the heavy
/// side of the asymmetric handshake of [`Lane::seal`]; the writer's side is a compiler fence.
#[cfg(not(loom))]
fn process_fence() {
    // SAFETY: as in `lock_free`; the process registered (lanes are written without the lock
    // only then, and this is called only then).
    let rc = unsafe { libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) };
    // Registered at start, so it cannot fail (EINVAL/EPERM only without registration).
    debug_assert_eq!(rc, 0, "membarrier after registration");
}

/// In the loom model, a `SeqCst` fence. `membarrier` runs a full barrier on every CPU running
/// a thread of the process, so on the owner's CPU between its `published` store and `closed`
/// load if the seal falls between them (the compiler fence keeps them in that order in the
/// code), else before the store or after the load: together with the owner's compiler fence
/// that is what a `SeqCst` fence on each side gives (see [`writer_fence`]). Loom cannot model
/// the system call itself: the models check the handshake given that equivalence.
#[cfg(loom)]
fn process_fence() {
    crate::primitive::sync::atomic::fence(Ordering::SeqCst);
}

/// The owner's side of the handshake of [`LaneState::seal`], between its `published` store
/// and `closed` load: a compiler fence (the sealer's `membarrier` orders them at run time); in
/// the loom model a `SeqCst` fence (see the loom [`process_fence`]).
#[inline(always)]
fn writer_fence() {
    #[cfg(not(loom))]
    compiler_fence(Ordering::SeqCst);
    #[cfg(loom)]
    fence(Ordering::SeqCst);
}

/// A lane's handshake state: where its records end, whether it is closed, its seal. A type of
/// its own so that the loom model (`tests/loom.rs`) runs this very code; [`Lane`] holds the
/// chunk and the owner and calls these methods.
pub(crate) struct LaneState {
    /// The end of the complete records: stored (release) by the owner after each record.
    published: AtomicUsize,
    /// Set by whoever takes the lane out of service; the owner checks it after publishing.
    closed: sync::atomic::AtomicBool,
    /// The final end, once sealed (`usize::MAX` before): records past it are not in any log.
    sealed: AtomicUsize,
}

impl LaneState {
    pub(crate) fn new(filled: usize) -> LaneState {
        LaneState {
            published: AtomicUsize::new(filled),
            closed: sync::atomic::AtomicBool::new(false),
            sealed: AtomicUsize::new(usize::MAX),
        }
    }

    /// The published end (exact for the owner, a bound for others).
    #[inline]
    pub(crate) fn published(&self) -> usize {
        self.published.load(Ordering::Relaxed)
    }

    /// Whether the lane was closed (the owner's check before it writes a record).
    #[inline]
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Relaxed)
    }

    /// The owner's side: publishes the records up to `end` (written before), then checks for
    /// a seal. Whether the record ending at `end` is in the log: `false` when it lies past the
    /// seal (orphaned).
    #[inline]
    pub(crate) fn publish(&self, end: usize) -> bool {
        self.published.store(end, Ordering::Release);
        // The light side of the handshake with `seal`: the store above must not move past
        // the load below at compile time; at run time `seal`'s `membarrier` orders them.
        writer_fence();
        if !self.closed.load(Ordering::Relaxed) {
            return true;
        }
        end <= self.wait_sealed()
    }

    /// The seal, waiting for the thread sealing the lane to finish (it does not wait for
    /// anything itself).
    #[cold]
    fn wait_sealed(&self) -> usize {
        loop {
            let sealed = self.sealed.load(Ordering::Acquire);
            if sealed != usize::MAX {
                return sealed;
            }
            yield_now();
        }
    }

    /// Closes the lane and returns its final end (see [`Lane::seal`]); `barrier`, asked
    /// only when the lane was not sealed yet: whether the owner may be appending on another
    /// thread right now, so that the process-wide barrier is needed.
    pub(crate) fn seal(&self, barrier: impl FnOnce() -> bool) -> usize {
        let sealed = self.sealed.load(Ordering::Acquire);
        if sealed != usize::MAX {
            return sealed;
        }
        self.closed.store(true, Ordering::Relaxed);
        if barrier() {
            process_fence();
        }
        let end = self.published.load(Ordering::Acquire);
        self.sealed.store(end, Ordering::Release);
        end
    }

    /// The end of the records to fold now: the seal, or else the published end.
    #[inline]
    pub(crate) fn end(&self) -> usize {
        match self.sealed.load(Ordering::Acquire) {
            usize::MAX => self.published.load(Ordering::Acquire),
            sealed => sealed,
        }
    }
}

/// The chunk one thread appends to: records up to `published` are complete and may be folded
/// into a log by anyone holding that log's lock; past it only the owner thread writes, without
/// a lock (see the module docs, "Lock-free appends").
pub(crate) struct Lane {
    pub(super) chunk: Arc<Chunk>,
    /// The thread that writes into this lane ([`thread_token`]).
    owner: u64,
    /// Its published end, `closed` flag and seal.
    pub(super) state: LaneState,
    /// Records written into the lane so far and their bytes, counted by the owner as it
    /// writes them (before publishing): a fold by the owner takes its counts from here instead
    /// of reading every record's header again (see [`Lane::tally`]).
    records: StdAtomicUsize,
    bytes: StdAtomicUsize,
}

/// What [`Lane::try_append`] did.
pub(crate) enum Attempt<F> {
    /// The record is in the lane, published.
    Done,
    /// Nothing was written (no room, or the lane was closed): `fill` is given back.
    Refused(F),
    /// The record was written, but the lane was sealed before it: these are its bytes, to
    /// append again elsewhere.
    Orphaned(Vec<u8>),
}

impl Lane {
    pub(super) fn new(chunk: Chunk, filled: usize) -> Arc<Lane> {
        Arc::new(Lane {
            chunk: Arc::new(chunk),
            owner: thread_token(),
            state: LaneState::new(filled),
            records: StdAtomicUsize::new(0),
            bytes: StdAtomicUsize::new(0),
        })
    }

    /// The records written into the lane and their bytes, exact at the published end: when
    /// the calling thread is the owner (which writes them, and is not appending while it
    /// folds) and the lane is open (a lane sealed by another thread may hold a record past
    /// the seal that these count). `None` otherwise: the fold reads the records' headers.
    pub(super) fn tally(&self) -> Option<(usize, usize)> {
        (!self.state.is_closed() && self.is_mine()).then(|| {
            (
                self.records.load(Ordering::Relaxed),
                self.bytes.load(Ordering::Relaxed),
            )
        })
    }

    /// Whether the calling thread is this lane's writer.
    pub(super) fn is_mine(&self) -> bool {
        self.owner == thread_token()
    }

    /// Bytes left past the published end (exact for the owner, a bound for others).
    pub(super) fn room(&self) -> usize {
        self.chunk.cap - self.state.published()
    }

    /// Appends a record of `len` bytes written in place by `fill`, without a lock: for the owner
    /// thread only (the log's writer lane handed out by
    /// [`Log::writer_lane`](super::Log::writer_lane)).
    #[inline]
    pub(crate) fn try_append<F: FnOnce(&mut [u8])>(&self, len: usize, fill: F) -> Attempt<F> {
        debug_assert!(self.is_mine(), "a lane is written by its owner only");
        let at = self.state.published();
        let need = match record_size(len) {
            Some(need) if len > 0 && need <= self.chunk.cap - at => need,
            _ => return Attempt::Refused(fill),
        };
        if self.state.is_closed() {
            return Attempt::Refused(fill);
        }
        // SAFETY: `at .. at + need` lies inside the chunk (checked above), which `self` keeps
        // alive. Only the owner (this thread) writes past `published`, and no one reads there:
        // folds stop at `published` (or at the seal, never past it), and a sealed lane's room is
        // never handed to another writer. So no other reference to these bytes exists.
        let record =
            unsafe { std::slice::from_raw_parts_mut(self.chunk.ptr.as_ptr().add(at), need) };
        record[..HEADER].copy_from_slice(&(len as u64).to_le_bytes());
        fill(&mut record[HEADER..HEADER + len]);
        // Only this thread writes these: plain loads and stores, no read-modify-write.
        let records = self.records.load(Ordering::Relaxed);
        self.records.store(records + 1, Ordering::Relaxed);
        let bytes = self.bytes.load(Ordering::Relaxed);
        self.bytes.store(bytes + len, Ordering::Relaxed);
        if self.state.publish(at + need) {
            Attempt::Done
        } else {
            Attempt::Orphaned(record[HEADER..HEADER + len].to_vec())
        }
    }

    /// Takes the lane out of service and returns its final end: every record the owner
    /// completed before is below it, and the owner learns of any record past it (its
    /// `try_append` returns it as orphaned). Idempotent. Call with the lock of the log that
    /// holds the lane.
    ///
    /// The handshake: the owner stores `published`, then loads `closed`; this stores
    /// `closed`, then (when the owner is another thread and may be appending right now)
    /// issues a process-wide barrier, then loads `published`. The barrier orders the owner's
    /// store and load as a full fence would, so at least one side sees the other's store:
    /// either this load sees the record, or the owner sees `closed` and waits for the seal.
    pub(super) fn seal(&self) -> usize {
        self.state.seal(|| !self.is_mine() && lock_free())
    }

    /// The end of the records to fold now: the seal, or else the published end.
    pub(crate) fn end(&self) -> usize {
        self.state.end()
    }
}

impl Drop for Lane {
    /// A spilled chunk that is no longer written to leaves the process's resident set: its
    /// pages stay in the file (the page cache, written back and reclaimed by the kernel) and are
    /// read again on demand, so a long log keeps neither heap nor resident memory growing.
    fn drop(&mut self) {
        let filled = self.state.published().min(self.chunk.cap);
        if self.chunk.is_spilled() && filled > 0 {
            // SAFETY: `ptr .. ptr + filled` lies inside the chunk's shared file mapping, which
            // is still mapped (the Arc keeps it). MADV_DONTNEED on a shared file mapping keeps
            // the contents (dirty pages go to the page cache) and readers fault them back in,
            // so concurrent readers see the same bytes. Failure is harmless and ignored.
            unsafe {
                libc::madvise(self.chunk.ptr.as_ptr().cast(), filled, libc::MADV_DONTNEED);
            }
        }
    }
}

/// A log's hold on the lane it appends to: its records up to `folded` are in the log's
/// segments already.
pub(crate) struct OpenChunk {
    pub(super) lane: Arc<Lane>,
    pub(super) folded: usize,
    /// The lane's records and bytes up to `folded` (its [`Lane::tally`] there).
    pub(super) folded_tally: (usize, usize),
}

impl Drop for OpenChunk {
    /// A lane leaving its log without being handed to another closes: its owner must not go
    /// on writing records that no log will fold.
    fn drop(&mut self) {
        self.lane.seal();
    }
}
