//! Issue 23's groundwork: the ULFM repair prototype `tests/ulfm/repair.c` (no libcd) under
//! Open MPI 5 with `mpirun --with-ft ulfm` (the third MPI family, see `scripts/test.sh`):
//! rank 2 is SIGKILLed, the survivors detect it, revoke, shrink, agree, spawn a replacement,
//! merge and reorder, and all 4 ranks run an allreduce on the repaired world. Skipped under
//! the families without ULFM (MPICH, Open MPI 4.1).

use super::{family, mpicc, mpirun, RANKS};
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
