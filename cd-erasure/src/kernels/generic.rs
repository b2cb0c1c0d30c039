//! The bulk loops, written once for every vector width.
//!
//! Each architecture module implements [`Vector`] (load, store, XOR) for its
//! register types, and [`NibbleVector`] (a 16-entry byte shuffle) where the
//! split-nibble multiply applies. A [`Multiplier`] turns one vector of bytes
//! into their products with a fixed constant: [`SplitNibble`] does it with two
//! shuffles, the GFNI path with one affine instruction. The loops below are
//! generic over both, so SSSE3, AVX2, GFNI and NEON share one body each.
//!
//! Nothing here carries `#[target_feature]`: everything is
//! `#[inline(always)]`, so it is compiled into the `#[target_feature]`
//! wrapper that calls it and gets that wrapper's instruction set (the
//! pattern of memchr's `Vector`). That is also why every function is
//! `unsafe`: calling one outside such a wrapper, on a CPU without the
//! instructions, would be undefined behaviour.

use super::portable;

/// How far ahead of the loop the next cache lines are prefetched, in bytes.
///
/// The hardware prefetchers alone leave a single core short of the memory
/// bandwidth on the split-nibble path (about 5.8 against 6.8 GB/s for 256 MiB
/// on the development machine); 1 to 2 KiB ahead closes the gap. See
/// `docs/bench-kernels.md`.
const PREFETCH_AHEAD: usize = 2048;

/// Cache line size assumed for prefetching.
const LINE: usize = 64;

/// Prefetches the lines `PREFETCH_AHEAD` bytes after `p + i`, one per
/// `LINE` of the `bytes` the loop consumes in one iteration.
///
/// # Safety
///
/// The CPU must support `V`. No pointer is dereferenced, and the addresses
/// are formed with `wrapping_add`, so they may lie past the buffer.
#[inline(always)]
unsafe fn prefetch_ahead<V: Vector>(p: *const u8, i: usize, bytes: usize) {
    let mut o = 0;
    while o < bytes {
        // SAFETY: the caller guarantees the CPU supports `V`; a prefetch
        // never faults.
        unsafe { V::prefetch(p.wrapping_add(i + PREFETCH_AHEAD + o)) };
        o += LINE;
    }
}

/// A SIMD register of bytes.
///
/// # Safety
///
/// Implementations must be `#[inline(always)]` and must not use
/// `#[target_feature]`, so they inherit the features of their caller.
/// `BYTES` must be the exact register width: the loops trust it for bounds.
pub(crate) unsafe trait Vector: Copy {
    /// Register width in bytes.
    const BYTES: usize;

    /// Loads `BYTES` bytes from `p`, which need not be aligned.
    ///
    /// # Safety
    ///
    /// `p..p + BYTES` must be readable, and the CPU must support the
    /// instructions of the implementation.
    unsafe fn load_unaligned(p: *const u8) -> Self;

    /// Stores `BYTES` bytes to `p`, which need not be aligned.
    ///
    /// # Safety
    ///
    /// `p..p + BYTES` must be writable, and the CPU must support the
    /// instructions of the implementation.
    unsafe fn store_unaligned(self, p: *mut u8);

    /// Byte-wise XOR.
    ///
    /// # Safety
    ///
    /// The CPU must support the instructions of the implementation.
    unsafe fn xor(self, other: Self) -> Self;

    /// Hints that the cache line at `p` will be read soon. `p` may point
    /// anywhere (even past the buffer): a prefetch never faults. The default
    /// does nothing (NEON: the prefetch intrinsic is not stable Rust).
    ///
    /// # Safety
    ///
    /// The CPU must support the instructions of the implementation.
    #[inline(always)]
    unsafe fn prefetch(_p: *const u8) {}
}

/// A register that can look bytes up in a 16-entry table (`pshufb`,
/// `vqtbl1q_u8`), which is what the split-nibble multiply needs.
///
/// # Safety
///
/// Same contract as [`Vector`].
pub(crate) unsafe trait NibbleVector: Vector {
    /// Loads a 16-byte table into every 16-byte lane of the register.
    ///
    /// # Safety
    ///
    /// The CPU must support the instructions of the implementation.
    unsafe fn load_table(table: &[u8; 16]) -> Self;

