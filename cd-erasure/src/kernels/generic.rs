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

use super::{portable, STRIP};

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

    /// All bytes zero.
    ///
    /// # Safety
    ///
    /// The CPU must support the instructions of the implementation.
    unsafe fn zero() -> Self;

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
///
/// The work is split in two so that an input vector multiplied by several
/// constants (one per output of [`combine`]) is prepared once: the
/// split-nibble multiply extracts the two nibble vectors once and then costs
/// two look-ups per constant; GFNI needs no preparation.
pub(crate) trait Multiplier<V: Vector>: Copy {
    /// What [`Multiplier::mul_prepared`] needs of an input vector.
    type Prepared: Copy;

    /// The multiplier for the constant `c`.
    ///
    /// # Safety
    ///
    /// The CPU must support the instructions of the implementation.
    unsafe fn new(c: u8) -> Self;

    /// Prepares `v` for multiplication by any number of constants.
    ///
    /// # Safety
    ///
    /// The CPU must support the instructions of the implementation.
    unsafe fn prepare(v: V) -> Self::Prepared;

    /// The products of a prepared vector, byte by byte.
    ///
    /// # Safety
    ///
    /// The CPU must support the instructions of the implementation.
    unsafe fn mul_prepared(self, p: Self::Prepared) -> V;

    /// The products, byte by byte.
    ///
    /// # Safety
    ///
    /// The CPU must support the instructions of the implementation.
    #[inline(always)]
    unsafe fn mul(self, v: V) -> V {
        // SAFETY: forwarded precondition.
        unsafe { self.mul_prepared(Self::prepare(v)) }
    }
}

/// Multiplication by `c` as `lo[x & 15] ^ hi[x >> 4]`, with the two tables
/// from [`crate::gf256::nibble_tables`] held in registers.
#[derive(Clone, Copy)]
pub(crate) struct SplitNibble<V> {
    lo: V,
    hi: V,
}

impl<V: NibbleVector> Multiplier<V> for SplitNibble<V> {
    /// The low and the high nibbles of every byte.
    type Prepared = (V, V);

    #[inline(always)]
    unsafe fn new(c: u8) -> Self {
        let (lo, hi) = crate::gf256::nibble_tables(c);
        // SAFETY: the caller guarantees the CPU supports `V`.
        unsafe {
            SplitNibble {
                lo: V::load_table(&lo),
                hi: V::load_table(&hi),
            }
        }
    }

    #[inline(always)]
    unsafe fn prepare(v: V) -> (V, V) {
        // SAFETY: the caller guarantees the CPU supports `V`.
        unsafe { (v.low_nibbles(), v.high_nibbles()) }
    }

