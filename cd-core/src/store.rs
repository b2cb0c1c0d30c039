//! The CD store in memory: buffers of saved bytes and the segments that point into them (the
//! copies between application memory and a buffer are `copy`'s).
//!
//! Saved bytes are immutable while anyone else can see them. An advance copies the READ_WRITE
//! ranges into fresh buffers and swaps the segments only when every copy succeeded, which is
//! what makes advance atomic; the one write into a saved buffer is a differential advance's
//! patch, made at the swap into a buffer that only its CD holds, once nothing can fail
//! (`delta`). Splitting an entry (a partial promotion, a
//! partial delete) only splits segments that share the buffer (`Arc`), and commit moves
//! segments to the parent without copying a byte.
//!
//! Large buffers are mapped directly with transparent huge pages requested, so that filling a
//! fresh 1 GiB buffer costs 512 page faults rather than 262,144, and freed mappings go to a
//! pool for the next buffer of about the same size: within a budget any mapping, past it a
//! spare for each live buffer's next advance, so an advance loop reuses its buffers whatever
//! their sizes (`POOL`; the budget, and how the pool yields to `CD_MEMORY_LIMIT`, are
//! `memory`'s: the one pool policy). Every buffer is counted in `memory` while it lives; one
//! that would pass `CD_MEMORY_LIMIT` is refused before anything is allocated.

use crate::error::{CdError, Result};
use crate::fault;
use crate::interval::Piece;
use crate::memory::{self, Use};
use crate::space::{self, SavedSums};
use std::collections::BTreeMap;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

/// Buffers at least this large are mapped with huge pages instead of coming from the heap.
const MAP_THRESHOLD: usize = 2 << 20;
/// Huge page size used to align mapped buffers.
const HUGE_PAGE: usize = 2 << 20;

/// A fixed-size byte buffer of initialised (but unspecified) bytes, from the heap or, when
/// large, from a mapping with huge pages that returns to the pool when dropped.
pub(crate) struct Buffer {
    ptr: NonNull<u8>,
    len: usize,
    origin: Origin,
    /// When the buffer is the saved copy of one device range: its space's checksums of these
    /// bytes, for the range's next differential advance (`delta`). They travel with the bytes,
    /// so whatever replaces a CD's saved bytes (an add, a remap, a restore's discard) drops
    /// them too.
    pub(crate) sums: Option<SavedSums>,
}

enum Origin {
    /// Leaked from a `Box<[u8]>` of `len` bytes.
    Heap,
    /// A pooled mapping.
    Mapped(Mapping),
}

/// An anonymous mapping: `capacity` usable bytes at `ptr` (2 MiB aligned) inside the mapping
/// of `map_len` bytes at `base`.
struct Mapping {
    base: *mut libc::c_void,
    map_len: usize,
    ptr: NonNull<u8>,
    capacity: usize,
}

// SAFETY: a Mapping is exclusively owned memory; moving it between threads moves ownership.
unsafe impl Send for Mapping {}

// SAFETY: a Buffer exclusively owns its memory; shared access (`&Buffer`) only reads it and
// mutation needs `&mut Buffer`, exactly like `Box<[u8]>`.
unsafe impl Send for Buffer {}
// SAFETY: as above: `&Buffer` gives read-only access, so sharing it between threads is sound.
unsafe impl Sync for Buffer {}

