//! The spec's use cases (section 3 and the examples of section 2), with the values of their
//! tables. Variables `x`, `y`, `z` are u32s at offsets 0, 4 and 8 of a `Mem`.

use crate::util::{saved_u32, unique, Mem};
use cd_core::*;

const X: usize = 0;
const Y: usize = 4;
const Z: usize = 8;

fn root(logging: LoggingMode) -> CdHandle {
    create_cd(None, None, logging, Some(&unique("root"))).unwrap()
}

fn child(parent: CdHandle) -> CdHandle {
    create_cd(Some(parent.into()), None, LoggingMode::Inherit, None).unwrap()
}

/// "One CD used to recover from a transient CPU failure": the loop of add, compute, restore on
/// error, advance otherwise. Faults at chosen steps; the result equals a fault-free run.
#[test]
fn transient_cpu_failure_loop() {
    const DATA: usize = 0; // 64 bytes of data
    const DONE: usize = 64; // compute_done
    let mem = Mem::new(68);
    let addrlist = [mem.rw(DATA, 64), mem.rw(DONE, 4)];
    let cd = create_cd(None, None, LoggingMode::Disabled, Some(&unique("cpu"))).unwrap();
    let faults_at = [3u32, 3, 7, 12];
    let mut pending_faults = faults_at.to_vec();
    let mut attempts = 0usize;
    let mut restores = 0;
    let mut done = false;
    while !done {
        // SAFETY: `mem` outlives the CD; nothing else touches it.
        unsafe { add_to_cd_via_copy(cd, &addrlist).unwrap() };
        // compute(): one step adds the step number to every data byte, sets done at step 15.
        let step = mem.get(DATA) as u32 + 1;
        for i in 0..64 {
            mem.set(DATA + i, mem.get(DATA + i).wrapping_add(1));
        }
        if step == 15 {
            mem.set_u32(DONE, 1);
        }
        attempts += 1;
        let compute_error = match pending_faults.iter().position(|&f| f == step) {
            Some(k) => {
                pending_faults.remove(k);
                true
            }
            None => false,
        };
        if compute_error {
            // SAFETY: as above.
            unsafe { restore_cd(cd).unwrap() };
            restores += 1;
            assert_eq!(
                mem.get(DATA) as u32,
                step - 1,
                "restored to the previous step"
            );
        } else if mem.u32(DONE) == 1 {
            done = true;
        } else {
            // SAFETY: as above.
            unsafe { advance_cd_point_in_time(cd).unwrap() };
        }
    }
    assert_eq!(restores, faults_at.len());
    assert_eq!(attempts, 15 + faults_at.len());
    assert!(mem.bytes(DATA, 64).iter().all(|&b| b == 15));
    assert_eq!(cd_info(cd).unwrap().stats.restores, restores as u64);
    commit_cd(cd).unwrap();
}

/// The program of STATIC 1 run up to time T4: root (empty), cd_a holds x=0, cd_b holds x=1,
/// application memory holds x=2.
fn static1_at_t4(mem: &Mem) -> (CdHandle, CdHandle, CdHandle) {
    let root = root(LoggingMode::Enabled);
    let cd_a = child(root);
    // SAFETY: `mem` outlives the CDs; nothing else touches it.
    unsafe { add_to_cd_via_copy(cd_a, &[mem.rw(X, 4)]).unwrap() };
    mem.set_u32(X, 1);
    let cd_b = child(cd_a);
    // SAFETY: as above.
    unsafe { add_to_cd_via_copy(cd_b, &[mem.rw(X, 4)]).unwrap() };
    mem.set_u32(X, 2);
    (root, cd_a, cd_b)
}

#[test]
fn static1_normal() {
    let mem = Mem::new(12);
    let (root, cd_a, cd_b) = static1_at_t4(&mem);
    assert_eq!(mem.u32(X), 2);
    assert_eq!(saved_u32(cd_b, &mem, X), 1);
    assert_eq!(saved_u32(cd_a, &mem, X), 0);
    for cd in [cd_b, cd_a, root] {
        commit_cd(cd).unwrap();
    }
}

