//! Property and known-answer tests for GF(2^8), the bulk kernels and the
//! Reed-Solomon code.
//!
//! * Field axioms and the consistency of `mul`, `div`, `inv`, `pow`.
//! * Every kernel path usable on this CPU against the naive per-byte loop,
//!   over random lengths (always including the vector-boundary lengths 0, 1,
//!   15, 16, 17, 31, 32, 33) and unaligned sub-slices.
//! * Reed-Solomon: encode, erase up to `k` blocks, rebuild, compare.
//! * Known answers: SHA-256 of the parity of seeded ChaCha8 data for
//!   N=4 k=2 and N=6 k=3, frozen, so the on-disk parity can never drift.
//! * `CD_REDSET_KERNEL` forces a path: the test re-runs this binary once per
//!   available path with the variable set.
//!
//! The whole file also runs with `CD_REDSET_KERNEL=portable` (or any path
//! name) to exercise that path through the public functions.

use cd_erasure::gf256;
use cd_erasure::kernels::{self, Kernels, KERNEL_ENV};
use cd_erasure::rs::{RsCode, RsError};
use proptest::prelude::*;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};

fn naive_mul_xor(dst: &mut [u8], src: &[u8], c: u8) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d ^= gf256::mul_bitwise(c, *s);
    }
}

/// Lengths around every vector width, plus arbitrary ones.
fn interesting_len() -> impl Strategy<Value = usize> {
    prop_oneof![
        prop::sample::select(vec![
            0usize, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129
        ]),
        0usize..600,
    ]
}

fn chacha_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut v = vec![0u8; len];
    rng.fill_bytes(&mut v);
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn field_axioms(a: u8, b: u8, c: u8) {
        use gf256::{add, mul};
        prop_assert_eq!(mul(a, b), mul(b, a));
        prop_assert_eq!(mul(mul(a, b), c), mul(a, mul(b, c)));
        prop_assert_eq!(mul(a, add(b, c)), add(mul(a, b), mul(a, c)));
        prop_assert_eq!(add(add(a, b), c), add(a, add(b, c)));
        prop_assert_eq!(mul(a, 1), a);
        prop_assert_eq!(mul(a, 0), 0);
        prop_assert_eq!(add(a, a), 0);
        prop_assert_eq!(mul(a, b), gf256::mul_bitwise(a, b));
    }

    #[test]
    fn division_inverts_multiplication(a: u8, b in 1u8..) {
        let q = gf256::div(a, b).unwrap();
        prop_assert_eq!(gf256::mul(q, b), a);
        prop_assert_eq!(gf256::div(gf256::mul(a, b), b), Some(a));
        let ib = gf256::inv(b).unwrap();
        prop_assert_eq!(gf256::mul(b, ib), 1);
        prop_assert_eq!(q, gf256::mul(a, ib));
        prop_assert_eq!(gf256::inv(ib), Some(b));
        prop_assert_eq!(gf256::div(a, 0), None);
    }

    #[test]
    fn pow_and_log(a in 1u8.., n in 0u32..1000, m in 0u32..1000) {
        prop_assert_eq!(gf256::mul(gf256::pow(a, n), gf256::pow(a, m)), gf256::pow(a, n + m));
        prop_assert_eq!(gf256::pow(a, 255), 1);
        let l = gf256::log(a).unwrap();
        prop_assert_eq!(gf256::exp(l), a);
        prop_assert_eq!(gf256::pow(2, u32::from(l)), a);
    }

    #[test]
    fn every_path_equals_the_naive_loop(
        len in interesting_len(),
        src_off in 0usize..32,
        dst_off in 0usize..32,
        c: u8,
        seed: u64,
    ) {
        let src_buf = chacha_bytes(seed, len + src_off);
        let dst_buf = chacha_bytes(seed ^ 0x5555, len + dst_off);
        let src = &src_buf[src_off..];

        let mut want_mx = dst_buf[dst_off..].to_vec();
        naive_mul_xor(&mut want_mx, src, c);
        let want_m: Vec<u8> = src.iter().map(|s| gf256::mul_bitwise(c, *s)).collect();
        let want_x: Vec<u8> = dst_buf[dst_off..].iter().zip(src).map(|(d, s)| d ^ s).collect();

        for k in kernels::available_paths() {
            let mut d = dst_buf.clone();
            k.mul_xor_into(&mut d[dst_off..], src, c);
            prop_assert_eq!(&d[dst_off..], &want_mx[..], "{} mul_xor", k.name());
            prop_assert_eq!(&d[..dst_off], &dst_buf[..dst_off], "{} wrote before dst", k.name());

            let mut d = dst_buf.clone();
            k.mul_into(&mut d[dst_off..], src, c);
            prop_assert_eq!(&d[dst_off..], &want_m[..], "{} mul", k.name());

            let mut d = dst_buf.clone();
            k.xor_into(&mut d[dst_off..], src);
            prop_assert_eq!(&d[dst_off..], &want_x[..], "{} xor", k.name());
        }

        // The dispatched entry points agree too.
        let mut d = dst_buf[dst_off..].to_vec();
        kernels::mul_xor_into(&mut d, src, c);
        prop_assert_eq!(&d, &want_mx);
        kernels::mul_into(&mut d, src, c);
        prop_assert_eq!(&d, &want_m);
        let mut d = dst_buf[dst_off..].to_vec();
        kernels::xor_into(&mut d, src);
        prop_assert_eq!(&d, &want_x);
    }

    #[test]
    fn rs_rebuilds_any_k_erasures(
        n in 1usize..=12,
        k in 1usize..=4,
        len in interesting_len(),
        seed: u64,
        erase_seed: u64,
    ) {
        let code = RsCode::new(n, k).unwrap();
        let data: Vec<Vec<u8>> = (0..n).map(|i| chacha_bytes(seed.wrapping_add(i as u64), len)).collect();
        let mut sums = vec![vec![0xA5u8; len]; k];
        {
            let d: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
            let mut c: Vec<&mut [u8]> = sums.iter_mut().map(Vec::as_mut_slice).collect();
            code.encode(&d, &mut c).unwrap();
        }
        let blocks: Vec<&Vec<u8>> = data.iter().chain(&sums).collect();

        // Pick up to k distinct blocks to lose, in a random order.
        let mut rng = ChaCha8Rng::seed_from_u64(erase_seed);
        let lose = (rng.next_u32() as usize) % (k + 1);
        let mut order: Vec<usize> = (0..n + k).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, (rng.next_u32() as usize) % (i + 1));
        }
        let missing = &order[..lose];

        let dec = code.decoder(missing).unwrap();
        prop_assert_eq!(dec.present().len(), n);
        for p in dec.present() {
            prop_assert!(!missing.contains(p));
        }
        let present: Vec<&[u8]> = dec.present().iter().map(|&b| blocks[b].as_slice()).collect();
        let mut out = vec![vec![0u8; len]; lose];
        let mut o: Vec<&mut [u8]> = out.iter_mut().map(Vec::as_mut_slice).collect();
        dec.reconstruct(&present, &mut o).unwrap();
        for (m, &b) in missing.iter().enumerate() {
            prop_assert_eq!(&out[m], blocks[b], "N={} k={} missing {:?}", n, k, missing);
        }
    }
}

