//! Threads, as the spec lists them: create, add and add_file are safe concurrently on one
//! handle; siblings are created and committed from different threads; concurrent commit,
//! restore or advance of one handle is an error, not corruption.

use crate::util::{unique, Mem};
use cd_core::*;
use std::sync::{Arc, Barrier};

#[test]
fn concurrent_adds_on_one_handle() {
    const THREADS: usize = 8;
    const PER: usize = 2000;
    let mem = Mem::new(THREADS * PER * 8);
    let cd = create_cd(None, None, LoggingMode::Disabled, Some(&unique("adds"))).unwrap();
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let mem = &mem;
            s.spawn(move || {
                for i in 0..PER {
                    // Interleave the threads' ranges so they merge across threads.
                    let off = (i * THREADS + t) * 8;
                    mem.fill(off, 8, t as u8 + 1);
                    // SAFETY: `mem` outlives the CD; this thread owns these bytes.
                    unsafe { add_to_cd_via_copy(cd, &[mem.rw(off, 8)]).unwrap() };
                }
            });
        }
    });
    let info = cd_info(cd).unwrap();
    assert_eq!(info.ranges, 1, "all adjacent equal ranges merged");
    assert_eq!(info.stored_bytes, THREADS * PER * 8);
    assert_eq!(info.stats.adds, (THREADS * PER) as u64);
    mem.fill(0, THREADS * PER * 8, 0);
    // SAFETY: the threads are done.
    unsafe { restore_cd(cd).unwrap() };
    for i in 0..THREADS * PER {
        assert_eq!(mem.get(i * 8), (i % THREADS) as u8 + 1);
    }
    commit_cd(cd).unwrap();
}

#[test]
fn concurrent_children_and_files_on_one_handle() {
    let root = create_cd(None, None, LoggingMode::Enabled, Some(&unique("kids"))).unwrap();
    // Open every file first and keep them open: a closed descriptor's number is reused.
    let files: Vec<(std::path::PathBuf, std::fs::File)> = (0..8)
        .map(|t| {
            let path = std::env::temp_dir().join(unique(&format!("cd-threads-{t}")));
            let file = std::fs::File::create(&path).unwrap();
            (path, file)
        })
        .collect();
    std::thread::scope(|s| {
        for (t, (_, file)) in files.iter().enumerate() {
            s.spawn(move || {
                add_file_to_cd(root, std::os::fd::AsRawFd::as_raw_fd(file)).unwrap();
                for _ in 0..50 {
                    let kid =
                        create_cd(Some(root.into()), None, LoggingMode::Inherit, None).unwrap();
                    add_mpi_log_to_cd(kid, vec![t as u8].into()).unwrap();
                    commit_cd(kid).unwrap();
                }
            });
        }
    });
    let info = cd_info(root).unwrap();
    assert_eq!((info.children, info.files), (0, 8));
    commit_cd(root).unwrap();
    for (path, file) in files {
        drop(file);
        std::fs::remove_file(path).unwrap();
    }
}

/// A device copy function that blocks until released, to hold an advance in progress.
struct Gate(Barrier, Barrier);

impl DeviceMemory for Gate {
    fn name(&self) -> &str {
        "gate"
    }
    fn copy_to_host(&self, dst: &mut [u8], _: usize) -> Result<(), String> {
        self.0.wait(); // the advance is in progress
        self.1.wait(); // the other thread has tried its operation
        dst.fill(1);
        Ok(())
    }
    fn copy_to_device(&self, _: usize, _: &[u8]) -> Result<(), String> {
        Ok(())
    }
}

#[test]
fn restore_during_an_advance_is_an_error_not_corruption() {
    let gate = Arc::new(Gate(Barrier::new(2), Barrier::new(2)));
    let space = register_memory_space(gate.clone());
    let base = 0xD100_0000_0000_0000usize;
    map_device_region(space, base, 64).unwrap();
    let cd = create_cd(None, None, LoggingMode::Disabled, Some(&unique("misuse"))).unwrap();
    let spec = AddrSpec::new(base, 64, Access::ReadWrite, Scope::Global);
    std::thread::scope(|s| {
        let g = gate.clone();
        s.spawn(move || {
            // The add's copy goes through the gate too: let it pass.
            g.0.wait();
            g.1.wait();
        });
        // SAFETY: device memory only, through the gate.
        unsafe { add_to_cd_via_copy(cd, &[spec]).unwrap() };
    });
    std::thread::scope(|s| {
        let advancing = s.spawn(move || {
            // SAFETY: as above.
            unsafe { advance_cd_point_in_time(cd) }
        });
        gate.0.wait();
        // SAFETY: refused before touching memory.
        let refused = unsafe { restore_cd(cd) };
        assert_eq!(
            refused,
            Err(CdError::ConcurrentOperation {
                operation: "restore_cd",
                running: "advance_cd_point_in_time"
            })
        );
        assert!(matches!(
            commit_cd(cd),
            Err(CdError::ConcurrentOperation { .. })
        ));
        gate.1.wait();
        assert_eq!(advancing.join().unwrap().unwrap().bytes_copied, 64);
    });
    commit_cd(cd).unwrap();
    unmap_device_region(base).unwrap();
}

