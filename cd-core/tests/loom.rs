//! Loom models of cd-core's lock-free primitives, run on the real code: a CD's busy flag
//! ([`BusyFlag`]), a log lane's publish/seal handshake ([`LaneState`]), and the validation of
//! a thread's cached MPI mode ([`Cached`] over what each CD publishes, `node::Published`).
//! Built into the library as `primitive::loom_models` (they need crate-private types), only
//! with `--cfg loom`:
//!
//! `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p cd-core --release --lib loom_models`
//!
//! What they cannot check: `membarrier`. The sealer's `membarrier` with the owner's compiler
//! fence is modelled as a `SeqCst` fence on each side (see `log::process_fence`), so the models
//! check the handshake given that equivalence, not the system call or the compiler fence.
//! The cache models check the validation against one change at a time, made the way each
//! writer makes it; that every writer bumps the epochs its change needs is argued in
//! `handle`'s module docs, not modelled.

use crate::error::Fate as Retirement;
use crate::handle::Cached;
use crate::ids::CdHandle;
use crate::log::{LaneState, LogEntry};
use crate::node::{BusyFlag, Exclusive, Node, State};
use crate::storage_info::StorageInfo;
use crate::types::LogMode;
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

/// A CD that logs MPI calls, child of `parent` (a root without one). Nodes are shared with
/// std's `Arc`, as the registry and the caches share them; their atomics are loom's.
fn logging_node(parent: Option<&std::sync::Arc<Node>>) -> std::sync::Arc<Node> {
    let depth = parent.map_or(0, |p| p.depth + 1);
    std::sync::Arc::new(Node::new(
        CdHandle::from_bits((1 << 32) | u64::from(depth)),
        parent.cloned(),
        None,
        depth,
        0,
        true,
        StorageInfo::default(),
        false,
    ))
}

/// A CD's state whose log holds one record and replays it (what a restore leaves).
fn replaying_state() -> State {
    let mut state = State::default();
    state
        .log
        .push(LogEntry::new(vec![1u8]))
        .expect("a record into a log not replaying");
    assert!(state.log.start_replay());
    state
}

/// A root CD and its child, both logging; the reader's active CD is the child. `prepare`
/// sets the tree up (its result goes to `change`); then `change` runs on another thread while
/// the reader computes its answer the way `Active::refresh` does (`current`'s liveness check,
/// then [`Cached::compute`]), and validates it after `change` ended (so the change happens
/// before the validation): an answer accepted then must be the one a fresh look gives.
/// Returns how many executions had each [`Outcome`], so that a model can show which it
/// reached.
fn cache_across<T: Send + 'static>(
    prepare: fn(&std::sync::Arc<Node>, &std::sync::Arc<Node>) -> T,
    change: fn(&std::sync::Arc<Node>, &std::sync::Arc<Node>, T),
) -> [usize; 3] {
    use std::sync::atomic::AtomicUsize;
    let outcomes = std::sync::Arc::new([0; 3].map(AtomicUsize::new));
    let counted = std::sync::Arc::clone(&outcomes);
    loom::model(move || {
        let root = logging_node(None);
        let child = logging_node(Some(&root));
        let prepared = prepare(&root, &child);
        let writer = {
            let (root, child) = (root.clone(), child.clone());
            thread::spawn(move || change(&root, &child, prepared))
        };
        let cached = if child.is_live() {
            Cached::compute(child.clone())
        } else {
            None
        };
        writer.join().unwrap();
        let outcome = match &cached {
            None => Outcome::NoAnswer,
            Some(cached) if cached.is_current() => Outcome::Accepted,
            Some(_) => Outcome::Refused,
        };
        counted[outcome as usize].fetch_add(1, Ordering::Relaxed);
        if let (Some(cached), Outcome::Accepted) = (cached, outcome) {
            assert!(child.is_live(), "stale: a retired CD accepted");
            let fresh = Cached::compute(child.clone()).expect("a live CD has an answer");
            assert_eq!(cached.mode, fresh.mode, "stale mode accepted");
            let same_feeder = match (cached.feeder(), fresh.feeder()) {
                (None, None) => true,
                (Some(a), Some(b)) => std::sync::Arc::ptr_eq(a, b),
                _ => false,
            };
            assert!(same_feeder, "stale feeder accepted");
        }
    });
    [0, 1, 2].map(|i| outcomes[i].load(Ordering::Relaxed))
}

