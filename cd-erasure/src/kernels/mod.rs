//! Bulk GF(2^8) kernels: `dst ^= src`, `dst ^= c * src`, `dst = c * src`,
//! and a matrix times a set of buffers.
//!
//! These loops are all the byte-crunching the redundancy schemes need: XOR
//! parity is [`xor_into`]; the `m` Reed-Solomon checksums of `k` data
//! blocks are [`combine`] with the `m x k` encoding rows, and a rebuild is
//! the same with the decoder's coefficients. A pipeline that receives one
//! block at a time accumulates with [`mul_xor_into`] instead. On
//! checkpoint-sized buffers they run at memory bandwidth when vectorised,
//! so the code path matters.
//!
//! # Why `combine` makes one pass
//!
//! Computing each checksum on its own reads the data `m` times. [`combine`]
//! keeps up to four outputs in registers and loads each input vector once:
//! it is split once into what the multiply needs (the two nibble vectors;
//! nothing for GFNI), multiplied by each output's coefficient and added into
//! each accumulator, and the outputs are stored once, never read. That is
//! the structure of ISA-L's `ec_encode_data` (`gf_<m>vect_dot_prod_*`);
//! `benches/isal.rs` compares the two on the same buffers.
//!
//! # Code paths
//!
//! | name        | where                 | how `c * x` is computed                      |
//! |-------------|-----------------------|----------------------------------------------|
//! | `gfni-avx2` | x86_64, AVX2 and GFNI | `vgf2p8affineqb` with the bit matrix of `c`  |
//! | `avx2`      | x86_64, AVX2          | two `vpshufb` nibble look-ups, 32 bytes      |
//! | `ssse3`     | x86_64, SSSE3         | two `pshufb` nibble look-ups, 16 bytes       |
//! | `neon`      | aarch64               | two `vqtbl1q_u8` nibble look-ups, 16 bytes   |
//! | `portable`  | everywhere            | one 256-byte table row, a byte at a time     |
//!
//! The first usable path in that order is chosen once, on first use, and
//! logged with `tracing::debug!`; [`selected_path`] names it. Every path
//! produces the same bytes (the tests compare each with the naive per-byte
//! loop).
//!
//! # Forcing a path
//!
//! Set the environment variable `CD_REDSET_KERNEL` ([`KERNEL_ENV`]) to a path
//! name before the first kernel call, e.g. `CD_REDSET_KERNEL=portable` to run
//! without SIMD. An empty value or `auto` means detection. A name that is
//! unknown or not usable on this CPU is ignored with a `tracing::warn!`, and
//! detection picks the path.
//!
//! # Safety design (memchr style)
//!
//! A [`Kernels`] value is a table of function pointers, some of them
//! `#[target_feature]` functions that are undefined behaviour on a CPU
//! without the feature. Its fields are private and every constructor is a
//! *witness*: [`Kernels::avx2`] and friends return `None` unless the CPU was
//! just checked to have the feature, so holding a `Kernels` proves that
//! calling through it is sound, and its methods are safe.
//!
//! # Length precondition
//!
//! `dst` and `src` must have the same length. These are internal kernels
//! whose callers always split buffers into equal chunks, so a mismatch is a
//! bug in the caller: every entry point checks it with `assert_eq!` (a
//! panic with both lengths in the message) before any unsafe code runs, and
//! never reads or writes out of bounds.

use std::sync::OnceLock;

#[cfg(target_arch = "aarch64")]
mod aarch64;
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod generic;
mod portable;
#[cfg(target_arch = "x86_64")]
mod x86_64;

/// The environment variable that forces a code path by name (read once, at
/// the first kernel call).
pub const KERNEL_ENV: &str = "CD_REDSET_KERNEL";

/// Every path name this crate knows, in order of preference (best first).
/// Which of them exist on this machine is [`available_paths`].
pub const PATH_NAMES: &[&str] = &["gfni-avx2", "avx2", "ssse3", "neon", "portable"];

/// `dst[i] ^= src[i]`.
type XorFn = unsafe fn(&mut [u8], &[u8]);
/// `dst[i] ^= c * src[i]` or `dst[i] = c * src[i]`.
type MulFn = unsafe fn(&mut [u8], &[u8], u8);
/// `outputs[t] = sum_i rows[t * n + i] * inputs[i]`.
type CombineFn = unsafe fn(&[u8], &[&[u8]], &mut [&mut [u8]]);