    /// Each byte's low nibble (`x & 0x0F`).
    ///
    /// # Safety
    ///
    /// The CPU must support the instructions of the implementation.
    unsafe fn low_nibbles(self) -> Self;

    /// Each byte's high nibble, shifted down (`x >> 4`).
    ///
    /// # Safety
    ///
    /// The CPU must support the instructions of the implementation.
    unsafe fn high_nibbles(self) -> Self;

    /// `table[idx[i]]` for every byte, with `self` as the table (per 16-byte
    /// lane) and every index in `0..16`.
    ///
    /// # Safety
    ///
    /// The CPU must support the instructions of the implementation.
    unsafe fn lookup(self, idx: Self) -> Self;
}

/// Multiplies every byte of a vector by one fixed field constant.
pub(crate) trait Multiplier<V: Vector>: Copy {
    /// The products, byte by byte.
    ///
    /// # Safety
    ///
    /// The CPU must support the instructions of the implementation.
    unsafe fn mul(self, v: V) -> V;
}

/// Multiplication by `c` as `lo[x & 15] ^ hi[x >> 4]`, with the two tables
/// from [`crate::gf256::nibble_tables`] held in registers.
#[derive(Clone, Copy)]
pub(crate) struct SplitNibble<V> {
    lo: V,
    hi: V,
}

impl<V: NibbleVector> SplitNibble<V> {
    /// Loads the nibble tables of `c` into registers.
    ///
    /// # Safety
    ///
    /// The CPU must support the instructions of `V`.
    #[inline(always)]
    pub(crate) unsafe fn new(c: u8) -> Self {
        let (lo, hi) = crate::gf256::nibble_tables(c);
        // SAFETY: the caller guarantees the CPU supports `V`.
        unsafe {
            SplitNibble {
                lo: V::load_table(&lo),
                hi: V::load_table(&hi),
            }
        }
    }
}

impl<V: NibbleVector> Multiplier<V> for SplitNibble<V> {
    #[inline(always)]
    unsafe fn mul(self, v: V) -> V {
        // SAFETY: the caller guarantees the CPU supports `V`; both index
        // vectors hold nibbles, so every look-up stays inside the table.
        unsafe {
            let lo = self.lo.lookup(v.low_nibbles());
            let hi = self.hi.lookup(v.high_nibbles());
            lo.xor(hi)
        }
    }
}

/// `dst[i] ^= src[i]`, four vectors an iteration, scalar tail.
///
/// # Safety
///
/// `dst.len() == src.len()`, and the CPU must support `V`.
#[inline(always)]
pub(crate) unsafe fn xor_into<V: Vector>(dst: &mut [u8], src: &[u8]) {
    debug_assert_eq!(dst.len(), src.len());
    let len = dst.len();
    let d = dst.as_mut_ptr();
    let s = src.as_ptr();
    let mut i = 0;
    while len - i >= 4 * V::BYTES {
        // SAFETY: the accesses cover `i..i + 4 * BYTES`, within `len` by the
        // loop condition, and both slices have `len` bytes (caller's
        // precondition); the caller guarantees the CPU supports `V`.
        unsafe {
            prefetch_ahead::<V>(s, i, 4 * V::BYTES);
            prefetch_ahead::<V>(d, i, 4 * V::BYTES);
            let a0 = V::load_unaligned(d.add(i));
            let a1 = V::load_unaligned(d.add(i + V::BYTES));
            let a2 = V::load_unaligned(d.add(i + 2 * V::BYTES));
            let a3 = V::load_unaligned(d.add(i + 3 * V::BYTES));
            let b0 = V::load_unaligned(s.add(i));
            let b1 = V::load_unaligned(s.add(i + V::BYTES));
            let b2 = V::load_unaligned(s.add(i + 2 * V::BYTES));
            let b3 = V::load_unaligned(s.add(i + 3 * V::BYTES));
            a0.xor(b0).store_unaligned(d.add(i));
            a1.xor(b1).store_unaligned(d.add(i + V::BYTES));
            a2.xor(b2).store_unaligned(d.add(i + 2 * V::BYTES));
            a3.xor(b3).store_unaligned(d.add(i + 3 * V::BYTES));
        }
        i += 4 * V::BYTES;
    }
    while len - i >= V::BYTES {
        // SAFETY: as above, one vector.
        unsafe {
            let a = V::load_unaligned(d.add(i));
            let b = V::load_unaligned(s.add(i));
            a.xor(b).store_unaligned(d.add(i));
        }
        i += V::BYTES;
    }
    portable::xor_into(&mut dst[i..], &src[i..]);
}

