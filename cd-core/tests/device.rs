//! Device memory: a simulated device arena registered with its own copy functions, standing in
//! for GPU memory and cudaMemcpy. Device addresses lie in a range no host allocation can have.

use crate::util::{unique, Mem};
use cd_core::*;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A device whose memory is a host vector at a made-up base address.
struct Arena {
    base: usize,
    memory: Mutex<Vec<u8>>,
    to_host: AtomicUsize,
    to_device: AtomicUsize,
    fail: AtomicBool,
}

impl Arena {
    fn new(base: usize, len: usize) -> Arc<Arena> {
        Arc::new(Arena {
            base,
            memory: Mutex::new(vec![0; len]),
            to_host: AtomicUsize::new(0),
            to_device: AtomicUsize::new(0),
            fail: AtomicBool::new(false),
        })
    }

    /// A "kernel" writing the device memory.
    fn write(&self, offset: usize, bytes: &[u8]) {
        self.memory.lock().unwrap()[offset..offset + bytes.len()].copy_from_slice(bytes);
    }

    fn read(&self, offset: usize, len: usize) -> Vec<u8> {
        self.memory.lock().unwrap()[offset..offset + len].to_vec()
    }

    fn range(&self, address: usize, len: usize) -> Result<std::ops::Range<usize>, String> {
        let start = address.checked_sub(self.base).ok_or("below the arena")?;
        let memory_len = self.memory.lock().unwrap().len();
        if start + len > memory_len {
            return Err("beyond the arena".into());
        }
        Ok(start..start + len)
    }
}

impl DeviceMemory for Arena {
    fn name(&self) -> &str {
        "simulated"
    }

    fn copy_to_host(&self, dst: &mut [u8], src: usize) -> Result<(), String> {
        if self.fail.load(Ordering::Relaxed) {
            return Err("device lost (simulated)".into());
        }
        let range = self.range(src, dst.len())?;
        dst.copy_from_slice(&self.memory.lock().unwrap()[range]);
        self.to_host.fetch_add(dst.len(), Ordering::Relaxed);
        Ok(())
    }

    fn copy_to_device(&self, dst: usize, src: &[u8]) -> Result<(), String> {
        if self.fail.load(Ordering::Relaxed) {
            return Err("device lost (simulated)".into());
        }
        let range = self.range(dst, src.len())?;
        self.memory.lock().unwrap()[range].copy_from_slice(src);
        self.to_device.fetch_add(src.len(), Ordering::Relaxed);
        Ok(())
    }
}

/// Device bases in the kernel half of the address space, one per test.
fn base(n: usize) -> usize {
    0xD000_0000_0000_0000 + n * 0x1_0000_0000
}

#[test]
fn device_ranges_use_the_registered_copy_functions() {
    let arena = Arena::new(base(1), 4096);
    let space = register_memory_space(arena.clone());
    map_device_region(space, arena.base, 4096).unwrap();
    let host = Mem::new(16);
    let cd = create_cd(None, None, LoggingMode::Disabled, Some(&unique("device"))).unwrap();
    arena.write(0, &[1; 1024]);
    let dev = |off: usize, len: usize, access| {
        AddrSpec::new(arena.base + off, len, access, Scope::Global)
    };
    // SAFETY: host memory outlives the CD; device ranges go through the arena.
    unsafe { add_to_cd_via_copy(cd, &[dev(0, 1024, Access::ReadWrite), host.rw(0, 16)]).unwrap() };
    assert_eq!(arena.to_host.load(Ordering::Relaxed), 1024);
    assert_eq!(
        cd_entries(cd)
            .unwrap()
            .iter()
            .filter(|e| e.space == space)
            .count(),
        1
    );
    // A kernel runs, then fails: restore brings device memory back with copy_to_device.
    arena.write(0, &[2; 1024]);
    host.fill(0, 16, 7);
    // SAFETY: as above.
    let report = unsafe { restore_cd(cd).unwrap() };
    assert_eq!(report.bytes_restored, 1040);
    assert_eq!(arena.read(0, 1024), vec![1; 1024]);
    assert_eq!(host.bytes(0, 16), [0; 16]);
    assert_eq!(arena.to_device.load(Ordering::Relaxed), 1024);
    // Advance copies the device's current bytes out.
    arena.write(0, &[3; 1024]);
    // SAFETY: as above.
    assert_eq!(
        unsafe { advance_cd_point_in_time(cd) }
            .unwrap()
            .bytes_copied,
        1040
    );
    assert_eq!(cd_saved_bytes(cd, arena.base, 4).unwrap(), [3; 4]);
    commit_cd(cd).unwrap();
    unmap_device_region(arena.base).unwrap();
}

