//! The differential copy of a device range (issue 26): checksum fixed blocks on the GPU,
//! compare with the checksums of the saved copy, and bring only the changed blocks to the
//! host, gathered on the device into one buffer and moved in one transfer.
//!
//! # The checksum
//! Each block of [`DIFF_BLOCK`] bytes gets 128 bits: two 64-bit sums over its 64-bit words
//! `w_i` (`i` counted from the range's start) of `fmix64(w_i ^ (i K1 + seed))` and
//! `fmix64(rotl(w_i, 29) ^ (i K2 + !seed))`, `fmix64` being MurmurHash3's 64-bit finaliser
//! and `seed` drawn per process. Why that is enough:
//! - `fmix64` is a bijection, so a change to **one** word always changes both sums (the
//!   changed term differs, no other term moves): a single flipped bit or word is never missed.
//! - A change to several words is missed only if the terms' differences cancel in both
//!   sums at once. `fmix64` mixes every input bit into every output bit (avalanche), so for
//!   data not crafted against the per-process seed the two sums behave as independent random
//!   128 bits: about 2^-128 per changed block. At 10^6 advances of 8 GiB (1.3 * 10^11 block
//!   comparisons) that is ~10^-27, far below the rate of undetected memory errors.
//! - The word's position is keyed in, so moving or swapping words (a shifted array) changes
//!   the sums too.
//!
//! It is not a cryptographic hash: an adversary who knows the seed could forge a collision;
//! the threat here is accidental equality, not an attacker.
//!
//! It is cheap on the GPU (four 64-bit multiplies per 8 bytes, coalesced loads, one CTA per
//! block reducing in shared memory), so it runs near memory bandwidth: 8 GiB in a few ms on
//! an H100/H200, against about 150 ms to move them over PCIe gen5.
//!
//! # All or nothing
//! The comparison (`CudaSpace::compare`) does all the fallible work (the kernels, the
//! transfer) and writes nothing of the caller's. cd-core's advance takes it through
//! `DeviceMemory::changes` as a `cd_core::BlockPatch` (with a whole copy, when it says so,
//! going straight into a store buffer), checks every range's patch, and writes them only
//! when all succeeded (cd-core's module `delta`). For Rust callers
//! [`CudaMemory::changes`](crate::CudaMemory::changes) returns a [`Patch`] holding the
//! changed bytes (or the whole range) and the new checksums; [`Patch::apply`] writes them
//! into the saved copy and cannot fail. A caller saving several ranges takes every patch
//! first and applies them only when all succeeded.
//!
//! # Ordering and memory
//! The kernels, and the allocations they use, are queued on the legacy default stream, and the
//! call waits for them: like every copy of the space, a differential copy expects the
//! application's work on the range to be complete (no one writes it during the call). The
//! checksums, the list of changed blocks and the gather buffer come from the space's memory
//! pool of the asynchronous advance (`cuMemAllocFromPoolAsync`, freed in stream order), which
//! keeps them for the next call (up to half the range for the gather: more changed blocks
//! than that are copied whole); [`trim_snapshot_pool`](crate::trim_snapshot_pool) gives them
//! back. Where the gather buffer cannot be had, the range is copied whole. On the host the
//! gathered blocks land in store memory (cd-core's `StoreBytes`: pooled, and pinned on first
//! use like every store buffer), so the one transfer runs at the link's speed.
//!
//! # The switch
//! `CD_CUDA_DIFF=0` (or `off`, `no`, `false`) turns it off: every patch is then a full copy
//! with no checksums, and cd-core's advance copies device ranges whole, packed with the
//! others, as before the differential advance. Ranges whose start is not 8-byte aligned are
//! always copied in full.

use crate::driver::{DevPtr, Driver, Handle};
use crate::kernels::{self, Kernels};
use crate::{device_to_host, CudaSpace, Device};
use cd_core::{BlockPatch, Changes, SavedSums, StoreBytes};
use std::any::Any;
use std::sync::OnceLock;

