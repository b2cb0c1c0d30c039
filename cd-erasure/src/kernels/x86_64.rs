//! x86_64 kernels: SSSE3 and AVX2 split-nibble `pshufb`, and GFNI affine.
//!
//! * `ssse3`: 16-byte registers; `pshufb` looks each nibble up in a 16-entry
//!   product table (two shuffles, two ANDs, a shift and a XOR per vector).
//! * `avx2`: the same on 32-byte registers (`vpshufb` shuffles within each
//!   128-bit lane, so the tables are broadcast to both lanes).
//! * `gfni-avx2`: one `vgf2p8affineqb` per 32 bytes. GFNI's `gf2p8mulb` is
//!   hard-wired to the AES polynomial `0x11B`, not redset's `0x11D`, so the
//!   multiply is expressed as the 8x8 bit matrix of "times `c`"
//!   ([`crate::gf256::affine_matrix`]) and applied with the affine
//!   instruction, which works for any polynomial.
//!
//! The GFNI instruction is emitted with `asm!` rather than the
//! `_mm256_gf2p8affine_epi64_epi8` intrinsic: the intrinsic and
//! `#[target_feature(enable = "gfni")]` only became stable in Rust 1.89, and
//! the workspace's `rust-version` is 1.80. The wrapper is compiled with AVX2
//! (which gives the `ymm` registers); the witness additionally checks GFNI at
//! run time, which is what makes executing the instruction sound.
//!
//! Each path is a set of `#[target_feature]` wrappers around the shared
//! bodies in [`super::generic`], reachable only through a [`Kernels`] built
//! by the path's witness constructor after the CPU check.

use core::arch::asm;
use core::arch::x86_64::*;

use super::generic::{self, Multiplier, NibbleVector, SplitNibble, Vector};
use super::Kernels;

// SAFETY: every method is `#[inline(always)]` without `#[target_feature]`;
// the loads and stores are unaligned and touch exactly 16 bytes. SSE2 is part
// of the x86_64 baseline.
unsafe impl Vector for __m128i {
    const BYTES: usize = 16;

    #[inline(always)]
    unsafe fn load_unaligned(p: *const u8) -> Self {
        // SAFETY: the caller guarantees 16 readable bytes at `p`.
        unsafe { _mm_loadu_si128(p.cast()) }
    }

    #[inline(always)]
    unsafe fn store_unaligned(self, p: *mut u8) {
        // SAFETY: the caller guarantees 16 writable bytes at `p`.
        unsafe { _mm_storeu_si128(p.cast(), self) }
    }

    #[inline(always)]
    unsafe fn xor(self, other: Self) -> Self {
        // SAFETY: SSE2 is always present on x86_64.
        unsafe { _mm_xor_si128(self, other) }
    }

    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: SSE2 is always present on x86_64.
        unsafe { _mm_setzero_si128() }
    }

    #[inline(always)]
    unsafe fn prefetch(p: *const u8) {
        // SAFETY: `prefetcht0` is SSE, baseline on x86_64; it never faults,
        // whatever the address.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast()) }
    }
}

// SAFETY: `#[inline(always)]`, no `#[target_feature]`; `lookup` is `pshufb`,
// which needs SSSE3, guaranteed by the callers' contract.
unsafe impl NibbleVector for __m128i {
    #[inline(always)]
    unsafe fn load_table(table: &[u8; 16]) -> Self {
        // SAFETY: `table` is 16 readable bytes.
        unsafe { _mm_loadu_si128(table.as_ptr().cast()) }
    }

    #[inline(always)]
    unsafe fn low_nibbles(self) -> Self {
        // SAFETY: SSE2 is always present on x86_64.
        unsafe { _mm_and_si128(self, _mm_set1_epi8(0x0F)) }
    }

    #[inline(always)]
    unsafe fn high_nibbles(self) -> Self {
        // There is no byte shift: shift 16-bit lanes and mask off the bits
        // that crossed over from the neighbouring byte.
        // SAFETY: SSE2 is always present on x86_64.
        unsafe { _mm_and_si128(_mm_srli_epi16::<4>(self), _mm_set1_epi8(0x0F)) }
    }

