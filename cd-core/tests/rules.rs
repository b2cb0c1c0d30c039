//! One test per rule of DESIGN.md's "Semantics to get exactly right", then misuse.

use crate::util::{saved_u32, unique, Mem};
use cd_core::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn root() -> CdHandle {
    create_cd(None, None, LoggingMode::Enabled, Some(&unique("rules"))).unwrap()
}

fn child(parent: CdHandle) -> CdHandle {
    create_cd(Some(parent.into()), None, LoggingMode::Inherit, None).unwrap()
}

/// Adds via copy; `mem` outlives every CD of these tests and nothing else touches it.
fn copy(cd: CdHandle, specs: &[AddrSpec]) -> Result<()> {
    // SAFETY: see above.
    unsafe { add_to_cd_via_copy(cd, specs) }
}

fn restore(cd: CdHandle) -> Result<RestoreReport> {
    // SAFETY: as in `copy`.
    unsafe { restore_cd(cd) }
}

fn advance(cd: CdHandle) -> Result<AdvanceReport> {
    // SAFETY: as in `copy`.
    unsafe { advance_cd_point_in_time(cd) }
}

fn entries(cd: CdHandle) -> Vec<(usize, usize, Access, Restoration)> {
    cd_entries(cd)
        .unwrap()
        .into_iter()
        .map(|e| (e.address, e.length, e.access, e.restoration))
        .collect()
}

#[test]
fn overlap_keeps_the_older_entry_and_its_restoration_type() {
    let mem = Mem::new(32);
    let parent = root();
    copy(parent, &[mem.rw(0, 32)]).unwrap();
    let cd = child(parent);
    mem.fill(0, 16, 1);
    copy(cd, &[mem.ro(0, 16)]).unwrap();
    mem.fill(0, 32, 2);
    // Bytes 0..16 stay COPY (with the 1's); only 16..24 becomes PARENT.
    add_to_cd_via_parent(cd, &[mem.ro(8, 16)]).unwrap();
    let a = mem.addr(0);
    assert_eq!(
        entries(cd),
        vec![
            (a, 16, Access::ReadOnly, Restoration::Copy),
            (a + 16, 8, Access::ReadOnly, Restoration::Parent)
        ]
    );
    mem.fill(0, 32, 3);
    restore(cd).unwrap();
    assert_eq!(
        mem.bytes(0, 25),
        [[1; 16].as_slice(), &[0; 8], &[3]].concat()
    );
    commit_cd(cd).unwrap();
    commit_cd(parent).unwrap();
}

#[test]
fn promotion_relabels_without_copying_and_splits_partial_ranges() {
    let mem = Mem::new(100);
    let cd = root();
    copy(cd, &[mem.ro(0, 100)]).unwrap();
    assert_eq!(cd_info(cd).unwrap().stats.bytes_added, 100);
    mem.fill(40, 9, 5);
    copy(cd, &[mem.rw(40, 9)]).unwrap();
    assert_eq!(
        cd_info(cd).unwrap().stats.bytes_added,
        100,
        "a promotion copies nothing"
    );
    let a = mem.addr(0);
    assert_eq!(
        entries(cd),
        vec![
            (a, 40, Access::ReadOnly, Restoration::Copy),
            (a + 40, 9, Access::ReadWrite, Restoration::Copy),
            (a + 49, 51, Access::ReadOnly, Restoration::Copy)
        ]
    );
    // The saved data is still the old data: the promoted part restores to zeros.
    restore(cd).unwrap();
    assert_eq!(mem.bytes(40, 9), [0; 9]);
    // Promoting the rest merges everything back into one range.
    copy(cd, &[mem.rw(0, 40), mem.rw(49, 51)]).unwrap();
    assert_eq!(
        entries(cd),
        vec![(a, 100, Access::ReadWrite, Restoration::Copy)]
    );
    commit_cd(cd).unwrap();
}

/// The spec: an entry added again READ_ONLY is demoted ("legal so long as the data in the CD
/// matches application memory").
#[test]
fn re_adding_read_only_demotes() {
    let mem = Mem::new(16);
    let cd = root();
    copy(cd, &[mem.rw(0, 16)]).unwrap();
    copy(cd, &[mem.ro(4, 4)]).unwrap();
    let a = mem.addr(0);
    assert_eq!(
        entries(cd),
        vec![
            (a, 4, Access::ReadWrite, Restoration::Copy),
            (a + 4, 4, Access::ReadOnly, Restoration::Copy),
            (a + 8, 8, Access::ReadWrite, Restoration::Copy)
        ]
    );
    assert_eq!(advance(cd).unwrap().bytes_copied, 12);
    commit_cd(cd).unwrap();
}

