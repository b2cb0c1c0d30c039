//! Bulk GF(2^8) kernels: `dst ^= src`, `dst ^= c * src`, `dst = c * src`.
//!
//! These three loops are all the byte-crunching the redundancy schemes need:
//! XOR parity is [`xor_into`]; a Reed-Solomon checksum chunk is a sum of
//! [`mul_xor_into`] calls, one per data chunk, with the encoding-matrix
//! coefficient as `c`; a rebuild is the same with the decoder's
//! coefficients. On checkpoint-sized buffers they run at memory bandwidth
//! when vectorised, so the code path matters.
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

/// One code path: its name and its three kernels.
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
}

impl Kernels {
    /// Builds a table from raw kernels.
    ///
    /// # Safety
    ///
    /// Each function must be sound to call on the current CPU whenever
    /// `dst.len() == src.len()` (the methods check that before calling), and
    /// must compute exactly what its name says for every `c`.
    unsafe fn new_unchecked(name: &'static str, xor: XorFn, mul_xor: MulFn, mul: MulFn) -> Self {
        Kernels {
            name,
            xor,
            mul_xor,
            mul,
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