    #[inline(always)]
    unsafe fn lookup(self, idx: Self) -> Self {
        // SAFETY: the caller guarantees SSSE3.
        unsafe { _mm_shuffle_epi8(self, idx) }
    }
}

// SAFETY: every method is `#[inline(always)]` without `#[target_feature]`;
// the loads and stores are unaligned and touch exactly 32 bytes; AVX2 is
// guaranteed by the callers' contract.
unsafe impl Vector for __m256i {
    const BYTES: usize = 32;

    #[inline(always)]
    unsafe fn load_unaligned(p: *const u8) -> Self {
        // SAFETY: the caller guarantees 32 readable bytes at `p` and AVX.
        unsafe { _mm256_loadu_si256(p.cast()) }
    }

    #[inline(always)]
    unsafe fn store_unaligned(self, p: *mut u8) {
        // SAFETY: the caller guarantees 32 writable bytes at `p` and AVX.
        unsafe { _mm256_storeu_si256(p.cast(), self) }
    }

    #[inline(always)]
    unsafe fn xor(self, other: Self) -> Self {
        // SAFETY: the caller guarantees AVX2.
        unsafe { _mm256_xor_si256(self, other) }
    }

    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: the caller guarantees AVX.
        unsafe { _mm256_setzero_si256() }
    }

    #[inline(always)]
    unsafe fn prefetch(p: *const u8) {
        // SAFETY: `prefetcht0` is SSE, baseline on x86_64; it never faults,
        // whatever the address.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast()) }
    }
}

// SAFETY: `#[inline(always)]`, no `#[target_feature]`; AVX2 is guaranteed by
// the callers' contract.
unsafe impl NibbleVector for __m256i {
    #[inline(always)]
    unsafe fn load_table(table: &[u8; 16]) -> Self {
        // `vpshufb` looks up within each 128-bit lane, so both lanes get the
        // same table.
        // SAFETY: `table` is 16 readable bytes; the caller guarantees AVX2.
        unsafe { _mm256_broadcastsi128_si256(_mm_loadu_si128(table.as_ptr().cast())) }
    }

    #[inline(always)]
    unsafe fn low_nibbles(self) -> Self {
        // SAFETY: the caller guarantees AVX2.
        unsafe { _mm256_and_si256(self, _mm256_set1_epi8(0x0F)) }
    }

    #[inline(always)]
    unsafe fn high_nibbles(self) -> Self {
        // SAFETY: the caller guarantees AVX2.
        unsafe { _mm256_and_si256(_mm256_srli_epi16::<4>(self), _mm256_set1_epi8(0x0F)) }
    }

    #[inline(always)]
    unsafe fn lookup(self, idx: Self) -> Self {
        // SAFETY: the caller guarantees AVX2.
        unsafe { _mm256_shuffle_epi8(self, idx) }
    }
}

/// Multiplication by a constant with `vgf2p8affineqb`: the constant's bit
/// matrix, broadcast to every 64-bit lane.
#[derive(Clone, Copy)]
struct GfniAffine {
    matrix: __m256i,
}

impl Multiplier<__m256i> for GfniAffine {
    /// GFNI multiplies the input as it is.
    type Prepared = __m256i;

    /// The bit matrix of "times `c`" in a register (needs AVX).
    #[inline(always)]
    unsafe fn new(c: u8) -> Self {
        let m = crate::gf256::affine_matrix(c);
        // SAFETY: the caller guarantees AVX; the cast keeps the bit pattern.
        let matrix = unsafe { _mm256_set1_epi64x(m as i64) };
        GfniAffine { matrix }
    }

    #[inline(always)]
    unsafe fn prepare(v: __m256i) -> __m256i {
        v
    }

    #[inline(always)]
    unsafe fn mul_prepared(self, v: __m256i) -> __m256i {
        // SAFETY: the caller guarantees GFNI and AVX2.
        unsafe { gf2p8affine(v, self.matrix) }
    }
}

