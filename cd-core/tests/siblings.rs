//! Sibling CDs on many threads run in parallel: one sibling's copy never holds a lock that
//! another sibling (or the parent's other children) needs.
//!
//! The proof does not depend on timing: thread A's advance (or restore) of its sibling is
//! held inside a registered memory space's copy callback until thread B has finished a whole
//! round of work under the same parent. If A's copy held a lock B needs, B could never finish:
//! the test notices that with a timeout, releases A, and fails. It never hangs.

use crate::util::{unique, Mem};
use cd_core::*;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// How long B may take for a few small operations before the test calls it a deadlock.
const DEADLOCK: Duration = Duration::from_secs(20);

/// Which copy direction the gate holds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Hold {
    Nothing,
    ToHost,
    ToDevice,
}

#[derive(Debug)]
struct GateState {
    hold: Hold,
    /// A held copy has started (and waits for `released`).
    entered: bool,
    released: bool,
}

/// A simulated device whose copy functions, when armed, block until released.
struct Gated {
    base: usize,
    memory: Mutex<Vec<u8>>,
    state: Mutex<GateState>,
    changed: Condvar,
}

impl Gated {
    fn new(base: usize, len: usize) -> Arc<Gated> {
        Arc::new(Gated {
            base,
            memory: Mutex::new(vec![0; len]),
            state: Mutex::new(GateState {
                hold: Hold::Nothing,
                entered: false,
                released: false,
            }),
            changed: Condvar::new(),
        })
    }

    fn arm(&self, hold: Hold) {
        *self.state.lock().unwrap() = GateState {
            hold,
            entered: false,
            released: false,
        };
    }

    /// Blocks while a copy in direction `dir` is held.
    fn pass(&self, dir: Hold) {
        let mut state = self.state.lock().unwrap();
        if state.hold != dir {
            return;
        }
        state.entered = true;
        self.changed.notify_all();
        while !state.released {
            state = self.changed.wait(state).unwrap();
        }
    }

    /// Waits until a held copy has started; `false` after `timeout`.
    fn wait_entered(&self, timeout: Duration) -> bool {
        let state = self.state.lock().unwrap();
        let (state, _) = self
            .changed
            .wait_timeout_while(state, timeout, |s| !s.entered)
            .unwrap();
        state.entered
    }

    fn release(&self) {
        let mut state = self.state.lock().unwrap();
        state.released = true;
        self.changed.notify_all();
    }

    fn write(&self, offset: usize, bytes: &[u8]) {
        self.memory.lock().unwrap()[offset..offset + bytes.len()].copy_from_slice(bytes);
    }

    fn read(&self, offset: usize, len: usize) -> Vec<u8> {
        self.memory.lock().unwrap()[offset..offset + len].to_vec()
    }

    fn spec(&self, offset: usize, len: usize, access: Access) -> AddrSpec {
        AddrSpec::new(self.base + offset, len, access, Scope::Global)
    }
}

impl DeviceMemory for Gated {
    fn name(&self) -> &str {
        "gated"
    }
    fn copy_to_host(&self, dst: &mut [u8], src: usize) -> Result<(), String> {
        self.pass(Hold::ToHost);
        let at = src - self.base;
        dst.copy_from_slice(&self.memory.lock().unwrap()[at..at + dst.len()]);
        Ok(())
    }
    fn copy_to_device(&self, dst: usize, src: &[u8]) -> Result<(), String> {
        self.pass(Hold::ToDevice);
        let at = dst - self.base;
        self.memory.lock().unwrap()[at..at + src.len()].copy_from_slice(src);
        Ok(())
    }
}

/// A device region of its own for each test.
fn gated(n: usize) -> Arc<Gated> {
    let gate = Gated::new(0xD200_0000_0000_0000 + n * 0x1_0000_0000, 256);
    let space = register_memory_space(gate.clone());
    map_device_region(space, gate.base, 256).unwrap();
    gate
}

