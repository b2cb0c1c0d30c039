//! Loom models of cd-core's lock-free primitives, run on the real code: a CD's busy flag
//! ([`BusyFlag`]), a log lane's publish/seal handshake ([`LaneState`]), the validation of
//! a thread's cached MPI mode ([`Cached`] over what each CD publishes, `node::Published`),
//! and the lock-free append through a thread's writer (`Lane::try_append`) against each
//! change that takes the lane out of service (`writer_across_*`: a commit, a retirement, a
//! replay started or rewound, a merge), made with the real `Node`, `Log` and `merge` code.
//! Built into the library as `primitive::loom_models` (they need crate-private types), only
//! with `--cfg loom`:
//!
//! `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p cd-core --release --lib loom_models`
//!
//! What they cannot check: `membarrier`. The sealer's `membarrier` with the owner's compiler
//! fence is modelled as a `SeqCst` fence on each side (see `log::lane::process_fence`), so the
//! models check the handshake given that equivalence, not the system call or the compiler
//! fence.
//! The cache models check the validation against one change at a time, made the way each
//! writer makes it; that every writer bumps the epochs its change needs is argued in
//! `active`'s module docs, not modelled. In the writer models the CD's lock is std's (the
//! change alone takes it while the owner appends), and the lane's owner is the model thread
//! that made it (`log::lane::thread_token` is loom's thread-local under `--cfg loom`).

use crate::active::Cached;
use crate::error::{CdError, Fate as Retirement};
use crate::ids::CdHandle;
use crate::log::{Attempt, LaneState, Log, LogEntry};
use crate::merge::{check_merge, merge_into_parent};
use crate::node::{BusyFlag, Exclusive, Node, State};
use crate::storage_info::StorageInfo;
use crate::types::LogMode;
use loom::cell::UnsafeCell;
use loom::sync::atomic::AtomicUsize;
use loom::sync::Arc;
use loom::thread;
use std::cell::RefCell;
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

/// A restore below the root rewinds the root's replay (what `restore_cd` does with a feed
/// mark: the feeder's replay published, then it and every CD below it bumped,
/// `registry::bump_below`): the active CD, below it (on the restored CD's path or on another
/// branch), is not the feeder of its cached answer, and its own epoch carries the change.
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

/// The rewind gap, as `restore_cd` had it: a rewind of the root's replay that bumps the
/// rewound CD (and the path down to the restored CD, not modelled here) but not the CDs on
/// the other branches. The reader's active CD is one of those (the restored CD's sibling),
/// recording: its answer passes every validation after the rewind, while a fresh look says
/// that the root's replay feeds it. `registry::bump_below` bumps it too (the
/// [`cache_sees_an_ancestors_replay_rewound`] change, from the reader's side).
#[test]
#[should_panic(expected = "stale mode accepted")]
fn rewind_bumping_only_the_restored_path_is_missed() {
    cache_across(
        |_, _| (),
        |root, _, ()| {
            let state = replaying_state();
            root.sync_replay(&state);
            root.bump();
        },
    );
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

/// What a writer model saw: the fate of the record the owner appended through its writer
/// while the change ran, and what the slow path made of it (`None` when it was not needed).
struct Appended {
    fate: Fate,
    slow: Option<crate::error::Result<()>>,
    /// What `change` returned: the records of the log it handled (merged into, replayed),
    /// counted while it held the lock, so that a record folded in later shows.
    handled: usize,
}

/// The first byte of every record the log hands out from where its replay stands (from its
/// first record when it is not replaying): what a replay of it serves.
fn served(log: &mut Log) -> Vec<u8> {
    if !log.is_replaying() {
        log.start_replay();
    }
    std::iter::from_fn(|| log.next())
        .map(|e| e.bytes()[0])
        .collect()
}

/// The writer argument (`active`, "The lock-free append"), on the real code: a root CD and
/// its child, both logging; the model's main thread is the child's *owner* (its active CD is
/// the child). It takes its writer the way `mpi::append_locked` does (record 1 appended under
/// the child's lock, then [`Log::writer_lane`]) after `prepare` set the child's log up (its
/// result goes to `change`), and validates its cache (recording). Then `change` runs on
/// another thread while the owner appends record 2 with `Lane::try_append`, the hot path's
/// one call once it holds the writer. After both, a record that was not `Done` goes down the
/// slow path ([`slow_path`]), and `check` asserts where record 2 went. (The slow path runs
/// after the change here; on a real thread it may run before, under the CD's lock, which
/// puts the record in the log before the change as a `Done` one is.)
///
/// Every change seals the lane (that is the argument), so whatever the interleaving: record
/// 2 is `Done` exactly when it lies below the seal (so the change found it in the log and
/// handled it with the others), and otherwise it is in no log and the slow path either failed
/// (the caller learns that the call was not logged) or appended it under the lock into a log
/// that records. Returns how many executions ended with each [`Fate`] (`Done`, `Refused`,
/// `Orphaned`), so that a model can show which it reached. `change` returns how many records
/// the log it handled held then (see [`Appended::handled`]).
fn writer_across<T: Send + 'static>(
    prepare: fn(&mut Log) -> T,
    change: fn(&std::sync::Arc<Node>, &std::sync::Arc<Node>, T) -> usize,
    check: fn(&std::sync::Arc<Node>, &std::sync::Arc<Node>, Appended),
) -> [usize; 3] {
    use std::sync::atomic::AtomicUsize;
    let fates = std::sync::Arc::new([0; 3].map(AtomicUsize::new));
    let counted = std::sync::Arc::clone(&fates);
    loom::model(move || {
        let root = logging_node(None);
        let child = logging_node(Some(&root));
        let (lane, prepared) = {
            let mut state = child.lock();
            let prepared = prepare(&mut state.log);
            state.log.append_with(1, |b| b[0] = 1).expect("record 1");
            state.count_log();
            let lane = state.log.writer_lane().expect("the owner's open lane");
            (lane, prepared)
        };
        let before = Cached::compute(child.clone()).expect("a live CD");
        assert_eq!(before.mode, LogMode::Record, "the writer's CD records");
        let changer = {
            let (root, child) = (root.clone(), child.clone());
            thread::spawn(move || change(&root, &child, prepared))
        };
        let attempt = lane.try_append(1, |b| b[0] = 2);
        let handled = changer.join().unwrap();
        let appended = match attempt {
            Attempt::Done => Appended {
                fate: Fate::Done,
                slow: None,
                handled,
            },
            Attempt::Refused(fill) => Appended {
                fate: Fate::Refused,
                slow: Some(slow_path(&before, &child, fill)),
                handled,
            },
            Attempt::Orphaned(bytes) => Appended {
                fate: Fate::Orphaned,
                slow: Some(slow_path(&before, &child, |b| b.copy_from_slice(&bytes))),
                handled,
            },
        };
        // Two records of 1 byte, 16 bytes each with their headers, in a lane of their own: the
        // change sealed it past record 2 exactly when the append reported it done.
        let record_2_in = lane.end() == 32;
        assert!(lane.end() == 16 || record_2_in, "sealed at a record's end");
        assert_eq!(
            appended.fate == Fate::Done,
            record_2_in,
            "record 2 lost or counted twice"
        );
        counted[match appended.fate {
            Fate::Done => 0,
            Fate::Refused => 1,
            Fate::Orphaned => 2,
        }]
        .fetch_add(1, Ordering::Relaxed);
        check(&root, &child, appended);
    });
    [0, 1, 2].map(|i| fates[i].load(Ordering::Relaxed))
}

