//! The differential copy (issue 26) against the stand-in, which plays the kernels of
//! `kernels/kernels.ll` on the host by name: block checksums on the "GPU", compared with the
//! saved copy's, the changed blocks gathered and brought over in one transfer; all or
//! nothing; the switch `CD_CUDA_DIFF`; the PTX the library embeds; and the differential
//! advance, cd-core's synchronous advance of a CD's device ranges patching their saved copies.

mod common;
mod support;

use cd_core::*;
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

/// Bytes the stand-in copied device to host, synchronously and not.
fn d2h(s: &Standin) -> u64 {
    let c = s.counters();
    c[0] + c[2]
}

/// Promotes the ranges ("add before you modify") and advances.
fn advance(cd: CdHandle, specs: &[AddrSpec]) -> cd_core::Result<AdvanceReport> {
    // SAFETY: device ranges of the stand-in, allocated, quiet during the calls.
    unsafe {
        add_to_cd_via_copy(cd, specs)?;
        advance_cd_point_in_time(cd)
    }
}

fn restore(cd: CdHandle) {
    // SAFETY: as above.
    unsafe { restore_cd(cd).unwrap() };
}

fn stats(cd: CdHandle) -> Stats {
    cd_info(cd).unwrap().stats
}

/// The advance of a CD's device range: whole the first time, then only the changed blocks
/// (checksums on the "GPU", one gather, one transfer) written into the saved copy, with a
/// short last block; nothing when nothing changed; whole again when everything changed.
/// Restore writes the state at each advance, bitwise.
#[test]
fn advance_copies_only_the_changed_blocks() {
    let (s, _guard) = standin();
    let len = 9 * B + 13;
    let a = s.malloc(len);
    let mut data = pattern(len, 1);
    s.upload(a, &data);
    let cd = root("cuda-diff-advance");
    advance(cd, &[rw(a, len)]).unwrap();
    assert_eq!(stats(cd).bytes_diffed, 0, "the first advance copies whole");

    data[B + 1] ^= 1;
    data[6 * B..7 * B].fill(0xAB);
    data[len - 1] ^= 0x40; // the short last block
    s.upload(a, &data);
    let (moved, launched) = (d2h(s), launches(s));
    let r = advance(cd, &[rw(a, len)]).unwrap();
    assert_eq!(r.bytes_copied, len, "the whole range is saved");
    let changed = (2 * B + 13) as u64;
    let st = stats(cd);
    assert_eq!(
        (
            st.bytes_diffed,
            st.diff_bytes_copied,
            st.diff_blocks_changed
        ),
        (len as u64, changed, 3)
    );
    let moved = d2h(s) - moved;
    assert!(
        moved >= changed && moved < changed + 1024,
        "the changed blocks and the checksums only: {moved}"
    );
    assert_eq!(launches(s) - launched, 2, "checksums, one gather");
    assert!(cd_saved_bytes(cd, a, len).unwrap() == data);
    s.upload(a, &pattern(len, 9));
    restore(cd);
    assert!(s.download(a, len) == data, "restored bitwise");

    // Nothing changed: the checksums only.
    let (moved, launched) = (d2h(s), launches(s));
    advance(cd, &[rw(a, len)]).unwrap();
    assert!(d2h(s) - moved < 1024);
    assert_eq!(launches(s) - launched, 1);
    assert_eq!(stats(cd).diff_bytes_copied, changed);

    // Everything changed: copied whole (straight into a store buffer), then patched again.
    let mut data = pattern(len, 2);
    s.upload(a, &data);
    let moved = d2h(s);
    advance(cd, &[rw(a, len)]).unwrap();
    assert!(d2h(s) - moved >= len as u64);
    assert_eq!(stats(cd).bytes_diffed, 2 * len as u64, "not differential");
    data[4 * B] ^= 2;
    s.upload(a, &data);
    advance(cd, &[rw(a, len)]).unwrap();
    assert_eq!(stats(cd).diff_bytes_copied, changed + B as u64);
    s.upload(a, &pattern(len, 8));
    restore(cd);
    assert!(s.download(a, len) == data);
    commit_cd(cd).unwrap();
    // SAFETY: allocated above; the CD that held it is gone.
    assert_eq!(unsafe { (s.free)(a as u64) }, 0);
}