/// Bytes of every buffer per strip where [`combine`] cannot hold every output
/// in registers: the inputs' strips stay in the L2 cache while each group of
/// outputs reads them.
const STRIP: usize = 32 * 1024;

/// One code path: its name and its four kernels.
///
/// Obtain one from a witness constructor ([`Kernels::portable`],
/// [`Kernels::avx2`], ..., [`Kernels::by_name`]), from [`available_paths`],
/// or the selected one from [`selected`]. Having a value proves the CPU runs
/// its code, so the methods are safe.
#[derive(Clone, Copy)]
pub struct Kernels {
    name: &'static str,
    xor: XorFn,
    mul_xor: MulFn,
    mul: MulFn,
    combine: CombineFn,
}

impl Kernels {
    /// Builds a table from raw kernels.
    ///
    /// # Safety
    ///
    /// Each function must be sound to call on the current CPU whenever
    /// `dst.len() == src.len()` (the methods check that before calling), and
    /// must compute exactly what its name says for every `c`; `combine` must
    /// be sound whenever [`Kernels::combine`]'s checks passed.
    unsafe fn new_unchecked(
        name: &'static str,
        xor: XorFn,
        mul_xor: MulFn,
        mul: MulFn,
        combine: CombineFn,
    ) -> Self {
        Kernels {
            name,
            xor,
            mul_xor,
            mul,
            combine,
        }
    }

    /// The scalar path; always available.
    pub fn portable() -> Kernels {
        // SAFETY: the portable kernels are safe functions with no CPU
        // requirement.
        unsafe {
            Kernels::new_unchecked(
                "portable",
                portable::xor_into,
                portable::mul_xor_into,
                portable::mul_into,
                portable::combine,
            )
        }
    }

    /// The SSSE3 path (x86_64), if this CPU has SSSE3.
    pub fn ssse3() -> Option<Kernels> {
        #[cfg(target_arch = "x86_64")]
        {
            x86_64::ssse3()
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            None
        }
    }

    /// The AVX2 path (x86_64), if this CPU has AVX2.
    pub fn avx2() -> Option<Kernels> {
        #[cfg(target_arch = "x86_64")]
        {
            x86_64::avx2()
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            None
        }
    }

    /// The GFNI path on AVX2 registers (x86_64), if this CPU has both.
    pub fn gfni_avx2() -> Option<Kernels> {
        #[cfg(target_arch = "x86_64")]
        {
            x86_64::gfni_avx2()
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            None
        }
    }

    /// The NEON path (aarch64), if this CPU has NEON.
    pub fn neon() -> Option<Kernels> {
        #[cfg(target_arch = "aarch64")]
        {
            aarch64::neon()
        }
        #[cfg(not(target_arch = "aarch64"))]
        {
            None
        }
    }

    /// The path called `name` (one of [`PATH_NAMES`]), if it is usable on
    /// this CPU.
    pub fn by_name(name: &str) -> Option<Kernels> {
        match name {
            "portable" => Some(Kernels::portable()),
            "ssse3" => Kernels::ssse3(),
            "avx2" => Kernels::avx2(),
            "gfni-avx2" => Kernels::gfni_avx2(),
            "neon" => Kernels::neon(),
            _ => None,
        }
    }

    /// The path's name, as in [`PATH_NAMES`].
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// `dst[i] ^= src[i]`.
    ///
    /// # Panics
    ///
    /// If `dst.len() != src.len()`.
    #[inline]
    pub fn xor_into(&self, dst: &mut [u8], src: &[u8]) {
        check_lengths(dst, src);
        // SAFETY: holding `self` proves the CPU supports this path, and the
        // lengths were just checked.
        unsafe { (self.xor)(dst, src) }
    }

    /// `dst[i] ^= c * src[i]` in GF(2^8).
    ///
    /// # Panics
    ///
    /// If `dst.len() != src.len()`.
    #[inline]
    pub fn mul_xor_into(&self, dst: &mut [u8], src: &[u8], c: u8) {
        check_lengths(dst, src);
        match c {
            0 => {}
            1 => self.xor_into(dst, src),
            // SAFETY: holding `self` proves the CPU supports this path, and
            // the lengths were just checked.
            _ => unsafe { (self.mul_xor)(dst, src, c) },
        }
    }