#[test]
fn static1_restore_cd_b() {
    let mem = Mem::new(12);
    let (root, cd_a, cd_b) = static1_at_t4(&mem);
    // SAFETY: `mem` outlives the CDs.
    unsafe { restore_cd(cd_b).unwrap() };
    assert_eq!(mem.u32(X), 1);
    assert_eq!(saved_u32(cd_b, &mem, X), 1);
    assert_eq!(saved_u32(cd_a, &mem, X), 0);
    for cd in [cd_b, cd_a, root] {
        commit_cd(cd).unwrap();
    }
}

#[test]
fn static1_restore_cd_a() {
    let mem = Mem::new(12);
    let (root, cd_a, cd_b) = static1_at_t4(&mem);
    // SAFETY: `mem` outlives the CDs.
    let report = unsafe { restore_cd(cd_a).unwrap() };
    assert_eq!(mem.u32(X), 0, "parent wins");
    assert_eq!(report.discarded, 1);
    assert!(matches!(
        cd_info(cd_b),
        Err(CdError::StaleHandle {
            fate: Fate::DiscardedByRestore,
            ..
        })
    ));
    assert_eq!(saved_u32(cd_a, &mem, X), 0);
    commit_cd(cd_a).unwrap();
    commit_cd(root).unwrap();
}

#[test]
fn static1_commit_cd_b() {
    let mem = Mem::new(12);
    let (root, cd_a, cd_b) = static1_at_t4(&mem);
    commit_cd(cd_b).unwrap();
    assert_eq!(mem.u32(X), 2);
    assert!(matches!(
        cd_info(cd_b),
        Err(CdError::StaleHandle {
            fate: Fate::Committed,
            ..
        })
    ));
    assert_eq!(saved_u32(cd_a, &mem, X), 0, "parent wins");
    commit_cd(cd_a).unwrap();
    // Upon return from a(), the root contains x=0 (child wins).
    assert_eq!(saved_u32(root, &mem, X), 0);
    commit_cd(root).unwrap();
}

/// The program of STATIC 2 up to T4: cd_a holds x=0; cd_b holds x=1, y=0 and (if `with_z`)
/// z=0; memory holds x=2, y=1, z=1 (z only changes when it was added).
fn static2_at_t4(mem: &Mem, with_z: bool) -> (CdHandle, CdHandle, CdHandle) {
    let root = root(LoggingMode::Enabled);
    let cd_a = child(root);
    // SAFETY: `mem` outlives the CDs; nothing else touches it.
    unsafe { add_to_cd_via_copy(cd_a, &[mem.rw(X, 4)]).unwrap() };
    mem.set_u32(X, 1);
    let cd_b = child(cd_a);
    // SAFETY: as above.
    unsafe { add_to_cd_via_copy(cd_b, &[mem.rw(X, 4), mem.rw(Y, 4)]).unwrap() };
    if with_z {
        // SAFETY: as above.
        unsafe { add_to_cd_via_copy(cd_b, &[mem.rw(Z, 4)]).unwrap() };
    }
    mem.set_u32(X, 2);
    mem.set_u32(Y, 1);
    if with_z {
        mem.set_u32(Z, 1);
    }
    (root, cd_a, cd_b)
}

