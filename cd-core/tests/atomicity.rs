//! Add and advance are atomic: either every entry is updated or none is. A fault armed with the
//! `fault-injection` hook fails an allocation or a copy half-way; the previous point in time
//! must still restore exactly, and the operation must succeed when retried.

use crate::util::{unique, Mem};
use cd_core::fault::{disarm, inject, Fault};
use cd_core::*;

fn setup(mem: &Mem) -> CdHandle {
    let cd = create_cd(None, None, LoggingMode::Disabled, Some(&unique("atomic"))).unwrap();
    for i in 0..3 {
        mem.fill(i * 1000, 1000, i as u8 + 1);
    }
    // SAFETY: `mem` outlives the CD; nothing else touches it.
    unsafe {
        add_to_cd_via_copy(
            cd,
            &[mem.rw(0, 1000), mem.rw(1000, 1000), mem.rw(2000, 1000)],
        )
        .unwrap()
    };
    cd
}

fn scribble(mem: &Mem) {
    mem.fill(0, 3000, 0xEE);
}

fn check_first_point_in_time(cd: CdHandle, mem: &Mem) {
    scribble(mem);
    // SAFETY: as in `setup`.
    unsafe { restore_cd(cd).unwrap() };
    for i in 0..3 {
        assert!(
            mem.bytes(i * 1000, 1000).iter().all(|&b| b == i as u8 + 1),
            "range {i} restored"
        );
    }
}

#[test]
fn advance_failing_half_way_through_a_copy_changes_nothing() {
    let mem = Mem::new(3000);
    let cd = setup(&mem);
    let before = cd_entries(cd).unwrap();
    scribble(&mem);
    inject(Fault::Copy { bytes: 1500 });
    // SAFETY: as in `setup`.
    let err = unsafe { advance_cd_point_in_time(cd) }.unwrap_err();
    assert_eq!(err, CdError::InjectedFault("copy failed half-way"));
    assert_eq!(disarm(), None, "the fault fired");
    assert_eq!(
        cd_entries(cd).unwrap(),
        before,
        "labels unchanged: still READ_WRITE"
    );
    assert_eq!(cd_info(cd).unwrap().stats.advances, 0);
    check_first_point_in_time(cd, &mem);
    // Retried without the fault, the advance goes through.
    mem.fill(0, 3000, 9);
    // SAFETY: as above.
    assert_eq!(
        unsafe { advance_cd_point_in_time(cd) }
            .unwrap()
            .bytes_copied,
        3000
    );
    scribble(&mem);
    // SAFETY: as above.
    unsafe { restore_cd(cd).unwrap() };
    assert!(mem.bytes(0, 3000).iter().all(|&b| b == 9));
    commit_cd(cd).unwrap();
}

#[test]
fn advance_failing_to_allocate_changes_nothing() {
    let mem = Mem::new(3000);
    let cd = setup(&mem);
    scribble(&mem);
    inject(Fault::Allocation { successes: 0 });
    // SAFETY: as in `setup`.
    let err = unsafe { advance_cd_point_in_time(cd) }.unwrap_err();
    assert_eq!(err, CdError::InjectedFault("allocation failed"));
    check_first_point_in_time(cd, &mem);
    commit_cd(cd).unwrap();
}

#[test]
fn failed_advance_of_a_child_leaves_the_parent_alone() {
    let mem = Mem::new(3000);
    let parent = setup(&mem);
    let child = create_cd(Some(parent.into()), None, LoggingMode::Inherit, None).unwrap();
    let extra = Mem::new(64);
    // SAFETY: `extra` outlives the CDs.
    unsafe { add_to_cd_via_copy(child, &[extra.rw(0, 64), mem.rw(0, 100)]).unwrap() };
    let parent_before = cd_entries(parent).unwrap();
    inject(Fault::Copy { bytes: 100 });
    // SAFETY: as above.
    assert!(unsafe { advance_cd_point_in_time(child) }.is_err());
    assert_eq!(
        cd_entries(parent).unwrap(),
        parent_before,
        "no implicit commit happened"
    );
    assert!(cd_saved_bytes(parent, extra.addr(0), 64).is_err());
    commit_cd(child).unwrap();
    commit_cd(parent).unwrap();
}

#[test]
fn add_failing_half_way_adds_nothing() {
    let mem = Mem::new(3000);
    let cd = create_cd(
        None,
        None,
        LoggingMode::Disabled,
        Some(&unique("atomic-add")),
    )
    .unwrap();
    inject(Fault::Copy { bytes: 1999 });
    // SAFETY: `mem` outlives the CD.
    let err = unsafe {
        add_to_cd_via_copy(
            cd,
            &[mem.rw(0, 1000), mem.rw(1000, 1000), mem.rw(2000, 1000)],
        )
    };
    assert!(err.is_err());
    let info = cd_info(cd).unwrap();
    assert_eq!((info.ranges, info.stored_bytes, info.stats.adds), (0, 0, 0));
    inject(Fault::Allocation { successes: 0 });
    // SAFETY: as above. (100 bytes: up to 16 are kept inline, without an allocation.)
    assert!(unsafe { add_to_cd_via_copy(cd, &[mem.rw(0, 100)]) }.is_err());
    assert_eq!(cd_info(cd).unwrap().ranges, 0);
    commit_cd(cd).unwrap();
}

#[test]
fn restore_after_a_failed_advance_loop_is_exact() {
    // Many advances, every third one failing at a different point: after each failure the
    // last successful point in time restores exactly.
    let mem = Mem::new(3000);
    let cd = setup(&mem);
    let mut good = mem.bytes(0, 3000);
    for round in 1..=12u32 {
        for i in 0..3000 {
            mem.set(i, (i as u32 * round % 251) as u8);
        }
        // SAFETY: as in `setup`.
        unsafe { add_to_cd_via_copy(cd, &[mem.rw(0, 3000)]).unwrap() };
        if round % 3 == 0 {
            inject(Fault::Copy {
                bytes: (round as usize * 211) % 3000,
            });
            // SAFETY: as above.
            assert!(unsafe { advance_cd_point_in_time(cd) }.is_err());
            // SAFETY: as above.
            unsafe { restore_cd(cd).unwrap() };
            assert_eq!(mem.bytes(0, 3000), good, "round {round}");
        } else {
            // SAFETY: as above.
            unsafe { advance_cd_point_in_time(cd).unwrap() };
            good = mem.bytes(0, 3000);
        }
    }
    commit_cd(cd).unwrap();
}
