//! The built-in CUDA space against the stand-in driver (`standin/cuda_standin.c`), compiled
//! here with `cc`: device memory the CPU cannot touch, allocations back to back, copies across
//! two allocations refused, asynchronous copies that run only when synchronised, the
//! virtual-memory API and stream-ordered pools with the driver's rules. Every test takes one
//! lock: they share the process's one space and the stand-in's counters.

mod common;
mod support;

use cd_core::*;
use common::*;
use std::ffi::{c_int, c_void};

/// The spec's simple example written naturally on a GPU: two equal arrays that cudaMalloc
/// put back to back, both protected, advanced and restored with no callback written.
#[test]
fn adjacent_allocations_advance_and_restore() {
    let (s, _guard) = standin();
    const N: usize = 3 << 20;
    let (a, b) = (s.malloc(N), s.malloc(N));
    assert_eq!(b, a + N, "the stand-in places allocations back to back");
    s.upload(a, &pattern(N, 1));
    s.upload(b, &pattern(N, 2));
    let refused = s.counters()[7];
    let cd = root("cuda-adjacent");
    // SAFETY: device ranges go through the driver; nothing else writes them meanwhile.
    unsafe { add_to_cd_via_copy(cd, &[rw(a, N), rw(b, N)]).unwrap() };
    let entries = cd_entries(cd).unwrap();
    assert_eq!(entries.len(), 2, "one entry per allocation");
    assert!(entries.iter().all(|e| Some(e.space) == cd_cuda::enable()));
    s.upload(a, &pattern(N, 3));
    s.upload(b, &pattern(N, 4));
    // SAFETY: as above.
    unsafe { advance_cd_point_in_time(cd).unwrap() };
    s.upload(a, &pattern(N, 5));
    s.upload(b, &pattern(N, 6));
    // SAFETY: as above.
    unsafe { restore_cd(cd).unwrap() };
    assert!(s.download(a, N) == pattern(N, 3));
    assert!(s.download(b, N) == pattern(N, 4));
    assert_eq!(s.counters()[7], refused, "no copy spanned two allocations");
    assert!(s.counters()[5] > 0, "the store buffer was pinned");
    commit_cd(cd).unwrap();
}

/// A store that cannot be pinned: copies go through the two staging buffers, chunk by chunk,
/// with asynchronous copies that only run when synchronised.
#[test]
fn staged_copies_are_pipelined_and_correct() {
    let (s, _guard) = standin();
    let n = 2 * cd_cuda::CHUNK + 12345;
    let a = s.malloc(n);
    s.upload(a, &pattern(n, 7));
    // SAFETY: the stand-in's test hook.
    unsafe { (s.refuse_register)(1) };
    let before = s.counters();
    let cd = root("cuda-staged");
    // SAFETY: as in the test above.
    unsafe { add_to_cd_via_copy(cd, &[rw(a, n)]).unwrap() };
    s.upload(a, &pattern(n, 8));
    // SAFETY: as above.
    unsafe { restore_cd(cd).unwrap() };
    // SAFETY: the stand-in's test hook.
    unsafe { (s.refuse_register)(0) };
    assert!(s.download(a, n) == pattern(n, 7));
    let after = s.counters();
    assert_eq!(
        after[2] - before[2],
        n as u64,
        "device-to-host went asynchronously"
    );
    assert_eq!(
        after[3] - before[3],
        n as u64,
        "host-to-device went asynchronously"
    );
    assert_eq!(
        after[4], before[4],
        "every asynchronous copy used pinned staging"
    );
    commit_cd(cd).unwrap();
}

