//! The per-CD MPI log: records in FIFO order in an arena of chunks, and a replay cursor.
//!
//! A rank logs a record per MPI call for as long as a CD is active, so a log is hot (one
//! append per call) and can grow large (every receive's data since the last advance). Records
//! are therefore not separate heap buffers: they are packed, each behind an 8-byte length
//! header and padded to 8 bytes (so every record starts 8-byte aligned), into chunks that grow
//! from 4 KiB to 1 MiB; a record larger than a quarter of that gets a chunk of its own and the
//! open chunk stays open for the small records that follow. The blocks of a discarded log's
//! heap chunks are kept (up to 64 MiB) for the next chunks, so a CD advanced every few
//! iterations reuses warm memory instead of faulting fresh pages in. A log is a list of segments, each a run of records in one chunk; a
//! commit or restore moves the child's segments (and chunks) to the parent without copying a
//! byte, like store segments do. The chunk a log writes into (its open chunk) passes from a
//! parent to its first child at creation and back at the merge, so a child per iteration does
//! not leave a mostly empty chunk behind each time.
//!
//! Past a size (`CD_MPI_LOG_SPILL`: default 256 MiB, `0` for every chunk, `never` for none;
//! what the CD's ancestors held when it was created counts too) a log puts new chunks (16 MiB,
//! or one record if larger) in files instead of the heap: each is created in
//! `$CD_MPI_LOG_DIR`, else `$TMPDIR`, else `/tmp`, unlinked at once, given its blocks
//! (`posix_fallocate`, so a full disk is an error now rather than a `SIGBUS` later) and
//! mapped. The file has no name from then on: the kernel frees it when the last record in it
//! is dropped, or when the process ends, however it ends. Heap memory then stays flat however
//! long the log grows, and so does the resident set: a full spilled chunk is dropped from it
//! (`MADV_DONTNEED`), its pages left to the kernel's page cache, written back and reclaimed
//! under pressure (on a tmpfs directory they are memory or swap: point `CD_MPI_LOG_DIR` at a
//! disk for very long logs). A replay reads them back through the mapping and drops what it
//! has passed from the resident set again, a MiB at a time. When no file can be made, the chunk comes from the heap and a
//! warning is logged once.
//!
//! The C API's `add_MPI_log_to_cd` hands over a `malloc`'d buffer that `get_MPI_log_from_cd`
//! must return as is (the spec: "MPI log entry originally provided by add_MPI_log_to_cd"), so
//! such an entry is kept as its own segment ([`LogEntry::new`]) instead of being copied.
//!
//! `restore_cd` moves the cursor to the first record; each read hands out the next one until
//! the log is exhausted, which ends the replay. Records stay in the log after they are handed
//! out: a second restore replays them again. Appending during a replay is an error (the spec's
//! rule), since the re-executing rank must consume its history before it makes new history.
//!
//! # Lock-free appends
//! Every logged MPI call appends a record, so the append must cost next to nothing: no mutex,
//! no atomic read-modify-write. Records therefore go into a [`Lane`]: the open chunk, written
//! by one thread, its *owner* (the thread that made it; a CD's arena records only ever come
//! from the thread whose active CD it is, its creator). The owner writes a record past the
//! lane's `published` end and then stores the new end with a release store. The log's segments
//! do not see the record yet: whoever locks the CD *folds* the published records in first
//! ([`Log::fold`], called by `Node::lock`), so every reader and every restructuring operation
//! (commit and merge, advance and discard, restore and replay, info, statistics,
//! `add_MPI_log_to_cd`) works on a log that holds every record published before it locked.
//! The owner keeps the lane in its thread-local state ([`Log::writer_lane`], taken under the
//! lock) and appends to it without validating its cache again: whatever would make that
//! append wrong drops the lane from the thread's state or seals it (see `active`, "The
//! lock-free append").
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
//! - *Moves.* The lane passes to a child at creation ([`Log::hand_down`]) and back to the
//!   parent at a merge ([`Log::append`]) only when the calling thread is its owner (then the
//!   owner's cache is dropped with the change of its CD stack); another thread's lane is
//!   sealed instead of moved.
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

