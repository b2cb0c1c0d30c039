//! The MPI layer's API: logging modes and their per-thread cache, replay across CDs, the
//! arena, spilling, unreplayable marks and the restore hook.

use crate::util::{unique, Mem};
use cd_core::*;
use std::cell::{Cell, RefCell};

fn logging_root() -> CdHandle {
    create_cd(None, None, LoggingMode::Enabled, Some(&unique("mpi"))).unwrap()
}

fn child(parent: CdHandle) -> CdHandle {
    create_cd(Some(parent.into()), None, LoggingMode::Inherit, None).unwrap()
}

fn restore(cd: CdHandle) -> Result<RestoreReport> {
    // SAFETY: the CDs of these tests hold no memory, or memory that outlives them.
    unsafe { restore_cd(cd) }
}

fn advance(cd: CdHandle) -> Result<AdvanceReport> {
    // SAFETY: as above.
    unsafe { advance_cd_point_in_time(cd) }
}

fn next_bytes() -> Option<Vec<u8>> {
    log_next().unwrap().map(|e| e.bytes().to_vec())
}

/// Every record the replay feeding this thread still holds.
fn drain() -> Vec<Vec<u8>> {
    std::iter::from_fn(next_bytes).collect()
}

fn records(list: &[&str]) -> Vec<Vec<u8>> {
    list.iter().map(|s| s.as_bytes().to_vec()).collect()
}

#[test]
fn modes_follow_the_active_cd() {
    assert_eq!(log_mode(), LogMode::Off, "no CD active");
    assert_eq!(log_next().unwrap_err(), CdError::NoActiveCd);
    assert_eq!(log_append(&[b"x"]), Err(CdError::NoActiveCd));
    log_mark_unreplayable("MPI_Put").unwrap();
    let quiet = create_cd(None, None, LoggingMode::Disabled, Some(&unique("quiet"))).unwrap();
    assert_eq!(log_mode(), LogMode::Off, "the CD does not log");
    assert_eq!(log_append(&[b"x"]), Err(CdError::LoggingDisabled));
    assert_eq!(log_next().unwrap_err(), CdError::LoggingDisabled);
    log_mark_unreplayable("MPI_Put").unwrap();
    let loud = logging_root();
    assert_eq!(log_mode(), LogMode::Record);
    assert!(log_next().unwrap().is_none(), "nothing replays");
    log_append(&[b"ab", b"", b"c"]).unwrap();
    log_append_with(3, |b| {
        assert_eq!(log_mode(), LogMode::Record, "log_mode works inside fill");
        assert_eq!(cd_info(loud).unwrap_err(), CdError::Reentrant);
        b.copy_from_slice(b"def");
    })
    .unwrap();
    assert_eq!(log_append(&[]), Err(CdError::EmptyLogEntry));
    let info = cd_info(loud).unwrap();
    assert_eq!((info.log_entries, info.log_bytes), (2, 6));
    commit_cd(loud).unwrap();
    assert_eq!(log_mode(), LogMode::Off, "back to the quiet CD");
    commit_cd(quiet).unwrap();
    assert_eq!(log_mode(), LogMode::Off);
}

#[test]
fn a_child_created_during_a_replay_consumes_it_then_records() {
    let root = logging_root();
    for r in ["r1", "r2", "r3"] {
        log_append(&[r.as_bytes()]).unwrap();
    }
    assert_eq!(restore(root).unwrap().log_entries, 3);
    assert_eq!(log_mode(), LogMode::Replay);
    assert_eq!(log_append(&[b"no"]), Err(CdError::LogReplaying));
    assert_eq!(next_bytes().unwrap(), b"r1");
    let kid = child(root);
    assert_eq!(log_mode(), LogMode::Replay, "the child is fed by the root");
    assert_eq!(log_append(&[b"no"]), Err(CdError::LogReplaying));
    assert_eq!(next_bytes().unwrap(), b"r2");
    // A grandchild that commits during the replay appends nothing to it.
    let grandchild = child(kid);
    assert_eq!(next_bytes().unwrap(), b"r3");
    commit_cd(grandchild).unwrap();
    let info = cd_info(root).unwrap();
    assert_eq!((info.log_entries, info.replaying), (3, true));
    // The replay ends: the child records into its own log.
    assert!(log_next().unwrap().is_none());
    assert_eq!(log_mode(), LogMode::Record);
    assert!(!cd_info(root).unwrap().replaying);
    log_append(&[b"k1"]).unwrap();
    assert_eq!(cd_info(kid).unwrap().log_entries, 1);
    assert_eq!(cd_info(root).unwrap().log_entries, 3);
    commit_cd(kid).unwrap();
    assert_eq!(log_mode(), LogMode::Record);
    restore(root).unwrap();
    assert_eq!(drain(), records(&["r1", "r2", "r3", "k1"]));
    commit_cd(root).unwrap();
}

