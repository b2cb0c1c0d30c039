//! Adversarial replays (issue 9's review): a re-execution rewound again before its replay was
//! consumed, while requests it posted are still open (`inflight.c` with `SECOND_FAULT_STEP`).
//! Every message carries tag 0 (`FIXED_TAG=1`): a receive left over from the rewound
//! re-execution would take a later step's message, and the results would differ from the
//! fault-free run's (or the last receive would wait for ever).

use super::{assert_isolated, assert_isolated_n, compile, launch, Run};
use std::sync::OnceLock;

/// `inflight.c`'s fault-free run with tag 0 on every message.
fn clean() -> &'static Run {
    static CLEAN: OnceLock<Run> = OnceLock::new();
    CLEAN.get_or_init(|| {
        launch(
            &compile("inflight"),
            "rewind-clean",
            "inflight rank",
            &[("FIXED_TAG", "1")],
        )
    })
}

/// Rank 1 faults at step 17 with its halo Irecv and Isend posted, then again during the
/// re-execution at step `second`, also after posting: two restores, one result.
/// `after_call`: `SECOND_AFTER_CALL` (see `inflight.c`).
fn faults_twice(second: &str, after_call: bool) -> Run {
    let faulty = launch(
        &compile("inflight"),
        &format!("rewind-{second}-{after_call}"),
        "inflight rank",
        &[
            ("FIXED_TAG", "1"),
            ("FAULT_RANK", "1"),
            ("SECOND_FAULT_STEP", second),
            ("SECOND_AFTER_CALL", if after_call { "1" } else { "0" }),
        ],
    );
    assert_isolated_n(clean(), &faulty, 1, 2);
    faulty
}

/// The second fault hits the step of the first, where the replay ends: the requests in flight
/// at the first fault are open again (virtual) when the second restore rewinds them.
#[test]
fn a_second_fault_at_the_step_in_flight_before_the_replay_ends_replays_exactly() {
    let _ = faults_twice("17", false);
}

/// The second fault hits an earlier step in the middle of the replay: the receive the first
/// re-execution posted there is open (virtual) when the second restore rewinds it.
#[test]
fn a_second_fault_in_the_middle_of_the_replay_replays_exactly() {
    let _ = faults_twice("13", false);
}

/// The second fault hits the step of the first after the first re-execution went live there
/// (a call past the log), which completed the receive in flight at the first fault with the
/// data drained by the first restore; the second restore rewinds that completion, and the
/// second re-execution needs the drained data again (the message was consumed).
#[test]
fn a_second_fault_after_the_replay_completed_a_drained_receive_replays_exactly() {
    let faulty = faults_twice("17", true);
    let f = &faulty.stats[1];
    assert_eq!(
        (f["receives.drained"], f["receives.cancelled"]),
        (1, 0),
        "the first restore drains the receive with its message, the second drains nothing: {f:?}"
    );
}

/// Requests a parent CD posted before a child began, still in flight when the child restores
/// (`overlap.c`): the child's restore must not drain them, and the parent's Waitall after the
/// child must complete them with the right messages.
#[test]
fn a_child_restore_leaves_the_parents_requests_in_flight_to_the_parent() {
    let exe = compile("overlap");
    let clean = launch(&exe, "overlap-clean", "overlap rank", &[]);
    let faulty = launch(
        &exe,
        "overlap-fault",
        "overlap rank",
        &[("FAULT_RANK", "1")],
    );
    assert_isolated(&clean, &faulty, 1);
}

/// The other side (`overlap.c` with `CHILD_POSTS=1`): requests a child posted and still in
/// flight after it committed are rolled back by its parent's restore (their CD ended), and
/// the re-execution posts them again; the results equal the fault-free run's.
#[test]
fn a_parent_restore_rolls_back_the_requests_of_its_committed_child() {
    let exe = compile("overlap");
    let posts = [("CHILD_POSTS", "1")];
    let clean = launch(&exe, "overlap-child-clean", "overlap rank", &posts);
    let faulty = launch(
        &exe,
        "overlap-child-fault",
        "overlap rank",
        &[("CHILD_POSTS", "1"), ("FAULT_RANK", "1")],
    );
    assert_isolated(&clean, &faulty, 1);
}
