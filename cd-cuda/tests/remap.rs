//! The reset recipe at any address (issue 26): after `cuDevicePrimaryCtxReset` the real driver
//! hands a freed address back, so an array allocated again may come back where it was, or
//! over part of where it or its neighbour was. The stand-in plays that with address reuse on
//! (`cuStandinReuseAddresses`). A remap onto the same range succeeds and moves nothing; a
//! partly overlapping move shifts every range at once; what is in the way is still refused.

mod common;
mod support;

use cd_core::*;
use common::*;

/// Address reuse on for one test, off again after it (even when it fails).
struct Reuse(&'static Standin);

impl Reuse {
    fn on(s: &'static Standin) -> Reuse {
        // SAFETY: the stand-in's test hook.
        unsafe { (s.reuse_addresses)(1) };
        Reuse(s)
    }
}

impl Drop for Reuse {
    fn drop(&mut self) {
        // SAFETY: as above.
        unsafe { (self.0.reuse_addresses)(0) };
    }
}

/// Two arrays, saved in a CD, then an advance in flight, then a GPU reset: the arrays come
/// back at the same addresses, and the recipe (`device_reset`, `remap_device_region` per array,
/// `restore_cd`) runs through with `from == to`.
#[test]
fn same_address_reset_recipe() {
    let (s, _guard) = standin();
    let _reuse = Reuse::on(s);
    const N: usize = 1 << 20;
    let (a, b) = (s.malloc(N), s.malloc(N));
    s.upload(a, &pattern(N, 1));
    s.upload(b, &pattern(N, 2));
    let cd = root("cuda-same-address");
    // SAFETY: the ranges stay allocated (or are allocated again at the same addresses) while
    // the CD holds them; nothing else writes them during the calls.
    unsafe { add_to_cd_via_copy(cd, &[rw(a, N), rw(b, N)]).unwrap() };
    s.upload(a, &pattern(N, 3));
    // SAFETY: as above.
    assert!(unsafe { advance_cd_point_in_time_async(cd, 0).unwrap() }.in_flight);
    // SAFETY: the stand-in's cuDevicePrimaryCtxReset_v2 on device 0.
    assert_eq!(unsafe { (s.primary_ctx_reset)(0) }, 0);
    device_reset();
    // Before the arrays exist again, the same-address remap is refused: nothing is there.
    let err = remap_device_region(a, a, N).unwrap_err();
    assert!(err.to_string().contains("not device memory"), "{err}");
    let (a2, b2) = (s.malloc(N), s.malloc(N));
    assert_eq!((a2, b2), (a, b), "the driver handed the old addresses back");
    s.upload(a, &pattern(N, 9));
    remap_device_region(a, a2, N).unwrap();
    remap_device_region(b, b2, N).unwrap();
    assert_eq!(
        cd_entries(cd)
            .unwrap()
            .iter()
            .map(|e| e.address)
            .collect::<Vec<_>>(),
        [a, b]
    );
    // SAFETY: as above.
    unsafe { restore_cd(cd).unwrap() };
    assert!(
        s.download(a, N) == pattern(N, 1),
        "the previous complete point"
    );
    assert!(s.download(b, N) == pattern(N, 2));
    // The space works on at the same addresses: an asynchronous advance and a restore.
    s.upload(b, &pattern(N, 5));
    // SAFETY: as above.
    assert!(unsafe { advance_cd_point_in_time_async(cd, 0).unwrap() }.in_flight);
    advance_wait(cd).unwrap();
    s.upload(b, &pattern(N, 6));
    // SAFETY: as above.
    unsafe { restore_cd(cd).unwrap() };
    assert!(s.download(b, N) == pattern(N, 5));
    commit_cd(cd).unwrap();
    // SAFETY: allocated above, no CD holds them any more.
    unsafe {
        assert_eq!((s.free)(b as u64), 0);
        assert_eq!((s.free)(a as u64), 0);
    }
}

/// After the reset one larger allocation covers both old arrays: each remaps onto itself
/// (same range, now in a new allocation that starts before one of them), and the restore
/// writes them into it.
#[test]
fn a_new_allocation_covering_the_old_ones() {
    let (s, _guard) = standin();
    let _reuse = Reuse::on(s);
    const N: usize = 1 << 20;
    let (a, b) = (s.malloc(N), s.malloc(N));
    assert_eq!(b, a + N);
    s.upload(a, &pattern(N, 1));
    s.upload(b, &pattern(N, 2));
    let cd = root("cuda-covering");
    // SAFETY: as in `same_address_reset_recipe`.
    unsafe { add_to_cd_via_copy(cd, &[rw(a, N), rw(b, N)]).unwrap() };
    // SAFETY: the stand-in's cudaDeviceReset.
    unsafe { (s.reset)() };
    device_reset();
    let big = s.malloc(2 * N);
    assert_eq!(big, a, "one allocation over both old arrays");
    remap_device_region(b, b, N).unwrap();
    remap_device_region(a, a, N).unwrap();
    // SAFETY: as above.
    unsafe { restore_cd(cd).unwrap() };
    assert!(s.download(big, 2 * N) == [pattern(N, 1), pattern(N, 2)].concat());
    commit_cd(cd).unwrap();
    // SAFETY: allocated above; no CD holds it.
    assert_eq!(unsafe { (s.free)(big as u64) }, 0);
}

/// Partly overlapping moves: after the reset a small allocation takes the old start, so the
/// arrays come back shifted by half an array, each over part of its old place and part of
/// its neighbour's. Moving `a` first is refused (the CD still holds `b` where `a` would land,
/// and nothing changes); moving `b`, then `a`, works, and the restore writes both.
#[test]
fn partly_overlapping_moves() {
    let (s, _guard) = standin();
    let _reuse = Reuse::on(s);
    const N: usize = 1 << 20;
    let (a, b) = (s.malloc(N), s.malloc(N));
    s.upload(a, &pattern(N, 1));
    s.upload(b, &pattern(N, 2));
    let cd = root("cuda-overlapping");
    // SAFETY: as in `same_address_reset_recipe`.
    unsafe { add_to_cd_via_copy(cd, &[rw(a, N), rw(b, N)]).unwrap() };
    // SAFETY: the stand-in's cudaDeviceReset.
    unsafe { (s.reset)() };
    device_reset();
    let pad = s.malloc(N / 2);
    let (a2, b2) = (s.malloc(N), s.malloc(N));
    assert_eq!((pad, a2, b2), (a, a + N / 2, b + N / 2));
    let addresses = || {
        cd_entries(cd)
            .unwrap()
            .iter()
            .map(|e| e.address)
            .collect::<Vec<_>>()
    };
    let err = remap_device_region(a, a2, N).unwrap_err();
    assert!(err.to_string().contains("already holds ranges"), "{err}");
    assert_eq!(addresses(), [a, b], "a refused remap changes nothing");
    remap_device_region(b, b2, N).unwrap();
    remap_device_region(a, a2, N).unwrap();
    assert_eq!(addresses(), [a2, b2]);
    // SAFETY: as above.
    unsafe { restore_cd(cd).unwrap() };
    assert!(s.download(a2, N) == pattern(N, 1));
    assert!(s.download(b2, N) == pattern(N, 2));
    commit_cd(cd).unwrap();
    // SAFETY: allocated above; no CD holds them.
    unsafe {
        for p in [b2, a2, pad] {
            assert_eq!((s.free)(p as u64), 0);
        }
    }
}

/// A registered-callback space: a mapped region moves whole, and may move over part of its
/// own old place (all regions are taken out before any is put back).
#[test]
fn a_mapped_region_moves_over_its_old_place() {
    struct Plain;
    impl DeviceMemory for Plain {
        fn name(&self) -> &str {
            "plain"
        }
        fn copy_to_host(&self, dst: &mut [u8], src: usize) -> Result<(), String> {
            // SAFETY: `src` lies in the test's buffer below (a mapped region), whose
            // provenance the test exposed when it handed the address over.
            let from = unsafe {
                std::slice::from_raw_parts(std::ptr::with_exposed_provenance::<u8>(src), dst.len())
            };
            dst.copy_from_slice(from);
            Ok(())
        }
        fn copy_to_device(&self, dst: usize, src: &[u8]) -> Result<(), String> {
            // SAFETY: as above; nothing else touches the buffer during the copy.
            let to = unsafe {
                std::slice::from_raw_parts_mut(
                    std::ptr::with_exposed_provenance_mut::<u8>(dst),
                    src.len(),
                )
            };
            to.copy_from_slice(src);
            Ok(())
        }
    }
    let (_s, _guard) = standin();
    const N: usize = 4096;
    let mut memory = vec![0u8; 2 * N];
    // exposed: the space's copy functions turn the address back into a pointer
    let base = memory.as_mut_ptr().expose_provenance();
    let space = register_memory_space(std::sync::Arc::new(Plain));
    map_device_region(space, base, N).unwrap();
    memory[..N].copy_from_slice(&pattern(N, 4));
    let cd = root("mapped-overlap");
    // SAFETY: `memory` outlives the CD; nothing else writes it during the calls.
    unsafe { add_to_cd_via_copy(cd, &[rw(base, N)]).unwrap() };
    remap_device_region(base, base + N / 2, N).unwrap();
    // SAFETY: as above.
    unsafe { restore_cd(cd).unwrap() };
    assert!(memory[N / 2..N / 2 + N] == pattern(N, 4));
    commit_cd(cd).unwrap();
    unmap_device_region(base + N / 2).unwrap();
}