/// Thread B's round under `parent` while A is held: its own sibling is created, filled,
/// advanced, restored (with a PARENT entry, so the restore reads the parent) and added to;
/// then a third sibling is created and committed. Checks every byte it restores.
fn round_of_b(parent: CdHandle, mem: &Mem) -> Result<()> {
    let b = create_cd(Some(parent.into()), None, LoggingMode::Inherit, None)?;
    mem.fill(0, 64, 5);
    // SAFETY: `mem` outlives the CDs; only this thread touches bytes 0..128 (the parent's
    // bytes 64..128 are restored through B's PARENT entry with the values they hold).
    unsafe {
        add_to_cd_via_copy(b, &[mem.rw(0, 64)])?;
        add_to_cd_via_parent(b, &[mem.ro(64, 64)])?;
        mem.fill(0, 64, 6);
        advance_cd_point_in_time(b)?;
        mem.fill(0, 128, 0xEE);
        restore_cd(b)?;
    }
    assert!(
        mem.bytes(0, 64).iter().all(|&x| x == 6),
        "B's advanced bytes"
    );
    assert!(
        mem.bytes(64, 64).iter().all(|&x| x == 9),
        "B's parent bytes"
    );
    mem.fill(128, 16, 7);
    // SAFETY: as above.
    unsafe { add_to_cd_via_copy(b, &[mem.rw(128, 16)])? };
    let c = create_cd(Some(parent.into()), None, LoggingMode::Inherit, None)?;
    commit_cd(c)?;
    commit_cd(b)
}

/// The parent's own bytes (64..128 of `mem`, value 9), which B's PARENT entry refers to.
fn parent_with_bytes(tag: &str, mem: &Mem) -> CdHandle {
    let parent = create_cd(None, None, LoggingMode::Disabled, Some(&unique(tag))).unwrap();
    mem.fill(64, 64, 9);
    // SAFETY: `mem` outlives the parent; the tests touch it only through these calls.
    unsafe { add_to_cd_via_copy(parent, &[mem.ro(64, 64)]).unwrap() };
    parent
}

/// Runs B's round on a thread while A's operation is held in the gate; fails (after releasing
/// A) when B cannot finish, which is what a lock held across A's copy does.
fn b_finishes_while_a_is_held(gate: &Gated, parent: CdHandle, mem: &Arc<Mem>, what: &str) {
    assert!(
        gate.wait_entered(DEADLOCK),
        "A's {what} never reached the copy callback"
    );
    let (done, finished) = mpsc::channel();
    let b = {
        let mem = Arc::clone(mem);
        std::thread::spawn(move || {
            let result = round_of_b(parent, &mem);
            let _ = done.send(());
            result
        })
    };
    let in_time = finished.recv_timeout(DEADLOCK).is_ok();
    // Either way, let A go, so that nothing stays blocked.
    gate.release();
    let result = b.join().expect("thread B panicked");
    assert!(
        in_time,
        "deadlock: thread B could not finish its sibling's advance, restore, add and a \
         third sibling's create while A's {what} was held in a copy callback (A's copy holds \
         a lock B needs)"
    );
    result.unwrap();
}

/// Restores the parent (its bytes come back) and commits it.
fn check_and_commit_parent(parent: CdHandle, mem: &Mem) {
    mem.fill(64, 64, 0);
    // SAFETY: no other thread touches `mem` any more.
    unsafe { restore_cd(parent).unwrap() };
    assert!(mem.bytes(64, 64).iter().all(|&x| x == 9));
    assert_eq!(cd_info(parent).unwrap().children, 0);
    commit_cd(parent).unwrap();
}

#[test]
fn a_sibling_blocked_in_its_advance_copy_blocks_no_other_sibling() {
    let gate = gated(1);
    let mem = Arc::new(Mem::new(256));
    let parent = parent_with_bytes("held-advance", &mem);
    let a = create_cd(Some(parent.into()), None, LoggingMode::Inherit, None).unwrap();
    gate.write(0, &[1; 64]);
    // SAFETY: device memory only, through the gate (not armed yet).
    unsafe { add_to_cd_via_copy(a, &[gate.spec(0, 64, Access::ReadWrite)]).unwrap() };
    gate.write(0, &[2; 64]);
    gate.arm(Hold::ToHost);
    let advancing = std::thread::spawn(move || {
        // SAFETY: as above.
        let report = unsafe { advance_cd_point_in_time(a) }?;
        commit_cd(a)?;
        Ok::<_, CdError>(report)
    });
    b_finishes_while_a_is_held(&gate, parent, &mem, "advance");
    let report = advancing.join().unwrap().unwrap();
    assert_eq!(report.bytes_copied, 64);
    check_and_commit_parent(parent, &mem);
    unmap_device_region(gate.base).unwrap();
}