#[test]
fn restoring_a_child_created_during_a_replay_rewinds_the_replay() {
    let root = logging_root();
    for r in ["r1", "r2", "r3"] {
        log_append(&[r.as_bytes()]).unwrap();
    }
    restore(root).unwrap();
    assert_eq!(next_bytes().unwrap(), b"r1");
    let kid = child(root);
    assert_eq!(next_bytes().unwrap(), b"r2");
    // The child fails and re-executes: it is served r2 again.
    restore(kid).unwrap();
    assert_eq!(log_mode(), LogMode::Replay);
    assert_eq!(drain(), records(&["r2", "r3"]));
    assert_eq!(log_mode(), LogMode::Record);
    log_append(&[b"k1"]).unwrap();
    // Again after the replay ended and the child logged: the root's records, then its own.
    restore(kid).unwrap();
    assert_eq!(drain(), records(&["r2", "r3", "k1"]));
    log_append(&[b"k2"]).unwrap();
    // An advance moves the child's point in time past the root's replay.
    advance(kid).unwrap();
    restore(kid).unwrap();
    assert_eq!(log_mode(), LogMode::Record, "nothing to replay");
    commit_cd(kid).unwrap();
    restore(root).unwrap();
    assert_eq!(drain(), records(&["r1", "r2", "r3", "k1", "k2"]));
    commit_cd(root).unwrap();
}

#[test]
fn commit_into_a_replaying_log_is_refused() {
    let root = logging_root();
    log_append(&[b"r1"]).unwrap();
    restore(root).unwrap();
    let kid = child(root);
    // The spec's API still adds to the child's own log...
    add_mpi_log_to_cd(kid, vec![9].into()).unwrap();
    // ... but merging that into the log being replayed is refused, changing nothing.
    assert_eq!(commit_cd(kid), Err(CdError::LogReplaying));
    assert_eq!(advance(kid).unwrap_err(), CdError::LogReplaying);
    assert_eq!(cd_info(kid).unwrap().log_entries, 1);
    assert_eq!(drain(), records(&["r1"]));
    commit_cd(kid).unwrap();
    assert_eq!(cd_info(root).unwrap().log_entries, 2);
    commit_cd(root).unwrap();
}

#[test]
fn advance_and_delete_end_a_replay() {
    let root = logging_root();
    log_append(&[b"r1"]).unwrap();
    restore(root).unwrap();
    assert_eq!(log_mode(), LogMode::Replay);
    advance(root).unwrap();
    assert_eq!(log_mode(), LogMode::Record);
    assert_eq!(cd_info(root).unwrap().log_entries, 0);
    log_append(&[b"r2"]).unwrap();
    restore(root).unwrap();
    assert_eq!(log_mode(), LogMode::Replay);
    delete_mpi_log_from_cd(root).unwrap();
    assert_eq!(log_mode(), LogMode::Record);
    restore(root).unwrap();
    assert_eq!(log_mode(), LogMode::Record, "an empty log starts no replay");
    commit_cd(root).unwrap();
}

#[test]
fn the_cache_sees_other_threads() {
    let root = logging_root();
    log_append(&[b"r1"]).unwrap();
    let kid = child(root);
    assert_eq!(log_mode(), LogMode::Record);
    // Another thread restores the root: the child is discarded, the root replays.
    std::thread::scope(|s| s.spawn(|| restore(root).unwrap()).join().unwrap());
    assert_eq!(log_mode(), LogMode::Replay);
    assert_eq!(current_cd(), Some(root));
    assert!(cd_info(kid).is_err());
    // Another thread consumes the replay: this one records again.
    std::thread::scope(|s| {
        s.spawn(|| while get_mpi_log_from_cd(root).unwrap().is_some() {})
            .join()
            .unwrap()
    });
    assert_eq!(log_mode(), LogMode::Record);
    // Another thread commits the active CD: the one below is active.
    let kid = child(root);
    let quiet = create_cd(None, None, LoggingMode::Disabled, Some(&unique("q"))).unwrap();
    assert_eq!(log_mode(), LogMode::Off);
    std::thread::scope(|s| s.spawn(|| commit_cd(quiet).unwrap()).join().unwrap());
    assert_eq!(log_mode(), LogMode::Record);
    assert_eq!(current_cd(), Some(kid));
    std::thread::scope(|s| s.spawn(|| commit_cd(kid).unwrap()).join().unwrap());
    assert_eq!(current_cd(), Some(root));
    std::thread::scope(|s| s.spawn(|| commit_cd(root).unwrap()).join().unwrap());
    assert_eq!(log_mode(), LogMode::Off);
    assert_eq!(current_cd(), None);
}