    /// `dst[i] = c * src[i]` in GF(2^8).
    ///
    /// # Panics
    ///
    /// If `dst.len() != src.len()`.
    #[inline]
    pub fn mul_into(&self, dst: &mut [u8], src: &[u8], c: u8) {
        check_lengths(dst, src);
        match c {
            0 => dst.fill(0),
            1 => dst.copy_from_slice(src),
            // SAFETY: holding `self` proves the CPU supports this path, and
            // the lengths were just checked.
            _ => unsafe { (self.mul)(dst, src, c) },
        }
    }

    /// `outputs[t] = sum_i rows[t * n + i] * inputs[i]` in GF(2^8), for
    /// `n = inputs.len()` and the row-major `outputs.len() x n` matrix
    /// `rows`: every output from one pass over the inputs (see the module
    /// docs). With no inputs every output is zeroed.
    ///
    /// # Panics
    ///
    /// If `rows.len() != inputs.len() * outputs.len()`, or the buffers do
    /// not all have one length.
    pub fn combine(&self, rows: &[u8], inputs: &[&[u8]], outputs: &mut [&mut [u8]]) {
        assert_eq!(
            rows.len(),
            inputs.len() * outputs.len(),
            "cd-erasure combine: the matrix is not outputs x inputs"
        );
        let Some(len) = outputs.first().map(|o| o.len()) else {
            return;
        };
        for b in inputs
            .iter()
            .map(|b| b.len())
            .chain(outputs.iter().map(|b| b.len()))
        {
            assert_eq!(b, len, "cd-erasure combine: buffer lengths differ");
        }
        if inputs.is_empty() {
            outputs.iter_mut().for_each(|o| o.fill(0));
            return;
        }
        // SAFETY: holding `self` proves the CPU supports this path; there is
        // an input, the matrix shape and every length were just checked.
        unsafe { (self.combine)(rows, inputs, outputs) }
    }
}

impl core::fmt::Debug for Kernels {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Kernels").field("name", &self.name).finish()
    }
}

/// The length precondition of every kernel, checked before any unsafe code.
#[inline]
#[track_caller]
fn check_lengths(dst: &[u8], src: &[u8]) {
    assert_eq!(
        dst.len(),
        src.len(),
        "cd-erasure kernel: dst and src lengths differ"
    );
}

/// Every path usable on this CPU, best first; `portable` is always last.
pub fn available_paths() -> Vec<Kernels> {
    PATH_NAMES
        .iter()
        .filter_map(|name| Kernels::by_name(name))
        .collect()
}

/// Picks the path: the one named by [`KERNEL_ENV`] if usable, else the best.
fn detect() -> Kernels {
    let best = available_paths()
        .into_iter()
        .next()
        .unwrap_or_else(Kernels::portable);
    let requested = std::env::var(KERNEL_ENV).unwrap_or_default();
    let requested = requested.trim();
    if requested.is_empty() || requested == "auto" {
        tracing::debug!(path = best.name, "cd-erasure: GF(2^8) kernels detected");
        return best;
    }
    match Kernels::by_name(requested) {
        Some(forced) => {
            tracing::debug!(
                path = forced.name,
                "cd-erasure: GF(2^8) kernels forced by {KERNEL_ENV}"
            );
            forced
        }
        None => {
            tracing::warn!(
                requested,
                path = best.name,
                "cd-erasure: {KERNEL_ENV} names no path usable on this CPU; using the detected one"
            );
            best
        }
    }
}

/// The path in use, chosen once (on first call) and then fixed.
pub fn selected() -> Kernels {
    static SELECTED: OnceLock<Kernels> = OnceLock::new();
    *SELECTED.get_or_init(detect)
}

/// Name of the code path chosen at run time (`"gfni-avx2"`, `"avx2"`,
/// `"ssse3"`, `"neon"` or `"portable"`).
pub fn selected_path() -> &'static str {
    selected().name
}

/// `dst[i] ^= src[i]`, on the selected path.
///
/// # Panics
///
/// If `dst.len() != src.len()` (a precondition; see the module docs).
#[inline]
pub fn xor_into(dst: &mut [u8], src: &[u8]) {
    selected().xor_into(dst, src)
}

/// `dst[i] ^= c * src[i]` in GF(2^8), on the selected path.
///
/// # Panics
///
/// If `dst.len() != src.len()` (a precondition; see the module docs).
#[inline]
pub fn mul_xor_into(dst: &mut [u8], src: &[u8], c: u8) {
    selected().mul_xor_into(dst, src, c)
}

/// `dst[i] = c * src[i]` in GF(2^8), on the selected path.
///
/// # Panics
///
/// If `dst.len() != src.len()` (a precondition; see the module docs).
#[inline]
pub fn mul_into(dst: &mut [u8], src: &[u8], c: u8) {
    selected().mul_into(dst, src, c)
}