/// `vgf2p8affineqb x, matrix, 0`: each byte of `x` times the bit matrix.
///
/// A separate `#[target_feature]` function because `asm!` may only name `ymm`
/// registers where AVX is enabled; `#[inline]` lets it melt into the AVX2
/// wrappers that call it.
///
/// # Safety
///
/// The CPU must support AVX2 and GFNI.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn gf2p8affine(x: __m256i, matrix: __m256i) -> __m256i {
    let out: __m256i;
    // SAFETY: the caller guarantees GFNI and AVX (the witness checked both).
    // The instruction only reads and writes the named registers: no memory,
    // no stack, no flags.
    unsafe {
        asm!(
            "vgf2p8affineqb {out}, {x}, {m}, 0",
            out = lateout(ymm_reg) out,
            x = in(ymm_reg) x,
            m = in(ymm_reg) matrix,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    out
}

/// The SSSE3 path.
mod ssse3 {
    use super::*;

    /// SSSE3 support, at compile time or else at run time.
    pub(super) fn is_available() -> bool {
        is_x86_feature_detected!("ssse3")
    }

    /// # Safety
    ///
    /// The CPU must support SSSE3, and `dst.len() == src.len()`.
    #[target_feature(enable = "ssse3")]
    pub(super) unsafe fn xor_into(dst: &mut [u8], src: &[u8]) {
        // SAFETY: forwarded preconditions; SSE2 is baseline.
        unsafe { generic::xor_into::<__m128i>(dst, src) }
    }

    /// # Safety
    ///
    /// The CPU must support SSSE3, and `dst.len() == src.len()`.
    #[target_feature(enable = "ssse3")]
    pub(super) unsafe fn mul_xor_into(dst: &mut [u8], src: &[u8], c: u8) {
        // SAFETY: forwarded preconditions; the multiplier is built for `c`.
        unsafe {
            let m = SplitNibble::<__m128i>::new(c);
            generic::mul_xor_into::<__m128i, _>(dst, src, m, c)
        }
    }

    /// # Safety
    ///
    /// The CPU must support SSSE3, and `dst.len() == src.len()`.
    #[target_feature(enable = "ssse3")]
    pub(super) unsafe fn mul_into(dst: &mut [u8], src: &[u8], c: u8) {
        // SAFETY: forwarded preconditions; the multiplier is built for `c`.
        unsafe {
            let m = SplitNibble::<__m128i>::new(c);
            generic::mul_into::<__m128i, _>(dst, src, m, c)
        }
    }

    /// # Safety
    ///
    /// The CPU must support SSSE3, and the preconditions of
    /// [`generic::combine`] hold.
    #[target_feature(enable = "ssse3")]
    pub(super) unsafe fn combine(rows: &[u8], inputs: &[&[u8]], outputs: &mut [&mut [u8]]) {
        // SAFETY: forwarded preconditions.
        unsafe { generic::combine::<__m128i, SplitNibble<__m128i>>(rows, inputs, outputs) }
    }
}

/// The AVX2 path.
mod avx2 {
    use super::*;

    /// AVX2 support (including the OS saving `ymm` state), at compile time
    /// or else at run time.
    pub(super) fn is_available() -> bool {
        is_x86_feature_detected!("avx2")
    }

    /// # Safety
    ///
    /// The CPU must support AVX2, and `dst.len() == src.len()`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn xor_into(dst: &mut [u8], src: &[u8]) {
        // SAFETY: forwarded preconditions.
        unsafe { generic::xor_into::<__m256i>(dst, src) }
    }

    /// # Safety
    ///
    /// The CPU must support AVX2, and `dst.len() == src.len()`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn mul_xor_into(dst: &mut [u8], src: &[u8], c: u8) {
        // SAFETY: forwarded preconditions; the multiplier is built for `c`.
        unsafe {
            let m = SplitNibble::<__m256i>::new(c);
            generic::mul_xor_into::<__m256i, _>(dst, src, m, c)
        }
    }

    /// # Safety
    ///
    /// The CPU must support AVX2, and `dst.len() == src.len()`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn mul_into(dst: &mut [u8], src: &[u8], c: u8) {
        // SAFETY: forwarded preconditions; the multiplier is built for `c`.
        unsafe {
            let m = SplitNibble::<__m256i>::new(c);
            generic::mul_into::<__m256i, _>(dst, src, m, c)
        }
    }

    /// # Safety
    ///
    /// The CPU must support AVX2, and the preconditions of
    /// [`generic::combine`] hold.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn combine(rows: &[u8], inputs: &[&[u8]], outputs: &mut [&mut [u8]]) {
        // SAFETY: forwarded preconditions.
        unsafe { generic::combine::<__m256i, SplitNibble<__m256i>>(rows, inputs, outputs) }
    }
}