/// Managed memory is device memory to the space (saved with the driver's copies), host
/// memory stays host memory, and ranges across allocations or into host memory are refused.
#[test]
fn managed_host_and_straddling_ranges() {
    let (s, _guard) = standin();
    let mut m = 0u64;
    // SAFETY: out-pointer to a local.
    assert_eq!(unsafe { (s.alloc_managed)(&mut m, 4096, 1) }, 0);
    let managed = m as usize;
    // Provenance: the address comes from the stand-in (C) as an integer.
    let managed_ptr = std::ptr::with_exposed_provenance_mut::<u8>(managed);
    // SAFETY: the stand-in's managed memory is host-accessible, 4096 bytes.
    unsafe { std::ptr::write_bytes(managed_ptr, 9, 4096) };
    let host = [5u8; 64];
    let cd = root("cuda-managed");
    let dtoh = |c: [u64; 12]| c[0] + c[2];
    let dtoh_before = dtoh(s.counters());
    // SAFETY: the ranges are live and not written during the calls.
    unsafe {
        add_to_cd_via_copy(
            cd,
            &[rw(managed, 4096), rw(host.as_ptr().expose_provenance(), 64)],
        )
        .unwrap()
    };
    let entries = cd_entries(cd).unwrap();
    let space = cd_cuda::enable().unwrap();
    assert_eq!(entries.iter().filter(|e| e.space == space).count(), 1);
    assert_eq!(entries.iter().filter(|e| e.space == HOST).count(), 1);
    assert_eq!(
        dtoh(s.counters()) - dtoh_before,
        4096,
        "managed saved by the driver"
    );
    // SAFETY: as above.
    unsafe {
        std::ptr::write_bytes(managed_ptr, 1, 4096);
        restore_cd(cd).unwrap();
        assert_eq!(*managed_ptr.add(4095), 9);
    }
    let (x, y) = (s.malloc(1024), s.malloc(1024));
    assert_eq!(y, x + 1024);
    for bad in [rw(x + 512, 1024), rw(x - 16, 32)] {
        // SAFETY: refused before any memory is read.
        let err = unsafe { add_to_cd_via_copy(cd, &[bad]) }.unwrap_err();
        assert!(matches!(err, CdError::StraddlesMemorySpace { .. }), "{err}");
    }
    commit_cd(cd).unwrap();
}

/// Counter 9: device-to-device bytes.
const DTOD: usize = 9;

/// An asynchronous advance snapshots on the device, drains in the background, and becomes
/// current only once the drain completed; the snapshot's memory is released then.
#[test]
fn async_advance_becomes_current_only_after_the_drain() {
    let (s, _guard) = standin();
    const N: usize = 3 << 20;
    let a = s.malloc(N);
    let mut host = [1u8; 64];
    s.upload(a, &pattern(N, 1));
    let cd = root("cuda-async-current");
    let h = host.as_ptr().expose_provenance();
    // SAFETY: the ranges stay allocated; nothing writes them during the calls.
    unsafe { add_to_cd_via_copy(cd, &[rw(a, N), rw(h, 64)]).unwrap() };
    s.upload(a, &pattern(N, 2));
    host.fill(2);
    let (live, dtod) = (s.live(), s.counters()[DTOD]);
    // SAFETY: as above; 0 is the default stream.
    let started = unsafe { advance_cd_point_in_time_async(cd, 0).unwrap() };
    assert!(started.in_flight);
    assert_eq!(started.report.bytes_copied, N + 64);
    assert_eq!(s.live(), live + 1, "a snapshot in device memory");
    // The application's next kernel: ordered after the snapshot on the default stream.
    s.upload(a, &pattern(N, 3));
    std::hint::black_box(&mut host).fill(3);
    assert_eq!(
        s.counters()[DTOD] - dtod,
        N as u64,
        "snapshot copied on the device"
    );
    assert!(!advance_test(cd).unwrap(), "the drain has not run");
    assert!(
        cd_saved_bytes(cd, a, N).unwrap() == pattern(N, 1),
        "still the old point"
    );
    assert_eq!(cd_saved_bytes(cd, h, 64).unwrap(), [1; 64]);
    s.run_streams();
    assert!(advance_test(cd).unwrap(), "the drain completed");
    assert!(
        cd_saved_bytes(cd, a, N).unwrap() == pattern(N, 2),
        "the new point"
    );
    assert_eq!(cd_saved_bytes(cd, h, 64).unwrap(), [2; 64]);
    assert_eq!(s.live(), live, "the snapshot was freed");
    assert_eq!(cd_info(cd).unwrap().stats.advances, 1);
    // SAFETY: as above.
    unsafe { restore_cd(cd).unwrap() };
    assert!(s.download(a, N) == pattern(N, 2));
    assert_eq!(
        std::hint::black_box(&host),
        &[2; 64],
        "host ranges saved at the call"
    );
    commit_cd(cd).unwrap();
}