/// Freed mappings kept for reuse: within the budget, and past it as spares.
///
/// Filling a fresh mapping costs a page fault (and the kernel zeroing a page) per page, which
/// halves the speed of a copy into it, and on a GPU a fresh (unpinned) buffer copies at a
/// fraction of the link's speed. CD codes save the same sizes over and over (an advance loop,
/// a child CD per iteration), so freed mappings are handed out again:
/// - **kept**: within the budget `memory::pool_budget` gives, any freed mapping;
/// - **spares**: past the budget, a mapping that can serve the next advance of a buffer alive
///   now. An advance fills a new buffer before it frees the old one, so each live buffer needs
///   at most one spare of its size class: the spares of a class never outnumber the live
///   buffers of that class, and their bytes never exceed the live mapped bytes. When buffers
///   go (a CD ends), the spares they no longer justify are unmapped at once.
///
/// So an advance loop over any number of CDs of any sizes reuses its buffers, while what the
/// pool holds past its budget stays bounded by the live store. When `CD_MEMORY_LIMIT` needs
/// room, spares are evicted first, then kept mappings, each oldest first (`evict_one`).
static POOL: Mutex<Pool> = Mutex::new(Pool {
    kept: Vec::new(),
    kept_bytes: 0,
    spares: Vec::new(),
    spare_bytes: 0,
    live: BTreeMap::new(),
    live_bytes: 0,
});

/// The pool's state (see [`POOL`]); every mapping in it is counted as `Use::Pool`.
struct Pool {
    /// Mappings within the budget, oldest first.
    kept: Vec<Mapping>,
    /// Their total capacity (at most the budget).
    kept_bytes: usize,
    /// Mappings past the budget with the size class they served, oldest first.
    spares: Vec<(usize, Mapping)>,
    /// Their total capacity (at most `live_bytes`).
    spare_bytes: usize,
    /// Mapped buffers alive now: how many of each size class.
    live: BTreeMap<usize, usize>,
    /// Their total capacity.
    live_bytes: usize,
}

/// The size class of a buffer of `len` bytes: the number of huge pages it spans. Every
/// mapping's capacity is a multiple of `HUGE_PAGE`, so a mapping that held `len` bytes is large
/// enough for any length of its class.
fn class(len: usize) -> usize {
    len.div_ceil(HUGE_PAGE)
}

/// Whether a mapping of `capacity` bytes may serve a buffer of `len` bytes: it is large enough
/// and wastes at most a quarter (plus the rounding to a huge page).
fn fits(capacity: usize, len: usize) -> bool {
    capacity >= len && capacity <= len.saturating_add(len / 4 + HUGE_PAGE)
}

impl Pool {
    /// The spares of size class `class`.
    fn spares_of(&self, class: usize) -> usize {
        self.spares.iter().filter(|(c, _)| *c == class).count()
    }

    /// Takes a mapping that fits `len` bytes: a spare if one fits, else a kept one; the
    /// smallest that fits, the oldest among equals.
    fn take(&mut self, len: usize) -> Option<Mapping> {
        let smallest = |capacities: &mut dyn Iterator<Item = usize>| {
            capacities
                .enumerate()
                .filter(|&(_, capacity)| fits(capacity, len))
                .min_by_key(|&(_, capacity)| capacity)
                .map(|(i, _)| i)
        };
        if let Some(i) = smallest(&mut self.spares.iter().map(|(_, m)| m.capacity)) {
            let (_, mapping) = self.spares.remove(i);
            self.spare_bytes -= mapping.capacity;
            return Some(mapping);
        }
        let i = smallest(&mut self.kept.iter().map(|m| m.capacity))?;
        let mapping = self.kept.remove(i);
        self.kept_bytes -= mapping.capacity;
        Some(mapping)
    }

    /// Counts a mapping of `capacity` bytes lent to a buffer of `len` bytes.
    fn lend(&mut self, len: usize, capacity: usize) {
        *self.live.entry(class(len)).or_default() += 1;
        self.live_bytes += capacity;
    }

