//! Copies of application bytes into the log: inline moves for the small ones (a record's
//! fields, a small message), non-temporal stores for large ones, `memcpy` between.

/// Copies `src` into `dst` (of the same length) the fastest way for its size: a message's
/// bytes into the log.
#[inline(always)]
pub(crate) fn into_log(dst: &mut [u8], src: &[u8]) {
    if !stream(dst, src) {
        bytes(dst, src);
    }
}

/// Pieces of at least this many bytes are copied with non-temporal stores, where the CPU has
/// them: the log is written once and read only by a replay, so its lines need not be read in
/// first (a normal store reads each line before writing it) nor evict the application's.
/// Measured (ping-pong, log/raw): from 16 KiB on they gain (1.35 -> 1.25 at 16 KiB, 1.57 ->
/// 1.33 at 128 KiB, 1.74 -> 1.50 at 1 MiB); at 8 KiB they are even, below they lose (1.6 ->
/// 2.7 at 1 KiB).
const STREAM_FROM: usize = 16 << 10;

/// Copies `src` into `dst` (of the same length) with non-temporal stores if it is at least
/// [`STREAM_FROM`] bytes and the CPU has AVX; `false` (nothing copied) otherwise.
#[inline]
fn stream(dst: &mut [u8], src: &[u8]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if dst.len() >= STREAM_FROM && std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: AVX is present (checked above).
        unsafe { stream_avx(dst, src) };
        return true;
    }
    let _ = (dst, src);
    false
}

/// [`stream`]'s loop: the head up to a 32-byte boundary and the tail with `memcpy`, the
/// rest in 32-byte non-temporal stores, then a store fence, so that the bytes are ordered
/// before the log's publishing store like any other.
///
/// # Safety
/// The CPU must have AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn stream_avx(dst: &mut [u8], src: &[u8]) {
    use std::arch::x86_64::{__m256i, _mm256_loadu_si256, _mm256_stream_si256, _mm_sfence};
    let n = src.len();
    assert_eq!(n, dst.len());
    let head = dst.as_ptr().align_offset(32).min(n);
    let body = (n - head) / 128 * 128;
    dst[..head].copy_from_slice(&src[..head]);
    let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
    let mut at = head;
    while at < head + body {
        for k in 0..4 {
            let i = at + 32 * k;
            // SAFETY: `i + 32 <= head + body <= n`, inside both slices; `d + i` is 32-byte
            // aligned (`d + head` is, and `i - head` is a multiple of 32), as the stream
            // store requires; AVX is present (the caller's contract).
            unsafe {
                let v = _mm256_loadu_si256(s.add(i).cast::<__m256i>());
                _mm256_stream_si256(d.add(i).cast::<__m256i>(), v);
            }
        }
        at += 128;
    }
    dst[at..].copy_from_slice(&src[at..]);
    _mm_sfence();
}

/// Copies `src` into `dst` (of the same length): small copies (the header and fields of a
/// record, a small message) inline as a few possibly overlapping fixed-size moves, with no call
/// to `memcpy` and its size dispatch; larger ones through `memcpy`.
#[inline(always)]
pub(crate) fn bytes(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    assert_eq!(n, dst.len());
    let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
    /// Moves `N` bytes from `s + at` to `d + at`.
    ///
    /// # Safety
    /// Both ranges lie inside their slices.
    #[inline(always)]
    unsafe fn block<const N: usize>(s: *const u8, d: *mut u8, at: usize) {
        // SAFETY: forwarded; unaligned reads and writes of plain bytes.
        unsafe {
            d.add(at)
                .cast::<[u8; N]>()
                .write_unaligned(s.add(at).cast::<[u8; N]>().read_unaligned())
        }
    }
    // SAFETY: every block lies inside both slices of `n` bytes: it starts at or after 0 and
    // ends at or before `n`, by the bounds of each branch.
    unsafe {
        match n {
            0 => {}
            1..=3 => (0..n).for_each(|i| *d.add(i) = *s.add(i)),
            4..=7 => {
                block::<4>(s, d, 0);
                block::<4>(s, d, n - 4);
            }
            8..=15 => {
                block::<8>(s, d, 0);
                block::<8>(s, d, n - 8);
            }
            16..=31 => {
                block::<16>(s, d, 0);
                block::<16>(s, d, n - 16);
            }
            32..=128 => {
                block::<32>(s, d, 0);
                if n > 64 {
                    block::<32>(s, d, 32);
                }
                if n > 96 {
                    block::<32>(s, d, 64);
                }
                block::<32>(s, d, n - 32);
            }
            _ => std::ptr::copy_nonoverlapping(s, d, n),
        }
    }
}
