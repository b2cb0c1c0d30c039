//! The lock-free log append under fire: threads append to their own CDs without the lock while
//! other threads fold, push entries, clear, commit and restore those CDs. Every record is
//! checked afterwards: none lost, duplicated, reordered or corrupted, and none that the append
//! refused shows up. A process of its own: the tests of `tests` that set the process-wide
//! spill threshold and measure the resident set must not see these logs.

use cd_core::*;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::Duration;

/// A root name no other test of this process uses.
fn unique(prefix: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!("{prefix}-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

fn logging_root() -> CdHandle {
    create_cd(None, None, LoggingMode::Enabled, Some(&unique("lanes"))).unwrap()
}

fn child(parent: CdHandle) -> CdHandle {
    create_cd(Some(parent.into()), None, LoggingMode::Inherit, None).unwrap()
}

fn restore(cd: CdHandle) -> Result<RestoreReport> {
    // SAFETY: the CDs of these tests hold no memory.
    unsafe { restore_cd(cd) }
}

/// Record `seq` of writer `who`: its id and number, then bytes derived from both; sizes vary
/// (8 to 2,000 bytes, now and then 300 KiB: a chunk of its own) so that records cross chunk
/// boundaries.
fn record(who: u32, seq: u32) -> Vec<u8> {
    let len = match seq % 997 {
        500 => 300 << 10,
        n => 8 + (n as usize * 37) % 2000,
    };
    let mut bytes = vec![0; len];
    bytes[..4].copy_from_slice(&who.to_le_bytes());
    bytes[4..8].copy_from_slice(&seq.to_le_bytes());
    for (i, b) in bytes[8..].iter_mut().enumerate() {
        *b = (who as usize * 31 + seq as usize * 7 + i) as u8;
    }
    bytes
}

/// The writer and number of a record, checking every byte.
fn parse(bytes: &[u8]) -> (u32, u32) {
    let who = u32::from_le_bytes(bytes[..4].try_into().unwrap());
    let seq = u32::from_le_bytes(bytes[4..8].try_into().unwrap());
    assert_eq!(bytes, record(who, seq), "record {who}:{seq} intact");
    (who, seq)
}

/// Every record of the replay of `cd`'s own log (started by a restore).
fn replayed(cd: CdHandle) -> Vec<Vec<u8>> {
    std::iter::from_fn(|| get_mpi_log_from_cd(cd).unwrap())
        .map(|e| e.bytes().to_vec())
        .collect()
}

/// Appends with `log_append_with`, as the MPI layer does.
fn append(bytes: &[u8]) -> Result<()> {
    log_append_with(bytes.len(), |dst| dst.copy_from_slice(bytes))
}

const WRITERS: u32 = 4;
const VISITORS: u32 = 3;
const RECORDS: u32 = 6000;
/// Visitors' entries are tagged with writer ids from here.
const VISITOR_BASE: u32 = 1000;

#[test]
fn owners_append_while_others_fold_and_push() {
    let root = logging_root();
    let cds = Mutex::new(Vec::new());
    let ready = Barrier::new((WRITERS + VISITORS) as usize);
    let done = AtomicBool::new(false);
    let finished = AtomicUsize::new(0);
    let pushed: Vec<Mutex<Vec<(u32, u32)>>> =
        (0..WRITERS).map(|_| Mutex::new(Vec::new())).collect();
    std::thread::scope(|s| {
        for who in 0..WRITERS {
            let (cds, ready, done, finished) = (&cds, &ready, &done, &finished);
            let pushed = &pushed;
            s.spawn(move || {
                // Siblings on their own threads, each logging into its own CD.
                let cd = child(root);
                cds.lock().unwrap().push((who, cd));
                ready.wait();
                for seq in 0..RECORDS {
                    append(&record(who, seq)).unwrap();
                    if seq % 512 == 0 {
                        assert!(cd_info(cd).unwrap().log_entries > seq as usize);
                    }
                }
                if finished.fetch_add(1, Ordering::AcqRel) + 1 == WRITERS as usize {
                    done.store(true, Ordering::Release);
                }
                // Wait for the visitors, then check the whole log by replaying it.
                while !done.load(Ordering::Acquire)
                    || finished.load(Ordering::Acquire) < (WRITERS + VISITORS) as usize
                {
                    std::thread::yield_now();
                }
                let info = cd_info(cd).unwrap();
                let theirs = pushed[who as usize].lock().unwrap().clone();
                assert_eq!(info.log_entries, RECORDS as usize + theirs.len());
                assert_eq!(
                    info.stats.log_entries, info.log_entries as u64,
                    "counted once each"
                );
                restore(cd).unwrap();
                let mut mine = 0;
                let mut visitors: Vec<(u32, u32)> = Vec::new();
                for bytes in replayed(cd) {
                    match parse(&bytes) {
                        (w, seq) if w == who => {
                            assert_eq!(seq, mine, "writer {who}: in order, none lost or twice");
                            mine += 1;
                        }
                        other => visitors.push(other),
                    }
                }
                assert_eq!(mine, RECORDS);
                let mut expected = theirs;
                // Each visitor's entries in the order it pushed them.
                for v in VISITOR_BASE..VISITOR_BASE + VISITORS {
                    let got: Vec<_> = visitors.iter().filter(|e| e.0 == v).collect();
                    let want: Vec<_> = expected.iter().filter(|e| e.0 == v).collect();
                    assert_eq!(got, want, "visitor {v}'s entries in {who}'s log");
                }
                visitors.sort_unstable();
                expected.sort_unstable();
                assert_eq!(visitors, expected);
                commit_cd(cd).unwrap();
            });
        }
        for v in 0..VISITORS {
            let (cds, ready, done, finished) = (&cds, &ready, &done, &finished);
            let pushed = &pushed;
            s.spawn(move || {
                ready.wait();
                let cds = cds.lock().unwrap().clone();
                let mut seq = 0u32;
                while !done.load(Ordering::Acquire) {
                    let (who, cd) = cds[(seq as usize * 7 + v as usize) % cds.len()];
                    // Folds another thread's lane.
                    cd_info(cd).unwrap();
                    let _ = global_stats();
                    if seq.is_multiple_of(4) {
                        let tag = VISITOR_BASE + v;
                        let entry = LogEntry::new(record(tag, seq));
                        // Recorded under the lock taken before the push, so the list is in
                        // push order for this CD.
                        let mut list = pushed[who as usize].lock().unwrap();
                        add_mpi_log_to_cd(cd, entry).unwrap();
                        list.push((tag, seq));
                    }
                    seq += 1;
                }
                finished.fetch_add(1, Ordering::AcqRel);
            });
        }
    });
    commit_cd(root).unwrap();
}

/// Runs a writer appending to its own child of `parent` until an append fails, while
/// `disturb` (on this thread) does something to that child or its parent after a while;
/// returns the records whose append succeeded, in order.
fn append_until_refused(parent: CdHandle, who: u32, disturb: impl FnOnce(CdHandle)) -> Vec<u32> {
    let (tx, rx) = std::sync::mpsc::channel();
    let appended = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let appended = &appended;
        let writer = s.spawn(move || {
            let cd = child(parent);
            tx.send(cd).unwrap();
            let mut ok = Vec::new();
            for seq in 0.. {
                match append(&record(who, seq)) {
                    Ok(()) => ok.push(seq),
                    Err(CdError::NoActiveCd | CdError::StaleHandle { .. }) => break,
                    Err(e) => panic!("unexpected {e:?}"),
                }
                appended.store(ok.len(), Ordering::Relaxed);
            }
            // Whatever fails once keeps failing: the CD is gone.
            assert!(append(b"late").is_err());
            ok
        });
        let cd = rx.recv().unwrap();
        while appended.load(Ordering::Relaxed) < 3000 {
            std::thread::yield_now();
        }
        disturb(cd);
        writer.join().unwrap()
    })
}