#[test]
fn static2_table() {
    for with_z in [true, false] {
        let z_now = u32::from(with_z);
        // Normal.
        let mem = Mem::new(12);
        let (root, cd_a, cd_b) = static2_at_t4(&mem, with_z);
        assert_eq!((mem.u32(X), mem.u32(Y), mem.u32(Z)), (2, 1, z_now));
        assert_eq!((saved_u32(cd_b, &mem, X), saved_u32(cd_b, &mem, Y)), (1, 0));
        assert_eq!(cd_saved_bytes(cd_b, mem.addr(Z), 4).is_ok(), with_z);
        assert_eq!(saved_u32(cd_a, &mem, X), 0);
        assert!(cd_saved_bytes(cd_a, mem.addr(Y), 4).is_err());

        // Restore CD_B: x=1, y=0, z=0.
        // SAFETY: `mem` outlives the CDs.
        unsafe { restore_cd(cd_b).unwrap() };
        assert_eq!((mem.u32(X), mem.u32(Y), mem.u32(Z)), (1, 0, 0));
        assert_eq!((saved_u32(cd_b, &mem, X), saved_u32(cd_b, &mem, Y)), (1, 0));

        // Back to T4, then restore CD_A: x=0 (parent wins), y=0 and z=0 (child wins).
        mem.set_u32(X, 2);
        mem.set_u32(Y, 1);
        mem.set_u32(Z, z_now);
        // SAFETY: as above.
        unsafe { restore_cd(cd_a).unwrap() };
        assert_eq!((mem.u32(X), mem.u32(Y), mem.u32(Z)), (0, 0, 0));
        assert!(cd_info(cd_b).is_err(), "CD_B discarded");
        assert_eq!(saved_u32(cd_a, &mem, X), 0);
        assert!(
            cd_saved_bytes(cd_a, mem.addr(Y), 4).is_err(),
            "restore never adds to the parent"
        );
        commit_cd(cd_a).unwrap();
        commit_cd(root).unwrap();

        // Commit CD_B: memory unchanged; cd_a holds x=0 (parent wins), y=0, z=0 (child wins).
        let mem = Mem::new(12);
        let (root, cd_a, cd_b) = static2_at_t4(&mem, with_z);
        commit_cd(cd_b).unwrap();
        assert_eq!((mem.u32(X), mem.u32(Y), mem.u32(Z)), (2, 1, z_now));
        assert_eq!((saved_u32(cd_a, &mem, X), saved_u32(cd_a, &mem, Y)), (0, 0));
        assert_eq!(
            cd_saved_bytes(cd_a, mem.addr(Z), 4).ok(),
            with_z.then_some(vec![0; 4])
        );
        commit_cd(cd_a).unwrap();
        // The root contains x=0, y=0, z=0 (conditionally).
        assert_eq!((saved_u32(root, &mem, X), saved_u32(root, &mem, Y)), (0, 0));
        assert_eq!(cd_saved_bytes(root, mem.addr(Z), 4).is_ok(), with_z);
        commit_cd(root).unwrap();
    }
}

/// "Delete_from_cd": calculator() adds its automatic variable y to the caller's CD and deletes
/// it before returning; main's later restore brings back x only.
#[test]
fn delete_from_cd_use_case() {
    let mem = Mem::new(12);
    let root = create_cd(None, None, LoggingMode::Disabled, Some(&unique("delete"))).unwrap();
    // SAFETY: `mem` outlives the CD; nothing else touches it.
    unsafe { add_to_cd_via_copy(root, &[mem.rw(X, 4)]).unwrap() }; // root contains x=0
    let mut main_faults = 1;
    loop {
        // calculator(root):
        mem.set_u32(Y, 0);
        // SAFETY: as above.
        unsafe { add_to_cd_via_copy(root, &[mem.rw(Y, 4)]).unwrap() }; // x=0 and y=0
        let mut calc_faults = 2;
        loop {
            mem.set_u32(Y, mem.u32(Y) + 1);
            if calc_faults > 0 {
                calc_faults -= 1;
                // SAFETY: as above.
                unsafe { restore_cd(root).unwrap() };
                assert_eq!((mem.u32(X), mem.u32(Y)), (0, 0), "restores x=0 and y=0");
                continue;
            }
            delete_from_cd(root, &[mem.rw(Y, 4)]).unwrap(); // root contains x=0
            break;
        }
        let answer = mem.u32(Y);
        assert_eq!(answer, 1);
        assert_eq!(cd_info(root).unwrap().ranges, 1);
        mem.set_u32(X, mem.u32(X) + 1);
        if main_faults > 0 {
            main_faults -= 1;
            mem.set_u32(Y, 77); // y is no longer in the CD: a restore leaves it alone
                                // SAFETY: as above.
            unsafe { restore_cd(root).unwrap() };
            assert_eq!((mem.u32(X), mem.u32(Y)), (0, 77));
            continue;
        }
        break;
    }
    assert_eq!(mem.u32(X), 1);
    assert!(matches!(
        delete_from_cd(root, &[mem.rw(Y, 4)]),
        Err(CdError::RangeNotFound { .. })
    ));
    commit_cd(root).unwrap();
}