    /// Takes back the mapping lent to a buffer of `len` bytes: kept within the budget, else a
    /// spare if a live buffer of its class may need it; the mappings to unmap (with the kind
    /// they were counted as) are pushed to `unmap`, to be unmapped once the lock is released.
    fn give_back(&mut self, mapping: Mapping, len: usize, unmap: &mut Vec<(Mapping, Use)>) {
        let class = class(len);
        self.live_bytes -= mapping.capacity;
        let live = match self.live.get_mut(&class) {
            Some(n) if *n > 1 => {
                *n -= 1;
                *n
            }
            _ => {
                self.live.remove(&class);
                0
            }
        };
        let budget = usize::try_from(memory::pool_budget()).unwrap_or(usize::MAX);
        if budget == 0 {
            unmap.push((mapping, Use::Store));
        } else if self.kept_bytes.saturating_add(mapping.capacity) <= budget {
            memory::moved(Use::Store, Use::Pool, mapping.capacity);
            self.kept_bytes += mapping.capacity;
            self.kept.push(mapping);
        } else if self.spares_of(class) < live
            && self.spare_bytes + mapping.capacity <= self.live_bytes
        {
            memory::moved(Use::Store, Use::Pool, mapping.capacity);
            self.spare_bytes += mapping.capacity;
            self.spares.push((class, mapping));
        } else {
            unmap.push((mapping, Use::Store));
        }
        // The buffer gone may leave spares that no live buffer needs: the oldest go.
        for _ in live..self.spares_of(class) {
            if let Some(i) = self.spares.iter().position(|(c, _)| *c == class) {
                let (_, spare) = self.spares.remove(i);
                self.spare_bytes -= spare.capacity;
                unmap.push((spare, Use::Pool));
            }
        }
        while self.spare_bytes > self.live_bytes && !self.spares.is_empty() {
            let (_, spare) = self.spares.remove(0);
            self.spare_bytes -= spare.capacity;
            unmap.push((spare, Use::Pool));
        }
    }

    /// Removes the mapping to unmap first when `CD_MEMORY_LIMIT` needs room: the oldest spare,
    /// else the oldest kept mapping.
    fn evict_one(&mut self) -> Option<Mapping> {
        if !self.spares.is_empty() {
            let (_, mapping) = self.spares.remove(0);
            self.spare_bytes -= mapping.capacity;
            return Some(mapping);
        }
        if self.kept.is_empty() {
            return None;
        }
        let mapping = self.kept.remove(0);
        self.kept_bytes -= mapping.capacity;
        Some(mapping)
    }
}

