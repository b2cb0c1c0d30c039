//! Issue 9, coverage: the calls that MPI-3's and MPI-4's later chapters added, logged and
//! replayed in isolation (`tests/mpi/mpi4.c`), MPI-4's large-count forms too
//! (`tests/mpi/largecount.c`), or refused at restore when they cannot be replayed
//! (`tests/mpi/unreplayable.c`), and communicators and persistent requests freed in a logged
//! loop, released while it runs instead of at `MPI_Finalize` (`tests/mpi/comm_churn.c`).
//!
//! MPICH 4 and Open MPI 5 have the MPI-4 calls (Open MPI 5 but for
//! `MPI_Intercomm_create_from_groups` and the large-count forms, its headers saying
//! `MPI_VERSION` 3); under Open MPI 4.1 the program leaves them out and the test says so, while
//! `MPI_Comm_dup_with_info` (MPI-3) is checked under every family.

use super::{
    assert_isolated, assert_isolated_polling, compile, dup_loop_sum, family, launch, launch_np,
};
use crate::util::{lib_dir, work_dir, workspace};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Every rank's result bitwise equal to the fault-free run's, the other ranks' calls equal
/// to theirs, and each wrapped call re-executed by the faulty rank.
#[test]
fn mpi3_and_mpi4_calls_replay_in_isolation() {
    let exe = compile("mpi4");
    let clean = launch(&exe, "mpi4-clean", "mpi4 rank", &[]);
    let faulty = launch(
        &exe,
        "mpi4-fault",
        "mpi4 rank",
        &[("FAULT_RANK", "2"), ("FAULT_ROUND", "5")],
    );
    // Test and Testall poll until a flag is set, Waitsome until both requests completed (in
    // one call or two): how often varies from run to run.
    assert_isolated_polling(
        &clean,
        &faulty,
        2,
        1,
        &["MPI_Test", "MPI_Testall", "MPI_Waitsome"],
    );
    let with_mpi4 = clean.lines[&0].contains(" mpi4 1 ");
    let mut re_executed = vec!["MPI_Comm_dup_with_info", "MPI_Sendrecv"];
    if with_mpi4 {
        re_executed.extend([
            "MPI_Isendrecv",
            "MPI_Isendrecv_replace",
            "MPI_Bcast_init",
            "MPI_Gather_init",
            "MPI_Alltoall_init",
            "MPI_Scan_init",
            "MPI_Startall",
            "MPI_Comm_idup_with_info",
            "MPI_Comm_create_from_group",
        ]);
        if family().mpi_version >= 4 {
            re_executed.push("MPI_Intercomm_create_from_groups");
        }
    } else {
        eprintln!(
            "mpi3_and_mpi4_calls_replay_in_isolation: the MPI-4 calls (Isendrecv, persistent \
             collectives, Comm_create_from_group, ...) are skipped: this MPI's headers do not \
             declare them; MPI_Comm_dup_with_info was checked"
        );
    }
    let (f, c) = (&faulty.stats[2], &clean.stats[2]);
    for call in re_executed {
        let key = format!("calls.{call}");
        assert!(f[&key] > c[&key], "{call} was not re-executed: {f:?}");
    }
}

/// Runs `tests/mpi/comm_churn.c` at `-np 2` with `env`: per rank, its output line and its
/// statistics.
fn churn(tag: &str, env: &[(&str, &str)]) -> Vec<(String, BTreeMap<String, u64>)> {
    launch_np(&compile("comm_churn"), 2, tag, "churn rank ", env).per_rank()
}

/// Thousands of communicators (and persistent requests) made and freed under a logging CD
/// advanced every iteration, at `-np 2`: each is released once the advance discarded the
/// log that could replay its making. Held until `MPI_Finalize` instead (as before), they
/// exhaust MPICH's context ids (about 2048) and `MPI_Comm_dup` fails.
#[test]
fn communicators_freed_in_a_logged_loop_are_released_once_no_log_can_replay_them() {
    const N: u64 = 5000;
    let runs = churn("churn", &[("ITERATIONS", &N.to_string())]);
    for (rank, (line, stats)) in runs.iter().enumerate() {
        assert_eq!(
            line,
            &format!("churn rank {rank} sum {} recoveries 0", dup_loop_sum(N))
        );
        // a communicator and two persistent requests per iteration
        assert_eq!(stats["handles.held"], 3 * N, "{stats:?}");
        // all but the last iteration's, whose CD ends after the last free
        assert!(
            stats["handles.released"] >= 3 * (N - 1),
            "held handles were not released: {stats:?}"
        );
    }
}