#[test]
fn device_failures_are_errors_and_advance_stays_atomic() {
    let arena = Arena::new(base(2), 256);
    let space = register_memory_space(arena.clone());
    map_device_region(space, arena.base, 256).unwrap();
    let cd = create_cd(
        None,
        None,
        LoggingMode::Disabled,
        Some(&unique("device-fail")),
    )
    .unwrap();
    let host = Mem::new(64);
    let specs = [
        host.rw(0, 64),
        AddrSpec::new(arena.base, 256, Access::ReadWrite, Scope::Global),
    ];
    // SAFETY: host memory outlives the CD.
    unsafe { add_to_cd_via_copy(cd, &specs).unwrap() };
    host.fill(0, 64, 5);
    arena.fail.store(true, Ordering::Relaxed);
    // SAFETY: as above.
    let err = unsafe { advance_cd_point_in_time(cd) }.unwrap_err();
    assert_eq!(
        err,
        CdError::DeviceCopy {
            space: "simulated".into(),
            message: "device lost (simulated)".into()
        }
    );
    arena.fail.store(false, Ordering::Relaxed);
    // SAFETY: as above.
    unsafe { restore_cd(cd).unwrap() };
    assert_eq!(
        host.bytes(0, 64),
        [0; 64],
        "the failed advance saved nothing"
    );
    commit_cd(cd).unwrap();
    unmap_device_region(arena.base).unwrap();
}

#[test]
fn regions_are_checked() {
    let arena = Arena::new(base(3), 1024);
    let space = register_memory_space(arena.clone());
    assert_eq!(
        map_device_region(99_999, arena.base, 16),
        Err(CdError::UnknownMemorySpace(99_999))
    );
    assert_eq!(
        map_device_region(HOST, arena.base, 16),
        Err(CdError::UnknownMemorySpace(HOST))
    );
    map_device_region(space, arena.base, 512).unwrap();
    assert!(matches!(
        map_device_region(space, arena.base + 256, 512),
        Err(CdError::RegionOverlap { .. })
    ));
    map_device_region(space, arena.base + 512, 512).unwrap();
    let cd = create_cd(None, None, LoggingMode::Disabled, Some(&unique("regions"))).unwrap();
    // Two adjacent regions of one space are still two regions: a range across them is refused.
    let across = AddrSpec::new(arena.base + 500, 24, Access::ReadOnly, Scope::Global);
    // SAFETY: refused before any memory is read.
    assert!(matches!(
        unsafe { add_to_cd_via_copy(cd, &[across]) },
        Err(CdError::StraddlesMemorySpace { .. })
    ));
    let host = Mem::new(8);
    // SAFETY: host memory outlives the CD.
    unsafe { add_to_cd_via_copy(cd, &[host.ro(0, 8)]).unwrap() };
    assert_eq!(cd_entries(cd).unwrap()[0].space, HOST);
    commit_cd(cd).unwrap();
    unmap_device_region(arena.base).unwrap();
    unmap_device_region(arena.base + 512).unwrap();
    assert_eq!(
        unmap_device_region(arena.base),
        Err(CdError::RegionNotFound(arena.base))
    );
}

/// A device that, like CUDA, refuses any copy spanning two of its allocations, and records
/// every range it was handed.
struct Allocations {
    arena: Arc<Arena>,
    /// `(offset, len)` of each allocation, back to back as `cudaMalloc` places them.
    allocations: Vec<(usize, usize)>,
    seen: Mutex<Vec<(usize, usize)>>,
}

impl Allocations {
    fn check(&self, address: usize, len: usize) -> Result<(), String> {
        self.seen.lock().unwrap().push((address, len));
        let offset = address - self.arena.base;
        match self
            .allocations
            .iter()
            .find(|&&(s, l)| s <= offset && offset < s + l)
        {
            Some(&(s, l)) if offset + len <= s + l => Ok(()),
            _ => Err(format!(
                "invalid value: {len} bytes at {address:#x} span two allocations"
            )),
        }
    }
}