use crate::error::{CdError, Result};
use crate::memory;
#[cfg(not(loom))]
use crate::primitive::sync::atomic::compiler_fence;
#[cfg(loom)]
use crate::primitive::sync::atomic::fence;
use crate::primitive::sync::atomic::AtomicUsize;
use crate::primitive::sync::{self, yield_now};
use std::io;
use std::path::PathBuf;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize as StdAtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// The environment variable that sets the spill threshold: bytes, with an optional `k`, `M` or
/// `G` suffix (powers of 1024); `0` spills every chunk, `never` none.
pub const LOG_SPILL_ENV: &str = "CD_MPI_LOG_SPILL";
/// The environment variable naming the directory of spilled log chunks (else `$TMPDIR`, else
/// `/tmp`).
pub const LOG_DIR_ENV: &str = "CD_MPI_LOG_DIR";
/// The spill threshold when `CD_MPI_LOG_SPILL` is not set: 256 MiB per log.
pub const DEFAULT_LOG_SPILL: u64 = 256 << 20;

/// The length header in front of every record.
const HEADER: usize = 8;
/// Records start at multiples of this.
const ALIGN: usize = 8;
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
/// The threshold value that means "never spill".
const NEVER: u64 = u64::MAX;

/// The bytes of one log entry, owned by the CD once added.
///
/// The C layer implements this for the `malloc`'d buffer it is handed (freed on drop); Rust
/// callers use `Vec<u8>`.
pub trait LogPayload: Send + Sync {
    /// The entry's bytes.
    fn bytes(&self) -> &[u8];
}

impl LogPayload for Vec<u8> {
    fn bytes(&self) -> &[u8] {
        self
    }
}

impl LogPayload for Box<[u8]> {
    fn bytes(&self) -> &[u8] {
        self
    }
}

/// One MPI log record: cheap to clone, immutable. It keeps the memory it points into alive
/// (its arena chunk, or the payload it was made from), so its bytes outlive the log.
#[derive(Clone)]
pub struct LogEntry(Repr);

#[derive(Clone)]
enum Repr {
    /// A record in an arena chunk: `len` bytes at `start`.
    Arena {
        chunk: Arc<Chunk>,
        start: usize,
        len: usize,
    },
    /// An entry added as a payload of its own.
    Payload(Arc<dyn LogPayload>),
}

impl LogEntry {
    /// Wraps a payload: the log keeps it as is (no copy), and [`LogEntry::bytes`] of every clone
    /// points into it.
    pub fn new(payload: impl LogPayload + 'static) -> Self {
        let len = payload.bytes().len();
        memory::charge(memory::Kind::Logs, len);
        LogEntry(Repr::Payload(Arc::new(Counted { payload, len })))
    }

    /// The entry's bytes (8-byte aligned for records written by `log_append*`).
    pub fn bytes(&self) -> &[u8] {
        match &self.0 {
            // SAFETY: `start .. start + len` is a record the log wrote before handing it out and
            // never writes again (appends only go past a lane's published end), inside the
            // chunk, which this entry keeps alive.
            Repr::Arena { chunk, start, len } => unsafe { chunk.slice(*start, *len) },
            Repr::Payload(payload) => payload.bytes(),
        }
    }
}

/// A handed-over entry, counted in the bytes the runtime holds in logs while it lives.
struct Counted<P> {
    payload: P,
    len: usize,
}

impl<P: LogPayload> LogPayload for Counted<P> {
    fn bytes(&self) -> &[u8] {
        self.payload.bytes()
    }
}

impl<P> Drop for Counted<P> {
    fn drop(&mut self) {
        memory::release(memory::Kind::Logs, self.len);
    }
}

impl From<Vec<u8>> for LogEntry {
    fn from(bytes: Vec<u8>) -> Self {
        LogEntry::new(bytes)
    }
}

impl std::fmt::Debug for LogEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LogEntry({} bytes)", self.bytes().len())
    }
}