#[test]
fn merges_move_chunks_and_keep_fifo_order() {
    let root = logging_root();
    let mut written: Vec<(Vec<u8>, usize)> = Vec::new();
    let mut append = |text: &str| {
        log_append_with(text.len(), |b| {
            b.copy_from_slice(text.as_bytes());
            written.push((text.as_bytes().to_vec(), b.as_ptr().addr()));
        })
        .unwrap()
    };
    append("root 1");
    let only = child(root);
    append("only 2");
    commit_cd(only).unwrap();
    append("root 3");
    let kid = child(root);
    append("kid 4");
    let grandchild = child(kid);
    for i in 0..2000 {
        append(&format!("grandchild {i:04} {}", "x".repeat(i % 300)));
    }
    commit_cd(grandchild).unwrap();
    append("kid 5");
    advance(kid).unwrap(); // implicit commit: the records move up, the kid's log is emptied
    append("kid 6");
    commit_cd(kid).unwrap();
    append("root 7");
    // Siblings' logs are dropped.
    let s1 = child(root);
    append("dropped");
    let s2 = child(root);
    append("dropped");
    commit_cd(s2).unwrap();
    commit_cd(s1).unwrap();
    written.retain(|(bytes, _)| bytes != b"dropped");
    restore(root).unwrap();
    let replayed: Vec<(Vec<u8>, usize)> = std::iter::from_fn(|| log_next().unwrap())
        .map(|e| (e.bytes().to_vec(), e.bytes().as_ptr().addr()))
        .collect();
    assert_eq!(replayed.len(), written.len());
    assert!(
        replayed == written,
        "FIFO, and every record where it was written (no copy)"
    );
    assert!(replayed.iter().all(|(_, p)| p % 8 == 0), "8-byte aligned");
    commit_cd(root).unwrap();
}

#[test]
fn spilled_logs_stay_out_of_memory_and_replay_exactly() {
    const RECORD: usize = 64 << 10;
    const TOTAL: usize = 64 << 20;
    let dir = std::env::temp_dir().join(unique("cd-spill"));
    std::fs::create_dir(&dir).unwrap();
    let before = log_spill_bytes();
    set_log_spill_dir(Some(dir.clone()));
    set_log_spill_bytes(Some(1 << 20));
    let root = logging_root();
    let kid = child(root);
    let fill = |i: usize, b: &mut [u8]| {
        for (j, chunk) in b.chunks_mut(8).enumerate() {
            chunk.copy_from_slice(&((i * RECORD / 8 + j) as u64).to_le_bytes());
        }
    };
    let resident_before = resident_kib_under(&dir);
    for i in 0..TOTAL / RECORD {
        log_append_with(RECORD, |b| fill(i, b)).unwrap();
    }
    // Only the chunk being written stays resident (16 MiB at most); the rest is in the files.
    let grown = resident_kib_under(&dir).saturating_sub(resident_before);
    assert!(grown < 24 << 10, "resident file pages grew by {grown} KiB");
    set_log_spill_bytes(before);
    set_log_spill_dir(None);
    let info = cd_info(kid).unwrap();
    assert_eq!(info.log_bytes, TOTAL);
    assert!(
        info.log_spilled_bytes >= TOTAL - (2 << 20),
        "all but the first MiB or so spilled: {}",
        info.log_spilled_bytes
    );
    // The files are unlinked: nothing in the directory, only "(deleted)" mappings.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let mapped = maps
        .lines()
        .filter(|l| l.contains(dir.to_str().unwrap()))
        .collect::<Vec<_>>();
    assert!(!mapped.is_empty() && mapped.iter().all(|l| l.ends_with("(deleted)")));
    commit_cd(kid).unwrap();
    assert_eq!(
        cd_info(root).unwrap().log_spilled_bytes,
        info.log_spilled_bytes
    );
    restore(root).unwrap();
    let mut expected = vec![0; RECORD];
    for i in 0..TOTAL / RECORD {
        fill(i, &mut expected);
        let entry = log_next().unwrap().unwrap();
        assert!(entry.bytes() == expected, "record {i}");
    }
    assert!(log_next().unwrap().is_none());
    commit_cd(root).unwrap();
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    assert!(
        !maps.contains(dir.to_str().unwrap()),
        "unmapped with the log"
    );
    std::fs::remove_dir(&dir).unwrap();
}