impl Mapping {
    fn new(capacity: usize) -> Option<Mapping> {
        let map_len = capacity.checked_add(HUGE_PAGE)?;
        // SAFETY: an anonymous private mapping with no address hint has no preconditions; the
        // result is checked against MAP_FAILED before use.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return None;
        }
        let aligned = base
            .cast::<u8>()
            .map_addr(|a| a.next_multiple_of(HUGE_PAGE));
        // SAFETY: `aligned .. aligned + capacity` lies inside the mapping just made (HUGE_PAGE
        // bytes of slack were mapped for the alignment). madvise is only a hint; its failure
        // (no THP support) is harmless and ignored.
        unsafe {
            libc::madvise(aligned.cast(), capacity, libc::MADV_HUGEPAGE);
        }
        // A device space may pin it on first use; it stays pinned while pooled.
        // Exposed: a device space takes the address back as a pointer to pin it.
        space::host_buffer_mapped(aligned.expose_provenance(), capacity);
        memory::count_mapping();
        Some(Mapping {
            base,
            map_len,
            ptr: NonNull::new(aligned)?,
            capacity,
        })
    }

    /// A mapping for a buffer of `len` bytes, counted as store bytes: from the pool if one
    /// fits, else fresh (rounded up to huge pages), evicting pooled mappings when
    /// `CD_MEMORY_LIMIT` needs the room; the limit's error if even that is not enough.
    fn lend(len: usize) -> Result<Mapping> {
        let pooled = {
            let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
            let mapping = pool.take(len);
            if let Some(m) = &mapping {
                pool.lend(len, m.capacity);
                memory::moved(Use::Pool, Use::Store, m.capacity);
            }
            mapping
        };
        if let Some(mapping) = pooled {
            return Ok(mapping);
        }
        let capacity = len
            .checked_next_multiple_of(HUGE_PAGE)
            .ok_or(CdError::OutOfMemory { bytes: len })?;
        loop {
            match memory::reserve(Use::Store, capacity) {
                Ok(()) => break,
                Err(e) => {
                    let victim = POOL.lock().unwrap_or_else(|e| e.into_inner()).evict_one();
                    match victim {
                        Some(m) => m.unmap(Use::Pool),
                        None => return Err(e),
                    }
                }
            }
        }
        let Some(mapping) = Mapping::new(capacity) else {
            memory::release(Use::Store, capacity);
            return Err(CdError::OutOfMemory { bytes: capacity });
        };
        POOL.lock()
            .unwrap_or_else(|e| e.into_inner())
            .lend(len, capacity);
        Ok(mapping)
    }

    /// Unmaps the mapping, counted as `kind` until now.
    fn unmap(self, kind: Use) {
        space::host_buffer_unmapped(self.ptr.as_ptr().expose_provenance(), self.capacity);
        memory::release(kind, self.capacity);
        // SAFETY: `base`/`map_len` are exactly the mapping made in `new`, unmapped once; no
        // Buffer points into it any more.
        unsafe {
            libc::munmap(self.base, self.map_len);
        }
    }

    /// Returns the mapping of a buffer of `len` bytes to the pool (see [`POOL`]: kept within
    /// the budget, else a spare if a live buffer may need it), or unmaps it.
    fn release(self, len: usize) {
        let mut unmap = Vec::new();
        POOL.lock()
            .unwrap_or_else(|e| e.into_inner())
            .give_back(self, len, &mut unmap);
        for (mapping, kind) in unmap {
            mapping.unmap(kind);
        }
    }
}

impl Buffer {
    /// Allocates `len` bytes, reporting failure instead of aborting. The contents are
    /// unspecified (zero or left over from an earlier buffer): callers overwrite them.
    pub(crate) fn new(len: usize) -> Result<Buffer> {
        fault::on_alloc()?;
        let oom = CdError::OutOfMemory { bytes: len };
        if len >= MAP_THRESHOLD {
            let mapping = Mapping::lend(len)?;
            return Ok(Buffer {
                ptr: mapping.ptr,
                len,
                origin: Origin::Mapped(mapping),
                sums: None,
            });
        }
        memory::reserve(Use::Store, len)?;
        let mut bytes = Vec::new();
        if bytes.try_reserve_exact(len).is_err() {
            memory::release(Use::Store, len);
            return Err(oom);
        }
        bytes.resize(len, 0);
        let ptr = NonNull::from(Box::leak(bytes.into_boxed_slice())).cast::<u8>();
        Ok(Buffer {
            ptr,
            len,
            origin: Origin::Heap,
            sums: None,
        })
    }

    /// The bytes.
    pub(crate) fn as_slice(&self) -> &[u8] {
        // SAFETY: `ptr` points to `len` initialised bytes (zeroed by the allocator or the
        // kernel, or written since) that this buffer owns for its whole life; `&self` forbids
        // concurrent mutation.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The bytes, mutably.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as in `as_slice`, and `&mut self` makes this the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        match std::mem::replace(&mut self.origin, Origin::Heap) {
            Origin::Heap => {
                // SAFETY: `ptr`/`len` came from `Box::leak` of a `Box<[u8]>` of exactly `len`
                // bytes, and are given back exactly once, here.
                unsafe {
                    drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                        self.ptr.as_ptr(),
                        self.len,
                    )));
                }
                memory::release(Use::Store, self.len);
            }
            Origin::Mapped(mapping) => mapping.release(self.len),
        }
    }
}