/// A fixed block of initialised bytes (zeroed when new, old records when reused), 8-byte
/// aligned, from the heap or a mapped file.
pub(crate) struct Chunk {
    ptr: NonNull<u8>,
    cap: usize,
    /// The mapping of an unlinked file whose start is `ptr`, or `None` for a `Box<[u64]>` of
    /// `cap / 8` words leaked at `ptr`. Never dereferenced itself: it unmaps on drop.
    mapping: Option<memmap2::MmapMut>,
}

// SAFETY: a Chunk owns its memory. Bytes are written only by the owner of the chunk's lane,
// past its published end, which no reader reaches (or into a new chunk before it is shared),
// and read only below it, so sharing and sending chunks between threads is sound; the release
// store of the end and the fold's acquire load (then the log's mutex) order a write before the
// reads of the record (see the module docs).
unsafe impl Send for Chunk {}
// SAFETY: as above.
unsafe impl Sync for Chunk {}

impl Chunk {
    /// A heap chunk of `cap` bytes (a multiple of 8).
    fn heap(cap: usize) -> Result<Chunk> {
        if let Some(spare) = take_spare(cap) {
            return Ok(Chunk {
                ptr: spare.ptr,
                cap: spare.cap,
                mapping: None,
            });
        }
        let words = (cap / ALIGN).max(1);
        let layout = std::alloc::Layout::array::<u64>(words)
            .map_err(|_| CdError::OutOfMemory { bytes: cap })?;
        // SAFETY: a non-zero size. Zeroed memory, not written here: a large allocation comes
        // from fresh pages that stay out of the resident set until a record is written.
        let raw = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or(CdError::OutOfMemory { bytes: cap })?;
        let cap = words * ALIGN;
        // Counted until freed; a spare block (see `put_spare`) stays counted.
        memory::charge(memory::Kind::Logs, cap);
        Ok(Chunk {
            ptr,
            cap,
            mapping: None,
        })
    }

    /// A chunk of `cap` bytes in a new, unlinked file of the spill directory.
    fn file(cap: usize) -> io::Result<Chunk> {
        use std::os::unix::fs::OpenOptionsExt;
        use std::os::unix::io::AsRawFd;
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = spill_dir();
        let file = loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(format!("cd-mpi-log.{}.{n}", std::process::id()));
            match std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
            {
                Ok(file) => {
                    std::fs::remove_file(&path)?;
                    break file;
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        };
        let len = libc::off_t::try_from(cap).map_err(|_| io::ErrorKind::InvalidInput)?;
        // SAFETY: posix_fallocate on an open descriptor has no memory-safety preconditions.
        let status = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len) };
        if status != 0 {
            return Err(io::Error::from_raw_os_error(status));
        }
        // SAFETY: the file was created by this call and unlinked at once, so no other process
        // can open it and nothing else maps or truncates it: the mapping stays valid.
        let mut map = unsafe { memmap2::MmapMut::map_mut(&file)? };
        let ptr = NonNull::new(map.as_mut_ptr()).ok_or(io::ErrorKind::InvalidData)?;
        Ok(Chunk {
            ptr,
            cap,
            mapping: Some(map),
        })
    }

    fn is_spilled(&self) -> bool {
        self.mapping.is_some()
    }

    /// Drops the whole pages of `start .. end` of a spilled chunk from the resident set (see
    /// `OpenChunk`'s `Drop`); a no-op on the heap.
    fn release(&self, start: usize, end: usize) {
        const PAGE: usize = 4096;
        let (from, to) = (
            start.next_multiple_of(PAGE),
            end.min(self.cap) / PAGE * PAGE,
        );
        if self.is_spilled() && from < to {
            // SAFETY: `from .. to` lies inside the chunk's shared file mapping, which is
            // mapped while `self` lives. MADV_DONTNEED on a shared file mapping keeps the
            // contents and readers fault them back in. Failure is harmless and ignored.
            unsafe {
                libc::madvise(
                    self.ptr.as_ptr().add(from).cast(),
                    to - from,
                    libc::MADV_DONTNEED,
                );
            }
        }
    }

    /// The bytes at `start .. start + len`.
    ///
    /// # Safety
    /// The range must lie inside the chunk and have been written before (see `Send` above).
    unsafe fn slice(&self, start: usize, len: usize) -> &[u8] {
        // SAFETY: forwarded from the caller.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().add(start), len) }
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        if self.mapping.is_none() && !put_spare(self.ptr, self.cap) {
            let words = std::ptr::slice_from_raw_parts_mut(
                self.ptr.as_ptr().cast::<u64>(),
                self.cap / ALIGN,
            );
            // SAFETY: `ptr` and `cap` describe the `[u64]` array `Chunk::heap` allocated with
            // the global allocator (the layout a `Box<[u64]>` of that length has), whose last
            // reference this is.
            drop(unsafe { Box::from_raw(words) });
            memory::release(memory::Kind::Logs, self.cap);
        }
    }
}