#[test]
fn too_many_erasures_are_refused() {
    let code = RsCode::new(6, 3).unwrap();
    assert_eq!(
        code.decoder(&[0, 2, 4, 7]).unwrap_err(),
        RsError::TooManyMissing {
            missing: 4,
            checksum: 3
        }
    );
}

/// Parity of seeded ChaCha8 data, hashed: the bytes redset-format files
/// carry, frozen. The parity is also recomputed with the bitwise multiply
/// straight from the matrix, so a wrong kernel and a wrong matrix both fail.
fn parity_digest(n: usize, k: usize, len: usize, seed: u64) -> String {
    let code = RsCode::new(n, k).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let data: Vec<Vec<u8>> = (0..n)
        .map(|_| {
            let mut v = vec![0u8; len];
            rng.fill_bytes(&mut v);
            v
        })
        .collect();
    let mut sums = vec![vec![0u8; len]; k];
    {
        let d: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
        let mut c: Vec<&mut [u8]> = sums.iter_mut().map(Vec::as_mut_slice).collect();
        code.encode(&d, &mut c).unwrap();
    }
    for (j, sum) in sums.iter().enumerate() {
        let mut want = vec![0u8; len];
        for (i, block) in data.iter().enumerate() {
            naive_mul_xor(&mut want, block, code.checksum_row(j)[i]);
        }
        assert_eq!(sum, &want, "checksum {j} differs from the naive encode");
    }
    let mut h = Sha256::new();
    for sum in &sums {
        h.update(sum);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn known_answer_parity_n4_k2() {
    assert_eq!(
        parity_digest(4, 2, 100_003, 42),
        "ec052ef473aa8e780433f6083ebf3adb0c5364a56aae626652cd8510e1f564e0"
    );
}

#[test]
fn known_answer_parity_n6_k3() {
    assert_eq!(
        parity_digest(6, 3, 65_537, 7),
        "bbc531eade8f896d857061bf002e01c305efbbbe7a1c899f1fdbecf6c423e7d1"
    );
}

/// What `selected_path` must be, given the environment this process started
/// with: the forced path if it is usable, else the detected best.
#[test]
fn kernel_choice_follows_env() {
    let best = kernels::available_paths()[0].name();
    let requested = std::env::var(KERNEL_ENV).unwrap_or_default();
    let expected = match Kernels::by_name(requested.trim()) {
        Some(k) => k.name(),
        None => best,
    };
    assert_eq!(kernels::selected_path(), expected);
    assert_eq!(kernels::selected().name(), expected);
}

/// The variable naming the emulator that runs this test binary when it was
/// cross-built (`scripts/test.sh` sets it to `qemu-aarch64 -L <sysroot>`), so
/// that the children run the same way the parent does.
const EXEC_WRAPPER_ENV: &str = "CD_TEST_EXEC_WRAPPER";

/// A command that runs this test binary, through [`EXEC_WRAPPER_ENV`] if set.
fn this_binary() -> std::process::Command {
    let exe = std::env::current_exe().unwrap();
    let wrapper = std::env::var(EXEC_WRAPPER_ENV).unwrap_or_default();
    let mut words = wrapper.split_whitespace();
    match words.next() {
        Some(program) => {
            let mut cmd = std::process::Command::new(program);
            cmd.args(words).arg(exe);
            cmd
        }
        None => std::process::Command::new(exe),
    }
}

/// Re-runs `kernel_choice_follows_env` in a child process once per usable
/// path with `CD_REDSET_KERNEL` set, plus once with a bogus name.
#[test]
fn env_var_forces_each_path() {
    let mut names: Vec<&str> = kernels::available_paths()
        .iter()
        .map(|k| k.name())
        .collect();
    names.push("no-such-path");
    for name in names {
        let out = this_binary()
            .args(["--exact", "kernel_choice_follows_env", "--test-threads=1"])
            .env(KERNEL_ENV, name)
            .output()
            .unwrap_or_else(|e| {
                panic!("cannot run this test binary ({e}); cross-built? set {EXEC_WRAPPER_ENV}")
            });
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "{KERNEL_ENV}={name}: child failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
