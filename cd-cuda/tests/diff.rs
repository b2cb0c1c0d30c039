//! The differential copy (issue 26) against the stand-in, which plays the kernels of
//! `kernels/kernels.ll` on the host by name: block checksums on the "GPU", compared with the
//! saved copy's, the changed blocks gathered and brought over in one transfer; all or
//! nothing; the switch `CD_CUDA_DIFF`; and the PTX the library embeds.

mod common;
mod support;

use cd_cuda::{BlockSums, CudaMemory, DIFF_BLOCK, DIFF_ENV};
use common::*;

const B: usize = DIFF_BLOCK;

fn launches(s: &Standin) -> u64 {
    // SAFETY: the stand-in's test hook.
    unsafe { (s.launches)() }
}

/// The first save is a full copy that also takes the checksums; then only the blocks that
/// changed come over (one gather, one transfer), whatever changed in them: one byte, two
/// words swapped, the short last block's tail; nothing when nothing changed.
#[test]
fn only_changed_blocks_come_over() {
    let (s, _guard) = standin();
    let gpu = CudaMemory::new(0).unwrap();
    let len = 9 * B + 13; // a short last block, and bytes past the last whole word
    let a = s.malloc(len);
    let mut data = pattern(len, 1);
    s.upload(a, &data);
    let (mut saved, mut sums) = (vec![0u8; len], BlockSums::default());
    let r = gpu.save_changed(&mut saved, a, &mut sums).unwrap();
    assert!(r.full && r.bytes_copied == len && r.blocks == 10, "{r:?}");
    assert!(saved == data);
    assert_eq!(sums.blocks(), 10);

    let before = launches(s);
    let r = gpu.save_changed(&mut saved, a, &mut sums).unwrap();
    assert_eq!((r.changed, r.bytes_copied, r.full), (0, 0, false), "{r:?}");
    assert_eq!(
        launches(s) - before,
        1,
        "the checksums only: nothing to gather"
    );

    data[3 * B + 100] ^= 1; // one bit
    data.swap(5 * B + 8, 5 * B + 16); // two bytes of two words swapped: same bytes, moved
    data[len - 1] ^= 0x80; // the tail no whole word covers
    s.upload(a, &data);
    let before = launches(s);
    let r = gpu.save_changed(&mut saved, a, &mut sums).unwrap();
    assert_eq!((r.changed, r.full), (3, false), "{r:?}");
    assert_eq!(
        r.bytes_copied,
        2 * B + 13,
        "two whole blocks and the short last one"
    );
    assert_eq!(launches(s) - before, 2, "checksums, then one gather");
    assert!(saved == data, "the saved copy is the device's bytes again");

    // Most blocks changed: the whole range is copied instead of gathered.
    let data = pattern(len, 2);
    s.upload(a, &data);
    let r = gpu.save_changed(&mut saved, a, &mut sums).unwrap();
    assert!(r.full && r.changed == 10, "{r:?}");
    assert!(saved == data);
    // SAFETY: allocated above, no longer used.
    assert_eq!(unsafe { (s.free)(a as u64) }, 0);
}

/// Ranges whose last block holds no whole word (fewer than 8 bytes), and ranges of fewer than
/// 8 bytes: a change to those bytes is seen too.
#[test]
fn short_tails() {
    let (s, _guard) = standin();
    let gpu = CudaMemory::new(0).unwrap();
    for len in [2 * B + 5, 5, 8, B] {
        let a = s.malloc(len);
        let mut data = pattern(len, 3);
        s.upload(a, &data);
        let (mut saved, mut sums) = (vec![0u8; len], BlockSums::default());
        gpu.save_changed(&mut saved, a, &mut sums).unwrap();
        let r = gpu.save_changed(&mut saved, a, &mut sums).unwrap();
        assert_eq!(r.changed, 0, "{len}: {r:?}");
        data[len - 1] ^= 0x10;
        s.upload(a, &data);
        let r = gpu.save_changed(&mut saved, a, &mut sums).unwrap();
        assert_eq!(r.changed, 1, "{len}: {r:?}");
        assert!(saved == data, "{len}");
        // SAFETY: allocated above, no longer used.
        assert_eq!(unsafe { (s.free)(a as u64) }, 0);
    }
}