/// The size of the blocks the differential copy compares and copies.
pub const DIFF_BLOCK: usize = 64 << 10;
/// The environment variable that turns the differential copy off (`0`, `off`, `no`,
/// `false`); read at each call.
pub const DIFF_ENV: &str = "CD_CUDA_DIFF";
/// Above this share of changed blocks (1 / `FULL_DIVISOR`), the whole range is copied
/// instead of gathered: the gather buffer and scatter would cost more than they save.
const FULL_DIVISOR: usize = 2;

/// Whether the differential copy is on ([`DIFF_ENV`]).
pub fn diff_enabled() -> bool {
    let setting = std::env::var(DIFF_ENV).unwrap_or_default();
    !["0", "off", "no", "false"].contains(&setting.trim().to_ascii_lowercase().as_str())
}

/// The per-process seed of the checksums.
fn seed() -> u64 {
    static SEED: OnceLock<u64> = OnceLock::new();
    *SEED.get_or_init(|| {
        use std::hash::BuildHasher;
        std::collections::hash_map::RandomState::new().hash_one(std::process::id())
    })
}

/// The checksums of a saved copy of one device range, block by block ([`DIFF_BLOCK`]);
/// empty (the default) when none are known, which makes the next patch a full copy.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockSums {
    device: usize,
    len: usize,
    sums: Vec<[u64; 2]>,
}

impl BlockSums {
    /// Whether these are checksums of `len` bytes at device address `device`.
    fn describe(&self, device: usize, len: usize) -> bool {
        !self.sums.is_empty() && self.device == device && self.len == len
    }

    /// The number of blocks (0 when no checksums are known).
    pub fn blocks(&self) -> usize {
        self.sums.len()
    }
}

/// What [`CudaMemory::changes`](crate::CudaMemory::changes) brought to the host: the changed
/// blocks (or the whole range) and the range's new checksums, to be written into the saved
/// copy by [`apply`](Self::apply).
pub struct Patch {
    len: usize,
    /// The changed blocks' indices, in order; `None` for the whole range.
    changed: Option<Vec<u64>>,
    /// The changed blocks packed (block `changed[j]` at `j * DIFF_BLOCK`, the last one maybe
    /// short: store memory, see [`Found`]), or the whole range.
    bytes: Box<dyn AsRef<[u8]> + Send>,
    sums: BlockSums,
}

impl std::fmt::Debug for Patch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Patch({:?})", self.report())
    }
}

/// What a differential copy did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiffReport {
    /// Blocks of the range.
    pub blocks: usize,
    /// Blocks copied (all of them for a full copy).
    pub changed: usize,
    /// Bytes moved from the device.
    pub bytes_copied: usize,
    /// Whether the whole range was copied (no checksums yet, too many changes, switched off,
    /// unaligned).
    pub full: bool,
}

impl Patch {
    /// What this patch holds.
    pub fn report(&self) -> DiffReport {
        let blocks = self.len.div_ceil(DIFF_BLOCK);
        DiffReport {
            blocks,
            changed: self.changed.as_ref().map_or(blocks, Vec::len),
            bytes_copied: (*self.bytes).as_ref().len(),
            full: self.changed.is_none(),
        }
    }

    /// Writes the patch into `saved` (the saved copy of the range) and its checksums into
    /// `sums`. `Err`, changing nothing, when `saved` is not the range's length; otherwise it
    /// cannot fail.
    pub fn apply(self, saved: &mut [u8], sums: &mut BlockSums) -> Result<DiffReport, String> {
        if saved.len() != self.len {
            return Err(format!(
                "a patch of {} bytes applied to {} bytes",
                self.len,
                saved.len()
            ));
        }
        let report = self.report();
        let bytes = (*self.bytes).as_ref();
        match &self.changed {
            None => saved.copy_from_slice(bytes),
            Some(changed) => scatter(saved, changed, bytes),
        }
        *sums = self.sums;
        Ok(report)
    }
}