/// Host memory from the store for bytes a device space brings over outside a copy of
/// application memory (a differential copy's changed blocks, [`BlockPatch`](crate::BlockPatch)):
/// counted against `CD_MEMORY_LIMIT`, pooled, and, when large, announced to the device spaces
/// like every store buffer, so that a space pins it and copies into it at the link's speed.
pub struct StoreBytes(Buffer);

impl StoreBytes {
    /// `len` bytes of unspecified contents; an error (nothing allocated) past
    /// `CD_MEMORY_LIMIT` or when the memory cannot be had.
    pub fn new(len: usize) -> Result<StoreBytes> {
        Buffer::new(len).map(StoreBytes)
    }

    /// The bytes, to be written.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        self.0.as_mut_slice()
    }
}

impl AsRef<[u8]> for StoreBytes {
    fn as_ref(&self) -> &[u8] {
        self.0.as_slice()
    }
}

impl std::fmt::Debug for StoreBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StoreBytes({} B)", self.0.len)
    }
}

/// Saved data up to this size is kept in its entry (`node::Entry::inline`), without a buffer.
pub(crate) const INLINE: usize = 16;

/// Where the saved bytes of one interval of a CD's data map are: a shared buffer at an offset.
#[derive(Clone)]
pub(crate) struct Segment {
    buf: Arc<Buffer>,
    offset: usize,
}

impl Segment {
    /// A segment starting `offset` bytes into `buf`.
    pub(crate) fn new(buf: Arc<Buffer>, offset: usize) -> Self {
        Segment { buf, offset }
    }

    /// The `len` saved bytes of this segment.
    pub(crate) fn bytes(&self, len: usize) -> &[u8] {
        &self.buf.as_slice()[self.offset..self.offset + len]
    }

    /// The buffer and the offset in it.
    pub(crate) fn buffer(&self) -> (&Arc<Buffer>, usize) {
        (&self.buf, self.offset)
    }
}

impl Piece for Segment {
    fn skip(&self, by: usize) -> Self {
        Segment::new(Arc::clone(&self.buf), self.offset + by)
    }

    fn continues(&self, len: usize, next: &Self) -> bool {
        Arc::ptr_eq(&self.buf, &next.buf) && self.offset + len == next.offset
    }
}

impl std::fmt::Debug for Segment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Segment({:p}+{})", self.buf.ptr, self.offset)
    }
}

/// Saved bytes taken out of a CD to be written back after its lock is released: a store
/// segment, or the few bytes an entry holds inline (which spare the two allocations of a
/// buffer for the many tiny ranges of scalar variables).
#[derive(Clone, Debug)]
pub(crate) enum Saved {
    Stored(Segment),
    Inline([u8; INLINE]),
}

impl Saved {
    /// The `len` saved bytes.
    pub(crate) fn bytes(&self, len: usize) -> &[u8] {
        match self {
            Saved::Stored(segment) => segment.bytes(len),
            Saved::Inline(bytes) => &bytes[..len],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heap_and_mapped_buffers_are_writable_and_mappings_are_reused() {
        for len in [1, 4096, MAP_THRESHOLD, MAP_THRESHOLD + 3] {
            let mut b = Buffer::new(len).unwrap();
            assert_eq!(b.as_slice().len(), len);
            b.as_mut_slice()[len - 1] = 7;
            assert_eq!(b.as_slice()[len - 1], 7);
        }
        let first = Buffer::new(3 * MAP_THRESHOLD).unwrap();
        let address = first.as_slice().as_ptr();
        drop(first);
        let again = Buffer::new(3 * MAP_THRESHOLD - 100).unwrap();
        assert_eq!(
            again.as_slice().as_ptr(),
            address,
            "the freed mapping came back"
        );
    }

    #[test]
    fn huge_allocation_fails_cleanly() {
        assert!(matches!(
            Buffer::new(usize::MAX - 10),
            Err(CdError::OutOfMemory { .. })
        ));
        assert!(matches!(
            Buffer::new(1 << 60),
            Err(CdError::OutOfMemory { .. })
        ));
    }
}