/// A heap chunk's block, kept after its log was discarded.
struct Spare {
    ptr: NonNull<u8>,
    cap: usize,
}

// SAFETY: a spare block belongs to the cache alone (no chunk or entry points into it any
// more), so it may be handed to any thread.
unsafe impl Send for Spare {}

/// Blocks of discarded heap chunks, reused by new ones: a CD that advances every few
/// iterations would otherwise free its chunks and fault fresh pages in for the next interval.
static SPARES: Mutex<Vec<Spare>> = Mutex::new(Vec::new());
/// The most blocks kept, and the most bytes.
const SPARE_COUNT: usize = 256;
const SPARE_BYTES: usize = 64 << 20;

/// A spare block of at least `cap` bytes (and at most twice that), if one is kept.
fn take_spare(cap: usize) -> Option<Spare> {
    let mut spares = SPARES.lock().unwrap_or_else(|e| e.into_inner());
    let best = spares
        .iter()
        .enumerate()
        .filter(|(_, s)| s.cap >= cap && s.cap / 2 <= cap)
        .min_by_key(|(_, s)| s.cap)
        .map(|(i, _)| i)?;
    Some(spares.swap_remove(best))
}

/// Keeps a discarded heap chunk's block for reuse; `false` when the cache is full.
fn put_spare(ptr: NonNull<u8>, cap: usize) -> bool {
    let mut spares = SPARES.lock().unwrap_or_else(|e| e.into_inner());
    let held: usize = spares.iter().map(|s| s.cap).sum();
    if spares.len() >= SPARE_COUNT || held + cap > SPARE_BYTES {
        return false;
    }
    spares.push(Spare { ptr, cap });
    true
}

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