/// A fault noticed during the drain: the restore does not wait for the pending point and
/// restores the previous complete one; the snapshot is released. After the drain completes,
/// a restore restores the new point (the other order).
#[test]
fn restore_during_the_drain_restores_the_previous_point() {
    let (s, _guard) = standin();
    const N: usize = 1 << 20;
    let a = s.malloc(N);
    s.upload(a, &pattern(N, 1));
    let cd = root("cuda-async-restore");
    // SAFETY: the range stays allocated; nothing writes it during the calls.
    unsafe { add_to_cd_via_copy(cd, &[rw(a, N)]).unwrap() };
    let live = s.live();
    s.upload(a, &pattern(N, 2));
    // SAFETY: as above.
    assert!(unsafe { advance_cd_point_in_time_async(cd, 0).unwrap() }.in_flight);
    s.upload(a, &pattern(N, 3));
    // SAFETY: as above.
    unsafe { restore_cd(cd).unwrap() };
    assert!(
        s.download(a, N) == pattern(N, 1),
        "the previous complete point"
    );
    assert_eq!(s.live(), live, "the dropped snapshot was freed");
    assert!(advance_test(cd).unwrap(), "nothing in flight any more");
    assert!(cd_saved_bytes(cd, a, N).unwrap() == pattern(N, 1));

    // The other order: the drain completes before the fault.
    s.upload(a, &pattern(N, 4));
    // SAFETY: as above.
    assert!(unsafe { advance_cd_point_in_time_async(cd, 0).unwrap() }.in_flight);
    s.upload(a, &pattern(N, 5));
    s.run_streams();
    // SAFETY: as above.
    unsafe { restore_cd(cd).unwrap() };
    assert!(s.download(a, N) == pattern(N, 4), "the drained point");
    assert_eq!(s.live(), live);
    commit_cd(cd).unwrap();
}

/// An advance (or a wait) while a drain runs waits for it: points stay in order.
#[test]
fn advance_during_the_drain_waits_for_it() {
    let (s, _guard) = standin();
    const N: usize = 1 << 20;
    let a = s.malloc(N);
    s.upload(a, &pattern(N, 1));
    let cd = root("cuda-async-advance");
    // SAFETY: the range stays allocated; nothing writes it during the calls.
    unsafe { add_to_cd_via_copy(cd, &[rw(a, N)]).unwrap() };
    let live = s.live();
    s.upload(a, &pattern(N, 2));
    // SAFETY: as above.
    assert!(unsafe { advance_cd_point_in_time_async(cd, 0).unwrap() }.in_flight);
    s.upload(a, &pattern(N, 3));
    // The pending advance completes first; it demoted the entry, so this one copies nothing.
    // SAFETY: as above.
    let report = unsafe { advance_cd_point_in_time(cd).unwrap() };
    assert_eq!(report.bytes_copied, 0);
    let stats = cd_info(cd).unwrap().stats;
    assert_eq!(stats.advances, 2, "both advances completed, in order");
    assert_eq!(stats.bytes_advanced, N as u64);
    assert!(cd_saved_bytes(cd, a, N).unwrap() == pattern(N, 2));
    // Promoted again, advanced asynchronously, waited for.
    // SAFETY: as above.
    unsafe { add_to_cd_via_copy(cd, &[rw(a, N)]).unwrap() };
    s.upload(a, &pattern(N, 4));
    // SAFETY: as above.
    assert!(unsafe { advance_cd_point_in_time_async(cd, 0).unwrap() }.in_flight);
    s.upload(a, &pattern(N, 5));
    advance_wait(cd).unwrap();
    assert!(cd_saved_bytes(cd, a, N).unwrap() == pattern(N, 4));
    assert_eq!(s.live(), live, "every snapshot was freed");
    commit_cd(cd).unwrap();
}

/// Without spare device memory the advance runs synchronously, and says so.
#[test]
fn async_advance_falls_back_without_spare_memory() {
    let (s, _guard) = standin();
    const N: usize = 1 << 20;
    let a = s.malloc(N);
    s.upload(a, &pattern(N, 1));
    let cd = root("cuda-async-fallback");
    // SAFETY: the range stays allocated; nothing writes it during the calls.
    unsafe { add_to_cd_via_copy(cd, &[rw(a, N)]).unwrap() };
    s.upload(a, &pattern(N, 2));
    // The snapshot pool keeps the memory of earlier advances (which needs no headroom):
    // give it back first.
    cd_cuda::trim_snapshot_pool();
    let (live, device_to_device) = (s.live(), s.counters()[9]);
    // SAFETY: the stand-in's test hook; then as above.
    let started = unsafe {
        (s.limit_free)(N);
        let started = advance_cd_point_in_time_async(cd, 0);
        (s.limit_free)(usize::MAX);
        started.unwrap()
    };
    assert!(!started.in_flight, "no room for a snapshot: synchronous");
    assert_eq!(s.counters()[9], device_to_device, "no snapshot was copied");
    // The synchronous advance's checksums (for its next, differential, advance) came from
    // the space's pool, which keeps their memory until trimmed.
    cd_cuda::trim_snapshot_pool();
    assert_eq!(s.live(), live);
    assert!(cd_saved_bytes(cd, a, N).unwrap() == pattern(N, 2));
    commit_cd(cd).unwrap();
}