/// "Sibling CDs" with threads instead of fork: each thread creates a child of the root,
/// protects its own row, recovers from its own faults in isolation, and commits; the root then
/// holds every row's initial value and a top-level restore brings them all back.
#[test]
fn sibling_cds_with_threads() {
    const ROWS: usize = 8;
    const STATE: usize = ROWS * 4; // x, y, z after the rows
    let mem = Mem::new(STATE + 12);
    for i in 0..ROWS {
        mem.set_u32(i * 4, 100 + i as u32);
    }
    mem.set_u32(STATE + 8, 9); // z, READ_ONLY
    let root = create_cd(None, None, LoggingMode::Enabled, Some(&unique("siblings"))).unwrap();
    let state = [mem.rw(STATE, 4), mem.rw(STATE + 4, 4), mem.ro(STATE + 8, 4)];
    // SAFETY: `mem` outlives the CDs; each thread below touches only its own row.
    unsafe { add_to_cd_via_copy(root, &state).unwrap() };
    let barrier = std::sync::Barrier::new(ROWS);
    std::thread::scope(|s| {
        for i in 0..ROWS {
            let (mem, barrier) = (&mem, &barrier);
            s.spawn(move || {
                let child = create_cd(Some(root.into()), None, LoggingMode::Inherit, None).unwrap();
                barrier.wait(); // all siblings exist at once
                                // SAFETY: this thread's row, which only it touches.
                unsafe { add_to_cd_via_copy(child, &[mem.rw(i * 4, 4)]).unwrap() };
                add_mpi_log_to_cd(child, vec![i as u8].into()).unwrap();
                let mut faults = i % 3;
                loop {
                    mem.set_u32(i * 4, mem.u32(i * 4) * 2); // compute(data_ptr)
                    if faults == 0 {
                        break;
                    }
                    faults -= 1;
                    // SAFETY: as above.
                    unsafe { restore_cd(child).unwrap() };
                    assert_eq!(mem.u32(i * 4), 100 + i as u32);
                }
                let info = cd_info(child).unwrap();
                assert!(info.had_siblings);
                assert_eq!(info.depth, 1);
                commit_cd(child).unwrap();
            });
        }
    });
    let info = cd_info(root).unwrap();
    assert_eq!(info.children, 0);
    assert_eq!(info.log_entries, 0, "sibling logs are discarded on commit");
    for i in 0..ROWS {
        assert_eq!(saved_u32(root, &mem, i * 4), 100 + i as u32, "child wins");
        assert_eq!(mem.u32(i * 4), 2 * (100 + i as u32));
    }
    mem.set_u32(STATE, 5);
    // A child terminated abnormally: top-level recovery.
    // SAFETY: `mem` outlives the CD; the threads are done.
    unsafe { restore_cd(root).unwrap() };
    for i in 0..ROWS {
        assert_eq!(mem.u32(i * 4), 100 + i as u32);
    }
    assert_eq!((mem.u32(STATE), mem.u32(STATE + 8)), (0, 9));
    commit_cd(root).unwrap();
}

/// "Committing CDs": the table of states as CD_B, CD_A and the root commit in turn.
#[test]
fn committing_cds_table() {
    let mem = Mem::new(12);
    let root = root(LoggingMode::Enabled);
    let cd_a = child(root);
    // SAFETY: `mem` outlives the CDs; nothing else touches it.
    unsafe { add_to_cd_via_copy(cd_a, &[mem.rw(X, 4)]).unwrap() };
    mem.set_u32(X, 1);
    let cd_b = child(cd_a);
    // SAFETY: as above.
    unsafe { add_to_cd_via_copy(cd_b, &[mem.rw(X, 4), mem.rw(Y, 4)]).unwrap() };
    mem.set_u32(X, 2);
    mem.set_u32(Y, 1);
    // Normal: CD_B X=1,Y=0; CD_A X=0; root empty.
    assert_eq!((saved_u32(cd_b, &mem, X), saved_u32(cd_b, &mem, Y)), (1, 0));
    assert_eq!(cd_info(cd_a).unwrap().ranges, 1);
    assert_eq!(cd_info(root).unwrap().ranges, 0);
    // Commit CD_B: CD_A X=0 (parent wins), Y=0 (child wins).
    commit_cd(cd_b).unwrap();
    assert_eq!((saved_u32(cd_a, &mem, X), saved_u32(cd_a, &mem, Y)), (0, 0));
    assert_eq!(cd_info(root).unwrap().ranges, 0);
    // Commit CD_A: root X=0, Y=0 (child wins).
    commit_cd(cd_a).unwrap();
    assert_eq!((saved_u32(root, &mem, X), saved_u32(root, &mem, Y)), (0, 0));
    // Commit root: discarded. Application memory X=2, Y=1 throughout.
    commit_cd(root).unwrap();
    assert!(cd_info(root).is_err());
    assert_eq!((mem.u32(X), mem.u32(Y)), (2, 1));
}