#[test]
fn advance_demotes_every_read_write_entry() {
    let mem = Mem::new(64);
    let parent = root();
    copy(parent, &[mem.rw(32, 32)]).unwrap();
    let cd = child(parent);
    copy(cd, &[mem.rw(0, 16), mem.ro(16, 8)]).unwrap();
    add_to_cd_via_parent(cd, &[mem.rw(32, 8)]).unwrap();
    advance(cd).unwrap();
    assert!(entries(cd).iter().all(|e| e.2 == Access::ReadOnly));
    // A second advance with nothing promoted copies nothing.
    assert_eq!(advance(cd).unwrap().bytes_copied, 0);
    commit_cd(cd).unwrap();
    commit_cd(parent).unwrap();
}

#[test]
fn advance_copies_only_read_write_copy_entries() {
    let mem = Mem::new(64);
    let parent = root();
    copy(parent, &[mem.rw(48, 16)]).unwrap();
    let cd = child(parent);
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let regen = Regen::new(move |_| {
        counter.fetch_add(1, Ordering::Relaxed);
        0
    });
    copy(cd, &[mem.rw(0, 10), mem.ro(10, 6)]).unwrap(); // 10 RW COPY bytes
    add_to_cd_via_regen(cd, &[mem.ro(16, 16)], regen).unwrap();
    add_to_cd_via_parent(cd, &[mem.rw(48, 16)]).unwrap(); // RW, but PARENT
    mem.fill(0, 64, 7);
    let report = advance(cd).unwrap();
    assert_eq!(report.bytes_copied, 10);
    assert_eq!(report.ranges_copied, 1);
    assert_eq!(
        calls.load(Ordering::Relaxed),
        0,
        "advance never calls regen"
    );
    assert_eq!(
        cd_saved_bytes(cd, mem.addr(0), 16).unwrap(),
        [[7; 10].as_slice(), &[0; 6]].concat()
    );
    commit_cd(cd).unwrap();
    commit_cd(parent).unwrap();
}

#[test]
fn regen_with_read_write_is_rejected() {
    let mem = Mem::new(16);
    let cd = root();
    let regen = Regen::new(|_| 0);
    assert_eq!(
        add_to_cd_via_regen(cd, &[mem.ro(0, 8), mem.rw(8, 8)], regen.clone()),
        Err(CdError::ReadWriteRegen {
            address: mem.addr(8)
        })
    );
    assert_eq!(cd_info(cd).unwrap().ranges, 0, "atomic: nothing added");
    add_to_cd_via_regen(cd, &[mem.ro(0, 8)], regen).unwrap();
    assert_eq!(
        copy(cd, &[mem.rw(4, 8)]),
        Err(CdError::PromoteRegen {
            address: mem.addr(4)
        })
    );
    assert_eq!(cd_info(cd).unwrap().ranges, 1);
    commit_cd(cd).unwrap();
}

#[test]
fn via_parent_needs_an_ancestor_and_refuses_regen() {
    let mem = Mem::new(64);
    let grandparent = root();
    assert_eq!(
        add_to_cd_via_parent(grandparent, &[mem.ro(0, 4)]),
        Err(CdError::NoParent)
    );
    copy(grandparent, &[mem.rw(0, 16)]).unwrap();
    add_to_cd_via_regen(grandparent, &[mem.ro(32, 16)], Regen::new(|_| 0)).unwrap();
    let parent = child(grandparent);
    add_to_cd_via_parent(parent, &[mem.ro(8, 8)]).unwrap();
    let cd = child(parent);
    // Held by the parent (as PARENT, resolving to the grandparent's COPY) and by the
    // grandparent directly: both fine.
    add_to_cd_via_parent(cd, &[mem.ro(0, 16)]).unwrap();
    // Not in any ancestor.
    assert_eq!(
        add_to_cd_via_parent(cd, &[mem.ro(14, 4)]),
        Err(CdError::NotInAncestor {
            address: mem.addr(16),
            end: mem.addr(18)
        })
    );
    // Regenerated by an ancestor.
    assert_eq!(
        add_to_cd_via_parent(cd, &[mem.ro(30, 4)]),
        Err(CdError::RegenAncestor {
            address: mem.addr(32),
            end: mem.addr(34)
        })
    );
    // Bytes 0..8 come from the grandparent directly, 8..16 through the parent's entry.
    mem.fill(0, 16, 4);
    restore(cd).unwrap();
    assert_eq!(mem.bytes(0, 16), [0; 16]);
    for cd in [cd, parent, grandparent] {
        commit_cd(cd).unwrap();
    }
}