/// Whether lanes may be written without the log's lock: the process could register for
/// `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`, which a thread that seals another
/// thread's lane needs (see [`Lane::seal`]). Decided once, before the first lane exists.
#[cfg(not(loom))]
fn lock_free() -> bool {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    *REGISTERED.get_or_init(|| {
        if std::env::var_os("CD_MPI_LOG_LOCKED").is_some_and(|v| v == "1") {
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
fn lock_free() -> bool {
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
    chunk: Arc<Chunk>,
    /// The thread that writes into this lane ([`thread_token`]).
    owner: u64,
    /// Its published end, `closed` flag and seal.
    state: LaneState,
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
    fn new(chunk: Chunk, filled: usize) -> Arc<Lane> {
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
    fn tally(&self) -> Option<(usize, usize)> {
        (!self.state.is_closed() && self.is_mine()).then(|| {
            (
                self.records.load(Ordering::Relaxed),
                self.bytes.load(Ordering::Relaxed),
            )
        })
    }

    /// Whether the calling thread is this lane's writer.
    fn is_mine(&self) -> bool {
        self.owner == thread_token()
    }

    /// Bytes left past the published end (exact for the owner, a bound for others).
    fn room(&self) -> usize {
        self.chunk.cap - self.state.published()
    }

    /// Appends a record of `len` bytes written in place by `fill`, without a lock: for the
    /// owner thread only (the log's writer lane handed out by [`Log::writer_lane`]).
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
    fn seal(&self) -> usize {
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
    lane: Arc<Lane>,
    folded: usize,
    /// The lane's records and bytes up to `folded` (its [`Lane::tally`] there).
    folded_tally: (usize, usize),
}

impl Drop for OpenChunk {
    /// A lane leaving its log without being handed to another closes: its owner must not go
    /// on writing records that no log will fold.
    fn drop(&mut self) {
        self.lane.seal();
    }
}

/// The records at `from .. to` of `chunk` and their bytes, read from their headers.
/// `from .. to` must hold whole records written before (published with a release store that
/// the caller acquired, or under the lock), `from` the start of one of them.
fn count_range(chunk: &Chunk, from: usize, to: usize) -> (usize, usize) {
    let (mut at, mut records, mut bytes) = (from, 0, 0);
    while at < to {
        let mut header = [0; HEADER];
        // SAFETY: `from .. to` holds whole records written before (the caller's contract),
        // and `at` is the start of one of them.
        header.copy_from_slice(unsafe { chunk.slice(at, HEADER) });
        let len = u64::from_le_bytes(header) as usize;
        at += record_size(len).unwrap_or(usize::MAX - at);
        records += 1;
        bytes += len;
    }
    debug_assert_eq!(at, to, "records end at the published end");
    (records, bytes)
}

/// The header and padded bytes of a record of `len` bytes.
fn record_size(len: usize) -> Option<usize> {
    len.checked_next_multiple_of(ALIGN)?.checked_add(HEADER)
}

/// A run of the log: records at `start .. end` of a chunk, or one entry of its own (`0 .. 1`).
struct Segment {
    start: usize,
    end: usize,
    kind: Kind,
}

enum Kind {
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
            kind: Kind::Entry(entry),
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
            SPILLED_TOTAL.fetch_add(bytes as u64, Ordering::Relaxed);
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
            if let Kind::Arena(c) = &last.kind {
                if Arc::ptr_eq(c, chunk) && last.end == start {
                    last.end = end;
                    return;
                }
            }
        }
        self.segments.push(Segment {
            start,
            end,
            kind: Kind::Arena(Arc::clone(chunk)),
        });
    }

    /// The next record of the replay; `None` (and the replay ends) when exhausted or not
    /// replaying.
    pub(crate) fn next(&mut self) -> Option<LogEntry> {
        let mut cur = self.cursor?;
        while let Some(seg) = self.segments.get(cur.seg) {
            if cur.off < seg.end {
                let entry = match &seg.kind {
                    Kind::Entry(entry) => Some((entry.clone(), seg.end)),
                    Kind::Arena(chunk) => {
                        let mut header = [0; HEADER];
                        // SAFETY: a segment's range holds whole records, written before they
                        // were added to it; `cur.off` is the start of one of them.
                        header.copy_from_slice(unsafe { chunk.slice(cur.off, HEADER) });
                        let len = usize::try_from(u64::from_le_bytes(header)).unwrap_or(usize::MAX);
                        record_size(len)
                            .and_then(|size| cur.off.checked_add(size))
                            .filter(|&end| end <= seg.end)
                            .map(|end| {
                                let entry = LogEntry(Repr::Arena {
                                    chunk: Arc::clone(chunk),
                                    start: cur.off + HEADER,
                                    len,
                                });
                                (entry, end)
                            })
                    }
                };
                if let Some((entry, next)) = entry {
                    if let Kind::Arena(chunk) = &seg.kind {
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
            if let Kind::Arena(chunk) = &seg.kind {
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
            .filter_map(|segment| match segment.kind {
                Kind::Arena(chunk) => Arc::try_unwrap(chunk).ok(),
                Kind::Entry(_) => None,
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
            match first.kind {
                Kind::Arena(chunk) => self.push_arena(&chunk, first.start, first.end),
                kind => self.segments.push(Segment { kind, ..first }),
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

/// Bytes of records every log of the process has written to spill files.
static SPILLED_TOTAL: AtomicU64 = AtomicU64::new(0);

/// Bytes of MPI log records this process has written to spill files so far (all CDs, all
/// threads; records later discarded included).
pub fn log_spilled_total() -> u64 {
    SPILLED_TOTAL.load(Ordering::Relaxed)
}

fn spill_threshold() -> &'static AtomicU64 {
    static SPILL: OnceLock<AtomicU64> = OnceLock::new();
    SPILL.get_or_init(|| {
        let bytes = match std::env::var(LOG_SPILL_ENV) {
            Ok(text) => parse_size(&text).unwrap_or_else(|| {
                tracing::warn!(
                    "{LOG_SPILL_ENV}={text:?} is not a size (bytes with k, M or G, or \
                     \"never\"); using {DEFAULT_LOG_SPILL} bytes"
                );
                Some(DEFAULT_LOG_SPILL)
            }),
            Err(_) => Some(DEFAULT_LOG_SPILL),
        };
        AtomicU64::new(bytes.unwrap_or(NEVER))
    })
}

/// Parses a spill threshold: `Some(None)` for `never`, `None` if malformed.
fn parse_size(text: &str) -> Option<Option<u64>> {
    if text.trim().eq_ignore_ascii_case("never") {
        return Some(None);
    }
    crate::memory::parse_bytes(text).map(Some)
}

/// The spill threshold in bytes of one log (`None`: logs never spill). It comes from
/// `CD_MPI_LOG_SPILL` (read once) unless [`set_log_spill_bytes`] set it.
pub fn log_spill_bytes() -> Option<u64> {
    Some(spill_threshold().load(Ordering::Relaxed)).filter(|&b| b != NEVER)
}

/// Sets the spill threshold for chunks allocated from now on (`None`: never spill; `Some(0)`:
/// spill every chunk), overriding `CD_MPI_LOG_SPILL`.
pub fn set_log_spill_bytes(bytes: Option<u64>) {
    spill_threshold().store(bytes.unwrap_or(NEVER), Ordering::Relaxed);
}

static SPILL_DIR: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Sets the directory of spill files created from now on (`None`: back to `$CD_MPI_LOG_DIR`,
/// else `$TMPDIR`, else `/tmp`).
pub fn set_log_spill_dir(dir: Option<PathBuf>) {
    *SPILL_DIR.lock().unwrap_or_else(|e| e.into_inner()) = dir;
}

/// The directory where the next spill file goes.
fn spill_dir() -> PathBuf {
    if let Some(dir) = SPILL_DIR.lock().unwrap_or_else(|e| e.into_inner()).clone() {
        return dir;
    }
    [LOG_DIR_ENV, "TMPDIR"]
        .iter()
        .filter_map(std::env::var_os)
        .find(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from("/tmp"), PathBuf::from)
}

fn warn_spill_failed(e: &io::Error) {
    static WARNED: AtomicBool = AtomicBool::new(false);
    if !WARNED.swap(true, Ordering::Relaxed) {
        tracing::warn!(
            "cannot spill the MPI log to {}: {e}; keeping it in memory",
            spill_dir().display()
        );
    }
}

#[cfg(test)]
mod tests {
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
                .filter_map(|s| match &s.kind {
                    Kind::Arena(c) => Some(Arc::as_ptr(c)),
                    Kind::Entry(_) => None,
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
            .filter_map(|s| match &s.kind {
                Kind::Arena(c)
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
        let reused = log.segments.iter().any(|s| match &s.kind {
            Kind::Arena(c) => kept.contains(&c.ptr.as_ptr().addr()),
            Kind::Entry(_) => false,
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

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("0"), Some(Some(0)));
        assert_eq!(parse_size(" 12k "), Some(Some(12 << 10)));
        assert_eq!(parse_size("3M"), Some(Some(3 << 20)));
        assert_eq!(parse_size("2g"), Some(Some(2 << 30)));
        assert_eq!(parse_size("never"), Some(None));
        assert_eq!(parse_size(""), None);
        assert_eq!(parse_size("12x"), None);
        assert_eq!(parse_size("99999999999999G"), None);
    }
}
