//! `examples/c/simple_gpu.c` and `examples/fortran/simple_gpu.f90`, the spec's Simple API Use
//! Example with a simulated GPU: run with a high fault rate, they must meet faults and end
//! with the result of a fault-free run (each checks it and exits nonzero otherwise).
//!
//! `examples/c/heat_mpi.c` and `examples/fortran/heat_mpi.f90`, a heat equation over MPI whose
//! CD logs MPI traffic: compiled with `mpicc` / `mpif90` and run at `-np 4` under `mpirun`
//! (MPICH), fault-free and then with a fault on rank 2, which must recover alone from the MPI
//! log and end bitwise equal to the fault-free run.

use crate::mpi_launch::Mpirun;
use crate::util::{
    check, compile_c, compile_fortran, library_path, pkg_config, prefix, run, work_dir, workspace,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

fn faults_met(stdout: &str) -> u64 {
    stdout
        .split_whitespace()
        .zip(stdout.split_whitespace().skip(1))
        .find(|(_, next)| *next == "faults")
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or_else(|| panic!("no fault count in:\n{stdout}"))
}

#[test]
fn c_example_recovers_from_gpu_faults() {
    let exe = compile_c(
        &workspace().join("examples/c/simple_gpu.c"),
        "example-simple_gpu",
        false,
    );
    let out = run(&exe, &[("CD_FAULT_RATE", "0.1"), ("CD_SEED", "7")]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(faults_met(&stdout) > 0, "{stdout}");
    assert!(stdout.contains(": equal"), "{stdout}");
    let out = run(&exe, &[("CD_FAULT_RATE", "0")]);
    assert_eq!(faults_met(&String::from_utf8_lossy(&out.stdout)), 0);
}

#[test]
fn fortran_example_recovers_from_gpu_faults() {
    let exe = compile_fortran(
        &[&workspace().join("examples/fortran/simple_gpu.f90")],
        "example-simple_gpu-f",
    );
    let out = run(&exe, &[("CD_FAULT_RATE", "0.1"), ("CD_SEED", "3")]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(faults_met(&stdout) > 0, "{stdout}");
    assert!(stdout.contains("equals the fault-free run"), "{stdout}");
}

/// Ranks of the MPI examples' runs.
const NP: usize = 4;

/// Steps of the MPI examples' runs (the programs' default is 200; fewer keep the tests short).
const HEAT_STEPS: &str = "100";

/// One `mpirun` at a time from this binary: MPICH busy-polls, and 4 ranks on 2 cores are slow
/// enough without a second job competing.
static MPIRUN: Mutex<()> = Mutex::new(());

/// Seconds after which `mpirun` gives up: `MPIEXEC_TIMEOUT` as inherited, else 280.
fn mpiexec_timeout() -> String {
    std::env::var("MPIEXEC_TIMEOUT")
        .ok()
        .filter(|v| v.parse::<u32>().is_ok_and(|t| t > 0))
        .unwrap_or_else(|| "280".to_owned())
}

/// Compiles a C MPI program with `mpicc -Wall -Wextra -Werror` against the installed libcd
/// (mpicc puts `-lcd` before the MPI library, so libcd's wrappers take the MPI calls).
fn compile_mpi_c(source: &Path, name: &str) -> PathBuf {
    let exe = work_dir().join(name);
    let out = Command::new(std::env::var("MPICC").unwrap_or_else(|_| "mpicc".to_owned()))
        .args(["-Wall", "-Wextra", "-Werror", "-std=gnu11", "-g", "-O2"])
        .args(pkg_config(&["--cflags"]))
        .arg(source)
        .arg("-o")
        .arg(&exe)
        .args(pkg_config(&["--libs"]))
        .arg(format!("-Wl,-rpath,{}", prefix().join("lib").display()))
        .output()
        .expect("mpicc is installed (scripts/setup.sh installs MPICH)");
    check(&out, &format!("compiling {}", source.display()));
    exe
}

/// Compiles a Fortran MPI program (`use mpi_f08`, which needs Fortran 2018's assumed-type
/// buffers) with `mpif90 -Wall -Werror` against the installed module and libcd.
fn compile_mpi_fortran(source: &Path, name: &str) -> PathBuf {
    let exe = work_dir().join(name);
    let fmoddir = pkg_config(&["--variable=fmoddir"]);
    let out = Command::new(std::env::var("MPIFC").unwrap_or_else(|_| "mpif90".to_owned()))
        .args(["-Wall", "-Werror", "-std=f2018", "-g", "-O2"])
        .arg(format!("-I{}", fmoddir[0]))
        .arg(source)
        .arg("-o")
        .arg(&exe)
        .arg("-Wl,--no-as-needed")
        .args(pkg_config(&["--libs"]))
        .arg(format!("-Wl,-rpath,{}", prefix().join("lib").display()))
        .output()
        .expect("mpif90 is installed (scripts/setup.sh installs MPICH and gfortran)");
    check(&out, &format!("compiling {}", source.display()));
    exe
}

/// Runs `mpirun -np NP exe` in the scratch directory with `env`; returns the output whatever
/// the exit status.
fn mpirun(exe: &Path, env: &[(&str, &str)]) -> Output {
    let _one_at_a_time = MPIRUN.lock().unwrap_or_else(|e| e.into_inner());
    Mpirun::new(&["mpirun".to_owned()])
        .arg("-np")
        .arg(NP.to_string())
        .arg(exe)
        .current_dir(work_dir())
        .env("MPIEXEC_TIMEOUT", mpiexec_timeout())
        .env("CD_HEAT_STEPS", HEAT_STEPS)
        .env("LD_LIBRARY_PATH", library_path())
        .envs(env.iter().copied())
        .output()
        .expect("mpirun is installed (scripts/setup.sh installs MPICH)")
}

/// A scratch path for `name`, with whatever an earlier run left there removed.
fn fresh(name: &str) -> String {
    let path = work_dir().join(name);
    let _ = std::fs::remove_file(&path);
    path.display().to_string()
}

/// The `key value` lines of one rank's `CD_MPI_STATS` file.
fn mpi_stats(prefix: &str, rank: usize) -> BTreeMap<String, u64> {
    let path = format!("{prefix}{rank}");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .map(|line| {
            let (key, value) = line
                .split_once(' ')
                .unwrap_or_else(|| panic!("{path}: {line}"));
            (
                key.to_owned(),
                value.parse().unwrap_or_else(|_| panic!("{path}: {line}")),
            )
        })
        .collect()
}

/// The `calls.*` counters of a rank's statistics.
fn calls(stats: &BTreeMap<String, u64>) -> BTreeMap<&str, u64> {
    stats
        .iter()
        .filter(|(k, _)| k.starts_with("calls."))
        .map(|(k, v)| (k.as_str(), *v))
        .collect()
}

/// Runs a heat program fault-free (writing the reference and the statistics `<tag>-clean.`),
/// then with faults at `fault_steps` on rank 2 (statistics `<tag>-fault.`); checks both runs'
/// output and returns the two statistics prefixes.
fn heat_recovers(exe: &Path, tag: &str, fault_steps: &str) -> (String, String) {
    let reference = fresh(&format!("{tag}.ref"));
    let clean = work_dir()
        .join(format!("{tag}-clean."))
        .display()
        .to_string();
    let fault = work_dir()
        .join(format!("{tag}-fault."))
        .display()
        .to_string();
    for rank in 0..NP {
        fresh(&format!("{tag}-clean.{rank}"));
        fresh(&format!("{tag}-fault.{rank}"));
    }

    let out = mpirun(
        exe,
        &[
            ("CD_FAULT_STEP", "none"),
            ("CD_VERIFY", &reference),
            ("CD_MPI_STATS", &clean),
        ],
    );
    check(&out, &format!("{} (fault-free)", exe.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("reference written to"), "{stdout}");
    assert!(!stdout.contains("detected"), "{stdout}");

    let out = mpirun(
        exe,
        &[
            ("CD_FAULT_RANK", "2"),
            ("CD_FAULT_STEP", fault_steps),
            ("CD_VERIFY", &reference),
            ("CD_MPI_STATS", &fault),
        ],
    );
    check(
        &out,
        &format!("{} (with faults at {fault_steps})", exe.display()),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("verified: result bitwise equal to the fault-free run"),
        "{stdout}"
    );
    for step in fault_steps.split(',') {
        let interval_start = step.parse::<u32>().unwrap() / 20 * 20;
        let line = format!(
            "rank 2: fault at step {step} detected, restored to step {interval_start}, \
             re-executing from the MPI log"
        );
        assert!(stdout.contains(&line), "no '{line}' in:\n{stdout}");
        let line = format!("rank 2: caught up with step {step}");
        assert!(stdout.contains(&line), "no '{line}' in:\n{stdout}");
    }
    (clean, fault)
}

/// Only rank 2 replayed, and without a mismatch; the other ranks made exactly the MPI calls
/// of the fault-free run.
fn only_rank_2_replayed(clean: &str, fault: &str) {
    for rank in 0..NP {
        let (before, after) = (mpi_stats(clean, rank), mpi_stats(fault, rank));
        assert_eq!(before["records.replayed"], 0, "rank {rank}: {before:?}");
        assert_eq!(after["replay.mismatches"], 0, "rank {rank}: {after:?}");
        assert!(before["records.logged"] > 0, "rank {rank}: {before:?}");
        if rank == 2 {
            assert!(after["records.replayed"] > 0, "rank 2: {after:?}");
            assert!(after["sends.dropped"] > 0, "rank 2: {after:?}");
            assert!(
                after["calls.MPI_Allreduce"] > before["calls.MPI_Allreduce"],
                "rank 2 re-executed steps: {after:?}"
            );
        } else {
            assert_eq!(after["records.replayed"], 0, "rank {rank}: {after:?}");
            assert_eq!(after["sends.dropped"], 0, "rank {rank}: {after:?}");
            assert_eq!(calls(&before), calls(&after), "rank {rank}'s MPI calls");
        }
    }
}

#[test]
fn c_heat_mpi_recovers_from_the_mpi_log() {
    let exe = compile_mpi_c(
        &workspace().join("examples/c/heat_mpi.c"),
        "example-heat_mpi",
    );
    // Two faults in one interval: the second replay runs over what the first one served.
    let (clean, fault) = heat_recovers(&exe, "heat-c", "53,57");
    only_rank_2_replayed(&clean, &fault);
}

#[test]
fn c_heat_mpi_verification_catches_a_different_result() {
    let exe = compile_mpi_c(
        &workspace().join("examples/c/heat_mpi.c"),
        "example-heat_mpi-verify",
    );
    let reference = fresh("heat-c-verify.ref");
    let short = [("CD_HEAT_STEPS", "20"), ("CD_FAULT_STEP", "none")];
    let out = mpirun(&exe, &[short[0], short[1], ("CD_VERIFY", &reference)]);
    check(&out, "heat_mpi (writing the reference)");
    // Change rank 3's checksum in the reference: the next run must refuse it.
    let text = std::fs::read_to_string(&reference).unwrap();
    let (head, last) = text.trim_end().rsplit_once('\n').unwrap();
    let (rank, sum) = last.split_once(' ').unwrap();
    let flipped = u64::from_str_radix(sum, 16).unwrap() ^ 1;
    std::fs::write(&reference, format!("{head}\n{rank} {flipped:016x}\n")).unwrap();
    let out = mpirun(&exe, &[short[0], short[1], ("CD_VERIFY", &reference)]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    assert!(
        stdout.contains("rank 3 differs from the reference"),
        "{stdout}"
    );
    assert!(stdout.contains("VERIFICATION FAILED"), "{stdout}");
}

/// The demo's second half: the C example persisted at every advance to four simulated nodes,
/// killed mid-interval, one node's cache lost, restarted: it resumes from the last persisted
/// step (node 1's files rebuilt by XOR) and ends bitwise equal to a fault-free run.
#[test]
fn c_heat_mpi_resumes_from_its_persisted_cd_after_a_kill_and_a_lost_node() {
    let exe = compile_mpi_c(
        &workspace().join("examples/c/heat_mpi.c"),
        "example-heat_mpi-persist",
    );
    let reference = fresh("heat-c-persist.ref");
    let out = mpirun(
        &exe,
        &[("CD_FAULT_STEP", "none"), ("CD_VERIFY", &reference)],
    );
    check(&out, "heat_mpi (the reference)");
    let cache = work_dir().join("heat-c-persist-cache");
    let _ = std::fs::remove_dir_all(&cache);
    for node in 0..NP {
        std::fs::create_dir_all(cache.join(format!("node{node}"))).unwrap();
    }
    let persist = format!(
        "dir={}/node{{rank}};scheme=xor;set_size={NP};keep=2",
        cache.display()
    );
    let common = [
        ("CD_STORAGE_INFO", persist.as_str()),
        ("CD_REDSET_FAILURE_GROUP", "node{rank}"),
        ("CD_FAULT_STEP", "none"),
    ];
    let mut killed_env = common.to_vec();
    killed_env.push(("CD_KILL_STEP", "55"));
    let killed = mpirun(&exe, &killed_env);
    let text = String::from_utf8_lossy(&killed.stdout);
    assert!(
        !killed.status.success(),
        "the job must die at step 55:\n{text}"
    );
    assert!(text.contains("killed at step 55"), "{text}");
    std::fs::remove_dir_all(cache.join("node1")).unwrap();
    std::fs::create_dir_all(cache.join("node1")).unwrap();
    let mut restart_env = common.to_vec();
    restart_env.push(("CD_VERIFY", &reference));
    let out = mpirun(&exe, &restart_env);
    check(&out, "heat_mpi (the restart)");
    let text = String::from_utf8_lossy(&out.stdout);
    for rank in 0..NP {
        assert!(
            text.contains(&format!("rank {rank}: restarted: persisted version")),
            "{text}"
        );
    }
    assert!(text.contains("resuming at step 40"), "{text}");
    assert!(
        text.contains("verified: result bitwise equal to the fault-free run"),
        "{text}"
    );
}

#[test]
fn fortran_heat_mpi_recovers_from_the_mpi_log() {
    let exe = compile_mpi_fortran(
        &workspace().join("examples/fortran/heat_mpi.f90"),
        "example-heat_mpi-f",
    );
    let (clean, fault) = heat_recovers(&exe, "heat-f", "53");
    only_rank_2_replayed(&clean, &fault);
}
