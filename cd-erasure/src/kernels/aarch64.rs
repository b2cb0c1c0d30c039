//! aarch64 kernels: NEON split-nibble multiply with `vqtbl1q_u8`.
//!
//! NEON (Advanced SIMD) is part of the aarch64 baseline on every target we
//! build for, so the witness almost always succeeds; it still asks
//! (`is_aarch64_feature_detected!`), so a build for a target without NEON
//! stays sound. `vqtbl1q_u8` looks each byte up in a 16-entry table, which is
//! exactly the nibble look-up of [`super::generic::SplitNibble`]; the loops
//! themselves are the shared ones in [`super::generic`].
//!
//! This module is compiled only on aarch64; the development machines are
//! x86_64, so it is exercised by the aarch64 CI job, not locally.

use core::arch::aarch64::*;

use super::generic::{self, Multiplier, NibbleVector, SplitNibble, Vector};
use super::Kernels;

// SAFETY: every method is `#[inline(always)]` without `#[target_feature]`;
// loads and stores touch exactly 16 bytes and have no alignment requirement.
unsafe impl Vector for uint8x16_t {
    const BYTES: usize = 16;

    #[inline(always)]
    unsafe fn load_unaligned(p: *const u8) -> Self {
        // SAFETY: the caller guarantees 16 readable bytes at `p` and NEON.
        unsafe { vld1q_u8(p) }
    }

    #[inline(always)]
    unsafe fn store_unaligned(self, p: *mut u8) {
        // SAFETY: the caller guarantees 16 writable bytes at `p` and NEON.
        unsafe { vst1q_u8(p, self) }
    }

    #[inline(always)]
    unsafe fn xor(self, other: Self) -> Self {
        // SAFETY: the caller guarantees NEON.
        unsafe { veorq_u8(self, other) }
    }

    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: the caller guarantees NEON.
        unsafe { vdupq_n_u8(0) }
    }
}

// SAFETY: `#[inline(always)]`, no `#[target_feature]`; NEON is guaranteed by
// the callers' contract.
unsafe impl NibbleVector for uint8x16_t {
    #[inline(always)]
    unsafe fn load_table(table: &[u8; 16]) -> Self {
        // SAFETY: `table` is 16 readable bytes; the caller guarantees NEON.
        unsafe { vld1q_u8(table.as_ptr()) }
    }

    #[inline(always)]
    unsafe fn low_nibbles(self) -> Self {
        // SAFETY: the caller guarantees NEON.
        unsafe { vandq_u8(self, vdupq_n_u8(0x0F)) }
    }

    #[inline(always)]
    unsafe fn high_nibbles(self) -> Self {
        // NEON has a true per-byte shift, so no mask is needed.
        // SAFETY: the caller guarantees NEON.
        unsafe { vshrq_n_u8::<4>(self) }
    }

    #[inline(always)]
    unsafe fn lookup(self, idx: Self) -> Self {
        // SAFETY: the caller guarantees NEON.
        unsafe { vqtbl1q_u8(self, idx) }
    }
}

/// NEON support, at compile time or else at run time.
fn is_available() -> bool {
    std::arch::is_aarch64_feature_detected!("neon")
}

/// # Safety
///
/// The CPU must support NEON, and `dst.len() == src.len()`.
#[target_feature(enable = "neon")]
unsafe fn xor_into(dst: &mut [u8], src: &[u8]) {
    // SAFETY: forwarded preconditions.
    unsafe { generic::xor_into::<uint8x16_t>(dst, src) }
}

/// # Safety
///
/// The CPU must support NEON, and `dst.len() == src.len()`.
#[target_feature(enable = "neon")]
unsafe fn mul_xor_into(dst: &mut [u8], src: &[u8], c: u8) {
    // SAFETY: forwarded preconditions; the multiplier is built for `c`.
    unsafe {
        let m = SplitNibble::<uint8x16_t>::new(c);
        generic::mul_xor_into::<uint8x16_t, _>(dst, src, m, c)
    }
}

/// # Safety
///
/// The CPU must support NEON, and `dst.len() == src.len()`.
#[target_feature(enable = "neon")]
unsafe fn mul_into(dst: &mut [u8], src: &[u8], c: u8) {
    // SAFETY: forwarded preconditions; the multiplier is built for `c`.
    unsafe {
        let m = SplitNibble::<uint8x16_t>::new(c);
        generic::mul_into::<uint8x16_t, _>(dst, src, m, c)
    }
}

/// # Safety
///
/// The CPU must support NEON, and the preconditions of [`generic::combine`]
/// hold.
#[target_feature(enable = "neon")]
unsafe fn combine(rows: &[u8], inputs: &[&[u8]], outputs: &mut [&mut [u8]]) {
    // SAFETY: forwarded preconditions.
    unsafe { generic::combine::<uint8x16_t, SplitNibble<uint8x16_t>>(rows, inputs, outputs) }
}

/// The NEON kernels, if this CPU has NEON.
pub(super) fn neon() -> Option<Kernels> {
    if !is_available() {
        return None;
    }
    // SAFETY: NEON was just detected, and these functions need nothing else
    // beyond equal lengths, which `Kernels` checks before every call.
    Some(unsafe { Kernels::new_unchecked("neon", xor_into, mul_xor_into, mul_into, combine) })
}