#[test]
fn a_sibling_blocked_in_its_restore_copy_blocks_no_other_sibling() {
    let gate = gated(2);
    let mem = Arc::new(Mem::new(256));
    let parent = parent_with_bytes("held-restore", &mem);
    gate.write(0, &[3; 64]);
    // SAFETY: device memory only, through the gate (not armed yet).
    unsafe { add_to_cd_via_copy(parent, &[gate.spec(0, 64, Access::ReadOnly)]).unwrap() };
    let a = create_cd(Some(parent.into()), None, LoggingMode::Inherit, None).unwrap();
    add_to_cd_via_parent(a, &[gate.spec(0, 64, Access::ReadOnly)]).unwrap();
    gate.write(0, &[4; 64]);
    gate.arm(Hold::ToDevice);
    let restoring = std::thread::spawn(move || {
        // SAFETY: as above.
        let report = unsafe { restore_cd(a) }?;
        commit_cd(a)?;
        Ok::<_, CdError>(report)
    });
    b_finishes_while_a_is_held(&gate, parent, &mem, "restore");
    let report = restoring.join().unwrap().unwrap();
    assert_eq!(report.bytes_restored, 64);
    assert_eq!(gate.read(0, 64), vec![3; 64], "A's PARENT bytes came back");
    check_and_commit_parent(parent, &mem);
    unmap_device_region(gate.base).unwrap();
}

/// Who may fail, and how, when a parent restore discards a child under its thread's feet.
fn discarded(result: Result<()>) -> bool {
    match result {
        Ok(()) => false,
        // Discarded by the parent's restore; if the slot was reused since, the fate is no
        // longer recorded.
        Err(CdError::StaleHandle {
            fate: Fate::DiscardedByRestore | Fate::Gone,
            ..
        }) => true,
        Err(e) => panic!("unexpected error {e}"),
    }
}

/// The byte a worker writes at `offset` of its region in round `round`, phase `phase`.
fn pattern(worker: usize, round: usize, phase: usize, offset: usize) -> u8 {
    (worker * 31 + round * 7 + phase * 3 + offset) as u8 | 1
}