/// `CD_CUDA_DIFF=0`: every advance copies whole, as before, with no kernel.
#[test]
fn the_switch_turns_the_differential_advance_off() {
    let (s, _guard) = standin();
    let len = 4 * B;
    let a = s.malloc(len);
    s.upload(a, &pattern(len, 1));
    let cd = root("cuda-diff-off");
    std::env::set_var(DIFF_ENV, "off");
    let launched = launches(s);
    advance(cd, &[rw(a, len)]).unwrap();
    let mut data = pattern(len, 1);
    data[B] ^= 1;
    s.upload(a, &data);
    let moved = d2h(s);
    advance(cd, &[rw(a, len)]).unwrap();
    assert_eq!(d2h(s) - moved, len as u64, "copied whole");
    assert_eq!(launches(s), launched, "no kernel when off");
    std::env::remove_var(DIFF_ENV);
    assert_eq!(stats(cd).bytes_diffed, 0);
    s.upload(a, &pattern(len, 7));
    restore(cd);
    assert!(s.download(a, len) == data);
    // On again: the saved copy has no checksums, so the next advance copies whole first.
    advance(cd, &[rw(a, len)]).unwrap();
    assert_eq!(stats(cd).bytes_diffed, 0);
    advance(cd, &[rw(a, len)]).unwrap();
    assert_eq!(stats(cd).bytes_diffed, len as u64);
    commit_cd(cd).unwrap();
    // SAFETY: allocated above; the CD that held it is gone.
    assert_eq!(unsafe { (s.free)(a as u64) }, 0);
}

/// All or nothing: two arrays changed, the second freed, so its differential copy fails after
/// the first's patch was built; the advance fails, the previous point is whole (saved bytes
/// and checksums), and restores bitwise.
#[test]
fn a_failed_differential_advance_leaves_the_previous_point() {
    let (s, _guard) = standin();
    let len = 4 * B;
    let (a, b) = (s.malloc(len), s.malloc(len));
    let specs = [rw(a, len), rw(b, len)];
    s.upload(a, &pattern(len, 1));
    s.upload(b, &pattern(len, 2));
    let cd = root("cuda-diff-fail");
    advance(cd, &specs).unwrap();
    advance(cd, &specs).unwrap();
    let point = pattern(len, 1);
    let mut data = point.clone();
    data[2 * B] ^= 1;
    s.upload(a, &data);
    // SAFETY: allocated above; the advance below must fail on the freed range.
    assert_eq!(unsafe { (s.free)(b as u64) }, 0);
    let err = advance(cd, &specs).unwrap_err();
    assert!(matches!(err, CdError::DeviceCopy { .. }), "{err}");
    assert!(cd_saved_bytes(cd, a, len).unwrap() == point);
    assert!(cd_saved_bytes(cd, b, len).unwrap() == pattern(len, 2));

    delete_from_cd(cd, &[rw(b, len)]).unwrap();
    restore(cd);
    assert!(s.download(a, len) == point, "the previous point, bitwise");
    s.upload(a, &data);
    let before = stats(cd).diff_bytes_copied;
    advance(cd, &[rw(a, len)]).unwrap();
    assert_eq!(
        stats(cd).diff_bytes_copied - before,
        B as u64,
        "its checksums held"
    );
    s.upload(a, &point);
    restore(cd);
    assert!(s.download(a, len) == data);
    commit_cd(cd).unwrap();
    // SAFETY: allocated above; the CD that held it is gone.
    assert_eq!(unsafe { (s.free)(a as u64) }, 0);
}