/// The GFNI path on 32-byte registers (XOR is plain AVX2).
mod gfni_avx2 {
    use super::*;

    /// AVX2 and GFNI support, at compile time or else at run time.
    pub(super) fn is_available() -> bool {
        is_x86_feature_detected!("avx2") && is_x86_feature_detected!("gfni")
    }

    /// # Safety
    ///
    /// The CPU must support AVX2 and GFNI, and `dst.len() == src.len()`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn mul_xor_into(dst: &mut [u8], src: &[u8], c: u8) {
        // SAFETY: forwarded preconditions (GFNI for the multiplier); the
        // multiplier is built for `c`.
        unsafe {
            let m = GfniAffine::new(c);
            generic::mul_xor_into::<__m256i, _>(dst, src, m, c)
        }
    }

    /// # Safety
    ///
    /// The CPU must support AVX2 and GFNI, and `dst.len() == src.len()`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn mul_into(dst: &mut [u8], src: &[u8], c: u8) {
        // SAFETY: forwarded preconditions (GFNI for the multiplier); the
        // multiplier is built for `c`.
        unsafe {
            let m = GfniAffine::new(c);
            generic::mul_into::<__m256i, _>(dst, src, m, c)
        }
    }

    /// # Safety
    ///
    /// The CPU must support AVX2 and GFNI, and the preconditions of
    /// [`generic::combine`] hold.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn combine(rows: &[u8], inputs: &[&[u8]], outputs: &mut [&mut [u8]]) {
        // SAFETY: forwarded preconditions (GFNI for the multiplier).
        unsafe { generic::combine::<__m256i, GfniAffine>(rows, inputs, outputs) }
    }
}

/// The SSSE3 kernels, if this CPU has SSSE3.
pub(super) fn ssse3() -> Option<Kernels> {
    if !ssse3::is_available() {
        return None;
    }
    // SAFETY: SSSE3 was just detected, and these functions need nothing else
    // beyond equal lengths, which `Kernels` checks before every call.
    Some(unsafe {
        Kernels::new_unchecked(
            "ssse3",
            ssse3::xor_into,
            ssse3::mul_xor_into,
            ssse3::mul_into,
            ssse3::combine,
        )
    })
}

/// The AVX2 kernels, if this CPU has AVX2.
pub(super) fn avx2() -> Option<Kernels> {
    if !avx2::is_available() {
        return None;
    }
    // SAFETY: AVX2 was just detected, and these functions need nothing else
    // beyond equal lengths, which `Kernels` checks before every call.
    Some(unsafe {
        Kernels::new_unchecked(
            "avx2",
            avx2::xor_into,
            avx2::mul_xor_into,
            avx2::mul_into,
            avx2::combine,
        )
    })
}

/// The GFNI kernels, if this CPU has AVX2 and GFNI.
pub(super) fn gfni_avx2() -> Option<Kernels> {
    if !gfni_avx2::is_available() {
        return None;
    }
    // SAFETY: AVX2 and GFNI were just detected, and these functions need
    // nothing else beyond equal lengths, which `Kernels` checks before every
    // call.
    Some(unsafe {
        Kernels::new_unchecked(
            "gfni-avx2",
            avx2::xor_into,
            gfni_avx2::mul_xor_into,
            gfni_avx2::mul_into,
            gfni_avx2::combine,
        )
    })
}
