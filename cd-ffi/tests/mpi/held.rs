//! Issue 9: communicators and persistent requests freed inside a logging CD that never
//! advances are held for replay only up to `CD_MPI_HELD_MAX` each; past it the oldest is
//! freed in MPI and a restore that would replay a call naming it is refused with a clear
//! error, instead of the run dying of MPICH's exhausted context ids (about 2048: without the
//! limit `MPI_Comm_dup` failed at the 2047th call). `tests/mpi/held_cap.c`, at `-np 2`.

use super::{compile, dup_loop_sum, launch_np};
use std::collections::BTreeMap;

/// The default limit on held handles of each kind.
const HELD_MAX: u64 = 256;

/// Runs `tests/mpi/held_cap.c` at `-np 2` with `env`: per rank, its output line and its
/// statistics.
fn held(tag: &str, env: &[(&str, &str)]) -> Vec<(String, BTreeMap<String, u64>)> {
    launch_np(&compile("held_cap"), 2, tag, "held rank ", env).per_rank()
}

/// Checks a refused restore's line: `CD_ERR_UNREPLAYABLE` (74), with the reason and the
/// remedy for a limit of `max`.
fn assert_refused(line: &str, rank: usize, max: u64) {
    let prefix = format!("held rank {rank} error 74 restore_cd: ");
    assert!(line.starts_with(&prefix), "{line}");
    assert!(
        line.contains(&format!(" (more than {max} "))
            && line.contains("freed while logging were held for replay")
            && line.contains("raise CD_MPI_HELD_MAX"),
        "{line}"
    );
}

/// 5000 `MPI_Comm_dup` + `MPI_Comm_free` (and 10000 persistent requests) in one logging CD
/// that never advances: the loop finishes with exact results, at most the limit of each kind
/// stays held (every handle beyond it freed in MPI), and a restore of that CD is refused,
/// naming why, rather than replaying with freed handles.
#[test]
fn handles_freed_in_a_cd_that_never_advances_stay_at_the_limit_and_its_restore_is_refused() {
    const N: u64 = 5000;
    let runs = held(
        "held-cap",
        &[("ITERATIONS", &N.to_string()), ("RESTORE_RANK", "1")],
    );
    assert_eq!(
        runs[0].0,
        format!("held rank 0 sum {} recoveries 0", dup_loop_sum(N))
    );
    assert_refused(&runs[1].0, 1, HELD_MAX);
    for (line, stats) in &runs {
        // a communicator and two persistent requests per iteration, none released by an
        // advance: all but the limit of each kind freed in MPI while the loop ran
        assert_eq!(stats["handles.held"], 3 * N, "{line}: {stats:?}");
        assert_eq!(
            stats["handles.held"] - stats["handles.released"],
            2 * HELD_MAX,
            "{line}: {stats:?}"
        );
        assert_eq!(
            stats["handles.freed_early"], stats["handles.released"],
            "{line}: {stats:?}"
        );
    }
    assert_eq!(runs[1].1["records.replayed"], 0, "{:?}", runs[1].1);
}

/// The limit is `CD_MPI_HELD_MAX`: with 8, a restore after 50 iterations is refused too.
#[test]
fn the_limit_on_held_handles_is_configurable() {
    let runs = held(
        "held-cap-8",
        &[
            ("ITERATIONS", "50"),
            ("RESTORE_RANK", "0"),
            ("CD_MPI_HELD_MAX", "8"),
        ],
    );
    assert_refused(&runs[0].0, 0, 8);
    assert_eq!(
        runs[1].0,
        format!("held rank 1 sum {} recoveries 0", dup_loop_sum(50))
    );
    for (line, stats) in &runs {
        assert_eq!(
            stats["handles.held"] - stats["handles.released"],
            16,
            "{line}: {stats:?}"
        );
    }
}

/// Under the limit nothing is freed early and the restore re-executes the whole loop from
/// the log, alone: the same result, every record replayed without a mismatch.
#[test]
fn a_restore_crossing_fewer_frees_than_the_limit_still_replays() {
    const N: u64 = 80;
    let runs = held(
        "held-under",
        &[("ITERATIONS", &N.to_string()), ("RESTORE_RANK", "1")],
    );
    assert_whole_loop_replayed(&runs, N);
}

/// Communicators made in a CD and freed past the limit in a child that then advances: the
/// child's log (and its mark) is dropped, but the CD's own log still holds the records of
/// their making, so it was marked too, and its restore is refused.
#[test]
fn a_refusal_survives_the_discard_of_the_child_log_that_held_the_frees() {
    const N: u64 = 300;
    let runs = held(
        "held-child",
        &[
            ("ITERATIONS", &N.to_string()),
            ("RESTORE_RANK", "1"),
            ("FREE_IN_CHILD", "1"),
        ],
    );
    assert_eq!(runs[0].0, format!("held rank 0 sum {} recoveries 0", N * N));
    assert_refused(&runs[1].0, 1, HELD_MAX);
    assert!(
        runs[1].0.contains("MPI_Comm_free (more than"),
        "{}",
        runs[1].0
    );
    for (line, stats) in &runs {
        assert_eq!(stats["handles.held"], N, "{line}: {stats:?}");
        assert_eq!(stats["handles.released"], N - HELD_MAX, "{line}: {stats:?}");
        assert_eq!(
            stats["handles.freed_early"],
            N - HELD_MAX,
            "{line}: {stats:?}"
        );
    }
}

/// The loop in a child CD advanced every iteration: each advance commits the child's log
/// (the records naming the iteration's handles) into the CD's, so the handles stay held
/// until the CD can no longer replay them, and a restore of the CD replays the whole loop
/// with valid handles.
#[test]
fn handles_freed_in_a_child_that_advances_stay_held_while_its_parent_can_replay_them() {
    const N: u64 = 60;
    let runs = held(
        "held-advancing-child",
        &[
            ("ITERATIONS", &N.to_string()),
            ("RESTORE_RANK", "1"),
            ("CHILD_ADVANCES", "1"),
        ],
    );
    // none released while the CD's log held their records (it commits after the loop)
    assert_whole_loop_replayed(&runs, N);
}

/// Rank 1 restored and re-executed all `n` iterations from its log (every record replayed, no
/// mismatch), both ranks got the fault-free sum, and no handle was freed in MPI meanwhile.
fn assert_whole_loop_replayed(runs: &[(String, BTreeMap<String, u64>)], n: u64) {
    for (rank, (line, stats)) in runs.iter().enumerate() {
        assert_eq!(
            line,
            &format!("held rank {rank} sum {} recoveries {rank}", dup_loop_sum(n))
        );
        assert_eq!(stats["handles.held"], 3 * n, "{stats:?}");
        assert_eq!(stats["handles.released"], 0, "{stats:?}");
    }
    let faulty = &runs[1].1;
    assert!(
        faulty["records.replayed"] > 0 && faulty["replay.mismatches"] == 0,
        "{faulty:?}"
    );
}