/// A GPU reset: the arrays come back at other addresses; `device_reset` drops the advance in
/// flight, `remap_device_region` moves the CD's ranges and saved bytes, and the restore
/// writes the new arrays. Bad remaps are refused and change nothing.
#[test]
fn reset_then_remap_restores_into_new_allocations() {
    let (s, _guard) = standin();
    const N: usize = 1 << 20;
    let (a, b) = (s.malloc(N), s.malloc(N));
    s.upload(a, &pattern(N, 1));
    s.upload(b, &pattern(N, 2));
    let cd = root("cuda-reset");
    // SAFETY: the ranges stay allocated until the reset; nothing writes them meanwhile.
    unsafe { add_to_cd_via_copy(cd, &[rw(a, N), rw(b, N)]).unwrap() };
    s.upload(a, &pattern(N, 3));
    // SAFETY: as above.
    assert!(unsafe { advance_cd_point_in_time_async(cd, 0).unwrap() }.in_flight);
    // SAFETY: the stand-in's cudaDeviceReset.
    unsafe { (s.reset)() };
    device_reset();
    let (a2, b2) = (s.malloc(N), s.malloc(N));
    assert!(a2 != a && b2 != b, "the arrays came back elsewhere");
    assert_eq!(b2, a2 + N, "back to back again");
    let host = [0u8; 64];
    let addresses = || {
        cd_entries(cd)
            .unwrap()
            .iter()
            .map(|e| e.address)
            .collect::<Vec<_>>()
    };
    let refused = |from: usize, to: usize, len: usize, reason: &str| {
        let before = addresses();
        let err = remap_device_region(from, to, len).unwrap_err();
        assert!(matches!(err, CdError::RemapRefused { .. }), "{err}");
        assert!(err.to_string().contains(reason), "{err}");
        assert_eq!(addresses(), before, "a refused remap changes nothing");
    };
    refused(a, host.as_ptr().addr(), N, "not device memory");
    refused(a, a2 + 512, N, "not device memory"); // across the new a2 and b2
    refused(a + 16, a2, N - 16, "crosses the old range's bounds");
    // A partly overlapping move is allowed, but the old place is not allocated again here.
    refused(a, a + 1, N, "not device memory");
    remap_device_region(b, b2, N).unwrap();
    refused(a, b2, N, "already holds ranges at the destination");
    remap_device_region(a, a2, N).unwrap();
    let entries = cd_entries(cd).unwrap();
    assert_eq!(
        entries.iter().map(|e| e.address).collect::<Vec<_>>(),
        [a2, b2]
    );
    // SAFETY: the new arrays are allocated; nothing else writes them.
    unsafe { restore_cd(cd).unwrap() };
    assert!(
        s.download(a2, N) == pattern(N, 1),
        "the previous complete point"
    );
    assert!(s.download(b2, N) == pattern(N, 2));
    // The space works on after the reset: an asynchronous advance on the new arrays.
    s.upload(a2, &pattern(N, 7));
    // SAFETY: as above.
    assert!(unsafe { advance_cd_point_in_time_async(cd, 0).unwrap() }.in_flight);
    advance_wait(cd).unwrap();
    assert!(cd_saved_bytes(cd, a2, N).unwrap() == pattern(N, 7));
    commit_cd(cd).unwrap();
}