/// What became of the reader's answer in one execution of [`cache_across`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// The CD was found retired: no answer was cached.
    NoAnswer,
    /// Computed, and accepted by the validation after the change.
    Accepted,
    /// Computed, and refused by the validation after the change.
    Refused,
}

/// Asserts that the model met both outcomes of the race: an answer computed before the change
/// refused, and one computed after it accepted.
fn reached_both(outcomes: [usize; 3]) {
    assert!(
        outcomes[Outcome::Accepted as usize] > 0,
        "no execution accepted the answer"
    );
    assert!(
        outcomes[Outcome::Refused as usize] > 0,
        "no execution refused the answer"
    );
}

/// A restore of the active CD starts its replay (what `restore::finish` does: the replay
/// started in the locked state, published, the epoch bumped): no validation after it accepts
/// the recording answer from before.
#[test]
fn cache_sees_a_replay_start() {
    reached_both(cache_across(
        |_, _| (),
        |_, child, ()| {
            let state = replaying_state();
            child.sync_replay(&state);
            child.bump();
        },
    ));
}

/// The active CD is retired on another thread (a commit there, or a restore of its parent):
/// no validation after it accepts an answer about the retired CD.
#[test]
fn cache_sees_a_retirement() {
    let outcomes = cache_across(
        |_, _| (),
        |_, child, ()| child.mark_retired(&mut State::default(), Retirement::DiscardedByRestore),
    );
    // An answer computed before the retirement is refused, none is computed after it.
    assert!(outcomes[Outcome::Refused as usize] > 0);
    assert!(outcomes[Outcome::NoAnswer as usize] > 0);
}

/// The feeder's path: the root's replay feeds the active CD (a child created during it), and
/// ends on another thread (what `log_next` does when the log is exhausted: only the feeder's
/// epoch is bumped). No validation after it accepts the replaying answer.
#[test]
fn cache_sees_the_feeders_replay_end() {
    reached_both(cache_across(
        |root, _| {
            let state = replaying_state();
            root.sync_replay(&state);
            state
        },
        |root, _, mut state| {
            while state.log.next().is_some() {}
            root.sync_replay(&state);
        },
    ));
}

/// A restore below the active CD rewinds the root's replay (what `restore_cd` does with a
/// feed mark: the feeder's replay published, then the CDs from it down to the restored one
/// bumped): the active CD, between them, is not the feeder of its cached answer, and its own
/// epoch carries the change.
#[test]
fn cache_sees_an_ancestors_replay_rewound() {
    reached_both(cache_across(
        |_, _| (),
        |root, child, ()| {
            let state = replaying_state();
            root.sync_replay(&state);
            root.bump();
            child.bump();
        },
    ));
}

/// The models are sharp enough to catch the reads in the wrong order: liveness checked before
/// the epoch and not again after it (what `Active::refresh` did before `Cached::compute`
/// checked it) caches a CD retired in between under its retirement's own bump, and every
/// later validation accepts it.
#[test]
#[should_panic(expected = "stale")]
fn retirement_checked_before_the_epoch_is_missed() {
    loom::model(|| {
        let child = logging_node(Some(&logging_node(None)));
        let writer = {
            let child = child.clone();
            thread::spawn(move || child.mark_retired(&mut State::default(), Retirement::Committed))
        };
        let live = child.is_live();
        let seen = child.epoch();
        writer.join().unwrap();
        if live && child.epoch() == seen {
            assert!(child.is_live(), "stale: a retired CD accepted");
        }
    });
}

/// The same for the replaying flag read before its epoch: a replay started in between is
/// missed by an answer that every later validation accepts.
#[test]
#[should_panic(expected = "stale")]
fn replay_read_before_the_epoch_is_missed() {
    loom::model(|| {
        let child = logging_node(Some(&logging_node(None)));
        let writer = {
            let child = child.clone();
            thread::spawn(move || child.sync_replay(&replaying_state()))
        };
        let mode = if child.is_replaying() {
            LogMode::Replay
        } else {
            LogMode::Record
        };
        let seen = child.epoch();
        writer.join().unwrap();
        if child.epoch() == seen {
            assert_eq!(child.is_replaying(), mode == LogMode::Replay, "stale mode");
        }
    });
}
