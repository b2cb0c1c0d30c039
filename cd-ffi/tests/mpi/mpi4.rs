//! Issue 9, coverage: the calls that MPI-3's and MPI-4's later chapters added, logged and
//! replayed in isolation (`tests/mpi/mpi4.c`), and communicators and persistent requests freed
//! in a logged loop, released while it runs instead of at `MPI_Finalize`
//! (`tests/mpi/comm_churn.c`).
//!
//! Only MPICH 4 has the MPI-4 calls; under Open MPI 4.1 the program leaves them out (it is
//! compiled against headers with `MPI_VERSION` 3) and the test says so, while
//! `MPI_Comm_dup_with_info` (MPI-3) is checked under both families.

use super::{assert_isolated_polling, compile, launch, mpirun};
use crate::util::{check, work_dir};
use std::collections::BTreeMap;

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
            "MPI_Intercomm_create_from_groups",
        ]);
    } else {
        eprintln!(
            "mpi3_and_mpi4_calls_replay_in_isolation: the MPI-4 calls (Isendrecv, persistent \
             collectives, Comm_create_from_group, ...) are skipped: this MPI's headers have \
             MPI_VERSION < 4; MPI_Comm_dup_with_info was checked"
        );
    }
    let (f, c) = (&faulty.stats[2], &clean.stats[2]);
    for call in re_executed {
        let key = format!("calls.{call}");
        assert!(f[&key] > c[&key], "{call} was not re-executed: {f:?}");
    }
}

/// Thousands of communicators (and persistent requests) made and freed under a logging CD
/// advanced every iteration, at `-np 2`: each is released once the advance discarded the
/// log that could replay its making. Held until `MPI_Finalize` instead, they exhaust MPICH's
/// context ids (about 2048) and `MPI_Comm_dup` fails.
#[test]
fn communicators_freed_in_a_logged_loop_are_released_once_no_log_can_replay_them() {
    const ITERATIONS: u64 = 5000;
    let exe = compile("comm_churn");
    let stats_prefix = work_dir().join("stats-churn.");
    let iterations = ITERATIONS.to_string();
    let mut cmd = mpirun(&[("ITERATIONS", &iterations)]);
    let timeout = std::env::var("MPIEXEC_TIMEOUT").unwrap_or_else(|_| "280".to_owned());
    cmd.args(["-np", "2"])
        .env("MPIEXEC_TIMEOUT", &timeout)
        .env("CD_MPI_STATS", &stats_prefix)
        .arg(&exe)
        .current_dir(work_dir());
    let out = cmd.output().expect("run mpirun");
    check(&out, "mpirun comm_churn");
    let stdout = String::from_utf8_lossy(&out.stdout);
    // sum over i of the Allreduce (2i + 1) and of the value received (i)
    let n = ITERATIONS;
    let expected = n * n + n * (n - 1) / 2;
    for rank in 0..2 {
        assert!(
            stdout.contains(&format!("churn rank {rank} sum {expected}\n")),
            "{stdout}"
        );
        let text = std::fs::read_to_string(format!("{}{rank}", stats_prefix.display()))
            .expect("statistics");
        let stats: BTreeMap<&str, u64> = text
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(k, v)| (k, v.parse().expect("a count")))
            .collect();
        // a communicator and two persistent requests per iteration
        assert_eq!(stats["handles.held"], 3 * n, "{stats:?}");
        // all but the last iteration's, whose CD commits into no logging parent only after
        // the last free
        assert!(
            stats["handles.released"] >= 3 * (n - 1),
            "held handles were not released: {stats:?}"
        );
    }
}