/// Many threads, each with its own root and a few levels of children, doing random-ish
/// operations, plus shared siblings under one root: checks the invariants at the end.
#[test]
fn stress_many_threads_many_cds() {
    const THREADS: usize = 12;
    const ROUNDS: usize = 150;
    let shared = create_cd(None, None, LoggingMode::Enabled, Some(&unique("stress"))).unwrap();
    let mem = Mem::new(THREADS * 4096);
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let mem = &mem;
            s.spawn(move || {
                let base = t * 4096;
                let mut seed = 0x9E3779B97F4A7C15u64 ^ t as u64;
                let mut rand = move |n: usize| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    (seed % n as u64) as usize
                };
                let own =
                    create_cd(None, None, LoggingMode::Disabled, Some(&unique("own"))).unwrap();
                for round in 0..ROUNDS {
                    let sibling =
                        create_cd(Some(shared.into()), None, LoggingMode::Inherit, None).unwrap();
                    let kid =
                        create_cd(Some(own.into()), None, LoggingMode::Inherit, None).unwrap();
                    for _ in 0..8 {
                        let off = base + rand(4000);
                        let len = 1 + rand(96.min(base + 4096 - off));
                        mem.fill(off, len, round as u8);
                        // SAFETY: `mem` outlives the CDs; the thread owns its 4 KiB.
                        unsafe {
                            add_to_cd_via_copy(kid, &[mem.rw(off, len)]).unwrap();
                            add_to_cd_via_copy(sibling, &[mem.ro(off, len)]).unwrap();
                        }
                    }
                    let snapshot = mem.bytes(base, 4096);
                    match rand(3) {
                        0 => {
                            mem.fill(base, 4096, 0xAA);
                            // SAFETY: as above.
                            unsafe { restore_cd(kid).unwrap() };
                            // Bytes in the kid come back; others keep 0xAA.
                            for e in cd_entries(kid).unwrap() {
                                let o = e.address - mem.addr(0);
                                assert_eq!(
                                    mem.bytes(o, e.length),
                                    snapshot[o - base..o - base + e.length]
                                );
                            }
                            mem.fill(base, 4096, 0);
                        }
                        // SAFETY: as above.
                        1 => unsafe {
                            advance_cd_point_in_time(kid).unwrap();
                        },
                        _ => {}
                    }
                    commit_cd(kid).unwrap();
                    commit_cd(sibling).unwrap();
                }
                assert!(cd_info(own).unwrap().ranges > 0);
                commit_cd(own).unwrap();
            });
        }
    });
    let info = cd_info(shared).unwrap();
    assert_eq!(info.children, 0);
    assert!(info.ranges > 0);
    commit_cd(shared).unwrap();
}

/// Misuse under load: one thread restores a parent over and over while others create, fill,
/// advance and commit its children. Children may be discarded under their threads' feet: every
/// call must then fail cleanly (a stale handle), never deadlock, panic or corrupt; and the
/// parent's own data must restore exactly throughout.
#[test]
fn restoring_a_parent_while_children_come_and_go() {
    const WORKERS: usize = 6;
    let mem = Mem::new(WORKERS * 256 + 64);
    let parent = create_cd(None, None, LoggingMode::Enabled, Some(&unique("churn"))).unwrap();
    let own = WORKERS * 256;
    mem.fill(own, 64, 42);
    // SAFETY: `mem` outlives the CDs. Only the restoring thread touches memory: the workers add
    // regen entries, which read nothing, and only restores write (through the regen function).
    unsafe { add_to_cd_via_copy(parent, &[mem.rw(own, 64)]).unwrap() };
    let regen = Regen::new(|specs| {
        for spec in specs {
            for a in spec.address..spec.address + spec.length {
                // SAFETY: worker ranges of `mem`, written only during restores.
                unsafe {
                    std::ptr::write_volatile(std::ptr::with_exposed_provenance_mut::<u8>(a), 7)
                };
            }
        }
        0
    });
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        for w in 0..WORKERS {
            let (mem, stop, regen) = (&mem, &stop, regen.clone());
            s.spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let Ok(kid) = create_cd(Some(parent.into()), None, LoggingMode::Inherit, None)
                    else {
                        continue;
                    };
                    let result = (|| -> Result<()> {
                        add_to_cd_via_regen(kid, &[mem.ro(w * 256, 256)], regen.clone())?;
                        add_mpi_log_to_cd(kid, vec![w as u8].into())?;
                        // SAFETY: the kid holds only a regen entry: nothing is read.
                        unsafe { advance_cd_point_in_time(kid)? };
                        commit_cd(kid)
                    })();
                    match result {
                        Ok(()) => {}
                        // Discarded by a restore; if its slot was reused since, the fate
                        // is no longer recorded.
                        Err(CdError::StaleHandle {
                            fate: Fate::DiscardedByRestore | Fate::Gone,
                            ..
                        }) => {}
                        // An only child's log would merge into the parent's while a restore
                        // left that replaying (nobody consumes it here): refused, unchanged.
                        Err(CdError::LogReplaying) => {}
                        Err(e) => panic!("worker {w}: unexpected error {e}"),
                    }
                }
            });
        }
        for round in 0..200 {
            mem.fill(own, 64, round as u8);
            // SAFETY: see above.
            unsafe { restore_cd(parent).unwrap() };
            assert!(mem.bytes(own, 64).iter().all(|&b| b == 42), "round {round}");
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    mem.fill(own, 64, 0);
    // SAFETY: the workers are done.
    unsafe { restore_cd(parent).unwrap() };
    assert!(mem.bytes(own, 64).iter().all(|&b| b == 42));
    assert_eq!(cd_info(parent).unwrap().children, 0);
    commit_cd(parent).unwrap();
}