/// Copies packed block `j` of `bytes` to block `changed[j]` of `saved`, on several threads
/// when there is much to copy.
fn scatter(saved: &mut [u8], changed: &[u64], bytes: &[u8]) {
    let mut blocks: Vec<Option<&mut [u8]>> = saved.chunks_mut(DIFF_BLOCK).map(Some).collect();
    let mut work: Vec<(&mut [u8], &[u8])> = changed
        .iter()
        .zip(bytes.chunks(DIFF_BLOCK))
        .filter_map(|(&k, from)| Some((blocks.get_mut(k as usize)?.take()?, from)))
        .collect();
    let threads = if bytes.len() < (32 << 20) {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
    };
    if threads == 1 {
        for (to, from) in work {
            to.copy_from_slice(from);
        }
        return;
    }
    let per = work.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        for part in work.chunks_mut(per) {
            scope.spawn(move || {
                for (to, from) in part.iter_mut() {
                    to.copy_from_slice(from);
                }
            });
        }
    });
}

/// Device memory from the space's snapshot pool, allocated and freed in order on the legacy
/// default stream.
struct Scratch<'a> {
    d: &'a Driver,
    blocks: Vec<DevPtr>,
}

impl Scratch<'_> {
    fn alloc(&mut self, pool: Handle, bytes: usize) -> Result<DevPtr, String> {
        let mut p: DevPtr = 0;
        // SAFETY: an out-pointer to a local; the space's pool; the legacy stream (NULL).
        self.d.check(
            unsafe {
                (self.d.mem_alloc_from_pool_async)(&mut p, bytes.max(1), pool, std::ptr::null_mut())
            },
            "cuMemAllocFromPoolAsync",
        )?;
        self.blocks.push(p);
        Ok(p)
    }
}

impl Drop for Scratch<'_> {
    fn drop(&mut self) {
        if self.blocks.is_empty() {
            return;
        }
        for &p in &self.blocks {
            // SAFETY: blocks allocated above; freed in stream order after the work queued on
            // the legacy stream, which is all the work that uses them.
            unsafe { (self.d.mem_free_async)(p, std::ptr::null_mut()) };
        }
        // Waited for, so that the memory is back in the pool when the call returns (a trim
        // right after gives it back, and no free is left queued behind a caller's advance);
        // the work before the frees is done already (its results were copied back).
        // SAFETY: the legacy stream (NULL).
        unsafe { (self.d.stream_synchronize)(std::ptr::null_mut()) };
    }
}

/// What comparing a range's checksums with a saved copy's found.
pub(crate) enum Found {
    /// Copy the range whole (no checksums of this range, switched off, unaligned, most blocks
    /// changed, no device memory for the gather), with its checksums now where known.
    Whole(Option<BlockSums>),
    /// The changed blocks, brought over: block `changed[j]` at `j * DIFF_BLOCK` of `bytes`,
    /// which is store memory (cd-core's [`StoreBytes`]): pooled, and pinned on first use like
    /// the store's buffers, so the transfer runs at the link's speed, not through staging.
    Blocks {
        changed: Vec<u64>,
        bytes: StoreBytes,
        sums: BlockSums,
    },
}

impl CudaSpace {
    /// The checksums of the `len` bytes at `src` now (`None` when switched off or unaligned).
    pub(crate) fn checksums(&self, src: usize, len: usize) -> Result<Option<BlockSums>, String> {
        if !diff_enabled() || !src.is_multiple_of(8) || len == 0 {
            return Ok(None);
        }
        self.with_device(src, |d, device| {
            let mut scratch = Scratch {
                d,
                blocks: Vec::new(),
            };
            sums_now(d, device, &mut scratch, src, len).map(Some)
        })
    }

    /// The patch that brings a saved copy of the `len` bytes at `src`, whose checksums are
    /// `old`, up to date: [`compare`](Self::compare), with the whole range copied to the host
    /// where it found that the whole range is to be copied.
    pub(crate) fn patch(&self, src: usize, len: usize, old: &BlockSums) -> Result<Patch, String> {
        match self.compare(src, len, old)? {
            Found::Blocks {
                changed,
                bytes,
                sums,
            } => Ok(Patch {
                len,
                changed: Some(changed),
                bytes: Box::new(bytes),
                sums,
            }),
            Found::Whole(sums) => {
                let mut bytes = vec![0u8; len];
                cd_core::DeviceMemory::copy_to_host(self, &mut bytes, src)?;
                Ok(Patch {
                    len,
                    changed: None,
                    bytes: Box::new(bytes),
                    sums: sums.unwrap_or_default(),
                })
            }
        }
    }