/// The file-backed part of this process's resident set, in KiB.
/// The resident pages (KiB) of this process's mappings of files in `dir` (the spill files,
/// unlinked, still show their path in `/proc/self/smaps`): the process's whole `RssFile`
/// would count the files other tests of this binary map meanwhile.
fn resident_kib_under(dir: &std::path::Path) -> u64 {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let dir = dir.to_string_lossy();
    let mut inside = false;
    let mut kib = 0;
    for line in smaps.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // a mapping's header: address range, permissions, offset, device, inode, path
        if fields
            .first()
            .is_some_and(|f| f.contains('-') && !f.ends_with(':'))
        {
            inside = fields
                .get(5)
                .is_some_and(|path| path.starts_with(dir.as_ref()));
        } else if inside && fields.first() == Some(&"Rss:") {
            kib += fields
                .get(1)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    kib
}

/// What the restore hook saw: the CDs, the mode, and what a CD call returned inside it.
type Seen = (Vec<CdHandle>, LogMode, Result<CdInfo>);

thread_local! {
    /// The restore hook's behaviour on this thread: `None` leaves restores alone (other tests'
    /// restores run on other threads), `Some(refuse)` records and refuses or accepts.
    static HOOK: Cell<Option<bool>> = const { Cell::new(None) };
    static SEEN: RefCell<Vec<Seen>> = const { RefCell::new(Vec::new()) };
}

fn hook(cds: &[CdHandle]) -> Result<()> {
    let Some(refuse) = HOOK.with(Cell::get) else {
        return Ok(());
    };
    SEEN.with(|s| {
        s.borrow_mut()
            .push((cds.to_vec(), log_mode(), cd_info(cds[0])))
    });
    if refuse {
        Err(CdError::RestoreRefused("requests pending".into()))
    } else {
        Ok(())
    }
}

#[test]
fn the_restore_hook_sees_the_cds_and_may_refuse() {
    set_restore_hook(hook);
    let mem = Mem::new(4);
    let root = logging_root();
    // SAFETY: `mem` outlives the CDs.
    unsafe { add_to_cd_via_copy(root, &[mem.rw(0, 4)]).unwrap() };
    log_append(&[b"r1"]).unwrap();
    let kid = child(root);
    let grandchild = child(kid);
    mem.set_u32(0, 7);
    HOOK.with(|h| h.set(Some(true)));
    assert_eq!(
        restore(root).unwrap_err(),
        CdError::RestoreRefused("requests pending".into())
    );
    assert_eq!(mem.u32(0), 7, "no memory written");
    assert_eq!(cd_info(root).unwrap().children, 1);
    assert!(cd_info(grandchild).is_ok());
    assert_eq!(log_mode(), LogMode::Record);
    HOOK.with(|h| h.set(Some(false)));
    restore(root).unwrap();
    HOOK.with(|h| h.set(None));
    assert_eq!(mem.u32(0), 0);
    assert_eq!(log_mode(), LogMode::Replay);
    let seen = SEEN.with(|s| s.take());
    assert_eq!(seen.len(), 2);
    for (cds, mode, info) in seen {
        assert_eq!(cds, [root, kid, grandchild]);
        assert_eq!(mode, LogMode::Record, "log_mode works in the hook");
        assert_eq!(info.unwrap_err(), CdError::Reentrant);
    }
    commit_cd(root).unwrap();
}

#[test]
fn unreplayable_marks_refuse_restores_until_discarded() {
    let mem = Mem::new(4);
    let root = logging_root();
    // SAFETY: `mem` outlives the CDs.
    unsafe { add_to_cd_via_copy(root, &[mem.rw(0, 4)]).unwrap() };
    log_append(&[b"r1"]).unwrap();
    log_mark_unreplayable("MPI_Put").unwrap();
    mem.set_u32(0, 7);
    assert_eq!(
        restore(root).unwrap_err(),
        CdError::Unreplayable { call: "MPI_Put" }
    );
    assert_eq!(mem.u32(0), 7);
    advance(root).unwrap(); // drops the log and its mark
    restore(root).unwrap();
    // A mark in an only child's log refuses the restore that would merge it...
    let kid = child(root);
    log_mark_unreplayable("MPI_File_write").unwrap();
    assert_eq!(
        restore(root).unwrap_err(),
        CdError::Unreplayable {
            call: "MPI_File_write"
        }
    );
    assert!(cd_info(kid).is_ok(), "nothing discarded");
    // ... and moves with the records on commit.
    commit_cd(kid).unwrap();
    assert!(restore(root).is_err());
    delete_mpi_log_from_cd(root).unwrap();
    restore(root).unwrap();
    // Siblings' logs, and their marks, are dropped.
    let s1 = child(root);
    log_mark_unreplayable("MPI_Comm_spawn").unwrap();
    let s2 = child(root);
    assert!(restore(root).is_ok(), "the restore drops both");
    assert!(cd_info(s1).is_err() && cd_info(s2).is_err());
    let s1 = child(root);
    log_mark_unreplayable("MPI_Comm_spawn").unwrap();
    let s2 = child(root);
    commit_cd(s2).unwrap();
    commit_cd(s1).unwrap();
    restore(root).unwrap();
    commit_cd(root).unwrap();
}