/// `dst[i] ^= c * src[i]`, with `m` multiplying by `c`; two vectors an
/// iteration, scalar tail.
///
/// # Safety
///
/// `dst.len() == src.len()`, `m` must multiply by `c`, and the CPU must
/// support `V` and `M`.
#[inline(always)]
pub(crate) unsafe fn mul_xor_into<V: Vector, M: Multiplier<V>>(
    dst: &mut [u8],
    src: &[u8],
    m: M,
    c: u8,
) {
    // SAFETY: forwarded preconditions.
    unsafe { mul_loop::<V, M, true>(dst, src, m, c) }
}

/// `dst[i] = c * src[i]`, with `m` multiplying by `c`; two vectors an
/// iteration, scalar tail.
///
/// # Safety
///
/// `dst.len() == src.len()`, `m` must multiply by `c`, and the CPU must
/// support `V` and `M`.
#[inline(always)]
pub(crate) unsafe fn mul_into<V: Vector, M: Multiplier<V>>(
    dst: &mut [u8],
    src: &[u8],
    m: M,
    c: u8,
) {
    // SAFETY: forwarded preconditions.
    unsafe { mul_loop::<V, M, false>(dst, src, m, c) }
}

/// The loop of [`mul_xor_into`] (`ACCUMULATE`: `dst ^= c * src`) and [`mul_into`]
/// (`dst = c * src`), written once; the flag is a constant, so each instance has no branch.
///
/// # Safety
///
/// As for [`mul_xor_into`].
#[inline(always)]
unsafe fn mul_loop<V: Vector, M: Multiplier<V>, const ACCUMULATE: bool>(
    dst: &mut [u8],
    src: &[u8],
    m: M,
    c: u8,
) {
    debug_assert_eq!(dst.len(), src.len());
    let len = dst.len();
    let d = dst.as_mut_ptr();
    let s = src.as_ptr();
    let mut i = 0;
    while len - i >= 2 * V::BYTES {
        // SAFETY: the accesses cover `i..i + 2 * BYTES`, within `len` by the
        // loop condition and the equal lengths; the CPU supports `V` and `M`
        // (caller's precondition).
        let (p0, p1) = unsafe {
            prefetch_ahead::<V>(s, i, 2 * V::BYTES);
            prefetch_ahead::<V>(d, i, 2 * V::BYTES);
            (
                m.mul(V::load_unaligned(s.add(i))),
                m.mul(V::load_unaligned(s.add(i + V::BYTES))),
            )
        };
        // SAFETY: both vectors lie inside `dst` (loop condition); CPU support as above.
        unsafe {
            put::<V, ACCUMULATE>(d.add(i), p0);
            put::<V, ACCUMULATE>(d.add(i + V::BYTES), p1);
        }
        i += 2 * V::BYTES;
    }
    while len - i >= V::BYTES {
        // SAFETY: as above, one vector.
        unsafe { put::<V, ACCUMULATE>(d.add(i), m.mul(V::load_unaligned(s.add(i)))) };
        i += V::BYTES;
    }
    if ACCUMULATE {
        portable::mul_xor_into(&mut dst[i..], &src[i..], c);
    } else {
        portable::mul_into(&mut dst[i..], &src[i..], c);
    }
}

/// Stores `p` at `at`, or XORs it into what is there (`ACCUMULATE`). A function, not a closure,
/// so that it inlines into the caller's `#[target_feature]` context.
///
/// # Safety
///
/// `at` is valid for reading and writing one `V`, and the CPU supports `V`.
#[inline(always)]
unsafe fn put<V: Vector, const ACCUMULATE: bool>(at: *mut u8, p: V) {
    // SAFETY: the caller's precondition.
    unsafe {
        let v = if ACCUMULATE {
            V::load_unaligned(at).xor(p)
        } else {
            p
        };
        v.store_unaligned(at);
    }
}