/// The slow path of a record the hot path could not append, as `mpi::log_append_slow` runs
/// it for a thread whose stack holds `child` alone: the cache validated again
/// (`Active::with_cache`: the answer if still current, else computed again while the CD is
/// live), then [`crate::mpi::append_checked`].
fn slow_path(
    before: &Cached,
    child: &std::sync::Arc<Node>,
    fill: impl FnOnce(&mut [u8]),
) -> crate::error::Result<()> {
    let fresh = if before.is_current() {
        Some(before.clone())
    } else if child.is_live() {
        Cached::compute(child.clone())
    } else {
        None
    };
    crate::mpi::append_checked(fresh.as_ref(), &RefCell::new(None), 1, fill)
}

/// Asserts that a writer model met a record appended before the change and one that the
/// change sent to the slow path (refused, or written past the seal and orphaned).
fn reached_before_and_after(fates: [usize; 3]) {
    assert!(fates[0] > 0, "no execution appended before the change");
    assert!(fates[1] > 0, "no execution refused the record");
    assert!(fates[2] > 0, "no execution orphaned the record");
}

/// `child`'s log merged into `root`'s, as a commit and an advance begin: the parent then the
/// child locked, the merge checked and made; both locks are returned, still held.
fn merge_child<'a>(
    root: &'a std::sync::Arc<Node>,
    child: &'a std::sync::Arc<Node>,
) -> (
    impl std::ops::DerefMut<Target = State> + 'a,
    impl std::ops::DerefMut<Target = State> + 'a,
) {
    let mut parent = root.lock_live().expect("a live parent");
    let mut state = child.lock_live().expect("a live child");
    check_merge(&parent, &state, false).expect("the parent is not replaying");
    merge_into_parent(&mut parent, root, &mut state, false);
    (parent, state)
}

/// Checks the records a change handled (`records`, in the order a replay of them serves):
/// exactly those appended before it (`handled`), which are `before` and then record 2 when
/// the append was done first. Otherwise returns what the append's slow path gave, for the
/// model to check.
fn assert_handled<'a>(
    records: &[u8],
    appended: &'a Appended,
    before: &[u8],
    what: &str,
) -> Option<&'a crate::error::Result<()>> {
    assert_eq!(records.len(), appended.handled, "{what}");
    if appended.fate == Fate::Done {
        assert_eq!(
            records,
            [before, &[2]].concat(),
            "record 2 after {before:?}"
        );
        None
    } else {
        assert_eq!(records, before, "{what}");
        Some(appended.slow.as_ref().expect("the slow path ran"))
    }
}