/// `outputs[t] = sum_i rows[t * n + i] * inputs[i]` in GF(2^8), in one pass,
/// on the selected path (see [`Kernels::combine`]).
///
/// # Panics
///
/// If the matrix is not `outputs.len() x inputs.len()` or the buffer
/// lengths differ (a precondition; see the module docs).
#[inline]
pub fn combine(rows: &[u8], inputs: &[&[u8]], outputs: &mut [&mut [u8]]) {
    selected().combine(rows, inputs, outputs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gf256::mul;

    /// Deterministic bytes without a dependency: a small LCG.
    fn bytes(len: usize, seed: u64) -> Vec<u8> {
        let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        (0..len)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (s >> 56) as u8
            })
            .collect()
    }

    const LENGTHS: &[usize] = &[
        0, 1, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 1000,
    ];

    /// Runs every path over every length, offset and a spread of constants,
    /// against the per-byte definition.
    #[test]
    fn every_path_matches_the_definition() {
        for k in available_paths() {
            for &len in LENGTHS {
                for offset in 0..4 {
                    let src_buf = bytes(len + offset, len as u64);
                    let dst_buf = bytes(len + offset, 1000 + len as u64);
                    let src = &src_buf[offset..];
                    for c in [0u8, 1, 2, 3, 0x1D, 0x80, 0xFF] {
                        let mut got = dst_buf[offset..].to_vec();
                        k.mul_xor_into(&mut got, src, c);
                        let want: Vec<u8> = dst_buf[offset..]
                            .iter()
                            .zip(src)
                            .map(|(d, s)| d ^ mul(c, *s))
                            .collect();
                        assert_eq!(got, want, "{} mul_xor len {len} c {c}", k.name());

                        k.mul_into(&mut got, src, c);
                        let want: Vec<u8> = src.iter().map(|s| mul(c, *s)).collect();
                        assert_eq!(got, want, "{} mul len {len} c {c}", k.name());
                    }
                    let mut got = dst_buf[offset..].to_vec();
                    k.xor_into(&mut got, src);
                    let want: Vec<u8> = dst_buf[offset..]
                        .iter()
                        .zip(src)
                        .map(|(d, s)| d ^ s)
                        .collect();
                    assert_eq!(got, want, "{} xor len {len}", k.name());
                }
            }
        }
    }

    /// Every constant against every byte value, straight into the raw
    /// kernels (bypassing the `c == 0`/`c == 1` shortcuts).
    #[test]
    fn every_path_multiplies_every_pair() {
        let src: Vec<u8> = (0..=255u8).collect();
        for k in available_paths() {
            for c in 0..=255u8 {
                let mut got = vec![0u8; 256];
                // SAFETY: `k` is a witness for its CPU features; the lengths
                // are equal.
                unsafe { (k.mul)(&mut got, &src, c) };
                for x in 0..=255u8 {
                    assert_eq!(got[x as usize], mul(c, x), "{} {c} * {x}", k.name());
                }
                let mut acc = vec![0x5Au8; 256];
                // SAFETY: as above.
                unsafe { (k.mul_xor)(&mut acc, &src, c) };
                for x in 0..=255u8 {
                    assert_eq!(acc[x as usize], 0x5A ^ mul(c, x), "{} {c} * {x}", k.name());
                }
            }
        }
    }

    /// `combine` by its definition, one byte at a time.
    fn naive_combine(rows: &[u8], inputs: &[Vec<u8>], len: usize) -> Vec<Vec<u8>> {
        let n = inputs.len();
        rows.chunks_exact(n)
            .map(|row| {
                (0..len)
                    .map(|j| {
                        row.iter()
                            .zip(inputs)
                            .fold(0u8, |acc, (&c, input)| acc ^ mul(c, input[j]))
                    })
                    .collect()
            })
            .collect()
    }

    /// Every path's `combine` gives the bytes of the definition and of the
    /// scalar path, for the codes in use (4+2, 8+2), one to nine outputs
    /// (one group and several), every vector boundary and odd lengths, and
    /// sub-slices starting off alignment (each buffer at its own offset).
    #[test]
    fn every_path_combines_like_scalar() {
        let shapes = [
            (4, 2),
            (8, 2),
            (1, 1),
            (2, 1),
            (3, 3),
            (5, 4),
            (6, 5),
            (10, 4),
            (2, 9),
        ];
        let lengths = [
            0, 1, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 257, 1000, 4099,
        ];
        let scalar = Kernels::portable();
        for &(n, m) in &shapes {
            let rows: Vec<u8> = bytes(n * m, (n * 16 + m) as u64);
            for &len in &lengths {
                for offset in [0usize, 1, 3] {
                    // input `i` starts at `offset + i` within its buffer: odd,
                    // different alignments
                    let bufs: Vec<Vec<u8>> = (0..n)
                        .map(|i| bytes(len + offset + i, (i * 7 + len) as u64))
                        .collect();
                    let inputs: Vec<Vec<u8>> = bufs
                        .iter()
                        .enumerate()
                        .map(|(i, b)| b[offset + i..].to_vec())
                        .collect();
                    let ins: Vec<&[u8]> = bufs
                        .iter()
                        .enumerate()
                        .map(|(i, b)| &b[offset + i..])
                        .collect();
                    let want = naive_combine(&rows, &inputs, len);
                    for k in std::iter::once(scalar).chain(available_paths()) {
                        let mut store = vec![vec![0xA5u8; len + offset + 2]; m];
                        let mut outs: Vec<&mut [u8]> = store
                            .iter_mut()
                            .enumerate()
                            .map(|(t, b)| &mut b[offset + t % 3..offset + t % 3 + len])
                            .collect();
                        k.combine(&rows, &ins, &mut outs);
                        let got: Vec<Vec<u8>> = outs.iter().map(|o| o.to_vec()).collect();
                        assert_eq!(
                            got,
                            want,
                            "{} combine {n}+{m} len {len} offset {offset}",
                            k.name()
                        );
                        for (t, b) in store.iter().enumerate() {
                            let at = offset + t % 3;
                            assert!(
                                b[..at].iter().chain(&b[at + len..]).all(|&x| x == 0xA5),
                                "{} combine wrote outside its output",
                                k.name()
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn combine_checks_its_shape() {
        let k = Kernels::portable();
        let (a, b) = ([1u8, 2], [3u8, 4]);
        let mut o = [9u8; 2];
        k.combine(&[], &[], &mut [&mut o]);
        assert_eq!(o, [0, 0], "no inputs: a sum of nothing");
        k.combine(&[1, 1], &[&a, &b], &mut [&mut o]);
        assert_eq!(o, [1 ^ 3, 2 ^ 4]);
        let bad_matrix = std::panic::catch_unwind(|| {
            let mut o = [0u8; 2];
            Kernels::portable().combine(&[1], &[&a, &b], &mut [&mut o]);
        });
        assert!(bad_matrix.is_err());
        let bad_len = std::panic::catch_unwind(|| {
            let mut o = [0u8; 3];
            Kernels::portable().combine(&[1, 1], &[&a, &b], &mut [&mut o]);
        });
        assert!(bad_len.is_err());
    }

    #[test]
    fn portable_is_always_available_and_last() {
        let paths = available_paths();
        assert_eq!(paths.last().map(Kernels::name), Some("portable"));
        for k in &paths {
            assert!(PATH_NAMES.contains(&k.name()));
            assert_eq!(Kernels::by_name(k.name()).map(|k| k.name()), Some(k.name()));
        }
        assert!(Kernels::by_name("no-such-path").is_none());
    }

    #[test]
    #[should_panic(expected = "lengths differ")]
    fn length_mismatch_panics_before_touching_memory() {
        let mut dst = [0u8; 4];
        Kernels::portable().mul_xor_into(&mut dst, &[1, 2, 3], 7);
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn x86_64_witnesses_follow_cpu_detection() {
        assert_eq!(
            Kernels::avx2().is_some(),
            std::arch::is_x86_feature_detected!("avx2")
        );
        assert_eq!(
            Kernels::ssse3().is_some(),
            std::arch::is_x86_feature_detected!("ssse3")
        );
        assert_eq!(
            Kernels::gfni_avx2().is_some(),
            std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("gfni")
        );
        assert!(Kernels::neon().is_none());
    }

    /// NEON is part of the aarch64 Linux ABI: the cross run under qemu must test it.
    #[test]
    #[cfg(target_arch = "aarch64")]
    fn aarch64_has_neon_first_and_no_x86_paths() {
        assert_eq!(Kernels::neon().map(|k| k.name()), Some("neon"));
        let names: Vec<&str> = available_paths().iter().map(|k| k.name()).collect();
        assert_eq!(names, ["neon", "portable"]);
    }
}