    /// Compares the checksums of the `len` bytes at `src` now with `old` (those of a saved copy)
    /// and brings the changed blocks over, gathered on the device (see the module's
    /// documentation); or says to copy the whole range, copying nothing itself.
    pub(crate) fn compare(&self, src: usize, len: usize, old: &BlockSums) -> Result<Found, String> {
        if !old.describe(src, len) || !diff_enabled() || !src.is_multiple_of(8) {
            return Ok(Found::Whole(self.checksums(src, len)?));
        }
        self.with_device(src, |d, device| {
            let mut scratch = Scratch {
                d,
                blocks: Vec::new(),
            };
            let sums = sums_now(d, device, &mut scratch, src, len)?;
            let changed: Vec<u64> = (0..sums.sums.len())
                .filter(|&k| sums.sums[k] != old.sums[k])
                .map(|k| k as u64)
                .collect();
            let changed_bytes: usize = changed
                .iter()
                .map(|&k| DIFF_BLOCK.min(len - k as usize * DIFF_BLOCK))
                .sum();
            let store = |n: usize| StoreBytes::new(n).map_err(|e| e.to_string());
            if changed.is_empty() {
                return Ok(Found::Blocks {
                    changed,
                    bytes: store(0)?,
                    sums,
                });
            }
            if changed_bytes > len / FULL_DIVISOR {
                return Ok(Found::Whole(Some(sums)));
            }
            // The gather needs device memory for the changed blocks: without it the whole
            // range is copied instead.
            let pool = device.snapshot_pool(d)?;
            let room = (|| {
                let list = scratch.alloc(pool, changed.len() * 8).ok()?;
                let packed = scratch.alloc(pool, changed.len() * DIFF_BLOCK).ok()?;
                Some((list, packed))
            })();
            let Some((list, packed)) = room else {
                return Ok(Found::Whole(Some(sums)));
            };
            // SAFETY: `list` holds changed.len() u64s; the synchronous copy runs after the
            // allocation queued on the legacy stream.
            d.check(
                unsafe { (d.memcpy_htod)(list, changed.as_ptr().cast(), changed.len() * 8) },
                "cuMemcpyHtoD",
            )?;
            let k = device.kernels(d)?;
            let words = (changed.len() * DIFF_BLOCK / 8) as u64;
            // SAFETY: cd_gather_blocks(dst, src, list, count, block_bytes, src_len) reads
            // the listed blocks of the range (all inside it) and writes count blocks of
            // `packed`, which holds them.
            unsafe {
                kernels::launch(
                    d,
                    k.gather,
                    kernels::grid(words),
                    std::ptr::null_mut(),
                    &[
                        packed,
                        src as u64,
                        list,
                        changed.len() as u64,
                        DIFF_BLOCK as u64,
                        len as u64,
                    ],
                )?;
            }
            // The gather runs on the legacy stream; the transfer below on the space's
            // streams, which are not ordered with it.
            // SAFETY: the legacy stream (NULL).
            d.check(
                unsafe { (d.stream_synchronize)(std::ptr::null_mut()) },
                "cuStreamSynchronize",
            )?;
            // The last block may be short: the packed bytes end with it.
            let mut bytes = store(changed_bytes)?;
            let to = bytes.as_mut_slice();
            let pinned = self.pinned(to.as_ptr(), to.len());
            device_to_host(d, device, to, packed as usize, pinned)?;
            Ok(Found::Blocks {
                changed,
                bytes,
                sums,
            })
        })
    }
}

/// The differential copy as cd-core's advance asks for it (`cd_core::DeviceMemory`'s
/// `block_sums` and `changes`): the checksums travel opaque ([`cd_core::SavedSums`]), the
/// changed blocks as a [`cd_core::BlockPatch`], which the advance writes into its saved copy.
impl CudaSpace {
    pub(crate) fn saved_sums(&self, src: usize, len: usize) -> Result<Option<SavedSums>, String> {
        Ok(self.checksums(src, len)?.map(|s| Box::new(s) as SavedSums))
    }