/// Children committed into a logging root: their frees are held until the root advances,
/// and a restore of the root in the middle of a block re-executes the block's
/// `MPI_Comm_dup`s from the log, handing out held communicators that the replayed
/// Allgather still uses (a communicator released too early is an MPI error there).
#[test]
fn communicators_freed_in_committed_children_are_held_while_the_parent_can_replay_them() {
    const N: u64 = 3000;
    let runs = churn(
        "churn-nested",
        &[
            ("ITERATIONS", &N.to_string()),
            ("NESTED", "10"),
            ("FAULT_RANK", "1"),
            ("FAULT_ITER", "1234"),
        ],
    );
    for (rank, (line, stats)) in runs.iter().enumerate() {
        assert_eq!(
            line,
            &format!(
                "churn rank {rank} sum {} recoveries {rank}",
                dup_loop_sum(N)
            )
        );
        assert!(
            stats["handles.released"] >= 3 * (N - 10),
            "held handles were not released at the root's advances: {stats:?}"
        );
    }
    let faulty = &runs[1].1;
    assert!(
        faulty["records.replayed"] > 0 && faulty["replay.mismatches"] == 0,
        "{faulty:?}"
    );
}

/// Partitioned communication, the large-count forms with a count beyond `INT_MAX`, a
/// large-count MPI-IO write, and `MPI_Start` of a persistent request made beyond `INT_MAX`
/// pass through and mark the log: a restore that would replay them refuses
/// (`CD_ERR_UNREPLAYABLE`) naming the first one (for the start, the call that made the
/// request and why), and succeeds once an advance discarded the log. Under both families, a
/// start of a persistent request made on another thread is refused saying so.
#[test]
fn partitioned_and_large_count_calls_make_a_restore_refuse_naming_them() {
    let exe = compile("unreplayable");
    let run = launch(&exe, "unreplayable", "unreplayable rank", &[]);
    // Open MPI 4.1 and 5 have no large-count forms (MPI_VERSION 3): only the last two restores
    // run there.
    let mpi4 = family().mpi_version >= 4;
    if !mpi4 {
        eprintln!(
            "partitioned_and_large_count_calls_make_a_restore_refuse_naming_them: skipped \
             the MPI-4 calls (Open MPI has no partitioned or large-count functions)"
        );
    }
    let thread = "refused:MPI_Start of a persistent request made on another thread restored";
    for (rank, line) in &run.lines {
        let (maker, pieces) = if rank % 2 == 0 {
            ("MPI_Send_init_c", "MPI_Psend_init refused:MPI_Send_c")
        } else {
            ("MPI_Recv_init_c", "MPI_Precv_init refused:MPI_Recv_c")
        };
        let expected = if mpi4 {
            format!(
                "refused:{pieces} refused:MPI_Bcast_c refused:MPI_File_write_at_c \
                 refused:MPI_Start of a persistent request made by {maker} with a count beyond \
                 INT_MAX {thread}"
            )
        } else {
            thread.to_owned()
        };
        assert_eq!(line, &format!("unreplayable rank {rank} {expected}"));
        if mpi4 {
            assert!(
                run.stats[*rank]["calls.unreplayable"] >= 4,
                "{:?}",
                run.stats[*rank]
            );
        }
    }
    assert_eq!(run.lines.len(), super::RANKS, "{}", run.stdout);
}

