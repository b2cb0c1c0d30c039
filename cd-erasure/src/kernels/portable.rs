//! The scalar fallback: correct everywhere, and the reference the SIMD paths
//! are tested against.
//!
//! XOR goes a machine word at a time (`u64`), which the compiler may widen
//! further on its own. Multiplication reads the 256-byte row of the constant
//! in [`MUL_TABLE`] once and then costs one table look-up a byte, the same
//! premultiplied-table technique redset uses (`gf_premult_table`). The SIMD
//! paths also use these functions for the tail that does not fill a vector.
//!
//! Everything here is safe code; slices of unequal length are processed up to
//! the shorter one (the public entry points in [`super`] reject a mismatch
//! before getting here).

use crate::gf256::MUL_TABLE;

/// Width of the word the XOR loop works in.
const WORD: usize = core::mem::size_of::<u64>();

/// `dst[i] ^= src[i]`, a `u64` at a time.
pub(super) fn xor_into(dst: &mut [u8], src: &[u8]) {
    debug_assert_eq!(dst.len(), src.len());
    let mut d = dst.chunks_exact_mut(WORD);
    let mut s = src.chunks_exact(WORD);
    for (dw, sw) in (&mut d).zip(&mut s) {
        let mut a = [0u8; WORD];
        let mut b = [0u8; WORD];
        a.copy_from_slice(dw);
        b.copy_from_slice(sw);
        let x = u64::from_ne_bytes(a) ^ u64::from_ne_bytes(b);
        dw.copy_from_slice(&x.to_ne_bytes());
    }
    for (a, b) in d.into_remainder().iter_mut().zip(s.remainder()) {
        *a ^= *b;
    }
}

/// `dst[i] ^= c * src[i]`, one table look-up a byte.
pub(super) fn mul_xor_into(dst: &mut [u8], src: &[u8], c: u8) {
    debug_assert_eq!(dst.len(), src.len());
    let row = &MUL_TABLE[c as usize];
    for (a, b) in dst.iter_mut().zip(src) {
        *a ^= row[*b as usize];
    }
}

/// `dst[i] = c * src[i]`, one table look-up a byte.
pub(super) fn mul_into(dst: &mut [u8], src: &[u8], c: u8) {
    debug_assert_eq!(dst.len(), src.len());
    let row = &MUL_TABLE[c as usize];
    for (a, b) in dst.iter_mut().zip(src) {
        *a = row[*b as usize];
    }
}

/// `outputs[t] = sum_i rows[t * n + i] * inputs[i]` (`n = inputs.len()`,
/// at least 1), strip by strip: each strip of the inputs is read from memory
/// once and from the cache by every output, so the data are still streamed
/// once however many outputs there are.
pub(super) fn combine(rows: &[u8], inputs: &[&[u8]], outputs: &mut [&mut [u8]]) {
    let n = inputs.len();
    debug_assert_eq!(rows.len(), n * outputs.len());
    let len = outputs.first().map_or(0, |o| o.len());
    let mut start = 0;
    while start < len {
        let end = (start + super::STRIP).min(len);
        for (out, row) in outputs.iter_mut().zip(rows.chunks_exact(n)) {
            let out = &mut out[start..end];
            mul_into(out, &inputs[0][start..end], row[0]);
            for (input, &c) in inputs.iter().zip(row).skip(1) {
                mul_xor_into(out, &input[start..end], c);
            }
        }
        start = end;
    }
}