    pub(crate) fn core_changes(
        &self,
        src: usize,
        len: usize,
        saved: &(dyn Any + Send + Sync),
    ) -> Result<Changes, String> {
        let Some(old) = saved.downcast_ref::<BlockSums>() else {
            return Ok(Changes::Whole(self.saved_sums(src, len)?));
        };
        Ok(match self.compare(src, len, old)? {
            Found::Whole(sums) => Changes::Whole(sums.map(|s| Box::new(s) as SavedSums)),
            Found::Blocks {
                changed,
                bytes,
                sums,
            } => Changes::Blocks(BlockPatch {
                block: DIFF_BLOCK,
                changed,
                data: Box::new(bytes),
                sums: Box::new(sums),
            }),
        })
    }
}

/// Runs `cd_block_sums` over the range and brings the checksums to the host.
fn sums_now(
    d: &Driver,
    device: &mut Device,
    scratch: &mut Scratch<'_>,
    src: usize,
    len: usize,
) -> Result<BlockSums, String> {
    let blocks = len.div_ceil(DIFF_BLOCK);
    let pool = device.snapshot_pool(d)?;
    let out = scratch.alloc(pool, blocks * 16)?;
    let k = device.kernels(d)?;
    let words = (len / 8) as u64;
    // SAFETY: cd_block_sums(data, nwords, words_per_block, sums, seed) reads the range's
    // whole words (inside it) and writes 2 u64s per block of `out`, which holds them.
    unsafe {
        kernels::launch(
            d,
            k.block_sums,
            kernels::grid(words.div_ceil((DIFF_BLOCK / 8) as u64) * u64::from(kernels::THREADS)),
            std::ptr::null_mut(),
            &[src as u64, words, (DIFF_BLOCK / 8) as u64, out, seed()],
        )?;
    }
    // The kernel writes the blocks that hold a whole word; a last block of fewer than 8
    // bytes has none, and its checksum starts at zero here.
    let summed = words.div_ceil((DIFF_BLOCK / 8) as u64) as usize;
    let mut sums = vec![[0u64; 2]; blocks];
    if summed > 0 {
        // SAFETY: `sums` holds blocks >= summed entries of 16 writable bytes; the synchronous
        // copy on the legacy stream runs after the kernel queued there.
        d.check(
            unsafe { (d.memcpy_dtoh)(sums.as_mut_ptr().cast(), out, summed * 16) },
            "cuMemcpyDtoH",
        )?;
    }
    // A range whose length is not a multiple of 8 ends in bytes no word covers: its last
    // block's checksum gets the tail mixed in on the host, so a change there is seen too.
    let tail = len % 8;
    if tail != 0 {
        let mut bytes = [0u8; 8];
        // SAFETY: the range's last `tail` bytes into a local of 8.
        d.check(
            unsafe {
                (d.memcpy_dtoh)(
                    bytes.as_mut_ptr().cast(),
                    (src + len - tail) as DevPtr,
                    tail,
                )
            },
            "cuMemcpyDtoH",
        )?;
        let last = sums.last_mut().expect("a range of at least one byte");
        last[0] ^= u64::from_le_bytes(bytes).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ seed();
        last[1] ^= u64::from_le_bytes(bytes).rotate_left(29) ^ !seed();
    }
    Ok(BlockSums {
        device: src,
        len,
        sums,
    })
}

impl Device {
    /// The device's kernels, loaded on first use.
    fn kernels(&mut self, d: &Driver) -> Result<&Kernels, String> {
        if self.kernels.is_none() {
            self.kernels = Some(Kernels::load(d)?);
        }
        Ok(self.kernels.as_ref().expect("just loaded"))
    }

    /// The space's memory pool on this device (made with the snapshot machinery).
    fn snapshot_pool(&mut self, d: &Driver) -> Result<Handle, String> {
        Ok(self.snapshots(d)?.pool())
    }
}