#[test]
fn restore_goes_newest_to_oldest_so_the_oldest_wins() {
    let mem = Mem::new(8);
    let a = root();
    copy(a, &[mem.rw(0, 4)]).unwrap(); // a: x=0
    mem.set_u32(0, 1);
    let b = child(a);
    copy(b, &[mem.rw(0, 8)]).unwrap(); // b: x=1, y=0
    mem.set_u32(0, 2);
    mem.set_u32(4, 2);
    let c = child(b);
    copy(c, &[mem.rw(0, 8)]).unwrap(); // c: x=2, y=2
    mem.set_u32(0, 3);
    mem.set_u32(4, 3);
    let report = restore(b).unwrap();
    assert_eq!((mem.u32(0), mem.u32(4)), (1, 0), "b's values win over c's");
    assert_eq!(report.discarded, 1);
    let c2 = child(b);
    copy(c2, &[mem.rw(0, 8)]).unwrap();
    mem.set_u32(0, 9);
    restore(a).unwrap();
    assert_eq!(
        (mem.u32(0), mem.u32(4)),
        (0, 0),
        "a wins for x; y comes from b"
    );
    assert!(cd_info(b).is_err() && cd_info(c2).is_err());
    commit_cd(a).unwrap();
}

/// Inside one CD: COPY entries first, then PARENT, then REGEN, so a regen function can depend on
/// the memory just restored.
#[test]
fn restore_order_inside_a_cd_is_copy_parent_regen() {
    let mem = Mem::new(16);
    let parent = root();
    mem.set_u32(4, 20);
    copy(parent, &[mem.rw(4, 4)]).unwrap();
    let cd = child(parent);
    mem.set_u32(0, 10);
    copy(cd, &[mem.rw(0, 4)]).unwrap();
    add_to_cd_via_parent(cd, &[mem.ro(4, 4)]).unwrap();
    let base = mem.addr(0);
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let regen = Regen::new(move |specs| {
        // z = x + y, read from application memory restored before this call.
        let read = |a: usize| {
            // SAFETY: the test's memory block, alive during the restore.
            unsafe { std::ptr::read_volatile(std::ptr::with_exposed_provenance::<u32>(a)) }
        };
        let (x, y) = (read(base), read(base + 4));
        log.lock().unwrap().push(specs.to_vec());
        for spec in specs {
            // SAFETY: as above; the spec is the z variable.
            unsafe {
                std::ptr::write_volatile(
                    std::ptr::with_exposed_provenance_mut::<u32>(spec.address),
                    x + y,
                )
            };
        }
        0
    });
    add_to_cd_via_regen(cd, &[mem.ro(8, 4)], regen).unwrap();
    for off in [0, 4, 8] {
        mem.set_u32(off, 99);
    }
    let report = restore(cd).unwrap();
    assert_eq!((mem.u32(0), mem.u32(4), mem.u32(8)), (10, 20, 30));
    assert_eq!(report.regen_calls, 1);
    assert_eq!(report.bytes_restored, 8);
    let calls = seen.lock().unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(
        calls[0],
        [AddrSpec::new(
            mem.addr(8),
            4,
            Access::ReadOnly,
            Scope::Global
        )]
    );
    drop(calls);
    commit_cd(cd).unwrap();
    commit_cd(parent).unwrap();
}

#[test]
fn commit_moves_child_only_entries_parent_wins_rw_promotes_constrained_stays() {
    let mem = Mem::new(32);
    let parent = root();
    copy(parent, &[mem.ro(0, 8)]).unwrap(); // parent: [0,8) RO = 0
    let cd = child(parent);
    mem.fill(0, 32, 1);
    copy(cd, &[mem.rw(0, 16)]).unwrap(); // child: [0,16) RW = 1
    copy(cd, &[mem.rw(16, 8).with_scope(Scope::Constrained)]).unwrap();
    commit_cd(cd).unwrap();
    let a = mem.addr(0);
    assert_eq!(
        entries(parent),
        vec![(a, 16, Access::ReadWrite, Restoration::Copy)],
        "RW promotes the parent's RO entry; [8,16) moved up and merged; the constrained range stayed"
    );
    assert_eq!(
        cd_saved_bytes(parent, a, 16).unwrap(),
        [[0; 8].as_slice(), &[1; 8]].concat(),
        "parent wins"
    );
    commit_cd(parent).unwrap();
}

