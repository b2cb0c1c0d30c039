//! Multi-rank tests: run the test driver under MPICH's `mpirun` and check its verdict.
//!
//! Each launch runs many scenarios inside one job (see `src/bin/cd-redset-testdriver.rs`);
//! ranks outnumber the cores here, and MPICH busy-polls, so launches are few and the 8-rank
//! ones use large pieces. Failure groups are simulated with `CD_REDSET_FAILURE_GROUP`.
//! A missing `mpirun` fails the tests (CI installs MPI); they never pass silently.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;

/// mpirun jobs are run one at a time: they compete for the same two cores.
static SERIAL: Mutex<()> = Mutex::new(());

fn mpirun() -> String {
    std::env::var("MPIRUN").unwrap_or_else(|_| "mpirun".to_string())
}

fn scratch(name: &str) -> PathBuf {
    let base = if std::path::Path::new("/dev/shm").is_dir() {
        PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    base.join(format!("cd-redset-test-{}-{name}", std::process::id()))
}

/// Runs the driver on `np` ranks with `args`; panics with its output unless every check passed.
fn run_driver(name: &str, np: usize, group_template: &str, args: &[&str]) {
    let _guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch(name);
    let _ = std::fs::remove_dir_all(&dir);
    let started = std::time::Instant::now();
    let out = Command::new(mpirun())
        .args([
            "-np",
            &np.to_string(),
            env!("CARGO_BIN_EXE_cd-redset-testdriver"),
        ])
        .arg(&dir)
        .args(args)
        .env("MPIEXEC_TIMEOUT", "280")
        .env("CD_REDSET_FAILURE_GROUP", group_template)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run `{}` ({e}): the multi-rank tests need MPI (MPICH) installed",
                mpirun()
            )
        });
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!(
        "{name}: {np} ranks, {:.1}s\n{stdout}",
        started.elapsed().as_secs_f64()
    );
    let verdict = stdout
        .lines()
        .rev()
        .find(|l| l.contains(" passed, "))
        .unwrap_or("");
    let failed_zero = verdict.ends_with(", 0 failed");
    assert!(
        out.status.success() && failed_zero,
        "{name} failed (status {:?})\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
}

/// Every scheme at 4 ranks (one failure group each): every combination of lost ranks at the
/// scheme's limit and one beyond, both loss modes, three datasets, small pieces.
#[test]
fn four_ranks_all_schemes_full_matrix() {
    run_driver(
        "np4",
        4,
        "node{rank}",
        &["--schemes", "single,partner1,partner2,xor,rs2,rs3"],
    );
}

/// 8 ranks, every combination of lost ranks for XOR and RS k=2 (the limit in both loss modes,
/// one beyond in the data-plus-redundancy mode); larger pieces.
#[test]
fn eight_ranks_full_matrix() {
    run_driver(
        "np8",
        8,
        "node{rank}",
        &[
            "--lean",
            "--schemes",
            "xor,rs2",
            "--datasets",
            "mixed",
            "--piece",
            "1048576",
        ],
    );
}

/// 8 ranks, RS k=3, PARTNER R=1 and R=2 and SINGLE: sampled loss patterns (two at the limit,
/// two beyond) and every dataset.
#[test]
fn eight_ranks_sampled() {
    run_driver(
        "np8q",
        8,
        "node{rank}",
        &[
            "--schemes",
            "rs3,partner1,partner2,single",
            "--quick",
            "--piece",
            "1048576",
        ],
    );
}

/// 8 ranks on 4 simulated nodes of 2: sets never hold two ranks of one node, so losing a whole
/// node is one loss per set and XOR rebuilds it; losing two nodes is beyond XOR.
#[test]
fn eight_ranks_two_per_node_lose_nodes() {
    run_driver(
        "np8nodes",
        8,
        "node{rank/2}",
        &[
            "--schemes",
            "xor,rs2",
            "--datasets",
            "mixed",
            "--unit",
            "2",
            "--set-size",
            "4",
            "--piece",
            "1048576",
        ],
    );
}