/// All or nothing: a patch changes nothing until applied; a failed diff (the array was
/// freed) and a patch of the wrong length leave the saved copy and its checksums as they
/// were.
#[test]
fn all_or_nothing() {
    let (s, _guard) = standin();
    let gpu = CudaMemory::new(0).unwrap();
    let len = 4 * B;
    let a = s.malloc(len);
    s.upload(a, &pattern(len, 1));
    let (mut saved, mut sums) = (vec![0u8; len], BlockSums::default());
    gpu.save_changed(&mut saved, a, &mut sums).unwrap();
    let (kept, kept_sums) = (saved.clone(), sums.clone());

    s.upload(a, &pattern(len, 2));
    let patch = gpu.changes(a, len, &sums).unwrap();
    assert!(saved == kept && sums == kept_sums, "nothing before apply");
    let err = patch.apply(&mut saved[..len - 1], &mut sums).unwrap_err();
    assert!(err.contains("applied to"), "{err}");
    assert!(saved == kept && sums == kept_sums);

    // SAFETY: allocated above; the diff below must fail on the freed range.
    assert_eq!(unsafe { (s.free)(a as u64) }, 0);
    let err = gpu.save_changed(&mut saved, a, &mut sums).unwrap_err();
    assert!(!err.is_empty());
    assert!(
        saved == kept && sums == kept_sums,
        "a failed diff changes nothing"
    );
}

/// `CD_CUDA_DIFF=0` turns it off: every save is a full copy, with no checksums, and no
/// kernel runs; an unaligned range is always copied in full.
#[test]
fn the_switch_and_unaligned_ranges() {
    let (s, _guard) = standin();
    let gpu = CudaMemory::new(0).unwrap();
    let len = 4 * B;
    let a = s.malloc(len);
    s.upload(a, &pattern(len, 1));
    std::env::set_var(DIFF_ENV, "0");
    assert!(!cd_cuda::diff_enabled());
    let (mut saved, mut sums) = (vec![0u8; len], BlockSums::default());
    let before = launches(s);
    for _ in 0..2 {
        let r = gpu.save_changed(&mut saved, a, &mut sums).unwrap();
        assert!(r.full && r.bytes_copied == len, "{r:?}");
        assert_eq!(sums.blocks(), 0);
    }
    assert_eq!(launches(s), before, "no kernel when off");
    std::env::remove_var(DIFF_ENV);
    assert!(cd_cuda::diff_enabled());

    let (mut saved, mut sums) = (vec![0u8; len - 1], BlockSums::default());
    for _ in 0..2 {
        let r = gpu.save_changed(&mut saved, a + 1, &mut sums).unwrap();
        assert!(r.full, "{r:?}");
    }
    assert!(saved[..] == pattern(len, 1)[1..]);
    // SAFETY: allocated above, no longer used.
    assert_eq!(unsafe { (s.free)(a as u64) }, 0);
}

/// The PTX the library embeds names the kernels the space and the bench launch, and is what
/// LLVM makes of `kernels/kernels.ll` (checked where LLVM 14's opt and llc are installed, or
/// named by `CD_OPT` and `CD_LLC`).
#[test]
fn ptx_matches_its_source() {
    for name in ["cd_block_sums", "cd_gather_blocks", "cd_bench_stencil"] {
        assert!(
            cd_cuda::KERNELS_PTX.contains(&format!(".visible .entry {name}(")),
            "{name}"
        );
    }
    let tool = |var: &str, default: &str| std::env::var(var).unwrap_or_else(|_| default.into());
    let (opt, llc) = (
        tool("CD_OPT", "/usr/lib/llvm-14/bin/opt"),
        tool("CD_LLC", "/usr/lib/llvm-14/bin/llc"),
    );
    if !std::path::Path::new(&opt).exists() || !std::path::Path::new(&llc).exists() {
        eprintln!("no {opt} or {llc}: the PTX is not regenerated");
        return;
    }
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels/kernels.ll");
    let optimised = std::process::Command::new(&opt)
        .arg("-O3")
        .arg(&source)
        .args(["-o", "-"])
        .output()
        .expect("run opt");
    assert!(
        optimised.status.success(),
        "{}",
        String::from_utf8_lossy(&optimised.stderr)
    );
    let mut child = std::process::Command::new(&llc)
        .args([
            "-march=nvptx64",
            "-mcpu=sm_70",
            "-mattr=+ptx63",
            "-O3",
            "-o",
            "-",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run llc");
    use std::io::Write;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&optimised.stdout)
        .expect("feed llc");
    let ptx = child.wait_with_output().expect("llc output");
    assert!(ptx.status.success());
    let strip = |t: &str| {
        t.lines()
            .filter(|l| !l.starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(
        strip(&String::from_utf8_lossy(&ptx.stdout)) == strip(cd_cuda::KERNELS_PTX),
        "kernels.ptx is stale: regenerate it as kernels.ll says"
    );
}
