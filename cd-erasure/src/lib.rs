//! Erasure coding over GF(2^8): the field, the bulk SIMD kernels, and the Reed-Solomon code of
//! ECP-VeloC redset 0.4.
//!
//! This is the arithmetic under `cd-redset`'s XOR and RS schemes, kept in a crate of its own
//! because it needs neither MPI nor files: it builds for any target, and its tests run on
//! every code path the kernels have — on x86_64 natively, and on aarch64 under `qemu-aarch64`
//! (`scripts/test.sh` cross-builds it), so the NEON path is tested without an Arm machine.
//!
//! * [`gf256`] — the field with redset's polynomial `0x11D`: tables, `mul`, `div`, `inv`,
//!   `pow`, and the per-constant nibble tables and GFNI bit matrices the kernels use.
//! * [`kernels`] — `dst ^= src`, `dst ^= c * src` and `dst = c * src` on whole buffers, on the
//!   best path the CPU has (GFNI, AVX2, SSSE3, NEON, or a portable table loop), chosen once at
//!   run time; `CD_REDSET_KERNEL` forces one.
//! * [`rs`] — [`rs::RsCode`]: redset's systematic Vandermonde-derived encoding matrix, encode,
//!   decoders for any erasure pattern of at most `k` blocks, and redset's chunk layout.
//!
//! ```
//! use cd_erasure::rs::RsCode;
//!
//! let code = RsCode::new(4, 2)?;
//! assert_eq!(code.checksum_row(0), &[27, 28, 18, 20]); // redset's own example
//! let data: Vec<Vec<u8>> = (0..4u8).map(|i| vec![i + 1; 8]).collect();
//! let mut sums = vec![vec![0u8; 8]; 2];
//! let d: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
//! let mut s: Vec<&mut [u8]> = sums.iter_mut().map(Vec::as_mut_slice).collect();
//! code.encode(&d, &mut s)?;
//!
//! // lose data blocks 1 and 3, rebuild them from blocks 0, 2 and both checksums
//! let dec = code.decoder(&[1, 3])?;
//! let all: Vec<&[u8]> = data.iter().chain(&sums).map(Vec::as_slice).collect();
//! let present: Vec<&[u8]> = dec.present().iter().map(|&b| all[b]).collect();
//! let mut out = vec![vec![0u8; 8]; 2];
//! let mut o: Vec<&mut [u8]> = out.iter_mut().map(Vec::as_mut_slice).collect();
//! dec.reconstruct(&present, &mut o)?;
//! assert_eq!(out, [data[1].clone(), data[3].clone()]);
//! # Ok::<(), cd_erasure::rs::RsError>(())
//! ```

pub mod gf256;
pub mod kernels;
pub mod rs;