#[test]
fn logs_merge_into_an_only_childs_parent_and_siblings_are_discarded() {
    // Commit of an only child: merged, in order.
    let parent = root();
    add_mpi_log_to_cd(parent, vec![1].into()).unwrap();
    let only = child(parent);
    add_mpi_log_to_cd(only, vec![2].into()).unwrap();
    commit_cd(only).unwrap();
    add_mpi_log_to_cd(parent, vec![3].into()).unwrap();
    // Commit of siblings: discarded.
    let s1 = child(parent);
    let s2 = child(parent);
    add_mpi_log_to_cd(s1, vec![4].into()).unwrap();
    add_mpi_log_to_cd(s2, vec![5].into()).unwrap();
    commit_cd(s1).unwrap();
    commit_cd(s2).unwrap();
    // A later child is an only child again (its sibling no longer exists).
    let later = child(parent);
    assert!(!cd_info(later).unwrap().had_siblings);
    add_mpi_log_to_cd(later, vec![6].into()).unwrap();
    let grandchild = child(later);
    add_mpi_log_to_cd(grandchild, vec![7].into()).unwrap();
    // Restore merges the hierarchy's logs, oldest first, and starts the replay.
    // SAFETY: the CDs hold no memory.
    let report = unsafe { restore_cd(parent).unwrap() };
    assert_eq!(report.log_entries, 5);
    assert_eq!(
        add_mpi_log_to_cd(parent, vec![8].into()),
        Err(CdError::LogReplaying)
    );
    let replay: Vec<u8> = std::iter::from_fn(|| get_mpi_log_from_cd(parent).unwrap())
        .map(|e| e.bytes()[0])
        .collect();
    assert_eq!(replay, [1, 2, 3, 6, 7]);
    add_mpi_log_to_cd(parent, vec![8].into()).unwrap();
    // Restore with live siblings: their logs are dropped.
    let s1 = child(parent);
    let s2 = child(parent);
    add_mpi_log_to_cd(s1, vec![9].into()).unwrap();
    add_mpi_log_to_cd(s2, vec![10].into()).unwrap();
    // SAFETY: as above.
    unsafe { restore_cd(parent).unwrap() };
    let replay: Vec<u8> = std::iter::from_fn(|| get_mpi_log_from_cd(parent).unwrap())
        .map(|e| e.bytes()[0])
        .collect();
    assert_eq!(replay, [1, 2, 3, 6, 7, 8]);
    delete_mpi_log_from_cd(parent).unwrap();
    assert_eq!(cd_info(parent).unwrap().log_entries, 0);
    commit_cd(parent).unwrap();
}

#[test]
fn advance_of_a_child_commits_implicitly_without_invalidating_it() {
    let mem = Mem::new(16);
    let parent = root();
    copy(parent, &[mem.ro(0, 4)]).unwrap(); // x=0, RO
    add_mpi_log_to_cd(parent, vec![1].into()).unwrap();
    let cd = child(parent);
    mem.set_u32(4, 5);
    copy(cd, &[mem.rw(0, 8)]).unwrap(); // x=0 RW, y=5 RW
    add_mpi_log_to_cd(cd, vec![2].into()).unwrap();
    mem.set_u32(0, 1);
    mem.set_u32(4, 6);
    assert_eq!(advance(cd).unwrap().bytes_copied, 8);
    // The parent got y's old value (its point in time), and x was promoted.
    assert_eq!(
        (saved_u32(parent, &mem, 0), saved_u32(parent, &mem, 4)),
        (0, 5)
    );
    assert!(entries(parent).iter().all(|e| e.2 == Access::ReadWrite));
    assert_eq!(
        cd_info(parent).unwrap().log_entries,
        2,
        "an only child's log merged"
    );
    // The child lives on, at the new point in time, with an empty log.
    let info = cd_info(cd).unwrap();
    assert_eq!(info.log_entries, 0);
    assert_eq!((saved_u32(cd, &mem, 0), saved_u32(cd, &mem, 4)), (1, 6));
    // A second advance with nothing new leaves the parent alone.
    mem.set_u32(4, 7);
    copy(cd, &[mem.rw(4, 4)]).unwrap();
    advance(cd).unwrap();
    assert_eq!(saved_u32(parent, &mem, 4), 5);
    mem.set_u32(4, 0);
    restore(cd).unwrap();
    assert_eq!(mem.u32(4), 7);
    restore(parent).unwrap();
    assert_eq!((mem.u32(0), mem.u32(4)), (0, 5));
    commit_cd(parent).unwrap();
}

