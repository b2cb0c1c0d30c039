//! The differential advance of device ranges (`delta`), against a simulated device whose
//! space checksums blocks on the host: only the changed blocks are copied into the saved
//! copy, restore is bitwise the state at the advance, and a failure anywhere leaves the
//! previous point whole.

use crate::util::unique;
use cd_core::*;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

const BLOCK: usize = 4096;

/// A device with a differential copy: its memory is a host vector at a made-up base address,
/// its checksums one hash per block of [`BLOCK`] bytes.
struct DiffArena {
    base: usize,
    memory: Mutex<Vec<u8>>,
    /// Bytes moved to the host: whole copies and patches.
    to_host: AtomicUsize,
    /// Fails the `n`-th next call of `changes` (a device lost during the differential copy);
    /// 0: none.
    fail_changes: AtomicUsize,
    /// Sends a patch one byte short (a space's bug): the advance must refuse it.
    malformed: AtomicBool,
}

/// The arena's checksums of one range.
struct Sums {
    address: usize,
    sums: Vec<u64>,
}

impl DiffArena {
    fn new(base: usize, len: usize) -> Arc<DiffArena> {
        Arc::new(DiffArena {
            base,
            memory: Mutex::new(vec![0; len]),
            to_host: AtomicUsize::new(0),
            fail_changes: AtomicUsize::new(0),
            malformed: AtomicBool::new(false),
        })
    }

    fn write(&self, offset: usize, bytes: &[u8]) {
        self.memory.lock().unwrap()[offset..offset + bytes.len()].copy_from_slice(bytes);
    }

    fn read(&self, offset: usize, len: usize) -> Vec<u8> {
        self.memory.lock().unwrap()[offset..offset + len].to_vec()
    }

    fn moved(&self) -> usize {
        self.to_host.load(Ordering::Relaxed)
    }

    fn sums(&self, address: usize, len: usize) -> Sums {
        use std::hash::{DefaultHasher, Hash, Hasher};
        let start = address - self.base;
        let memory = self.memory.lock().unwrap();
        let sums = memory[start..start + len]
            .chunks(BLOCK)
            .map(|block| {
                let mut h = DefaultHasher::new();
                block.hash(&mut h);
                h.finish()
            })
            .collect();
        Sums { address, sums }
    }
}

impl DeviceMemory for DiffArena {
    fn name(&self) -> &str {
        "simulated-diff"
    }

    fn copy_to_host(&self, dst: &mut [u8], src: usize) -> Result<(), String> {
        dst.copy_from_slice(&self.read(src - self.base, dst.len()));
        self.to_host.fetch_add(dst.len(), Ordering::Relaxed);
        Ok(())
    }

    fn copy_to_device(&self, dst: usize, src: &[u8]) -> Result<(), String> {
        self.write(dst - self.base, src);
        Ok(())
    }

    fn block_sums(&self, src: usize, len: usize) -> Result<Option<SavedSums>, String> {
        Ok(Some(Box::new(self.sums(src, len))))
    }

    fn changes(
        &self,
        src: usize,
        len: usize,
        saved: &(dyn std::any::Any + Send + Sync),
    ) -> Result<Changes, String> {
        let n = self.fail_changes.load(Ordering::Relaxed);
        if n > 0 {
            self.fail_changes.store(n - 1, Ordering::Relaxed);
            if n == 1 {
                return Err("device lost during the differential copy (simulated)".into());
            }
        }
        let now = self.sums(src, len);
        let Some(old) = saved
            .downcast_ref::<Sums>()
            .filter(|old| old.address == src && old.sums.len() == now.sums.len())
        else {
            return Ok(Changes::Whole(Some(Box::new(now))));
        };
        let changed: Vec<u64> = (0..now.sums.len())
            .filter(|&k| now.sums[k] != old.sums[k])
            .map(|k| k as u64)
            .collect();
        if changed.len() * 2 > now.sums.len() {
            return Ok(Changes::Whole(Some(Box::new(now))));
        }
        let mut bytes = Vec::new();
        for &k in &changed {
            let at = k as usize * BLOCK;
            bytes.extend(self.read(src - self.base + at, BLOCK.min(len - at)));
        }
        if self.malformed.load(Ordering::Relaxed) {
            bytes.pop();
        }
        self.to_host.fetch_add(bytes.len(), Ordering::Relaxed);
        Ok(Changes::Blocks(BlockPatch {
            block: BLOCK,
            changed,
            data: Box::new(bytes),
            sums: Box::new(now),
        }))
    }
}

