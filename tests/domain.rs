//! The safe layer: typed buffers, nesting by borrowing, errors instead of panics, device
//! buffers, builders. The borrowing rules themselves are checked by the `compile_fail`
//! doctests of `Child`, `Domain` and the guide.

use containment::raw::{add_mpi_log_to_cd, commit_cd, create_cd, LogEntry};
use containment::{CdError, Device, DeviceAlloc, DeviceMemory, Domain, Error, LoggingMode};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A root name no other test uses.
fn unique(prefix: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!("{prefix}-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

#[test]
fn borrowing_mutably_promotes_and_advance_copies_only_that() {
    let mut cd = Domain::builder().name(&unique("typed")).create().unwrap();
    let big = cd.protect(vec![0u32; 1 << 20]).unwrap();
    let small = cd.protect(vec![0u8; 9]).unwrap();
    assert_eq!(cd.info().unwrap().stats.bytes_added, (4 << 20) + 9);
    // Nothing borrowed mutably: nothing to copy.
    assert_eq!(cd.advance().unwrap().bytes_copied, 0);
    cd.get_mut(small).unwrap().fill(7);
    assert_eq!(cd.advance().unwrap().bytes_copied, 9);
    cd.get_mut_range(big, 10..20).unwrap().fill(3);
    assert_eq!(cd.advance().unwrap().bytes_copied, 40);
    cd.get_mut(big).unwrap().fill(9);
    cd.get_mut(small).unwrap().fill(9);
    cd.restore().unwrap();
    assert_eq!(cd.get(small).unwrap(), [7; 9]);
    assert_eq!(
        &cd.get(big).unwrap()[8..22],
        [[0; 2].as_slice(), &[3; 10], &[0; 2]].concat()
    );
    assert_eq!(cd.take(small).unwrap(), vec![7; 9]);
    assert_eq!(cd.info().unwrap().ranges, 1);
    cd.commit().unwrap();
}

#[test]
fn structs_empty_and_zero_sized_buffers() {
    #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, PartialEq, Debug)]
    #[repr(C)]
    struct Particle {
        pos: [f32; 3],
        id: u32,
    }
    let mut cd = Domain::new().unwrap();
    let p = cd
        .protect(vec![
            Particle {
                pos: [1.0; 3],
                id: 1
            };
            4
        ])
        .unwrap();
    let empty = cd.protect(Vec::<u64>::new()).unwrap();
    let zst = cd.protect(vec![(); 1000]).unwrap();
    let zst_array = cd.protect(vec![[0u8; 0]; 5]).unwrap();
    assert_eq!(cd.info().unwrap().ranges, 1);
    let (ps, e) = cd.get2_mut(p, empty).unwrap();
    ps[0].id = 99;
    assert!(e.is_empty());
    assert_eq!(cd.get_mut(zst).unwrap().len(), 1000);
    assert_eq!(cd.get_mut_range(zst_array, 1..4).unwrap().len(), 3);
    cd.restore().unwrap();
    assert_eq!(cd.get(p).unwrap()[0].id, 1);
    assert_eq!(cd.take(zst).unwrap().len(), 1000);
    assert_eq!(cd.take(empty).unwrap(), Vec::<u64>::new());
    drop(cd); // commits
}

#[test]
fn misused_keys_are_errors() {
    let mut a = Domain::new().unwrap();
    let mut b = Domain::new().unwrap();
    let k = a.protect(vec![1u8, 2, 3]).unwrap();
    let kb = b.protect(vec![1u8]).unwrap();
    assert!(matches!(b.get(k), Err(Error::ForeignKey { .. })));
    assert!(matches!(b.get_mut(k), Err(Error::ForeignKey { .. })));
    assert!(matches!(a.get2_mut(k, kb), Err(Error::ForeignKey { .. })));
    assert!(matches!(a.get2_mut(k, k), Err(Error::SameBuffer { .. })));
    assert!(matches!(
        a.get_mut_range(k, 2..4),
        Err(Error::OutOfBounds {
            start: 2,
            end: 4,
            len: 3,
            ..
        })
    ));
    #[allow(clippy::reversed_empty_ranges)]
    let backwards = 2..1;
    assert!(matches!(
        a.get_mut_range(k, backwards),
        Err(Error::OutOfBounds { .. })
    ));
    a.take(k).unwrap();
    assert!(matches!(a.get(k), Err(Error::Taken { .. })));
    assert!(matches!(a.take(k), Err(Error::Taken { .. })));
    let message = a.get(k).unwrap_err().to_string();
    assert!(message.contains("taken back"), "{message}");
}

#[test]
fn a_child_saves_what_it_writes_and_its_commit_promotes_the_parent() {
    let mut root = Domain::new().unwrap();
    let u = root.protect(vec![1.0f64; 4]).unwrap();
    {
        let mut child = root.child().unwrap();
        assert_eq!(child.info().unwrap().depth, 1);
        // Reading an ancestor's buffer adds nothing; writing saves it in the child first.
        assert_eq!(child.get(u).unwrap()[0], 1.0);
        assert_eq!(child.info().unwrap().ranges, 0);
        child.get_mut(u).unwrap()[0] = 7.0;
        assert_eq!(child.info().unwrap().tracked_bytes, 32);
        let report = child.restore().unwrap();
        assert_eq!(report.bytes_restored, 32);
        assert_eq!(child.get(u).unwrap()[0], 1.0);
        child.get_mut_range(u, 1..2).unwrap()[0] = 2.0;
        child.commit().unwrap();
    }
    // The child's READ_WRITE entry promoted the root's: its advance saves u.
    assert_eq!(root.advance().unwrap().bytes_copied, 32);
    root.get_mut(u).unwrap().fill(0.0);
    root.restore().unwrap();
    assert_eq!(root.get(u).unwrap(), [1.0, 2.0, 1.0, 1.0]);
    root.commit().unwrap();
}

#[test]
fn a_childs_buffers_move_up_on_commit_and_keys_stay_valid() {
    let mut root = Domain::new().unwrap();
    let mine = {
        let mut child = root.child().unwrap();
        let mine = child.protect(vec![1u32, 2, 3]).unwrap();
        child.get_mut(mine).unwrap()[0] = 10;
        child.commit().unwrap();
        mine
    };
    // The entry moved up with the data the child saved (its point in time), READ_WRITE.
    assert_eq!(root.info().unwrap().tracked_bytes, 12);
    root.get_mut(mine).unwrap()[1] = 20;
    root.restore().unwrap();
    assert_eq!(root.get(mine).unwrap(), [1, 2, 3]);
    root.get_mut(mine).unwrap()[2] = 30;
    assert_eq!(root.advance().unwrap().bytes_copied, 12);
    assert_eq!(root.take(mine).unwrap(), vec![1, 2, 30]);
    assert_eq!(root.info().unwrap().ranges, 0);
}

#[test]
fn grandchildren_and_siblings_in_sequence() {
    let mut root = Domain::new().unwrap();
    let field = root.protect(vec![0u64; 64]).unwrap();
    for step in 0..4u64 {
        // One child per step; each its own piece of the field.
        let mut child = root.child().unwrap();
        let piece = (step as usize * 16)..(step as usize + 1) * 16;
        child
            .get_mut_range(field, piece.clone())
            .unwrap()
            .fill(step + 1);
        {
            let mut grandchild = child.child().unwrap();
            assert_eq!(grandchild.info().unwrap().depth, 2);
            let scratch = grandchild.protect(vec![step; 8]).unwrap();
            grandchild.get_mut(field).unwrap()[piece.start] = 99;
            grandchild.get_mut(scratch).unwrap().fill(0);
            // A fault in the grandchild: only its work is redone.
            grandchild.restore().unwrap();
            assert_eq!(grandchild.get(field).unwrap()[piece.start], step + 1);
            assert_eq!(grandchild.get(scratch).unwrap(), [step; 8]);
            // Dropping commits.
        }
        assert_eq!(child.info().unwrap().children, 0);
        child.commit().unwrap();
    }
    let values = root.get(field).unwrap();
    for step in 0..4u64 {
        assert!(values[step as usize * 16..][..16]
            .iter()
            .all(|&v| v == step + 1));
    }
    // The field, and the grandchildren's scratch buffers, which moved up with each commit
    // (READ_WRITE, as the grandchildren wrote them).
    assert_eq!(root.advance().unwrap().bytes_copied, 64 * 8 + 4 * 64);
    root.commit().unwrap();
}

#[test]
fn a_child_cannot_take_what_its_advance_committed_upward() {
    let mut root = Domain::new().unwrap();
    let theirs = root.protect(vec![5u8; 4]).unwrap();
    let mut child = root.child().unwrap();
    let mine = child.protect(vec![1u8; 4]).unwrap();
    let local = child.protect(vec![2u8; 4]).unwrap();
    assert_eq!(child.take(local).unwrap(), vec![2; 4]);
    child.get_mut(mine).unwrap()[0] = 3;
    // The implicit commit of a child's advance gives the parent the child's entries.
    child.advance().unwrap();
    assert!(matches!(child.take(mine), Err(Error::HeldElsewhere { .. })));
    // An ancestor's buffer is never the child's to take.
    assert!(matches!(
        child.take(theirs),
        Err(Error::HeldElsewhere { .. })
    ));
    child.commit().unwrap();
    assert_eq!(root.take(mine).unwrap(), vec![3, 1, 1, 1]);
    assert_eq!(root.take(theirs).unwrap(), vec![5; 4]);
}

#[test]
fn a_failed_commit_hands_the_domain_back() {
    let mut root = Domain::new().unwrap();
    let x = root.protect(vec![4u16; 3]).unwrap();
    // A child made through the raw API keeps the root from committing.
    let raw = create_cd(Some(root.handle().into()), None, LoggingMode::Inherit, None).unwrap();
    let failed = root.commit().unwrap_err();
    assert!(matches!(
        failed.error,
        Error::Cd(CdError::HasChildren { .. })
    ));
    assert!(failed.to_string().contains("commit failed"));
    let root = failed.domain;
    assert_eq!(root.get(x).unwrap(), [4; 3]);
    commit_cd(raw).unwrap();
    root.commit().unwrap();
}

#[test]
fn a_failed_child_commit_hands_the_child_back() {
    let mut root = Domain::new().unwrap();
    let mut child = root.child().unwrap();
    let y = child.protect(vec![1i32; 2]).unwrap();
    let raw = create_cd(
        Some(child.handle().into()),
        None,
        LoggingMode::Inherit,
        None,
    )
    .unwrap();
    let mut child = child.commit().unwrap_err().domain;
    child.get_mut(y).unwrap()[1] = 5;
    commit_cd(raw).unwrap();
    child.commit().unwrap();
    assert_eq!(root.get(y).unwrap(), [1, 5]);
}

#[test]
fn restore_refuses_children_made_through_the_raw_api() {
    let mut root = Domain::new().unwrap();
    let x = root.protect(vec![1u8; 16]).unwrap();
    let raw = create_cd(Some(root.handle().into()), None, LoggingMode::Inherit, None).unwrap();
    root.get_mut(x).unwrap()[0] = 9;
    let e = root.restore().unwrap_err();
    assert!(
        matches!(e, Error::ForeignChildren { children: 1, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("raw API"));
    // Nothing was written or discarded.
    assert_eq!(root.get(x).unwrap()[0], 9);
    assert!(matches!(root.take(x), Err(Error::ForeignChildren { .. })));
    commit_cd(raw).unwrap();
    root.restore().unwrap();
    assert_eq!(root.get(x).unwrap()[0], 1);
}

#[test]
fn a_child_dropped_without_committing_is_abandoned_not_freed() {
    let mut root = Domain::new().unwrap();
    let (kept, raw) = {
        let mut child = root.child().unwrap();
        let kept = child.protect(vec![8u8; 8]).unwrap();
        // A raw grandchild keeps the child from committing when it is dropped.
        let raw = create_cd(
            Some(child.handle().into()),
            None,
            LoggingMode::Inherit,
            None,
        )
        .unwrap();
        (kept, raw)
    };
    let Err(Error::Abandoned { cd: child, .. }) = root.get(kept) else {
        panic!("the child's buffer is no longer reachable");
    };
    assert!(matches!(
        root.restore(),
        Err(Error::ForeignChildren { children: 1, .. })
    ));
    // Ending the leftovers through the raw API unblocks the root; the buffer stays the
    // tree's (its CD named it) until the root ends.
    commit_cd(raw).unwrap();
    commit_cd(child).unwrap();
    root.restore().unwrap();
    assert!(matches!(root.get(kept), Err(Error::Abandoned { .. })));
    root.commit().unwrap();
}

#[test]
fn domains_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Domain>();
    send_sync::<containment::Child<'static>>();
    send_sync::<containment::Sibling<'static, f64>>();
    send_sync::<containment::Device>();
}

#[test]
fn a_child_works_on_another_thread() {
    let mut root = Domain::new().unwrap();
    let data = root.protect(vec![0u32; 256]).unwrap();
    let mut child = root.child().unwrap();
    std::thread::scope(|s| {
        s.spawn(|| {
            child.get_mut(data).unwrap().fill(1);
            child.advance().unwrap();
            child.get_mut(data).unwrap().fill(2);
            child.restore().unwrap();
        });
    });
    child.commit().unwrap();
    assert!(root.get(data).unwrap().iter().all(|&v| v == 1));
}

#[test]
fn builders_set_name_logging_and_storage_info() {
    let name = unique("built");
    let mut root = Domain::builder()
        .name(&name)
        .logging(LoggingMode::Enabled)
        .storage_info("")
        .create()
        .unwrap();
    let info = root.info().unwrap();
    assert_eq!(info.name.as_deref(), Some(name.as_str()));
    assert!(info.logging);
    assert!(info.storage_info.is_empty());
    assert!(matches!(
        Domain::builder().name(&name).create(),
        Err(Error::Cd(CdError::DuplicateName(_)))
    ));
    assert!(matches!(
        Domain::builder().name("").create(),
        Err(Error::Cd(CdError::BadName(_)))
    ));
    assert!(matches!(
        Domain::builder().logging(LoggingMode::Inherit).create(),
        Err(Error::Cd(CdError::RootInheritsLogging))
    ));
    // storage_info is checked: unknown keys, keys that need `dir`, and `dir` without the
    // persistence layer (which libcd's MPI_Init loads) are refused with the reason.
    for (text, says) in [("copies=2", "unknown key"), ("keep=2", "needs key \"dir\"")] {
        match Domain::builder().storage_info(text).create() {
            Err(Error::Cd(CdError::StorageInfo(m))) => assert!(m.contains(says), "{m}"),
            other => panic!("{text}: {other:?}"),
        }
    }
    assert!(matches!(
        Domain::builder()
            .storage_info("dir=/nonexistent/cd")
            .create(),
        Err(Error::Cd(CdError::Persist(_)))
    ));
    assert!(matches!(
        root.child_builder().logging(LoggingMode::Disabled).create(),
        Err(Error::Cd(CdError::LoggingMismatch { .. }))
    ));
    assert!(matches!(
        root.child_builder().storage_info("dir=/tmp/child").create(),
        Err(Error::Cd(CdError::StorageInfo(_)))
    ));
    let child = root
        .child_builder()
        .logging(LoggingMode::Enabled)
        .storage_info("")
        .create()
        .unwrap();
    let info = child.info().unwrap();
    assert!(info.logging);
    assert_eq!(info.name.as_deref(), Some(name.as_str()));
    child.commit().unwrap();
    root.commit().unwrap();
}

#[test]
fn the_mpi_log_is_read_back_as_read_only_bytes_with_their_length() {
    let mut root = Domain::builder()
        .logging(LoggingMode::Enabled)
        .create()
        .unwrap();
    let x = root.protect(vec![0u8; 4]).unwrap();
    add_mpi_log_to_cd(root.handle(), LogEntry::new(vec![1u8, 2, 3])).unwrap();
    add_mpi_log_to_cd(root.handle(), LogEntry::new(vec![4u8; 300])).unwrap();
    root.get_mut(x).unwrap()[0] = 1;
    assert_eq!(root.restore().unwrap().log_entries, 2);
    let first = root.mpi_log_next().unwrap().unwrap();
    assert_eq!(first.bytes(), [1, 2, 3]);
    assert_eq!(root.mpi_log_next().unwrap().unwrap().bytes().len(), 300);
    assert!(root.mpi_log_next().unwrap().is_none());
    // The entry keeps its bytes after the log is gone.
    root.commit().unwrap();
    assert_eq!(first.bytes().len(), 3);
}

/// Device memory the CPU cannot touch directly: allocations at made-up addresses, each backed
/// by a host vector, reached only through the copy functions.
struct SimDevice {
    base: usize,
    next: AtomicUsize,
    allocations: Mutex<BTreeMap<usize, Vec<u8>>>,
    frees: AtomicUsize,
}

impl SimDevice {
    fn new() -> Arc<SimDevice> {
        // Each device of the test process at its own addresses (regions must not overlap).
        static BASE: AtomicUsize = AtomicUsize::new(0xD000_0000_0000);
        Arc::new(SimDevice {
            base: BASE.fetch_add(1 << 32, Ordering::Relaxed),
            next: AtomicUsize::new(0),
            allocations: Mutex::new(BTreeMap::new()),
            frees: AtomicUsize::new(0),
        })
    }

    /// Runs `f` on the bytes at `address` (inside one allocation).
    fn with<R>(
        &self,
        address: usize,
        len: usize,
        f: impl FnOnce(&mut [u8]) -> R,
    ) -> Result<R, String> {
        let mut allocations = self.allocations.lock().unwrap();
        let (&start, bytes) = allocations
            .range_mut(..=address)
            .next_back()
            .ok_or(format!("{address:#x} is not device memory"))?;
        let offset = address - start;
        let part = bytes
            .get_mut(offset..offset + len)
            .ok_or(format!("{address:#x}+{len} crosses an allocation"))?;
        Ok(f(part))
    }

    fn live(&self) -> usize {
        self.allocations.lock().unwrap().len()
    }
}

impl DeviceMemory for SimDevice {
    fn name(&self) -> &str {
        "simulated"
    }

    fn copy_to_host(&self, dst: &mut [u8], src: usize) -> Result<(), String> {
        self.with(src, dst.len(), |bytes| dst.copy_from_slice(bytes))
    }

    fn copy_to_device(&self, dst: usize, src: &[u8]) -> Result<(), String> {
        self.with(dst, src.len(), |bytes| bytes.copy_from_slice(src))
    }
}

impl DeviceAlloc for SimDevice {
    fn allocate(&self, bytes: usize) -> Result<usize, String> {
        let address = self.base
            + self
                .next
                .fetch_add(bytes.next_multiple_of(256), Ordering::Relaxed);
        self.allocations
            .lock()
            .unwrap()
            .insert(address, vec![0; bytes]);
        Ok(address)
    }

    fn free(&self, address: usize, _bytes: usize) {
        self.allocations.lock().unwrap().remove(&address);
        self.frees.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn device_buffers_are_protected_restored_and_freed() {
    let sim = SimDevice::new();
    let device = Device::register(sim.clone());
    let mut root = Domain::new().unwrap();
    let state = root.protect_device(&device, &[1.5f32; 1000]).unwrap();
    let empty = root.protect_device::<u64>(&device, &[]).unwrap();
    assert_eq!(sim.live(), 1);
    assert_eq!(root.info().unwrap().tracked_bytes, 4000);
    assert_eq!(root.download_device(empty).unwrap(), Vec::<u64>::new());
    // A kernel writes the buffer at its device address.
    {
        let ptr = root.device_mut(state).unwrap();
        assert_eq!(ptr.len(), 1000);
        sim.with(ptr.address(), 8, |b| b.fill(0)).unwrap();
    }
    assert_eq!(root.download_device(state).unwrap()[..3], [0.0, 0.0, 1.5]);
    root.restore().unwrap();
    assert!(root
        .download_device(state)
        .unwrap()
        .iter()
        .all(|&v| v == 1.5));
    // The whole buffer was lent to the kernel: READ_WRITE until the next advance.
    assert_eq!(root.advance().unwrap().bytes_copied, 4000);
    root.upload_device(state, 10, &[2.0; 5]).unwrap();
    assert_eq!(root.advance().unwrap().bytes_copied, 20);
    root.upload_device(state, 0, &[9.0; 1000]).unwrap();
    assert!(matches!(
        root.upload_device(state, 999, &[1.0; 2]),
        Err(Error::OutOfBounds { .. })
    ));
    root.restore().unwrap();
    let values = root.download_device(state).unwrap();
    assert_eq!(values[9..16], [1.5, 2.0, 2.0, 2.0, 2.0, 2.0, 1.5]);
    // A host key does not name a device buffer, nor the other way round.
    let host = root.protect(vec![0u8; 4]).unwrap();
    assert!(root.get(host).is_ok());
    {
        let mut child = root.child().unwrap();
        child.upload_device(state, 0, &[7.0]).unwrap();
        let scratch = child.protect_device(&device, &[3u8; 64]).unwrap();
        child.restore().unwrap();
        assert_eq!(child.download_device(state).unwrap()[0], 1.5);
        assert_eq!(child.take_device(scratch).unwrap(), vec![3; 64]);
        child.commit().unwrap();
    }
    assert_eq!(sim.live(), 1);
    assert_eq!(root.take_device(state).unwrap()[10], 2.0);
    assert_eq!(sim.live(), 0);
    let again = root.protect_device(&device, &[1u16; 10]).unwrap();
    root.commit().unwrap();
    let _ = again;
    assert_eq!(sim.live(), 0, "commit frees the device buffers");
    assert_eq!(sim.frees.load(Ordering::Relaxed), 3);
}

#[test]
fn a_failing_device_is_an_error() {
    struct Full;
    impl DeviceMemory for Full {
        fn name(&self) -> &str {
            "full"
        }
        fn copy_to_host(&self, _: &mut [u8], _: usize) -> Result<(), String> {
            Err("unreachable device".into())
        }
        fn copy_to_device(&self, _: usize, _: &[u8]) -> Result<(), String> {
            Err("unreachable device".into())
        }
    }
    impl DeviceAlloc for Full {
        fn allocate(&self, bytes: usize) -> Result<usize, String> {
            Err(format!("no room for {bytes} bytes"))
        }
        fn free(&self, _: usize, _: usize) {}
    }
    let device = Device::register(Arc::new(Full));
    let mut root = Domain::new().unwrap();
    let e = root.protect_device(&device, &[0u8; 16]).unwrap_err();
    assert_eq!(
        e,
        Error::Device {
            device: "full".into(),
            message: "no room for 16 bytes".into()
        }
    );
    assert_eq!(root.info().unwrap().ranges, 0);
}

#[test]
fn concurrent_siblings_restore_and_commit_their_own_pieces() {
    let mut root = Domain::new().unwrap();
    let field = root.protect(vec![0u32; 1000]).unwrap();
    let other = root.protect(vec![7u8; 3]).unwrap();
    for round in 1..=3u32 {
        let siblings = root.siblings(field, 8).unwrap();
        assert_eq!(siblings.len(), 8);
        assert_eq!(siblings[0].get().len(), 125);
        std::thread::scope(|s| {
            for (i, mut sibling) in siblings.into_iter().enumerate() {
                s.spawn(move || {
                    let value = round * 100 + i as u32;
                    for attempt in 0..3 {
                        sibling.get_mut().unwrap().fill(value + attempt);
                        if attempt < 2 && i % 2 == 0 {
                            let report = sibling.restore().unwrap();
                            assert_eq!(report.bytes_restored, 500);
                            // Back to the end of the last round (the even pieces then ended
                            // at their third attempt).
                            let start = if round == 1 {
                                0
                            } else {
                                (round - 1) * 100 + i as u32 + 2
                            };
                            assert!(sibling.get().iter().all(|&v| v == start));
                            continue;
                        }
                        break;
                    }
                    sibling.advance().unwrap();
                    // Dropping commits.
                });
            }
        });
        assert_eq!(root.info().unwrap().children, 0);
        let values = root.get(field).unwrap();
        for i in 0..8u32 {
            let extra = if i % 2 == 0 { 2 } else { 0 };
            assert!(values[i as usize * 125..][..125]
                .iter()
                .all(|&v| v == round * 100 + i + extra));
        }
        assert_eq!(root.advance().unwrap().bytes_copied, 4000);
    }
    assert_eq!(root.get(other).unwrap(), [7; 3]);
    // More pieces than elements: one sibling per element; none for zero.
    assert_eq!(root.siblings(other, 10).unwrap().len(), 3);
    assert!(root.siblings(other, 0).unwrap().is_empty());
    let failed = {
        let mut siblings = root.siblings(other, 1).unwrap();
        let sibling = siblings.pop().unwrap();
        let raw = create_cd(
            Some(sibling.handle().into()),
            None,
            LoggingMode::Inherit,
            None,
        )
        .unwrap();
        let mut sibling = sibling.commit().unwrap_err().domain;
        assert!(matches!(
            sibling.restore(),
            Err(Error::ForeignChildren { .. })
        ));
        commit_cd(raw).unwrap();
        sibling.get_mut().unwrap()[0] = 1;
        sibling.commit().unwrap();
        drop(siblings);
        root.get(other).unwrap()[0]
    };
    assert_eq!(failed, 1);
    root.commit().unwrap();
}

#[test]
fn a_leaked_child_is_abandoned_and_the_parent_stays_itself() {
    let mut root = Domain::new().unwrap();
    let x = root.protect(vec![1u8; 4]).unwrap();
    let mut child = root.child().unwrap();
    let hidden = child.protect(vec![2u8; 4]).unwrap();
    child.get_mut(x).unwrap()[0] = 5;
    let child_cd = child.handle();
    std::mem::forget(child);
    // The root acts on its own CD, not the leaked child's.
    assert_eq!(root.info().unwrap().depth, 0);
    root.get_mut(x).unwrap()[1] = 6;
    assert!(matches!(root.get(hidden), Err(Error::Abandoned { .. })));
    assert!(matches!(
        root.restore(),
        Err(Error::ForeignChildren { children: 1, .. })
    ));
    commit_cd(child_cd).unwrap();
    root.restore().unwrap();
    assert_eq!(root.get(x).unwrap(), [1; 4]);
    root.commit().unwrap();
}

#[test]
fn a_sibling_refuses_to_restore_bytes_outside_its_piece() {
    use containment::raw::{add_to_cd_via_parent, Access, AddrSpec};
    let mut root = Domain::new().unwrap();
    let field = root.protect(vec![0u64; 8]).unwrap();
    let whole = AddrSpec::of(root.get(field).unwrap(), Access::ReadOnly);
    let mut siblings = root.siblings(field, 2).unwrap();
    // The second half belongs to the other sibling: a parent entry over it is refused at
    // restore time.
    let spec = AddrSpec::new(whole.address + 32, 32, Access::ReadOnly, whole.scope);
    add_to_cd_via_parent(siblings[0].handle(), &[spec]).unwrap();
    let e = siblings[0].restore().unwrap_err();
    assert!(
        matches!(e, Error::OutsidePiece { address, .. } if address == whole.address + 32),
        "{e}"
    );
    assert!(siblings[1].restore().is_ok());
}