/// Many threads create, add to, advance, restore and commit sibling CDs under one parent for
/// a fixed number of rounds, while the main thread restores the parent over and over. Every
/// restore's bytes are checked, and at the end every child handle is stale and the parent has
/// no children.
///
/// Memory stays race-free as the spec asks (a restore of the parent writes its children's
/// ranges too): a worker touches its region only holding `memory` for reading, the parent's
/// restores hold it for writing. Creating, committing and a second child per round that reads
/// no memory (a PARENT entry only) run outside it, concurrently with the parent's restores.
#[test]
fn stress_siblings_and_a_parent_restored_meanwhile() {
    const WORKERS: usize = 8;
    const ROUNDS: usize = 300;
    const REGION: usize = 1024;
    const HELD: usize = 128; // the parent's part of each region, value worker + 1
    let mem = Mem::new(WORKERS * REGION + 256);
    let own = WORKERS * REGION; // the parent's own 256 bytes, value 42
    let parent = create_cd(
        None,
        None,
        LoggingMode::Disabled,
        Some(&unique("stress-sib")),
    )
    .unwrap();
    mem.fill(own, 256, 42);
    let mut specs = vec![mem.ro(own, 256)];
    for w in 0..WORKERS {
        mem.fill(w * REGION, HELD, w as u8 + 1);
        specs.push(mem.ro(w * REGION, HELD));
    }
    // SAFETY: `mem` outlives every CD here; see the test's doc for who touches it when.
    unsafe { add_to_cd_via_copy(parent, &specs).unwrap() };
    let memory = std::sync::RwLock::new(());
    // Rounds the workers completed: the parent is restored once per round or more completed,
    // so that the restores interleave with the workers' rounds instead of starving them.
    let progress = std::sync::atomic::AtomicUsize::new(0);
    let handles = std::thread::scope(|s| {
        let workers: Vec<_> = (0..WORKERS)
            .map(|w| {
                let (mem, memory, progress) = (&mem, &memory, &progress);
                s.spawn(move || {
                    let base = w * REGION;
                    let mut made = Vec::new();
                    let (mut restored, mut lost) = (0, 0);
                    for round in 0..ROUNDS {
                        let kid = create_cd(Some(parent.into()), None, LoggingMode::Inherit, None)
                            .unwrap();
                        made.push(kid);
                        let gate = memory.read().unwrap();
                        let result = (|| -> Result<()> {
                            for o in HELD..REGION {
                                mem.set(base + o, pattern(w, round, 0, o));
                            }
                            let split = HELD + 8 * (1 + round % 50);
                            // SAFETY: the worker's own region, touched only under the gate.
                            unsafe {
                                add_to_cd_via_copy(
                                    kid,
                                    &[
                                        mem.rw(base + HELD, split - HELD),
                                        mem.rw(base + split, REGION - split),
                                    ],
                                )?;
                            }
                            add_to_cd_via_parent(kid, &[mem.ro(base, HELD)])?;
                            for o in HELD..REGION {
                                mem.set(base + o, pattern(w, round, 1, o));
                            }
                            // SAFETY: as above.
                            unsafe { advance_cd_point_in_time(kid)? };
                            mem.fill(base, REGION, 0xEE);
                            // SAFETY: as above.
                            let report = unsafe { restore_cd(kid)? };
                            assert_eq!(report.bytes_restored, REGION);
                            restored += 1;
                            for o in 0..HELD {
                                assert_eq!(mem.get(base + o), w as u8 + 1, "w{w} r{round} @{o}");
                            }
                            for o in HELD..REGION {
                                assert_eq!(mem.get(base + o), pattern(w, round, 1, o));
                            }
                            Ok(())
                        })();
                        drop(gate);
                        if discarded(result.and_then(|()| commit_cd(kid))) {
                            lost += 1;
                        }
                        // A second child that reads no memory, entirely beside the restores.
                        let other =
                            create_cd(Some(parent.into()), None, LoggingMode::Inherit, None)
                                .unwrap();
                        made.push(other);
                        let result = add_to_cd_via_parent(other, &[mem.ro(base, HELD)])
                            // SAFETY: a PARENT entry only: the advance copies nothing.
                            .and_then(|()| unsafe { advance_cd_point_in_time(other) }.map(drop))
                            .and_then(|()| commit_cd(other));
                        if discarded(result) {
                            lost += 1;
                        }
                        progress.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    assert_eq!(current_cd(), None, "w{w}: every child left the stack");
                    (made, restored, lost)
                })
            })
            .collect();
        let mut restores = 0;
        let mut seen = 0;
        while seen < WORKERS * ROUNDS {
            let now = progress.load(std::sync::atomic::Ordering::Relaxed);
            if now == seen {
                std::thread::yield_now();
                continue;
            }
            seen = now;
            let gate = memory.write().unwrap();
            mem.fill(0, own + 256, 0xDD);
            // SAFETY: no worker touches memory while the gate is held for writing.
            unsafe { restore_cd(parent).unwrap() };
            assert!(mem.bytes(own, 256).iter().all(|&b| b == 42));
            for e in cd_entries(parent).unwrap() {
                let at = e.address - mem.addr(0);
                assert_eq!(
                    mem.bytes(at, e.length),
                    cd_saved_bytes(parent, e.address, e.length).unwrap(),
                    "the parent's range at {at} restored"
                );
            }
            drop(gate);
            restores += 1;
        }
        assert!(restores > 1);
        workers
            .into_iter()
            .map(|w| w.join().unwrap())
            .collect::<Vec<_>>()
    });
    let (restored, lost): (usize, usize) = handles
        .iter()
        .fold((0, 0), |(r, l), (_, ro, lo)| (r + ro, l + lo));
    assert!(
        restored > 0,
        "some workers' restores ran ({lost} children discarded)"
    );
    for (made, _, _) in &handles {
        for &kid in made {
            assert!(
                matches!(cd_info(kid), Err(CdError::StaleHandle { .. })),
                "every child was committed or discarded"
            );
        }
    }
    assert_eq!(cd_info(parent).unwrap().children, 0);
    commit_cd(parent).unwrap();
}