/// Device bases in the kernel half of the address space, one per test (apart from the other
/// test modules' simulated devices: 0xD0.., 0xD1.., 0xD2.., 0xD8..).
fn base(n: usize) -> usize {
    0xD300_0000_0000_0000 + n * 0x1_0000_0000
}

/// An arena of `regions` regions of `len` bytes each (separate allocations, so separate
/// entries), at base `base(n)`.
fn arena(n: usize, len: usize, regions: usize) -> (Arc<DiffArena>, usize) {
    let arena = DiffArena::new(base(n), len * regions);
    let space = register_memory_space(arena.clone());
    for r in 0..regions {
        map_device_region(space, base(n) + r * len, len).unwrap();
    }
    (arena, base(n))
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(17).wrapping_add(seed))
        .collect()
}

fn rw(address: usize, len: usize) -> AddrSpec {
    AddrSpec::new(address, len, Access::ReadWrite, Scope::Global)
}

/// Promotes the ranges and advances (the spec's loop: "add before you modify").
fn advance(cd: CdHandle, specs: &[AddrSpec]) -> Result<AdvanceReport> {
    // SAFETY: simulated device ranges only.
    unsafe {
        add_to_cd_via_copy(cd, specs)?;
        advance_cd_point_in_time(cd)
    }
}

fn restore(cd: CdHandle) {
    // SAFETY: simulated device ranges only.
    unsafe { restore_cd(cd).unwrap() };
}

fn stats(cd: CdHandle) -> Stats {
    cd_info(cd).unwrap().stats
}

/// The first advance copies whole; the next ones copy only the changed blocks into the saved
/// copy (counted), whatever the share changed: a few, none, most (then whole again); restore
/// writes the state at the last advance, bitwise, short last block included.
#[test]
fn only_changed_blocks_are_copied() {
    let len = 10 * BLOCK + 123; // a short last block
    let (dev, a) = arena(1, len, 1);
    let mut data = pattern(len, 1);
    dev.write(0, &data);
    let cd = create_cd(None, None, LoggingMode::Disabled, Some(&unique("delta"))).unwrap();
    // SAFETY: simulated device range.
    unsafe { add_to_cd_via_copy(cd, &[rw(a, len)]).unwrap() };
    advance(cd, &[rw(a, len)]).unwrap();
    assert_eq!(stats(cd).bytes_diffed, 0, "the first advance copies whole");

    // Three blocks changed: one byte, one byte of the short last block, a whole block.
    data[2 * BLOCK + 7] ^= 1;
    data[len - 1] ^= 0x80;
    data[5 * BLOCK..6 * BLOCK].fill(9);
    dev.write(0, &data);
    let moved = dev.moved();
    let report = advance(cd, &[rw(a, len)]).unwrap();
    assert_eq!(report.bytes_copied, len, "the range is saved, all of it");
    assert_eq!(
        dev.moved() - moved,
        2 * BLOCK + 123,
        "only the changed blocks"
    );
    let s = stats(cd);
    assert_eq!(
        (s.bytes_diffed, s.diff_bytes_copied, s.diff_blocks_changed),
        (len as u64, (2 * BLOCK + 123) as u64, 3)
    );
    assert!(cd_saved_bytes(cd, a, len).unwrap() == data);
    dev.write(0, &pattern(len, 99));
    restore(cd);
    assert!(dev.read(0, len) == data, "restored bitwise");

    // Nothing changed: nothing copied.
    let moved = dev.moved();
    advance(cd, &[rw(a, len)]).unwrap();
    assert_eq!(dev.moved(), moved);
    assert_eq!(stats(cd).diff_blocks_changed, 3);

    // Everything changed: the space says to copy whole, into a fresh buffer.
    let data = pattern(len, 2);
    dev.write(0, &data);
    let before = stats(cd);
    let moved = dev.moved();
    advance(cd, &[rw(a, len)]).unwrap();
    assert_eq!(dev.moved() - moved, len);
    assert_eq!(stats(cd).bytes_diffed, before.bytes_diffed);
    dev.write(0, &pattern(len, 98));
    restore(cd);
    assert!(dev.read(0, len) == data);
    // And the next one patches again.
    let mut data = data;
    data[BLOCK] ^= 4;
    dev.write(0, &data);
    let moved = dev.moved();
    advance(cd, &[rw(a, len)]).unwrap();
    assert_eq!(dev.moved() - moved, BLOCK);
    restore(cd);
    assert!(dev.read(0, len) == data);
    commit_cd(cd).unwrap();
}