#[test]
fn logging_modes_must_match() {
    assert_eq!(
        create_cd(None, None, LoggingMode::Inherit, Some(&unique("inherit"))),
        Err(CdError::RootInheritsLogging)
    );
    let quiet = create_cd(None, None, LoggingMode::Disabled, Some(&unique("quiet"))).unwrap();
    assert_eq!(
        create_cd(Some(quiet.into()), None, LoggingMode::Enabled, None),
        Err(CdError::LoggingMismatch {
            parent: "DISABLED",
            child: "ENABLED"
        })
    );
    let inherits = child(quiet);
    assert!(!cd_info(inherits).unwrap().logging);
    assert_eq!(
        add_mpi_log_to_cd(inherits, vec![1].into()),
        Err(CdError::LoggingDisabled)
    );
    let same = create_cd(Some(inherits.into()), None, LoggingMode::Disabled, None).unwrap();
    commit_cd(same).unwrap();
    commit_cd(inherits).unwrap();
    commit_cd(quiet).unwrap();
    let loud = root();
    assert!(matches!(
        create_cd(Some(loud.into()), None, LoggingMode::Disabled, None),
        Err(CdError::LoggingMismatch { .. })
    ));
    commit_cd(loud).unwrap();
}

#[test]
fn handles_are_validated() {
    let cd = root();
    commit_cd(cd).unwrap();
    assert_eq!(
        commit_cd(cd),
        Err(CdError::StaleHandle {
            handle: cd,
            fate: Fate::Committed
        })
    );
    let made_up = CdHandle::from_bits(0xdead_0000_0042);
    assert_eq!(
        cd_info(made_up).unwrap_err(),
        CdError::InvalidHandle(made_up)
    );
    for bits in [0, 1, u64::MAX] {
        assert!(matches!(
            cd_info(CdHandle::from_bits(bits)),
            Err(CdError::InvalidHandle(_))
        ));
    }
    std::thread::spawn(|| assert_eq!(commit_cd(CdRef::Current), Err(CdError::NoActiveCd)))
        .join()
        .unwrap();
}

#[test]
fn current_cd_is_a_per_thread_lifo() {
    std::thread::spawn(|| {
        assert_eq!(current_cd(), None);
        let a = root();
        let b = create_cd(Some(CdRef::Current), None, LoggingMode::Inherit, None).unwrap();
        assert_eq!(cd_info(b).unwrap().parent, Some(a));
        assert_eq!(current_cd(), Some(b));
        let c = create_cd(Some(CdRef::Current), None, LoggingMode::Inherit, None).unwrap();
        assert_eq!(cd_info(CdRef::Current).unwrap().depth, 2);
        commit_cd(CdRef::Current).unwrap(); // commits c
        assert!(cd_info(c).is_err());
        assert_eq!(current_cd(), Some(b));
        let d = child(b);
        // SAFETY: no memory in these CDs.
        unsafe { restore_cd(b).unwrap() }; // discards d
        assert!(cd_info(d).is_err());
        assert_eq!(current_cd(), Some(b));
        commit_cd(b).unwrap();
        assert_eq!(current_cd(), Some(a));
        commit_cd(a).unwrap();
        assert_eq!(current_cd(), None);
    })
    .join()
    .unwrap();
}

#[test]
fn names_and_identity() {
    let name = unique("named");
    let a = create_cd(None, None, LoggingMode::Disabled, Some(&name)).unwrap();
    assert_eq!(
        create_cd(None, None, LoggingMode::Disabled, Some(&name)),
        Err(CdError::DuplicateName(name.clone()))
    );
    assert_eq!(
        create_cd(Some(a.into()), None, LoggingMode::Inherit, Some("child")),
        Err(CdError::ChildNamed)
    );
    assert!(matches!(
        create_cd(None, None, LoggingMode::Disabled, Some("")),
        Err(CdError::BadName(_))
    ));
    let c0 = child(a);
    let c1 = child(a);
    commit_cd(c0).unwrap();
    let c2 = child(a); // takes the free index 0
    let g = child(c1);
    let ids: Vec<(u32, u32)> = [c1, c2, g]
        .iter()
        .map(|&c| cd_info(c).map(|i| (i.depth, i.sibling_index)).unwrap())
        .collect();
    assert_eq!(ids, [(1, 1), (1, 0), (2, 0)]);
    let info = cd_info(g).unwrap();
    assert_eq!(
        (info.name.as_deref(), info.rank),
        (Some(name.as_str()), rank())
    );
    for cd in [g, c1, c2, a] {
        commit_cd(cd).unwrap();
    }
    let again = create_cd(None, None, LoggingMode::Disabled, Some(&name)).unwrap();
    commit_cd(again).unwrap();
}