impl DeviceMemory for Allocations {
    fn name(&self) -> &str {
        "allocations"
    }
    fn copy_to_host(&self, dst: &mut [u8], src: usize) -> Result<(), String> {
        self.check(src, dst.len())?;
        self.arena.copy_to_host(dst, src)
    }
    fn copy_to_device(&self, dst: usize, src: &[u8]) -> Result<(), String> {
        self.check(dst, src.len())?;
        self.arena.copy_to_device(dst, src)
    }
}

/// Issue 11, item 1: equal-label entries in adjacent regions (two adjacent allocations, or
/// one allocation mapped as two regions) never merge, so no copy crosses a region boundary.
#[test]
fn entries_and_copies_never_cross_a_region_boundary() {
    const A: usize = 64 << 10;
    let arena = Arena::new(base(4), 4 * A);
    // Allocations: [0, A), [A, 2A), and [2A, 4A) which the application maps as two regions.
    let device = Arc::new(Allocations {
        arena: arena.clone(),
        allocations: vec![(0, A), (A, A), (2 * A, 2 * A)],
        seen: Mutex::new(Vec::new()),
    });
    let space = register_memory_space(device.clone());
    for (offset, len) in [(0, A), (A, A), (2 * A, A), (3 * A, A)] {
        map_device_region(space, arena.base + offset, len).unwrap();
    }
    let whole = |i: usize, access| AddrSpec::new(arena.base + i * A, A, access, Scope::Global);
    let parent = create_cd(None, None, LoggingMode::Disabled, Some(&unique("boundary"))).unwrap();
    arena.write(0, &vec![1; 4 * A]);
    // SAFETY: device ranges go through the copy functions.
    unsafe {
        add_to_cd_via_copy(
            parent,
            &(0..4)
                .map(|i| whole(i, Access::ReadWrite))
                .collect::<Vec<_>>(),
        )
        .unwrap()
    };
    assert_eq!(cd_entries(parent).unwrap().len(), 4, "one entry per region");
    // A child adds the same memory again via parent and some of it via copy, then commits:
    // the parent's merged entries still stop at every boundary.
    let child = create_cd(Some(parent.into()), None, LoggingMode::Inherit, None).unwrap();
    // SAFETY: as above.
    unsafe {
        add_to_cd_via_parent(
            child,
            &[whole(0, Access::ReadOnly), whole(1, Access::ReadOnly)],
        )
        .unwrap();
        add_to_cd_via_copy(
            child,
            &[whole(2, Access::ReadWrite), whole(3, Access::ReadWrite)],
        )
        .unwrap();
    }
    arena.write(0, &vec![2; 4 * A]);
    // SAFETY: as above.
    unsafe { restore_cd(child).unwrap() };
    assert_eq!(arena.read(0, 4 * A), vec![1; 4 * A]);
    arena.write(0, &vec![3; 4 * A]);
    // SAFETY: as above.
    unsafe { advance_cd_point_in_time(child).unwrap() };
    commit_cd(child).unwrap();
    assert_eq!(
        cd_entries(parent).unwrap().len(),
        4,
        "still one entry per region"
    );
    arena.write(0, &vec![4; 4 * A]);
    // SAFETY: as above.
    unsafe {
        advance_cd_point_in_time(parent).unwrap();
        arena.write(0, &vec![5; 4 * A]);
        restore_cd(parent).unwrap();
    }
    assert_eq!(arena.read(0, 4 * A), vec![4; 4 * A]);
    let seen = device.seen.lock().unwrap().clone();
    assert!(!seen.is_empty());
    for (address, len) in seen {
        let offset = address - arena.base;
        assert_eq!(
            offset / A,
            (offset + len - 1) / A,
            "a copy of {len} bytes at region offset {offset} crossed a region boundary"
        );
    }
    // Item 2: a region a CD still holds cannot be unmapped.
    assert!(matches!(
        unmap_device_region(arena.base + A),
        Err(CdError::RegionInUse { cd, .. }) if cd == parent
    ));
    delete_from_cd(parent, &[whole(1, Access::ReadOnly)]).unwrap();
    unmap_device_region(arena.base + A).unwrap();
    commit_cd(parent).unwrap();
    for i in [0, 2, 3] {
        unmap_device_region(arena.base + i * A).unwrap();
    }
}
