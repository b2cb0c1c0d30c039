//! Issue 23 under Open MPI 5 with `mpirun --with-ft ulfm` (the third MPI family, see
//! `scripts/test.sh`); skipped under the families without ULFM (MPICH, Open MPI 4.1):
//! - the ULFM repair prototype `tests/ulfm/repair.c` (no libcd): rank 2 is SIGKILLed, the
//!   survivors detect it, revoke, shrink, agree, spawn a replacement, merge and reorder, and
//!   all 4 ranks run an allreduce on the repaired world;
//! - libcd in a ULFM job: a lost rank ends the job with one line per survivor, and the
//!   relaunch restores from the persisted version.

use super::persist::{fresh_cache, heat_lines, heat_restart_resumes};
use super::{compile, family, mpicc, mpirun, RANKS};
use crate::util::{check, work_dir, workspace};
use std::process::Command;

/// The replacement of rank 2 takes its number, every rank reports the allreduce over the
/// repaired world (the sum of `(rank + 1)^2`) and the old order, and `mpirun` exits cleanly.
#[test]
fn a_lost_rank_is_replaced_in_the_job_with_ulfm() {
    if !family().ulfm {
        eprintln!(
            "a_lost_rank_is_replaced_in_the_job_with_ulfm: skipped, {} is not Open MPI with \
             ULFM (mpi-ext.h has no MPIX_ERR_PROC_FAILED)",
            mpicc()
        );
        return;
    }
    let exe = work_dir().join("ulfm-repair");
    let out = Command::new(mpicc())
        .args(["-Wall", "-Wextra", "-Werror", "-std=gnu11", "-g", "-O1"])
        .arg(workspace().join("tests/ulfm/repair.c"))
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", mpicc()));
    check(&out, "compiling tests/ulfm/repair.c");

    let mut cmd = mpirun(&[("REPAIR_LOST", "2")]);
    // ULFM is off unless the launcher turns it on (`$MPIRUN` of scripts/test.sh does).
    if !std::env::var("MPIRUN").is_ok_and(|m| m.contains("--with-ft")) {
        cmd.args(["--with-ft", "ulfm"]);
    }
    // The repair takes about a second (most of it the replacement's MPI_Init); a hang (Open MPI
    // 5.0.11's MPI_Finalize after a failure, README.md) should not cost the usual 300 s.
    cmd.arg("-np")
        .arg(RANKS.to_string())
        .env("MPIEXEC_TIMEOUT", "60")
        .arg(&exe)
        .current_dir(work_dir());
    let out = cmd.output().expect("run mpirun");
    check(&out, "mpirun --with-ft ulfm tests/ulfm/repair.c");
    let stdout = String::from_utf8_lossy(&out.stdout);
    for rank in 0..RANKS {
        let expected = format!(
            "repair rank {rank} of {RANKS}: identity {rank} allreduce 30 order 0,1,2,3{}",
            if rank == 2 { " replacement" } else { "" }
        );
        assert!(
            stdout.lines().any(|l| l == expected),
            "no line `{expected}`:\n{stdout}"
        );
    }
    let timings: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("repair timing "))
        .collect();
    assert_eq!(timings.len(), RANKS, "{stdout}");
    for line in timings {
        eprintln!("{line}");
    }
}

/// A ULFM job of `heat_persist.c` with libcd in which rank 2 is lost at step 55 (its node's
/// cache with it): every survivor writes one line naming rank 2 and the version a relaunch
/// restores, and the job ends with libcd's status; the relaunch rebuilds rank 2's files and
/// resumes every rank from that version, bitwise equal to a fault-free run.
#[test]
fn a_lost_rank_ends_a_ulfm_job_clearly_and_the_relaunch_restores() {
    if !family().ulfm {
        eprintln!(
            "a_lost_rank_ends_a_ulfm_job_clearly_and_the_relaunch_restores: skipped, {} is not \
             Open MPI with ULFM",
            mpicc()
        );
        return;
    }
    let cache = fresh_cache("ulfm-lost");
    let cache_dir = cache.to_str().expect("UTF-8 path").to_owned();
    let mut cmd = mpirun(&[
        ("CD_REDSET_FAILURE_GROUP", "node{rank}"),
        ("HEAT_CACHE", &cache_dir),
        ("HEAT_KILL_AT", "55"),
        ("HEAT_KILL_RANK", "2"),
    ]);
    if !std::env::var("MPIRUN").is_ok_and(|m| m.contains("--with-ft")) {
        cmd.args(["--with-ft", "ulfm"]);
    }
    cmd.arg("-np")
        .arg(RANKS.to_string())
        .env("MPIEXEC_TIMEOUT", "120")
        .arg(compile("heat_persist"))
        .current_dir(work_dir());
    let out = cmd.output().expect("run mpirun");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(75),
        "the job ends with libcd's status:\n{text}"
    );
    for rank in [0, 1, 3] {
        let said: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with(&format!("libcd: rank {rank}: lost rank 2 in a ULFM job")))
            .collect();
        assert_eq!(said.len(), 1, "one line from rank {rank}:\n{text}");
        assert!(
            said[0].ends_with("relaunch it to restore CD \"heat\" from version 5 (xor)"),
            "{}",
            said[0]
        );
    }
    assert!(
        heat_lines(&text, " result ").is_empty(),
        "no rank finished:\n{text}"
    );
    std::fs::remove_dir_all(cache.join("node2")).expect("lose node 2's cache");
    std::fs::create_dir(cache.join("node2")).expect("an empty cache");
    heat_restart_resumes(
        &cache,
        &[(50, 5)],
        "the relaunch after a loss in a ULFM job",
    );
}