#[test]
fn scope_changes_need_a_delete_first() {
    let mem = Mem::new(8);
    let cd = root();
    copy(cd, &[mem.rw(0, 8)]).unwrap();
    assert_eq!(
        copy(cd, &[mem.rw(4, 8).with_scope(Scope::Constrained)]),
        Err(CdError::ScopeChange {
            address: mem.addr(4),
            existing: "GLOBAL"
        })
    );
    delete_from_cd(cd, &[mem.rw(4, 4)]).unwrap();
    copy(cd, &[mem.rw(4, 4).with_scope(Scope::Constrained)]).unwrap();
    assert_eq!(cd_entries(cd).unwrap()[1].scope, Scope::Constrained);
    commit_cd(cd).unwrap();
}

#[test]
fn delete_splits_and_refuses_what_is_not_there() {
    let mem = Mem::new(32);
    let cd = root();
    copy(cd, &[mem.rw(0, 32)]).unwrap();
    delete_from_cd(cd, &[mem.rw(8, 8)]).unwrap();
    assert_eq!(cd_info(cd).unwrap().ranges, 2);
    assert_eq!(cd_info(cd).unwrap().stored_bytes, 24);
    assert_eq!(
        delete_from_cd(cd, &[mem.rw(4, 8)]),
        Err(CdError::RangeNotFound {
            address: mem.addr(8),
            end: mem.addr(12)
        })
    );
    assert_eq!(cd_info(cd).unwrap().ranges, 2, "atomic: nothing deleted");
    delete_from_cd(cd, &[mem.rw(0, 8), mem.rw(16, 16)]).unwrap();
    assert_eq!(cd_info(cd).unwrap().ranges, 0);
    commit_cd(cd).unwrap();
}

#[test]
fn file_positions_are_saved_advanced_and_restored() {
    use std::io::{Seek, SeekFrom, Write};
    use std::os::fd::AsRawFd;
    let path = std::env::temp_dir().join(unique("cd-core-file"));
    let mut file = std::fs::File::create(&path).unwrap();
    let fd = file.as_raw_fd();
    file.write_all(b"header").unwrap();
    let cd = root();
    add_file_to_cd(cd, fd).unwrap();
    file.write_all(b"-step1").unwrap();
    // SAFETY: no memory in this CD.
    unsafe { restore_cd(cd).unwrap() };
    assert_eq!(file.stream_position().unwrap(), 6);
    file.write_all(b"-step1").unwrap();
    advance(cd).unwrap();
    assert_eq!(cd_files(cd).unwrap(), [(fd, 12)]);
    file.seek(SeekFrom::Start(1000)).unwrap();
    restore(cd).unwrap();
    assert_eq!(file.stream_position().unwrap(), 12);
    delete_file_from_cd(cd, fd).unwrap();
    assert_eq!(delete_file_from_cd(cd, fd), Err(CdError::FileNotFound(fd)));
    assert!(matches!(
        add_file_to_cd(cd, -1),
        Err(CdError::FileNotSeekable { .. })
    ));
    let (read_end, write_end) = std::io::pipe().unwrap();
    assert!(matches!(
        add_file_to_cd(cd, read_end.as_raw_fd()),
        Err(CdError::FileNotSeekable { .. })
    ));
    drop((read_end, write_end, file));
    std::fs::remove_file(&path).unwrap();
    commit_cd(cd).unwrap();
}

#[test]
fn bad_address_lists_are_refused_before_anything_changes() {
    let mem = Mem::new(16);
    let cd = root();
    assert_eq!(
        copy(cd, &[mem.rw(0, 0)]),
        Err(CdError::ZeroLength {
            address: mem.addr(0)
        })
    );
    assert_eq!(
        copy(cd, &[AddrSpec::new(0, 4, Access::ReadOnly, Scope::Global)]),
        Err(CdError::NullAddress { length: 4 })
    );
    assert!(matches!(
        copy(
            cd,
            &[AddrSpec::new(
                usize::MAX - 2,
                4,
                Access::ReadOnly,
                Scope::Global
            )]
        ),
        Err(CdError::AddressOverflow { .. })
    ));
    assert_eq!(
        copy(cd, &[mem.rw(0, 8), mem.rw(7, 2)]),
        Err(CdError::OverlappingList {
            first: 0,
            second: 1
        })
    );
    copy(cd, &[]).unwrap();
    assert_eq!(cd_info(cd).unwrap().ranges, 0);
    commit_cd(cd).unwrap();
}

#[test]
fn commit_and_advance_refuse_a_cd_with_children_and_restore_discards_them() {
    let cd = root();
    let kid = child(cd);
    assert_eq!(
        commit_cd(cd),
        Err(CdError::HasChildren {
            operation: "commit_cd",
            children: 1
        })
    );
    // SAFETY: no memory in these CDs.
    let report = unsafe { restore_cd(cd).unwrap() };
    assert_eq!(report.discarded, 1);
    assert_eq!(cd_info(cd).unwrap().children, 0, "the restored CD lives on");
    assert!(cd_info(kid).is_err());
    commit_cd(cd).unwrap();
}