/// The large-count forms (`MPI_X_c`, all that mpi4py 4 calls under MPICH 4) with counts that
/// fit in an `int`: logged and replayed like their int forms, each rank's result bitwise equal
/// to the fault-free run's, the other ranks' calls unchanged, every record of the re-executed
/// rounds replayed, and nothing passed through. Point-to-point, persistent and the common
/// collectives, then the neighbourhood collectives (on a Cartesian and a distributed-graph
/// ring), the w-collectives and every nonblocking collective.
#[test]
fn large_count_calls_replay_in_isolation() {
    let exe = compile("largecount");
    let clean = launch(&exe, "largecount-clean", "largecount rank", &[]);
    if clean.lines[&0].ends_with(" skipped") {
        eprintln!("large_count_calls_replay_in_isolation: skipped, MPI_VERSION < 4 (no MPI_X_c)");
        return;
    }
    let faulty = launch(
        &exe,
        "largecount-fault",
        "largecount rank",
        &[("FAULT_RANK", "2"), ("FAULT_ROUND", "4")],
    );
    assert_isolated(&clean, &faulty, 2);
    let (f, c) = (&faulty.stats[2], &clean.stats[2]);
    // every round logs the same records; restored to round 2 after round 4, the rank
    // re-executed rounds 2 to 4 (half of the 6) from its log, every record of them replayed,
    // and logged again only what it ran live
    assert_eq!(f["records.logged"], c["records.logged"], "{f:?}");
    assert_eq!(2 * f["records.replayed"], c["records.logged"], "{f:?}");
    for call in [
        "MPI_Send_c",
        "MPI_Recv_c",
        "MPI_Isend_c",
        "MPI_Irecv_c",
        "MPI_Sendrecv_c",
        "MPI_Mrecv_c",
        "MPI_Isendrecv_replace_c",
        "MPI_Send_init_c",
        "MPI_Recv_init_c",
        "MPI_Bcast_c",
        "MPI_Allreduce_c",
        "MPI_Alltoallv_c",
        "MPI_Gatherv_c",
        "MPI_Iallgatherv_c",
        "MPI_Reduce_scatter_block_c",
        // the second phase: neighbourhood, w- and the other nonblocking collectives
        "MPI_Neighbor_allgather_c",
        "MPI_Neighbor_allgatherv_c",
        "MPI_Neighbor_alltoall_c",
        "MPI_Neighbor_alltoallv_c",
        "MPI_Neighbor_alltoallw_c",
        "MPI_Ineighbor_allgather_c",
        "MPI_Ineighbor_allgatherv_c",
        "MPI_Ineighbor_alltoall_c",
        "MPI_Ineighbor_alltoallv_c",
        "MPI_Ineighbor_alltoallw_c",
        "MPI_Alltoallw_c",
        "MPI_Ialltoallw_c",
        "MPI_Ibcast_c",
        "MPI_Ireduce_c",
        "MPI_Iallreduce_c",
        "MPI_Iscan_c",
        "MPI_Iexscan_c",
        "MPI_Igather_c",
        "MPI_Igatherv_c",
        "MPI_Iscatter_c",
        "MPI_Iscatterv_c",
        "MPI_Iallgather_c",
        "MPI_Ialltoall_c",
        "MPI_Ialltoallv_c",
        "MPI_Ireduce_scatter_c",
        "MPI_Ireduce_scatter_block_c",
    ] {
        let key = format!("calls.{call}");
        assert!(f[&key] > c[&key], "{call} was not re-executed: {f:?}");
        // named as called: the int form of none of them is made
        let int = format!("calls.{}", call.strip_suffix("_c").unwrap());
        assert_eq!(f.get(&int).copied().unwrap_or(0), 0, "{f:?}");
    }
    for run in [&clean, &faulty] {
        for stats in &run.stats {
            assert_eq!(stats["calls.unreplayable"], 0, "{stats:?}");
        }
    }
}

/// The Python interpreter of the venv holding mpi4py built against MPICH (`CD_MPI4PY_VENV`, or
/// `scripts/third-party.sh`'s `<target>/third-party/mpich/venv`), if there is one.
fn mpi4py_python() -> Option<PathBuf> {
    let venv = std::env::var_os("CD_MPI4PY_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let target = std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| workspace().join("target"));
            let target = if target.is_absolute() {
                target
            } else {
                workspace().join(target)
            };
            target.join("third-party/mpich/venv")
        });
    let python = venv.join("bin/python");
    python.is_file().then_some(python)
}