/// Memory from `CudaMemory` and `DeviceBuffer` is ordinary driver memory: the space
/// recognises it (one allocation, one region), CDs save and restore it, and it is freed on
/// drop; bad requests are clear errors.
#[test]
fn allocations_through_the_loaded_driver() {
    let (s, _guard) = standin();
    let gpu = cd_cuda::CudaMemory::new(0).unwrap();
    assert_eq!(Some(gpu.space()), cd_cuda::enable());
    let live = s.live();
    const N: usize = 1 << 20;
    {
        let mut x = cd_cuda::DeviceBuffer::from_slice(&gpu, &pattern(N, 1)).unwrap();
        assert_eq!(s.live(), live + 1);
        assert_eq!(gpu.allocation_of(x.address() + 17), Some((x.address(), N)));
        let cd = root("cuda-allocations");
        // SAFETY: the buffer outlives the CD, which is committed below; nothing else writes it.
        unsafe { add_to_cd_via_copy(cd, &[rw(x.address(), N)]).unwrap() };
        assert_eq!(cd_entries(cd).unwrap()[0].space, gpu.space());
        x.copy_from(&pattern(N, 2)).unwrap();
        // SAFETY: as above.
        unsafe { restore_cd(cd).unwrap() };
        assert!(x.to_vec().unwrap() == pattern(N, 1));
        assert!(s.download(x.address(), N) == pattern(N, 1));
        commit_cd(cd).unwrap();
    }
    assert_eq!(s.live(), live, "freed on drop");
    let a = gpu.allocate(4096).unwrap();
    assert_eq!(s.live(), live + 1);
    // SAFETY: allocated above, in no CD, used by nothing.
    unsafe { gpu.free(a).unwrap() };
    assert_eq!(s.live(), live);
    assert!(gpu.allocate(0).unwrap_err().contains("0 bytes"));
    let err = gpu.allocate(usize::MAX / 2).unwrap_err();
    assert!(err.contains("out of memory"), "{err}");
    let err = cd_cuda::CudaMemory::new(3).unwrap_err();
    assert!(
        err.contains("CUDA device 3") && err.contains("cuDeviceGet"),
        "{err}"
    );
}

/// Arrays of the virtual-memory API, of one chunk and of several chunks of one reservation:
/// the driver reports the whole reservation as the allocation, so an array over several
/// chunks is one region and one entry, copied in one piece (legal within a reservation);
/// ranges across two reservations, or over a part not mapped, are refused.
#[test]
fn vmm_arrays_of_one_and_several_chunks() {
    let (s, _guard) = standin();
    let g = s.granularity();
    let (several, one) = (s.reserve(2 * g), s.reserve(g));
    assert_eq!(one, several + 2 * g, "reservations back to back");
    let a_chunks = s.map_chunks(several, g, 2);
    let b_chunks = s.map_chunks(one, g, 1);
    s.upload(several, &pattern(2 * g, 1));
    s.upload(one, &pattern(g, 2));
    let refused = s.counters()[7];
    let cd = root("cuda-vmm");
    // SAFETY: the arrays stay mapped until the end; nothing else writes them meanwhile.
    unsafe { add_to_cd_via_copy(cd, &[rw(several, 2 * g), rw(one, g)]).unwrap() };
    let entries = cd_entries(cd).unwrap();
    assert_eq!(
        entries
            .iter()
            .map(|e| (e.address, e.length))
            .collect::<Vec<_>>(),
        [(several, 2 * g), (one, g)],
        "one entry per array, whatever its chunks"
    );
    assert!(entries.iter().all(|e| Some(e.space) == cd_cuda::enable()));
    s.upload(several, &pattern(2 * g, 3));
    s.upload(one, &pattern(g, 4));
    // SAFETY: as above.
    unsafe { advance_cd_point_in_time(cd).unwrap() };
    s.upload(several, &pattern(2 * g, 5));
    s.upload(one, &pattern(g, 6));
    // SAFETY: as above.
    unsafe { restore_cd(cd).unwrap() };
    assert!(s.download(several, 2 * g) == pattern(2 * g, 3));
    assert!(s.download(one, g) == pattern(g, 4));
    assert_eq!(s.counters()[7], refused, "no copy was refused");

    // A range across the two reservations.
    // SAFETY: refused before any memory is read.
    let err = unsafe { add_to_cd_via_copy(cd, &[rw(one - 512, 1024)]) }.unwrap_err();
    assert!(matches!(err, CdError::StraddlesMemorySpace { .. }), "{err}");
    commit_cd(cd).unwrap();

    // Reserved but not mapped: device memory to the driver, which refuses to copy it.
    let half = s.reserve(2 * g);
    let c_chunks = s.map_chunks(half, g, 1);
    let cd = root("cuda-vmm-unmapped");
    // SAFETY: the copy is refused by the driver; nothing is read by the CPU.
    let err = unsafe { add_to_cd_via_copy(cd, &[rw(half + g, 4096)]) }.unwrap_err();
    assert!(
        matches!(&err, CdError::DeviceCopy { .. }) && err.to_string().contains("cuMemcpy"),
        "{err}"
    );
    commit_cd(cd).unwrap();
    s.unmap_chunks(several, 2 * g, &a_chunks);
    s.unmap_chunks(one, g, &b_chunks);
    s.unmap_chunks(half, g, &c_chunks);
    // SAFETY: the reservations made above, unmapped.
    unsafe {
        assert_eq!((s.address_free)(several as u64, 2 * g), 0);
        assert_eq!((s.address_free)(one as u64, g), 0);
        assert_eq!((s.address_free)(half as u64, 2 * g), 0);
    }
}