/// The broken example of "Preserving a CD's ability to restore": advancing the parent while a
/// child is uncommitted must be refused, and the parent keeps its point in time.
#[test]
fn advance_with_uncommitted_child_is_refused() {
    let mem = Mem::new(12);
    let parent = root(LoggingMode::Enabled);
    // SAFETY: `mem` outlives the CDs; nothing else touches it.
    unsafe { add_to_cd_via_copy(parent, &[mem.rw(X, 4)]).unwrap() }; // x=0
    mem.set_u32(X, 1);
    let child = create_cd(Some(parent.into()), None, LoggingMode::Enabled, None).unwrap();
    // SAFETY: as above.
    unsafe { add_to_cd_via_copy(child, &[mem.rw(Y, 4)]).unwrap() }; // y=0
    mem.set_u32(Y, 1);
    // SAFETY: as above.
    let refused = unsafe { advance_cd_point_in_time(parent) };
    assert_eq!(
        refused,
        Err(CdError::HasChildren {
            operation: "advance_cd_point_in_time",
            children: 1
        })
    );
    assert_eq!(
        saved_u32(parent, &mem, X),
        0,
        "the refused advance changed nothing"
    );
    // The right order: commit the child, then advance: T1 (x=1, y=1) becomes restorable.
    commit_cd(child).unwrap();
    // SAFETY: as above.
    let report = unsafe { advance_cd_point_in_time(parent).unwrap() };
    assert_eq!(report.bytes_copied, 8);
    mem.set_u32(X, 7);
    mem.set_u32(Y, 7);
    // SAFETY: as above.
    unsafe { restore_cd(parent).unwrap() };
    assert_eq!((mem.u32(X), mem.u32(Y)), (1, 1));
    commit_cd(parent).unwrap();
}

/// The overlap diagram of "Rules for adding data to CDs": 0-10 of 1's, then 5-15 of 2's: the
/// overlapping 5-10 keeps the 1's.
#[test]
fn overlap_diagram() {
    let mem = Mem::new(16);
    let cd = create_cd(None, None, LoggingMode::Disabled, Some(&unique("overlap"))).unwrap();
    mem.fill(0, 10, 1);
    // SAFETY: `mem` outlives the CD; nothing else touches it.
    unsafe { add_to_cd_via_copy(cd, &[mem.rw(0, 10)]).unwrap() };
    mem.fill(5, 10, 2);
    // SAFETY: as above.
    unsafe { add_to_cd_via_copy(cd, &[mem.rw(5, 10)]).unwrap() };
    assert_eq!(
        cd_saved_bytes(cd, mem.addr(0), 15).unwrap(),
        [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2]
    );
    assert_eq!(cd_info(cd).unwrap().stats.bytes_added, 15);
    mem.fill(0, 16, 9);
    // SAFETY: as above.
    unsafe { restore_cd(cd).unwrap() };
    assert_eq!(
        mem.bytes(0, 16),
        [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 9]
    );
    commit_cd(cd).unwrap();
}