#[test]
fn a_restore_of_the_parent_from_another_thread_keeps_every_appended_record() {
    for round in 0..4 {
        let parent = logging_root();
        let ok = append_until_refused(parent, round, |_| {
            restore(parent).unwrap();
        });
        // The child's log merged into the parent's (strictly hierarchical), which replays.
        let got: Vec<u32> = replayed(parent)
            .iter()
            .map(|b| {
                let (who, seq) = parse(b);
                assert_eq!(who, round);
                seq
            })
            .collect();
        assert_eq!(got, ok, "exactly the records whose append succeeded");
        commit_cd(parent).unwrap();
    }
}

#[test]
fn a_commit_from_another_thread_keeps_every_appended_record() {
    for round in 0..4 {
        let parent = logging_root();
        let ok = append_until_refused(parent, 10 + round, |cd| {
            commit_cd(cd).unwrap();
        });
        restore(parent).unwrap();
        let got: Vec<u32> = replayed(parent).iter().map(|b| parse(b).1).collect();
        assert_eq!(got, ok, "exactly the records whose append succeeded");
        commit_cd(parent).unwrap();
    }
}

#[test]
fn discards_from_another_thread_leave_a_whole_tail() {
    let parent = logging_root();
    let (tx, rx) = std::sync::mpsc::channel();
    let stop = AtomicBool::new(false);
    let clears = AtomicUsize::new(0);
    let (cd, total) = std::thread::scope(|s| {
        let (stop, clears) = (&stop, &clears);
        let writer = s.spawn(move || {
            let cd = child(parent);
            tx.send(cd).unwrap();
            // At least this many records, and on until a few discards ran meanwhile.
            let mut seq = 0;
            while seq < RECORDS * 2 || clears.load(Ordering::Acquire) < 5 {
                append(&record(7, seq)).unwrap();
                seq += 1;
            }
            stop.store(true, Ordering::Release);
            seq
        });
        let cd = rx.recv().unwrap();
        while !stop.load(Ordering::Acquire) {
            delete_mpi_log_from_cd(cd).unwrap();
            clears.fetch_add(1, Ordering::AcqRel);
            std::thread::sleep(Duration::from_micros(100));
        }
        (cd, writer.join().unwrap())
    });
    restore(cd).unwrap();
    let got: Vec<u32> = replayed(cd).iter().map(|b| parse(b).1).collect();
    // What the last discard left: every record appended after it, in order.
    let first = total - got.len() as u32;
    assert_eq!(got, (first..total).collect::<Vec<_>>());
    assert_eq!(cd_info(cd).unwrap().log_entries, got.len());
    commit_cd(cd).unwrap();
    commit_cd(parent).unwrap();
}