/// The first reset recipe: the reservation survives `cuDevicePrimaryCtxReset` (what
/// `cudaDeviceReset` calls), the application maps new chunks at the same virtual addresses,
/// and `restore_cd` writes them, with no remap; an advance in flight at the reset is dropped
/// and the previous point restored. The space retains the primary context again and works on.
#[test]
fn vmm_reset_recipe_restores_at_the_same_addresses() {
    let (s, _guard) = standin();
    let g = s.granularity();
    let (va, one) = (s.reserve(3 * g), s.reserve(g));
    s.map_chunks(va, g, 3);
    s.map_chunks(one, g, 1);
    s.upload(va, &pattern(3 * g, 1));
    s.upload(one, &pattern(g, 2));
    let cd = root("cuda-vmm-reset");
    // SAFETY: the arrays stay mapped (or are mapped again at the same addresses) until the
    // end; nothing else writes them during the calls.
    unsafe { add_to_cd_via_copy(cd, &[rw(va, 3 * g), rw(one, g)]).unwrap() };
    s.upload(va, &pattern(3 * g, 3));
    // SAFETY: as above; 0 is the default stream.
    assert!(unsafe { advance_cd_point_in_time_async(cd, 0).unwrap() }.in_flight);

    // A fault: the application resets the device, then tells the runtime.
    // SAFETY: the stand-in's cuDevicePrimaryCtxReset_v2 on device 0.
    assert_eq!(unsafe { (s.primary_ctx_reset)(0) }, 0);
    device_reset();
    // The old mappings are gone; the reservations are not: map new chunks there.
    let new_chunks = s.map_chunks(va, g, 3);
    let new_one = s.map_chunks(one, g, 1);
    assert!(
        s.download(va, 3 * g) != pattern(3 * g, 1),
        "fresh chunks hold garbage"
    );
    // SAFETY: as above.
    unsafe { restore_cd(cd).unwrap() };
    assert!(
        s.download(va, 3 * g) == pattern(3 * g, 1),
        "the previous complete point, in the new chunks"
    );
    assert!(s.download(one, g) == pattern(g, 2));

    // The space works on after the reset: synchronous and asynchronous advances.
    s.upload(va, &pattern(3 * g, 7));
    // SAFETY: as above.
    unsafe { advance_cd_point_in_time(cd).unwrap() };
    assert!(cd_saved_bytes(cd, va, 3 * g).unwrap() == pattern(3 * g, 7));
    // SAFETY: as above (promoted again: the advance demoted it).
    unsafe { add_to_cd_via_copy(cd, &[rw(one, g)]).unwrap() };
    s.upload(one, &pattern(g, 8));
    // SAFETY: as above.
    assert!(unsafe { advance_cd_point_in_time_async(cd, 0).unwrap() }.in_flight);
    advance_wait(cd).unwrap();
    assert!(cd_saved_bytes(cd, one, g).unwrap() == pattern(g, 8));
    commit_cd(cd).unwrap();
    s.unmap_chunks(va, 3 * g, &new_chunks);
    s.unmap_chunks(one, g, &new_one);
    // SAFETY: the reservations made above, unmapped.
    unsafe {
        assert_eq!((s.address_free)(va as u64, 3 * g), 0);
        assert_eq!((s.address_free)(one as u64, g), 0);
    }
}