/// (a) The writer's CD committed by another thread (`commit_cd`'s steps: the parent then the
/// child locked, the merge checked and made, the child retired): record 2 is in the parent's
/// log after record 1 if it was appended before the merge sealed the lane; otherwise its
/// slow path fails (the CD is gone) and no log holds it.
#[test]
fn writer_across_a_commit() {
    reached_before_and_after(writer_across(
        |_| (),
        |root, child, ()| {
            let (parent, mut state) = merge_child(root, child);
            child.mark_retired(&mut state, Retirement::Committed);
            parent.log.len()
        },
        |root, child, appended| {
            let merged = served(&mut root.lock().log);
            if let Some(slow) = assert_handled(&merged, &appended, &[1], "merged after the commit")
            {
                assert!(slow.is_err(), "appended to a retired CD: {slow:?}");
                assert_eq!(child.lock().log.len(), 0, "the retired CD's log is empty");
            }
        },
    ));
}

/// (a) The writer's CD retired with its log (a root's commit, or a CD discarded by an
/// ancestor's restore after its log was merged or dropped): `Node::mark_retired` closes the
/// log first. Record 2, if done, was in the log the retirement discarded; otherwise its slow
/// path fails.
#[test]
fn writer_across_a_retirement() {
    reached_before_and_after(writer_across(
        |_| (),
        |_, child, ()| {
            child.mark_retired(&mut child.lock(), Retirement::DiscardedByRestore);
            0
        },
        |_, _, appended| {
            if let Some(slow) = appended.slow {
                assert!(slow.is_err(), "appended to a retired CD: {slow:?}");
            }
        },
    ));
}

/// (b) A replay started on the writer's CD's log by another thread (`restore::finish` for the
/// restored CD: the replay started, published, the CD bumped): the replay serves record 2
/// after record 1 if it was appended before; otherwise the slow path, validating again, finds
/// the thread replaying and fails. Nothing is written into the log once it replays.
#[test]
fn writer_across_a_replay_start() {
    reached_before_and_after(writer_across(
        |_| (),
        |_, child, ()| {
            let mut state = child.lock_live().expect("a live CD");
            assert!(state.log.start_replay());
            child.sync_replay(&state);
            child.bump();
            state.log.len()
        },
        |_, child, appended| {
            let replayed = served(&mut child.lock().log);
            if let Some(slow) =
                assert_handled(&replayed, &appended, &[1], "written into the replay")
            {
                assert_eq!(slow, &Err(CdError::LogReplaying));
            }
        },
    ));
}

/// (b) The writer's CD's log rewound by another thread: the CD had replayed record 0 and
/// ended its replay (its owner then took a new lane and recorded record 1), and a restore of a
/// child that consumed that replay rewinds it to record 0 (`restore_cd`: `Log::rewind`, the
/// replay published, the CD bumped). The rewound replay serves record 2 after 0 and 1 if it
/// was appended before; otherwise the slow path fails, the thread being fed by the replay.
#[test]
fn writer_across_a_rewind() {
    reached_before_and_after(writer_across(
        |log| {
            log.append_with(1, |b| b[0] = 0).expect("record 0");
            assert!(log.start_replay());
            let position = log.position().expect("replaying");
            while log.next().is_some() {}
            position
        },
        |_, child, (generation, cursor)| {
            let mut state = child.lock_live().expect("a live CD");
            assert!(state.log.rewind(generation, cursor));
            child.sync_replay(&state);
            child.bump();
            state.log.len()
        },
        |_, child, appended| {
            let replayed = served(&mut child.lock().log);
            if let Some(slow) =
                assert_handled(&replayed, &appended, &[0, 1], "written into the replay")
            {
                assert_eq!(slow, &Err(CdError::LogReplaying));
            }
        },
    ));
}

/// (c) The writer's CD's log merged into the parent's by another thread while the CD lives
/// on (an advance of the CD there: the implicit commit, then the CD's log discarded):
/// record 2 is in the parent's log after record 1 if it was appended before; otherwise the
/// slow path appends it under the lock into the CD's log, which records on.
#[test]
fn writer_across_a_merge() {
    reached_before_and_after(writer_across(
        |_| (),
        |root, child, ()| {
            let (parent, mut state) = merge_child(root, child);
            state.log.clear();
            child.sync_replay(&state);
            parent.log.len()
        },
        |root, child, appended| {
            let merged = served(&mut root.lock().log);
            assert_eq!(
                merged.len(),
                appended.handled,
                "a record merged after the merge"
            );
            let kept = served(&mut child.lock().log);
            if appended.fate == Fate::Done {
                assert_eq!((merged, kept), (vec![1, 2], vec![]), "record 2 merged");
            } else {
                assert_eq!(appended.slow, Some(Ok(())), "the CD records on");
                assert_eq!(
                    (merged, kept),
                    (vec![1], vec![2]),
                    "record 2 after the merge"
                );
            }
        },
    ));
}