/// A failure part way through a differential advance of two ranges (the second range's
/// differential copy fails; an injected copy fault; a malformed patch) leaves the previous
/// point whole: saved bytes, checksums (the next advance is still correct) and restore.
#[test]
fn a_failed_differential_advance_leaves_the_previous_point() {
    let len = 8 * BLOCK;
    let (dev, a) = arena(2, len, 2);
    let b = a + len;
    let specs = [rw(a, len), rw(b, len)];
    let mut data = pattern(2 * len, 3);
    dev.write(0, &data);
    let cd = create_cd(
        None,
        None,
        LoggingMode::Disabled,
        Some(&unique("delta-fail")),
    )
    .unwrap();
    // SAFETY: simulated device ranges.
    unsafe { add_to_cd_via_copy(cd, &specs).unwrap() };
    advance(cd, &specs).unwrap();
    let point = data.clone();

    data[BLOCK] ^= 1; // in a
    data[len + 3 * BLOCK] ^= 1; // in b
    dev.write(0, &data);
    let check_previous = |why: &str| {
        assert!(cd_saved_bytes(cd, a, len).unwrap() == point[..len], "{why}");
        assert!(cd_saved_bytes(cd, b, len).unwrap() == point[len..], "{why}");
    };

    // The second range's differential copy fails: the first range's patch is dropped.
    dev.fail_changes.store(2, Ordering::Relaxed);
    let err = advance(cd, &specs).unwrap_err();
    assert!(matches!(err, CdError::DeviceCopy { .. }), "{err}");
    assert_eq!(dev.fail_changes.load(Ordering::Relaxed), 0, "it failed");
    check_previous("device failure");

    // An injected copy fault in the second range's patch (the first's is built).
    fault::inject(fault::Fault::Copy { bytes: BLOCK });
    let err = advance(cd, &specs).unwrap_err();
    assert!(matches!(err, CdError::InjectedFault(_)), "{err}");
    assert!(fault::disarm().is_none(), "the fault fired");
    check_previous("injected fault");

    // A malformed patch (one byte short) is refused.
    dev.malformed.store(true, Ordering::Relaxed);
    let err = advance(cd, &specs).unwrap_err();
    assert!(err.to_string().contains("patch holds"), "{err}");
    dev.malformed.store(false, Ordering::Relaxed);
    check_previous("malformed patch");

    // The previous point restores bitwise, and the checksums kept with it are still right.
    dev.write(0, &pattern(2 * len, 77));
    restore(cd);
    assert!(dev.read(0, 2 * len) == point);
    dev.write(0, &data);
    let moved = dev.moved();
    advance(cd, &specs).unwrap();
    assert_eq!(dev.moved() - moved, 2 * BLOCK, "one block of each range");
    dev.write(0, &pattern(2 * len, 78));
    restore(cd);
    assert!(dev.read(0, 2 * len) == data);
    commit_cd(cd).unwrap();
}