/// Stream-ordered allocations (`cudaMallocAsync`) from the device's default pool: each is its
/// own region (two placed back to back are two entries, and a range across both is refused),
/// advanced and restored like `cudaMalloc` memory, then freed in stream order once the CD is
/// done with them; the pool hands the freed blocks out again at the same addresses.
#[test]
fn pool_allocations_advance_restore_and_free_in_stream_order() {
    let (s, _guard) = standin();
    // A size no other test allocates, so that the pool has no freed block of it yet.
    const N: usize = (1 << 20) + 768;
    let stream = std::ptr::null_mut(); // the default stream
    let mut pool = std::ptr::null_mut();
    let (mut x, mut y) = (0u64, 0u64);
    // SAFETY: out-pointers to locals; the stand-in's calls, with a context current.
    s.in_context(|| unsafe {
        assert_eq!((s.default_pool)(&mut pool, 0), 0);
        assert_eq!((s.alloc_from_pool)(&mut x, N, pool, stream), 0);
        (s.alloc_async)(&mut y, N, stream)
    });
    let (x, y) = (x as usize, y as usize);
    assert_eq!(y, x + N, "the pool placed them back to back");
    s.upload(x, &pattern(N, 1));
    s.upload(y, &pattern(N, 2));
    let live = s.live();
    let cd = root("cuda-pool");
    // SAFETY: the allocations stay live until the CD is committed; nothing else writes them.
    unsafe { add_to_cd_via_copy(cd, &[rw(x, N), rw(y, N)]).unwrap() };
    assert_eq!(cd_entries(cd).unwrap().len(), 2, "one entry per allocation");
    // SAFETY: refused before any memory is read.
    let err = unsafe { add_to_cd_via_copy(cd, &[rw(x + N / 2, N)]) }.unwrap_err();
    assert!(matches!(err, CdError::StraddlesMemorySpace { .. }), "{err}");
    s.upload(x, &pattern(N, 3));
    // SAFETY: as above.
    unsafe { advance_cd_point_in_time(cd).unwrap() };
    s.upload(x, &pattern(N, 4));
    s.upload(y, &pattern(N, 5));
    // SAFETY: as above.
    unsafe { restore_cd(cd).unwrap() };
    assert!(s.download(x, N) == pattern(N, 3));
    assert!(s.download(y, N) == pattern(N, 2));
    commit_cd(cd).unwrap();

    // SAFETY: the CD is done with them; freed in stream order on the default stream.
    s.in_context(|| unsafe {
        assert_eq!((s.free_async)(x as u64, stream), 0);
        (s.free_async)(y as u64, stream)
    });
    assert_eq!(
        s.live(),
        live,
        "not freed before the stream reaches the frees"
    );
    s.run_streams();
    assert_eq!(s.live(), live - 2, "freed in stream order");
    let mut z = 0u64;
    // SAFETY: as above.
    s.in_context(|| unsafe { (s.alloc_async)(&mut z, N, stream) });
    assert!(
        [x, y].contains(&(z as usize)),
        "the pool hands a freed block out again"
    );
    // SAFETY: allocated above, used by nothing.
    s.in_context(|| unsafe { (s.free_async)(z, stream) });
    s.run_streams();
    assert_eq!(s.live(), live - 2);
}