/// An unmodified mpi4py program (`tests/mpi/largecount.py`) under `LD_PRELOAD=libcd.so`,
/// calling the CD API through ctypes: mpi4py 4 built against MPICH 4 calls only the
/// large-count forms, and the faulty rank's re-execution is served from its log, each rank's
/// result bitwise equal to the fault-free run's and the other ranks' calls unchanged. Needs
/// the venv `scripts/third-party.sh` builds; skipped without it, and under Open MPI (no
/// large-count forms).
#[test]
fn an_mpi4py_program_replays_in_isolation() {
    let Some(python) = mpi4py_python().filter(|_| !family().open_mpi) else {
        eprintln!(
            "an_mpi4py_program_replays_in_isolation: skipped, it needs the MPICH build and \
             an mpi4py venv built against MPICH (scripts/third-party.sh builds one; \
             CD_MPI4PY_VENV names another)"
        );
        return;
    };
    // mpirun runs the interpreter on the script through a one-line wrapper
    let wrapper = work_dir().join("mpi-largecount-py");
    let script = workspace().join("tests/mpi/largecount.py");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nexec '{}' '{}' \"$@\"\n",
            python.display(),
            script.display()
        ),
    )
    .expect("write the wrapper");
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("make the wrapper executable");
    let libcd = lib_dir().join("libcd.so");
    let preload = ("LD_PRELOAD", libcd.to_str().expect("UTF-8 path"));
    let prefix = "largecount-py rank";
    let clean = launch(&wrapper, "largecount-py-clean", prefix, &[preload]);
    let faulty = launch(
        &wrapper,
        "largecount-py-fault",
        prefix,
        &[preload, ("FAULT_RANK", "2"), ("FAULT_ROUND", "4")],
    );
    assert_isolated(&clean, &faulty, 2);
    let (f, c) = (&faulty.stats[2], &clean.stats[2]);
    for call in [
        "MPI_Sendrecv_c",
        "MPI_Send_c",
        "MPI_Allreduce_c",
        "MPI_Alltoallv_c",
    ] {
        let key = format!("calls.{call}");
        assert!(f[&key] > c[&key], "{call} was not re-executed: {f:?}");
    }
    for stats in clean.stats.iter().chain(&faulty.stats) {
        assert_eq!(stats["calls.unreplayable"], 0, "{stats:?}");
    }
}

/// Runs `tests/mpi/mismatch.c` with `MISMATCH_CALL=call` (an MPI-4 case): rank 1's
/// re-execution must fail with a clear mismatch that wrote nothing, counted once. `test` names
/// the test in the message of a skip (the call's MPI version lacks it: see `mismatch.c`).
fn mpi4_mismatch(call: &str, test: &str) {
    let exe = compile("mismatch");
    let run = launch(
        &exe,
        &format!("mismatch-{call}"),
        "mismatch rank",
        &[("MISMATCH_CALL", call)],
    );
    if run.lines[&1].starts_with("mismatch rank 1 skipped") {
        eprintln!("{test}: skipped, {}", run.lines[&1]);
        return;
    }
    assert!(
        run.lines[&1].starts_with("mismatch rank 1 ok: CD replay mismatch"),
        "{}",
        run.stdout
    );
    assert_eq!(run.stats[1]["replay.mismatches"], 1);
}

/// A receive logged as `MPI_Recv_c` and re-executed as `MPI_Recv` with the same arguments:
/// another call, so a clear mismatch naming both, and nothing written.
#[test]
fn a_large_count_call_re_executed_as_its_int_form_is_a_clear_error() {
    mpi4_mismatch(
        "large",
        "a_large_count_call_re_executed_as_its_int_form_is_a_clear_error",
    );
}

/// `MPI_Isendrecv` re-executed with the same send side and another receive tag: the receive
/// side, which its record keeps after the header, makes it a clear mismatch, and nothing is
/// written into the receive buffer.
#[test]
fn an_isendrecv_receiving_otherwise_on_re_execution_is_a_clear_error() {
    mpi4_mismatch(
        "isendrecv",
        "an_isendrecv_receiving_otherwise_on_re_execution_is_a_clear_error",
    );
}