#[test]
fn callbacks_cannot_reenter_the_api() {
    let mem = Mem::new(4);
    let cd = root();
    let inner = Arc::new(std::sync::Mutex::new(None));
    let seen = Arc::clone(&inner);
    let regen = Regen::new(move |_| {
        *seen.lock().unwrap() = Some(cd_info(CdRef::Current).map(|_| ()));
        1
    });
    add_to_cd_via_regen(cd, &[mem.ro(0, 4)], regen).unwrap();
    assert_eq!(
        restore(cd),
        Err(CdError::RegenFailed {
            status: 1,
            ranges: 1,
            not_restored: vec![(mem.addr(0), mem.addr(4))]
        })
    );
    assert_eq!(*inner.lock().unwrap(), Some(Err(CdError::Reentrant)));
    let panicking = Regen::new(|_| panic!("regen bug"));
    let mem2 = Mem::new(4);
    delete_from_cd(cd, &[mem.ro(0, 4)]).unwrap();
    add_to_cd_via_regen(cd, &[mem2.ro(0, 4)], panicking).unwrap();
    assert_eq!(
        restore(cd),
        Err(CdError::RegenFailed {
            status: -1,
            ranges: 1,
            not_restored: vec![(mem2.addr(0), mem2.addr(4))]
        })
    );
    commit_cd(cd).unwrap();
}

#[test]
fn storage_info_is_parsed_kept_and_inherited() {
    let err = create_cd(
        None,
        Some("dir=/dev/shm/cd"),
        LoggingMode::Disabled,
        Some(&unique("si")),
    )
    .unwrap_err();
    assert!(err.to_string().contains("no persistence layer"), "{err}");
    let err = create_cd(
        None,
        Some("dir=/dev/shm/cd;sceme=xor"),
        LoggingMode::Disabled,
        Some(&unique("si")),
    )
    .unwrap_err();
    assert!(err.to_string().contains("unknown key \"sceme\""), "{err}");
    let cd = create_cd(
        None,
        Some(" ; "),
        LoggingMode::Disabled,
        Some(&unique("si")),
    )
    .unwrap();
    assert!(cd_info(cd).unwrap().storage_info.is_empty());
    let kid = child(cd);
    assert_eq!(
        cd_info(kid).unwrap().storage_info,
        cd_info(cd).unwrap().storage_info
    );
    commit_cd(kid).unwrap();
    commit_cd(cd).unwrap();
}

/// 100,000 separate ranges; adjacent adds merge into one range.
#[test]
fn many_ranges_stay_separate_and_adjacent_ones_merge() {
    const N: usize = 100_000;
    let mem = Mem::new(N * 16);
    let cd = root();
    for i in 0..N {
        copy(cd, &[mem.rw(i * 16, 8)]).unwrap();
    }
    assert_eq!(cd_info(cd).unwrap().ranges, N);
    for i in 0..N {
        copy(cd, &[mem.rw(i * 16 + 8, 8)]).unwrap();
    }
    let info = cd_info(cd).unwrap();
    assert_eq!(info.ranges, 1);
    assert_eq!(info.stored_bytes, N * 16);
    commit_cd(cd).unwrap();
}

/// A restore of a child whose descendants refer (via parent) to data held above the restored
/// CD: the bytes come from the ancestor's store, which the restore reads but does not restore.
#[test]
fn parent_entries_resolve_above_the_restored_cd() {
    let mem = Mem::new(16);
    let top = root();
    mem.fill(0, 16, 1);
    copy(top, &[mem.rw(0, 16)]).unwrap();
    mem.fill(0, 16, 2);
    let middle = child(top);
    copy(middle, &[mem.rw(8, 8)]).unwrap(); // middle holds 8..16 = 2
    let leaf = child(middle);
    add_to_cd_via_parent(leaf, &[mem.rw(0, 16)]).unwrap(); // 0..8 from top, 8..16 from middle
    mem.fill(0, 16, 3);
    let report = restore(middle).unwrap();
    assert_eq!(report.discarded, 1);
    // The leaf restored 0..8 = 1 (top) and 8..16 = 2 (middle); middle then restored 8..16 = 2.
    assert_eq!(mem.bytes(0, 16), [[1; 8].as_slice(), &[2; 8]].concat());
    assert_eq!(
        saved_u32(top, &mem, 0),
        0x0101_0101,
        "top was read, not changed"
    );
    commit_cd(middle).unwrap();
    commit_cd(top).unwrap();
}