/// The stand-in plays the driver's rules the space depends on, so that a runtime breaking
/// them fails here as it would on a GPU: pointer queries need a context; the primary context
/// retained before a reset is destroyed; the virtual-memory API refuses what the driver API
/// reference forbids (a mapping outside a reservation or over another, a partial unmap or
/// access change, a reservation freed while mapped), and memory mapped without
/// `cuMemSetAccess` cannot be copied.
#[test]
fn standin_plays_the_drivers_rules() {
    let (s, _guard) = standin();
    const INVALID_VALUE: c_int = 1;
    const INVALID_CONTEXT: c_int = 201;
    const CONTEXT_IS_DESTROYED: c_int = 709;
    let a = s.malloc(4096);
    let (mut start, mut size) = (0u64, 0usize);
    let mut names = [11, 12]; // RANGE_START_ADDR, RANGE_SIZE
    let mut data: [*mut c_void; 2] = [(&raw mut start).cast(), (&raw mut size).cast()];
    // SAFETY: two attributes pointing at locals of the types the driver writes.
    let mut query =
        |p: usize| unsafe { (s.attributes)(2, names.as_mut_ptr(), data.as_mut_ptr(), p as u64) };
    assert_eq!(query(a), INVALID_CONTEXT, "no context current");
    s.in_context(|| query(a + 100));
    assert_eq!((start as usize, size), (a, 4096));

    let g = s.granularity();
    let va = s.reserve(2 * g);
    let mut h = 0;
    // SAFETY: out-pointers to locals; every call below is checked by the stand-in.
    unsafe {
        assert_eq!((s.create)(&mut h, g, &DEVICE0, 0), 0);
        assert_eq!(
            (s.map)(a as u64, g, 0, h, 0),
            INVALID_VALUE,
            "not in a reservation"
        );
        assert_eq!(
            (s.map)((va + g / 2) as u64, g, 0, h, 0),
            INVALID_VALUE,
            "misaligned"
        );
        assert_eq!((s.map)(va as u64, g, 0, h, 0), 0);
        assert_eq!(
            (s.map)(va as u64, g, 0, h, 0),
            INVALID_VALUE,
            "mapped already"
        );
    }
    s.in_context(|| query(va + g + 8));
    assert_eq!(
        (start as usize, size),
        (va, 2 * g),
        "the reservation, mapped or not"
    );
    let mut byte = [0u8; 1];
    let mut ctx = std::ptr::null_mut();
    // SAFETY: the stand-in's calls with valid out-pointers; the copies are checked by it.
    unsafe {
        assert_eq!((s.retain)(&mut ctx, 0), 0);
        assert_eq!((s.push)(ctx), 0);
        let rc = (s.dtoh)(byte.as_mut_ptr().cast(), va as u64, 1);
        assert_eq!(rc, INVALID_VALUE, "no access set yet");
        assert_eq!((s.pop)(&mut ctx), 0);
        let access = AccessDesc {
            location: Location { kind: 1, id: 0 },
            flags: 3,
        };
        assert_eq!(
            (s.set_access)(va as u64, 2 * g, &access, 1),
            INVALID_VALUE,
            "a hole"
        );
        assert_eq!((s.set_access)(va as u64, g, &access, 1), 0);
        assert_eq!(
            (s.unmap)(va as u64, g / 2),
            INVALID_VALUE,
            "part of a mapping"
        );
        assert_eq!(
            (s.address_free)(va as u64, 2 * g),
            INVALID_VALUE,
            "still mapped"
        );
        assert_eq!((s.release)(h), 0, "released, still mapped: kept");
        assert_eq!((s.push)(ctx), 0);
        let rc = (s.dtoh)(byte.as_mut_ptr().cast(), va as u64, 1);
        assert_eq!((s.pop)(&mut ctx), 0);
        assert_eq!(rc, 0, "readable once accessible");
        assert_eq!((s.unmap)(va as u64, g), 0);
        assert_eq!((s.release)(h), INVALID_VALUE, "freed with its last mapping");
        assert_eq!((s.address_free)(va as u64, 2 * g), 0);

        // A reset destroys the primary context: the old handle cannot be made current.
        (s.reset)();
        assert_eq!((s.push)(ctx), CONTEXT_IS_DESTROYED);
        assert_eq!((s.retain)(&mut ctx, 0), 0);
        assert_eq!((s.push)(ctx), 0);
        assert_eq!((s.pop)(&mut ctx), 0);
    }
    device_reset();
}

/// The snapshot pool keeps its memory between asynchronous advances: once an advance of a
/// size ran, the next one needs no headroom (no `cuMemGetInfo`, no new device memory) and
/// goes in flight even when the device reports nothing free. After `trim_snapshot_pool` it
/// needs headroom again.
#[test]
fn snapshot_pool_keeps_its_memory_between_advances() {
    let (s, _guard) = standin();
    const N: usize = 1 << 20;
    let a = s.malloc(N);
    s.upload(a, &pattern(N, 1));
    let cd = root("cuda-snapshot-pool");
    // SAFETY: the range stays allocated; nothing writes it during the calls.
    unsafe { add_to_cd_via_copy(cd, &[rw(a, N)]).unwrap() };
    for round in 2..5u8 {
        s.upload(a, &pattern(N, round));
        // SAFETY: as above (promoted again: each advance demotes it).
        unsafe { add_to_cd_via_copy(cd, &[rw(a, N)]).unwrap() };
        if round > 2 {
            // SAFETY: the stand-in's test hook.
            unsafe { (s.limit_free)(0) };
        }
        // SAFETY: as above.
        let started = unsafe { advance_cd_point_in_time_async(cd, 0) };
        // SAFETY: the stand-in's test hook.
        unsafe { (s.limit_free)(usize::MAX) };
        assert!(started.unwrap().in_flight, "round {round}: from the pool");
        advance_wait(cd).unwrap();
        assert!(cd_saved_bytes(cd, a, N).unwrap() == pattern(N, round));
    }
    cd_cuda::trim_snapshot_pool();
    // SAFETY: as above.
    unsafe { add_to_cd_via_copy(cd, &[rw(a, N)]).unwrap() };
    // SAFETY: the stand-in's test hook; then as above.
    let started = unsafe {
        (s.limit_free)(0);
        let started = advance_cd_point_in_time_async(cd, 0);
        (s.limit_free)(usize::MAX);
        started.unwrap()
    };
    assert!(
        !started.in_flight,
        "trimmed: headroom needed again, none reported"
    );
    commit_cd(cd).unwrap();
}