/// The implicit commit of a child's advance shares the child's saved bytes with its parent
/// where the parent has no entry for them: a saved copy shared so is never patched (the
/// child's next advance copies whole), and the parent keeps the bytes it got.
#[test]
fn a_copy_shared_with_the_parent_is_never_patched() {
    let len = 4 * BLOCK;
    let (dev, a) = arena(3, len, 1);
    let mut data = pattern(len, 5);
    dev.write(0, &data);
    let parent = create_cd(None, None, LoggingMode::Disabled, Some(&unique("delta-p"))).unwrap();
    let child = create_cd(Some(parent.into()), None, LoggingMode::Disabled, None).unwrap();
    advance(child, &[rw(a, len)]).unwrap();
    let shared = data.clone();
    // The parent forgets the range: the child's next advance moves its saved copy up.
    delete_from_cd(parent, &[rw(a, len)]).unwrap();
    data[0] ^= 1;
    dev.write(0, &data);
    let moved = dev.moved();
    advance(child, &[rw(a, len)]).unwrap();
    assert_eq!(dev.moved() - moved, len, "its copy goes up: copied whole");
    assert!(cd_saved_bytes(parent, a, len).unwrap() == shared);

    data[BLOCK] ^= 1;
    dev.write(0, &data);
    let moved = dev.moved();
    advance(child, &[rw(a, len)]).unwrap();
    assert_eq!(dev.moved() - moved, BLOCK, "a copy of its own: patched");
    assert!(cd_saved_bytes(child, a, len).unwrap() == data);
    assert!(
        cd_saved_bytes(parent, a, len).unwrap() == shared,
        "the parent's bytes are untouched"
    );

    // Shared while the child keeps it too: an advance that does not save the range (it is
    // READ_ONLY since the last one) moves the child's copy up to a parent without the range.
    delete_from_cd(parent, &[rw(a, len)]).unwrap();
    // SAFETY: simulated device range.
    unsafe { advance_cd_point_in_time(child).unwrap() };
    let shared = data.clone();
    assert!(cd_saved_bytes(parent, a, len).unwrap() == shared);
    data[2 * BLOCK] ^= 1;
    dev.write(0, &data);
    let moved = dev.moved();
    advance(child, &[rw(a, len)]).unwrap();
    assert_eq!(
        dev.moved() - moved,
        len,
        "held by the parent too: copied whole"
    );
    assert!(cd_saved_bytes(child, a, len).unwrap() == data);
    assert!(cd_saved_bytes(parent, a, len).unwrap() == shared);
    commit_cd(child).unwrap();
    commit_cd(parent).unwrap();
}

/// A patch large enough to be written on several threads (past the parallel copy's
/// threshold): every changed block lands in its place, and restore is bitwise.
#[test]
fn a_large_patch_lands_block_by_block() {
    let len = 40 << 20;
    let (dev, a) = arena(4, len, 1);
    let mut data = pattern(len, 6);
    dev.write(0, &data);
    let cd = create_cd(
        None,
        None,
        LoggingMode::Disabled,
        Some(&unique("delta-large")),
    )
    .unwrap();
    advance(cd, &[rw(a, len)]).unwrap();
    // Every third block changed: 13.3 MiB in 3,414 blocks.
    for k in (0..len / BLOCK).step_by(3) {
        data[k * BLOCK + k % BLOCK] ^= 0x5A;
    }
    dev.write(0, &data);
    let moved = dev.moved();
    advance(cd, &[rw(a, len)]).unwrap();
    let blocks = (len / BLOCK).div_ceil(3);
    assert_eq!(dev.moved() - moved, blocks * BLOCK);
    assert_eq!(stats(cd).diff_blocks_changed, blocks as u64);
    dev.write(0, &pattern(len, 7));
    restore(cd);
    assert!(dev.read(0, len) == data);
    commit_cd(cd).unwrap();
}