/// A handle stays recognisably stale however many times its slot is reused.
#[test]
fn old_handles_stay_stale_after_their_slot_is_reused() {
    let first = std::thread::spawn(|| {
        let cd = create_cd(None, None, LoggingMode::Disabled, None).unwrap();
        commit_cd(cd).unwrap();
        cd
    })
    .join()
    .unwrap();
    // Reuse slots many times over (the registry hands out freed slots first).
    for _ in 0..50 {
        let cd = create_cd(None, None, LoggingMode::Disabled, None).unwrap();
        commit_cd(cd).unwrap();
    }
    assert!(matches!(
        cd_info(first),
        Err(CdError::StaleHandle { handle, .. }) if handle == first
    ));
}

#[test]
fn a_regen_that_fails_midway_names_exactly_the_ranges_not_restored() {
    let mem = Mem::new(64);
    let top = root();
    // The root: a copy of 0..8 and 56..64.
    mem.fill(0, 64, 1);
    // SAFETY: `mem` outlives the CDs.
    unsafe { add_to_cd_via_copy(top, &[mem.rw(0, 8), mem.rw(56, 8)]).unwrap() };
    let child = create_cd(Some(top.into()), None, LoggingMode::Inherit, None).unwrap();
    // The child: a copy of 16..24, a regen that works on 24..32, one that fails on 32..40,
    // and a later regen call (the working one again, split) on 40..48.
    mem.fill(0, 64, 2);
    // SAFETY: as above.
    unsafe { add_to_cd_via_copy(child, &[mem.rw(16, 8)]).unwrap() };
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&calls);
    let works = Regen::new(move |_| {
        seen.fetch_add(1, Ordering::Relaxed);
        0
    });
    let fails = Regen::new(|_| 5);
    add_to_cd_via_regen(child, &[mem.ro(24, 8)], works.clone()).unwrap();
    add_to_cd_via_regen(child, &[mem.ro(32, 8)], fails).unwrap();
    add_to_cd_via_regen(child, &[mem.ro(44, 4)], works).unwrap();
    mem.fill(0, 64, 3);
    let err = restore(top).unwrap_err();
    // Calls are grouped per function, in the order of their first range: `works` (24..32 and
    // 44..48) ran, then `fails` stopped the restore. Not restored: 32..40 and the root's.
    assert_eq!(calls.load(Ordering::Relaxed), 1);
    assert_eq!(
        err,
        CdError::RegenFailed {
            status: 5,
            ranges: 1,
            not_restored: vec![
                (mem.addr(0), mem.addr(8)),
                (mem.addr(32), mem.addr(40)),
                (mem.addr(56), mem.addr(64)),
            ],
        }
    );
    let message = err.to_string();
    assert!(
        message.contains(&format!("{:#x}..{:#x}", mem.addr(32), mem.addr(40))),
        "{message}"
    );
    assert_eq!(err.code(), 62);
    // The child's copy was restored, the root's ranges were not reached.
    assert_eq!(mem.bytes(16, 8), [2; 8]);
    assert_eq!(mem.bytes(0, 8), [3; 8]);
    // Nothing was discarded: the child lives, and the application may rebuild or discard.
    assert!(cd_info(child).is_ok());
    commit_cd(child).unwrap();
    commit_cd(top).unwrap();
}

#[test]
fn a_restore_refused_before_writing_leaves_memory_untouched() {
    let mem = Mem::new(16);
    let top = root();
    mem.fill(0, 16, 1);
    // SAFETY: `mem` outlives the CD.
    unsafe { add_to_cd_via_copy(top, &[mem.rw(0, 16)]).unwrap() };
    // A monitored file closed since: the restore cannot seek it back, and says so before
    // writing a byte.
    let path = std::env::temp_dir().join(unique("restore-file"));
    let file = std::fs::File::create(&path).unwrap();
    let fd = std::os::fd::IntoRawFd::into_raw_fd(file);
    add_file_to_cd(top, fd).unwrap();
    // SAFETY: `fd` is ours, closed once.
    unsafe { libc::close(fd) };
    mem.fill(0, 16, 2);
    assert!(matches!(
        restore(top),
        Err(CdError::FileNotSeekable { fd: f, .. }) if f == fd
    ));
    assert_eq!(mem.bytes(0, 16), [2; 16], "nothing written");
    delete_file_from_cd(top, fd).unwrap();
    assert_eq!(restore(top).unwrap().bytes_restored, 16);
    assert_eq!(mem.bytes(0, 16), [1; 16]);
    std::fs::remove_file(path).unwrap();
    commit_cd(top).unwrap();
}
