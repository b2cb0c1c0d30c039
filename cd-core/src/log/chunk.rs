//! The memory records live in: chunks from the heap or from spill files, the cache of spare
//! heap blocks, the record format, and the spill settings.
//!
//! Past a size (`CD_MPI_LOG_SPILL`: default 256 MiB, `0` for every chunk, `never` for none;
//! what the CD's ancestors held when it was created counts too) a log puts new chunks (16 MiB,
//! or one record if larger) in files instead of the heap: each is created in
//! `$CD_MPI_LOG_DIR`, else `$TMPDIR`, else `/tmp` with no name (`tempfile`: `O_TMPFILE`, or
//! unlinked at once), given its blocks (`posix_fallocate`, so a full disk is an error now
//! rather than a `SIGBUS` later) and mapped. The kernel frees it when the last record in it is
//! dropped, or when the process ends, however it ends. Heap memory then stays flat however
//! long the log grows, and so does the resident set: a full spilled chunk is dropped from it
//! (`MADV_DONTNEED`), its pages left to the kernel's page cache, written back and reclaimed
//! under pressure (on a tmpfs directory they are memory or swap: point `CD_MPI_LOG_DIR` at a
//! disk for very long logs). A replay reads them back through the mapping and drops what it
//! has passed from the resident set again, a MiB at a time. When no file can be made, the
//! chunk comes from the heap and a warning is logged once.

use crate::error::{CdError, Result};
use crate::memory;
use std::io;
use std::path::PathBuf;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// The environment variable that sets the spill threshold: bytes, with an optional `k`, `M` or
/// `G` suffix (powers of 1024); `0` spills every chunk, `never` none.
pub const LOG_SPILL_ENV: &str = "CD_MPI_LOG_SPILL";
/// The environment variable naming the directory of spilled log chunks (else `$TMPDIR`, else
/// `/tmp`).
pub const LOG_DIR_ENV: &str = "CD_MPI_LOG_DIR";
/// The spill threshold when `CD_MPI_LOG_SPILL` is not set: 256 MiB per log.
pub const DEFAULT_LOG_SPILL: u64 = 256 << 20;

/// The length header in front of every record.
pub(super) const HEADER: usize = 8;
/// Records start at multiples of this.
pub(super) const ALIGN: usize = 8;
/// The threshold value that means "never spill".
pub(super) const NEVER: u64 = u64::MAX;

/// A fixed block of initialised bytes (zeroed when new, old records when reused), 8-byte
/// aligned, from the heap or a mapped file.
pub(crate) struct Chunk {
    pub(super) ptr: NonNull<u8>,
    pub(super) cap: usize,
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
    pub(super) fn heap(cap: usize) -> Result<Chunk> {
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
        memory::charge(memory::Use::Logs, cap);
        Ok(Chunk {
            ptr,
            cap,
            mapping: None,
        })
    }

    /// A chunk of `cap` bytes in a new file of the spill directory that has no name
    /// (`tempfile_in`: `O_TMPFILE`, or created and unlinked at once).
    pub(super) fn file(cap: usize) -> io::Result<Chunk> {
        use std::os::unix::io::AsRawFd;
        let file = tempfile::tempfile_in(spill_dir())?;
        let len = libc::off_t::try_from(cap).map_err(|_| io::ErrorKind::InvalidInput)?;
        // SAFETY: posix_fallocate on an open descriptor has no memory-safety preconditions.
        let status = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len) };
        if status != 0 {
            return Err(io::Error::from_raw_os_error(status));
        }
        // SAFETY: the file was created by this call and has no name, so no other process can
        // open it and nothing else maps or truncates it: the mapping stays valid.
        let mut map = unsafe { memmap2::MmapMut::map_mut(&file)? };
        let ptr = NonNull::new(map.as_mut_ptr()).ok_or(io::ErrorKind::InvalidData)?;
        Ok(Chunk {
            ptr,
            cap,
            mapping: Some(map),
        })
    }

    pub(super) fn is_spilled(&self) -> bool {
        self.mapping.is_some()
    }

    /// Drops the whole pages of `start .. end` of a spilled chunk from the resident set (see
    /// `OpenChunk`'s `Drop`); a no-op on the heap.
    pub(super) fn release(&self, start: usize, end: usize) {
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
    pub(super) unsafe fn slice(&self, start: usize, len: usize) -> &[u8] {
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
            memory::release(memory::Use::Logs, self.cap);
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

/// The records at `from .. to` of `chunk` and their bytes, read from their headers.
/// `from .. to` must hold whole records written before (published with a release store that
/// the caller acquired, or under the lock), `from` the start of one of them.
pub(super) fn count_range(chunk: &Chunk, from: usize, to: usize) -> (usize, usize) {
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
pub(super) fn record_size(len: usize) -> Option<usize> {
    len.checked_next_multiple_of(ALIGN)?.checked_add(HEADER)
}

/// Bytes of records every log of the process has written to spill files.
static SPILLED_TOTAL: AtomicU64 = AtomicU64::new(0);

/// Counts `bytes` of records written to spill files.
pub(super) fn count_spilled(bytes: usize) {
    SPILLED_TOTAL.fetch_add(bytes as u64, Ordering::Relaxed);
}

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

/// A new spill file, unnamed, in the spill directory (for another layer's log: the MPI
/// interposer's sender-side journal).
pub fn log_spill_file() -> io::Result<std::fs::File> {
    tempfile::tempfile_in(spill_dir())
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

pub(super) fn warn_spill_failed(e: &io::Error) {
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
