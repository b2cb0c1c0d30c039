//! Loom models of cd-core's lock-free primitives, run on the real code: a CD's busy flag
//! ([`BusyFlag`]) and a log lane's publish/seal handshake ([`LaneState`]). Built into the
//! library as `primitive::loom_models` (they need crate-private types), only with `--cfg loom`:
//!
//! `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p cd-core --release --lib loom_models`
//!
//! What they cannot check: `membarrier`. The sealer's `membarrier` with the owner's compiler
//! fence is modelled as a `SeqCst` fence on each side (see `log::process_fence`), so the models
//! check the handshake given that equivalence, not the system call or the compiler fence.

use crate::log::LaneState;
use crate::node::{BusyFlag, Exclusive};
use loom::cell::UnsafeCell;
use loom::sync::atomic::AtomicUsize;
use loom::sync::Arc;
use loom::thread;
use std::sync::atomic::Ordering;

/// Three threads claim the busy flag for three different operations at once: whoever holds
/// it has the CD to itself (its writes to `owned` race with no other holder's, which loom
/// would report, and are visible to the next holder), the others get the holder's code, and
/// the flag is free once all are done.
#[test]
fn busy_flag_is_exclusive() {
    loom::model(|| {
        let flag = Arc::new(BusyFlag::new());
        // What the holder may touch: the operation that holds the flag.
        let owned = Arc::new(UnsafeCell::new(0u8));
        let claimed = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = [Exclusive::Commit, Exclusive::Restore, Exclusive::Advance]
            .into_iter()
            .map(|op| {
                let (flag, owned, claimed) = (flag.clone(), owned.clone(), claimed.clone());
                thread::spawn(move || match flag.claim(op) {
                    Ok(_guard) => {
                        // SAFETY: the guard gives this thread the CD alone; loom checks it.
                        owned.with_mut(|o| unsafe {
                            *o = op as u8;
                        });
                        thread::yield_now();
                        // SAFETY: as above.
                        assert_eq!(owned.with(|o| unsafe { *o }), op as u8);
                        claimed.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(running) => {
                        assert!((1..=3).contains(&running), "held by {running}");
                        assert_ne!(running, op as u8, "each operation claims once");
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        // The first claim always succeeds.
        assert!(claimed.load(Ordering::Relaxed) >= 1);
        // Free afterwards, and the last holder's writes are visible to the next.
        let guard = flag
            .claim(Exclusive::Commit)
            .expect("free after the operations");
        // SAFETY: the flag is held, every other thread has ended.
        owned.with_mut(|o| unsafe { *o = 0 });
        drop(guard);
    });
}

/// What became of each record the owner tried to append.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fate {
    /// In the lane, below the seal (or unsealed): `Attempt::Done`.
    Done,
    /// Written past the seal and returned: `Attempt::Orphaned`.
    Orphaned,
    /// Not written, the lane being closed: `Attempt::Refused` (appended under the lock).
    Refused,
}

/// Records in the model: one slot each, `published` counts slots.
const RECORDS: usize = 3;

/// The owner appends [`RECORDS`] records the way `Lane::try_append` does (check `closed`,
/// write past the published end, `publish`), while another thread folds and then seals the
/// lane (`barrier`: the sealer's `membarrier`).
fn append_while_sealing(barrier: bool) {
    loom::model(move || {
        let state = Arc::new(LaneState::new(0));
        let slots: Arc<Vec<UnsafeCell<usize>>> =
            Arc::new((0..RECORDS).map(|_| UnsafeCell::new(0)).collect());
        let owner = {
            let (state, slots) = (state.clone(), slots.clone());
            thread::spawn(move || {
                let mut fates = [Fate::Refused; RECORDS];
                for (i, fate) in fates.iter_mut().enumerate() {
                    let at = state.published();
                    if state.is_closed() {
                        continue;
                    }
                    assert_eq!(at, i, "records are published in order");
                    // SAFETY: past the published end only the owner writes (loom checks it).
                    slots[at].with_mut(|s| unsafe { *s = i + 1 });
                    *fate = if state.publish(at + 1) {
                        Fate::Done
                    } else {
                        Fate::Orphaned
                    };
                }
                fates
            })
        };
        // A reader that locks the log folds what is published, then a seal (the real code
        // does both under the log's lock, so one thread).
        let read = |end: usize| {
            for (j, slot) in slots[..end].iter().enumerate() {
                // SAFETY: below the published end the owner no longer writes; loom checks
                // that its write happened before this read.
                assert_eq!(slot.with(|s| unsafe { *s }), j + 1, "record {j} complete");
            }
        };
        let folded = state.end();
        read(folded);
        let sealed = state.seal(|| barrier);
        assert!(folded <= sealed);
        read(sealed);
        assert_eq!(state.seal(|| barrier), sealed, "sealing is idempotent");
        let fates = owner.join().unwrap();
        assert_eq!(state.end(), sealed);
        for (i, fate) in fates.iter().enumerate() {
            // Below the seal: in the log, and only there. Past it: returned to the caller,
            // never in the log. So no record is lost or counted twice.
            if i < sealed {
                assert_eq!(*fate, Fate::Done, "record {i} below the seal {sealed}");
            } else {
                assert_ne!(*fate, Fate::Done, "record {i} past the seal {sealed} lost");
            }
        }
    });
}

/// The handshake as the real code runs it (a sealer on another thread issues the barrier).
#[test]
fn lane_seal_loses_no_record() {
    append_while_sealing(true);
}

/// The model is sharp enough to need the barrier: without it loom finds a record published
/// unseen by the seal while its owner missed `closed` (the store-buffering outcome).
#[test]
#[should_panic(expected = "lost")]
fn lane_seal_without_barrier_loses_records() {
    append_while_sealing(false);
}