/// The example of advance_cd_point_in_time: add 1 GB READ_WRITE, compute, advance (all 1 GB),
/// add 9 bytes READ_WRITE, advance: only 9 bytes are copied.
#[test]
fn one_gigabyte_then_nine_bytes() {
    const GIB: usize = 1 << 30;
    let data = Mem::new(GIB);
    let cd = create_cd(None, None, LoggingMode::Disabled, Some(&unique("1gb"))).unwrap();
    // SAFETY: `data` outlives the CD; nothing else touches it.
    unsafe { add_to_cd_via_copy(cd, &[data.rw(0, GIB)]).unwrap() };
    data.set(12345, 1); // compute
                        // SAFETY: as above.
    let first = unsafe { advance_cd_point_in_time(cd).unwrap() };
    assert_eq!(first.bytes_copied, GIB);
    assert!(
        cd_entries(cd)
            .unwrap()
            .iter()
            .all(|e| e.access == Access::ReadOnly),
        "demoted"
    );
    // SAFETY: as above.
    unsafe { add_to_cd_via_copy(cd, &[data.rw(GIB / 2, 9)]).unwrap() };
    assert_eq!(
        cd_info(cd).unwrap().stats.bytes_added,
        GIB as u64,
        "promotion copies nothing"
    );
    data.fill(GIB / 2, 9, 3);
    // SAFETY: as above.
    let second = unsafe { advance_cd_point_in_time(cd).unwrap() };
    assert_eq!(second.bytes_copied, 9);
    assert_eq!(cd_info(cd).unwrap().stats.bytes_advanced, GIB as u64 + 9);
    data.fill(GIB / 2 - 1, 11, 8);
    data.set(12345, 0);
    // SAFETY: as above.
    unsafe { restore_cd(cd).unwrap() };
    assert_eq!(
        data.bytes(GIB / 2 - 1, 11),
        [0, 3, 3, 3, 3, 3, 3, 3, 3, 3, 0]
    );
    assert_eq!(data.get(12345), 1);
    commit_cd(cd).unwrap();
}

/// The "Simple API Use Example" with a host stand-in for the GPU state: the outer loop re-adds
/// the four variables after every advance (promotion, no copy), the inner loop runs N_CD
/// kernels, faults restore and re-run the inner loop, and the result equals a fault-free run.
#[test]
fn simple_api_use_example() {
    const N_CD: u32 = 10;
    const GPU: usize = 0; // 256 bytes of "gpu_state"
    const RESULT: usize = 256;
    const I: usize = 260;
    const J: usize = 264;
    let mem = Mem::new(268);
    let as4 = [
        mem.rw(GPU, 256),
        mem.rw(RESULT, 4),
        mem.rw(I, 4),
        mem.rw(J, 4),
    ];
    let cd = create_cd(None, None, LoggingMode::Enabled, Some(&unique("simple"))).unwrap();
    let mut rng = 0x2545F4914F6CDD1Du64;
    let mut faults = 0;
    mem.set_u32(I, 1);
    while mem.u32(I) <= 20 {
        // SAFETY: `mem` outlives the CD; nothing else touches it.
        unsafe { add_to_cd_via_copy(cd, &as4).unwrap() };
        let mut error = false;
        mem.set_u32(J, 1);
        while mem.u32(J) <= N_CD {
            // run_gpu_kernel(): every state byte += i + j; result = sum of the state.
            let add = (mem.u32(I) + mem.u32(J)) as u8;
            (0..256).for_each(|k| mem.set(GPU + k, mem.get(GPU + k).wrapping_add(add)));
            let sum: u32 = (0..256).map(|k| mem.get(GPU + k) as u32).sum();
            mem.set_u32(RESULT, sum);
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            error = rng.is_multiple_of(17);
            if error {
                faults += 1;
                // SAFETY: as above.
                unsafe { restore_cd(cd).unwrap() };
                break;
            }
            mem.set_u32(J, mem.u32(J) + 1);
        }
        if !error {
            // The spec's for-loop increments i after the advance (and after a restore, which
            // would skip a failed first iteration); saving the next i keeps the intent exact.
            mem.set_u32(I, mem.u32(I) + 1);
            // SAFETY: as above.
            unsafe { advance_cd_point_in_time(cd).unwrap() };
        }
    }
    assert!(faults > 0, "the fault pattern must hit");
    // The fault-free result: every byte got sum over i in 1..=20, j in 1..=10 of (i + j).
    let expected = (1..=20u32)
        .flat_map(|i| (1..=N_CD).map(move |j| i + j))
        .fold(0u8, |a, v| a.wrapping_add(v as u8));
    assert!(mem.bytes(GPU, 256).iter().all(|&b| b == expected));
    let stats = cd_info(cd).unwrap().stats;
    assert_eq!(stats.restores, faults);
    assert_eq!(stats.advances, 20);
    commit_cd(cd).unwrap();
}