    #[inline(always)]
    unsafe fn mul_prepared(self, (lo, hi): (V, V)) -> V {
        // SAFETY: the caller guarantees the CPU supports `V`; both index
        // vectors hold nibbles, so every look-up stays inside the table.
        unsafe { self.lo.lookup(lo).xor(self.hi.lookup(hi)) }
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

/// Most outputs one pass of [`combine`] accumulates in registers. A matrix
/// with more rows is done in groups of this many, strip by strip (see
/// [`STRIP`]).
const GROUP: usize = 4;

/// `outputs[t] = sum_i rows[t * n + i] * inputs[i]` for `n = inputs.len()`:
/// every output of a group of up to [`GROUP`] is accumulated in registers
/// from a single pass over the inputs, so each input byte is loaded once and
/// each output byte stored once (never read).
///
/// # Safety
///
/// `inputs` is not empty, `rows.len() == inputs.len() * outputs.len()`,
/// every buffer has the length of `outputs[0]`, and the CPU supports `V` and
/// `M`.
#[inline(always)]
pub(crate) unsafe fn combine<V: Vector, M: Multiplier<V>>(
    rows: &[u8],
    inputs: &[&[u8]],
    outputs: &mut [&mut [u8]],
) {
    let n = inputs.len();
    debug_assert!(n > 0);
    debug_assert_eq!(rows.len(), n * outputs.len());
    let len = outputs.first().map_or(0, |o| o.len());
    debug_assert!(inputs.iter().all(|b| b.len() == len));
    debug_assert!(outputs.iter().all(|b| b.len() == len));
    // The multipliers of each group, input-major: group `g`'s multiplier of
    // input `i` for its row `r` is `mults[g * GROUP * n + i * rows_in_g + r]`.
    let mut mults: Vec<M> = Vec::with_capacity(rows.len());
    for (g, group) in rows.chunks(GROUP * n).enumerate() {
        let in_group = group.len() / n;
        debug_assert_eq!(g * GROUP * n, mults.len());
        for i in 0..n {
            for r in 0..in_group {
                // SAFETY: the caller guarantees the CPU supports `M`.
                mults.push(unsafe { M::new(group[r * n + i]) });
            }
        }
    }
    let strip = if outputs.len() <= GROUP { len } else { STRIP };
    let mut start = 0;
    while start < len {
        let end = (start + strip).min(len);
        for (g, outs) in outputs.chunks_mut(GROUP).enumerate() {
            let at = g * GROUP * n;
            let m = &mults[at..at + outs.len() * n];
            let coeffs = &rows[at..at + outs.len() * n];
            // SAFETY: forwarded preconditions; `m` holds `n` multipliers per
            // output of `outs`, and `start..end` lies inside every buffer.
            unsafe {
                match outs.len() {
                    1 => pass::<V, M, 1, 4>(m, coeffs, inputs, outs, start, end),
                    2 => pass::<V, M, 2, 2>(m, coeffs, inputs, outs, start, end),
                    3 => pass::<V, M, 3, 1>(m, coeffs, inputs, outs, start, end),
                    _ => pass::<V, M, 4, 1>(m, coeffs, inputs, outs, start, end),
                }
            }
        }
        start = end;
    }
}

/// One pass of [`combine`] over `start..end` for `R` outputs: `U` vectors
/// per output and iteration (fewer outputs leave registers for more
/// unrolling), then single vectors, then the scalar kernels for the bytes
/// that do not fill a vector.
///
/// # Safety
///
/// `outs.len() == R`; `m.len() == coeffs.len() == R * inputs.len()`, with
/// `m[i * R + r]` multiplying by `coeffs[r * n + i]`; `start <= end` and
/// every buffer is at least `end` bytes long; the CPU supports `V` and `M`.
#[inline(always)]
unsafe fn pass<V: Vector, M: Multiplier<V>, const R: usize, const U: usize>(
    m: &[M],
    coeffs: &[u8],
    inputs: &[&[u8]],
    outs: &mut [&mut [u8]],
    start: usize,
    end: usize,
) {
    debug_assert_eq!(outs.len(), R);
    let n = inputs.len();
    let mut dst = [core::ptr::null_mut::<u8>(); R];
    for (d, o) in dst.iter_mut().zip(outs.iter_mut()) {
        *d = o.as_mut_ptr();
    }
    // SAFETY: forwarded preconditions; `dst` holds the `R` outputs.
    let i = unsafe {
        let i = vectors::<V, M, R, U>(m, inputs, dst, start, end);
        vectors::<V, M, R, 1>(m, inputs, dst, i, end)
    };
    if i < end {
        for (r, out) in outs.iter_mut().enumerate() {
            let out = &mut out[i..end];
            let c = &coeffs[r * n..(r + 1) * n];
            portable::mul_into(out, &inputs[0][i..end], c[0]);
            for (input, &c) in inputs.iter().zip(c).skip(1) {
                portable::mul_xor_into(out, &input[i..end], c);
            }
        }
    }
}

/// The vector loop of [`pass`]: `U` vectors of each of the `R` outputs per
/// iteration, from `start` while a whole iteration fits before `end`;
/// returns where it stopped.
///
/// # Safety
///
/// As for [`pass`], with `dst` the outputs' pointers, each valid for writes
/// up to `end`.
#[inline(always)]
unsafe fn vectors<V: Vector, M: Multiplier<V>, const R: usize, const U: usize>(
    m: &[M],
    inputs: &[&[u8]],
    dst: [*mut u8; R],
    start: usize,
    end: usize,
) -> usize {
    let mut i = start;
    while end - i >= U * V::BYTES {
        // SAFETY: every access covers `i..i + U * BYTES`, inside every buffer
        // by the loop condition and the caller's length guarantee; `m` has
        // `R` multipliers per input; the CPU supports `V` and `M`.
        unsafe {
            let mut acc = [[V::zero(); U]; R];
            for (x, input) in inputs.iter().enumerate() {
                // No software prefetch here, unlike the single-stream loops:
                // with `k` input streams the hardware prefetchers keep up, and
                // prefetching 2 KiB ahead made GFNI slower with 16 MiB
                // fragments (4+2: 13.7-14.1 against 17.2-18.3 GB/s, three
                // alternating runs; docs/bench-kernels.md).
                let s = input.as_ptr().add(i);
                let mut p = [M::prepare(V::zero()); U];
                for (u, pu) in p.iter_mut().enumerate() {
                    *pu = M::prepare(V::load_unaligned(s.add(u * V::BYTES)));
                }
                let row = m.get_unchecked(x * R..x * R + R);
                for (a, mr) in acc.iter_mut().zip(row) {
                    for (au, pu) in a.iter_mut().zip(p) {
                        *au = au.xor(mr.mul_prepared(pu));
                    }
                }
            }
            for (a, d) in acc.iter().zip(dst) {
                for (u, au) in a.iter().enumerate() {
                    au.store_unaligned(d.add(i + u * V::BYTES));
                }
            }
        }
        i += U * V::BYTES;
    }
    i
}
