//! Multi-rank tests of the MPI interposer: C programs of `tests/mpi/`, compiled with `mpicc`
//! against libcd (which carries the CD API and the PMPI wrappers) and run under a real
//! `mpirun -np 4` (MPICH's hydra). Each scenario runs fault-free and with a fault; the faulty
//! run's per-rank results must be bitwise equal to the fault-free run's, and the statistics
//! (`CD_MPI_STATS`) of the ranks that did not fail must show exactly the fault-free run's MPI
//! calls: isolation is checked, not assumed.

use crate::util::{check, lib_dir, work_dir, workspace};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Ranks of every launch (more than the 2 cores of CI: keep the programs short).
const RANKS: usize = 4;

/// The launcher and its options: `$MPIRUN` (default `mpirun`, MPICH's hydra). With Open MPI's
/// `mpirun` the environment is passed on with `-x NAME` (hydra passes all of it).
fn mpirun(env: &[(&str, &str)]) -> Command {
    let launcher = std::env::var("MPIRUN").unwrap_or_else(|_| "mpirun".to_owned());
    let mut words = launcher.split_whitespace();
    let mut cmd = Command::new(words.next().expect("MPIRUN names a launcher"));
    cmd.args(words);
    if launcher.contains("openmpi") {
        for (name, _) in env {
            cmd.arg("-x").arg(name);
        }
        cmd.args(["-x", "MPIEXEC_TIMEOUT", "-x", "CD_MPI_STATS"]);
    }
    cmd.envs(env.iter().copied());
    cmd
}

/// Compiles `tests/mpi/<name>.c` with mpicc against libcd.
fn compile(name: &str) -> PathBuf {
    let exe = work_dir().join(format!("mpi-{name}"));
    let out = Command::new(mpicc())
        .args(["-Wall", "-Wextra", "-Werror", "-std=gnu11", "-g", "-O1"])
        // MPICH's prototypes declare status arrays with a size, so passing
        // MPI_STATUSES_IGNORE trips gcc's -Wstringop-overflow.
        .arg("-Wno-stringop-overflow")
        .arg("-I")
        .arg(workspace().join("cd-ffi/include"))
        .arg(workspace().join(format!("tests/mpi/{name}.c")))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", lib_dir().display()))
        .arg("-lcd")
        .arg(format!("-Wl,-rpath,{}", lib_dir().display()))
        .arg("-lpthread")
        .output()
        .expect("run mpicc (scripts/setup.sh installs MPICH)");
    check(&out, &format!("compiling tests/mpi/{name}.c"));
    exe
}

/// One launch's outcome: each rank's result line and statistics.
struct Run {
    lines: BTreeMap<usize, String>,
    stats: Vec<BTreeMap<String, u64>>,
    stdout: String,
}

/// Runs `exe` on [`RANKS`] ranks with `env`, collecting lines starting with `prefix`.
fn launch(exe: &Path, tag: &str, prefix: &str, env: &[(&str, &str)]) -> Run {
    let stats_prefix = work_dir().join(format!("stats-{tag}."));
    let timeout = std::env::var("MPIEXEC_TIMEOUT").unwrap_or_else(|_| "280".to_owned());
    for rank in 0..RANKS {
        let _ = std::fs::remove_file(format!("{}{rank}", stats_prefix.display()));
    }
    let mut cmd = mpirun(env);
    cmd.arg("-np").arg(RANKS.to_string());
    cmd.env("MPIEXEC_TIMEOUT", &timeout)
        .env("CD_MPI_STATS", &stats_prefix)
        .arg(exe)
        .current_dir(work_dir());
    let out = cmd.output().expect("run mpirun");
    check(&out, &format!("mpirun {}", exe.display()));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines = BTreeMap::new();
    for line in stdout.lines().filter(|l| l.starts_with(prefix)) {
        let rank: usize = line
            .split_whitespace()
            .nth(2)
            .and_then(|r| r.parse().ok())
            .expect("rank");
        lines.insert(rank, line.to_owned());
    }
    let stats = (0..RANKS)
        .map(|rank| {
            let path = format!("{}{rank}", stats_prefix.display());
            // A run without libcd writes no statistics.
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            text.lines()
                .filter_map(|l| l.split_once(' '))
                .map(|(k, v)| (k.to_owned(), v.parse().expect("a count")))
                .collect()
        })
        .collect();
    Run {
        lines,
        stats,
        stdout,
    }
}

/// The `calls.*` entries of one rank's statistics.
fn calls(stats: &BTreeMap<String, u64>) -> BTreeMap<&str, u64> {
    stats
        .iter()
        .filter(|(k, _)| k.starts_with("calls."))
        .map(|(k, v)| (k.as_str(), *v))
        .collect()
}

/// Checks a faulty run against the fault-free one: same results on every rank except the
/// recovery count, the same MPI calls on every rank but `faulty`, and a replay on `faulty`.
fn assert_isolated(clean: &Run, faulty: &Run, faulty_rank: usize) {
    assert_eq!(
        clean.lines.len(),
        RANKS,
        "every rank reports:\n{}",
        clean.stdout
    );
    for rank in 0..RANKS {
        let strip = |s: &str| s.split(" recoveries").next().unwrap().to_owned();
        assert_eq!(
            strip(&clean.lines[&rank]),
            strip(&faulty.lines[&rank]),
            "rank {rank}'s result differs from the fault-free run"
        );
        if rank != faulty_rank {
            assert_eq!(
                calls(&clean.stats[rank]),
                calls(&faulty.stats[rank]),
                "rank {rank} made other MPI calls than in the fault-free run: it noticed the recovery"
            );
            assert_eq!(
                faulty.stats[rank]["records.replayed"], 0,
                "rank {rank} replayed"
            );
        }
    }
    let f = &faulty.stats[faulty_rank];
    assert!(
        faulty.lines[&faulty_rank].ends_with("recoveries 1"),
        "{}",
        faulty.stdout
    );
    assert!(
        f["records.replayed"] > 0,
        "rank {faulty_rank} replayed nothing: {f:?}"
    );
    assert!(
        f["sends.dropped"] > 0,
        "rank {faulty_rank} dropped no send: {f:?}"
    );
    assert_eq!(f["replay.mismatches"], 0);
}

#[test]
fn halo_exchange_recovers_one_rank_in_isolation() {
    let exe = compile("halo");
    let clean = launch(&exe, "halo-clean", "halo rank", &[]);
    let faulty = launch(
        &exe,
        "halo-fault",
        "halo rank",
        &[("FAULT_RANK", "2"), ("FAULT_STEP", "27")],
    );
    assert_isolated(&clean, &faulty, 2);
}

#[test]
fn wildcards_probes_waitany_waitsome_in_place_and_derived_types_replay_their_determinants() {
    let exe = compile("determinants");
    let clean = launch(&exe, "det-clean", "determinants rank", &[]);
    let faulty = launch(
        &exe,
        "det-fault",
        "determinants rank",
        &[("FAULT_RANK", "0")],
    );
    // Which source comes first differs from run to run: the program compares its re-execution
    // with its own first execution; the other ranks' calls are deterministic.
    assert!(
        faulty.lines[&0].ends_with("recoveries 1 replay identical"),
        "{}",
        faulty.stdout
    );
    for rank in 1..RANKS {
        assert_eq!(
            calls(&clean.stats[rank]),
            calls(&faulty.stats[rank]),
            "rank {rank}"
        );
    }
    let f = &faulty.stats[0];
    assert!(
        f["records.replayed"] > 0 && f["replay.mismatches"] == 0,
        "{f:?}"
    );
}

#[test]
fn requests_in_flight_at_restore_never_write_restored_memory() {
    let exe = compile("inflight");
    let clean = launch(&exe, "inflight-clean", "inflight rank", &[]);
    let faulty = launch(
        &exe,
        "inflight-fault",
        "inflight rank",
        &[("FAULT_RANK", "1")],
    );
    assert_isolated(&clean, &faulty, 1);
}

#[test]
fn a_non_deterministic_re_execution_is_a_clear_error() {
    let exe = compile("mismatch");
    let run = launch(&exe, "mismatch", "mismatch rank", &[]);
    assert!(
        run.lines[&1].starts_with("mismatch rank 1 ok: CD replay mismatch"),
        "{}",
        run.stdout
    );
    assert_eq!(run.stats[1]["replay.mismatches"], 1);
}

/// The MPI C compiler of the family libcd was built for (`$MPICC`, default `mpicc`).
fn mpicc() -> String {
    std::env::var("MPICC").unwrap_or_else(|_| "mpicc".to_owned())
}

/// Compiles an unmodified MPI program (no libcd) with the family's compiler wrapper.
fn compile_plain(source: &str, compiler: &str) -> PathBuf {
    let exe = work_dir().join(format!("mpi-{}", source.replace('.', "-")));
    let out = Command::new(compiler)
        .arg(workspace().join(format!("tests/mpi/{source}")))
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("run {compiler}: {e}"));
    check(&out, &format!("compiling tests/mpi/{source}"));
    exe
}

/// Runs an unmodified program with and without `LD_PRELOAD=libcd.so`: the same output, and
/// statistics that show every call was seen by the wrappers.
fn preloaded_matches_raw(source: &str, compiler: &str) {
    let libcd = lib_dir().join("libcd.so");
    let preload = libcd.to_str().expect("UTF-8 path");
    let exe = compile_plain(source, compiler);
    let tag = source.replace('.', "-");
    let without = launch(&exe, &format!("{tag}-raw"), "plain rank", &[]);
    let with = launch(
        &exe,
        &format!("{tag}-preload"),
        "plain rank",
        &[("LD_PRELOAD", preload)],
    );
    assert_eq!(without.lines.len(), RANKS, "{source}:\n{}", without.stdout);
    assert_eq!(
        without.lines, with.lines,
        "{source}: the preload changed the output"
    );
    for rank in 0..RANKS {
        let seen = calls(&with.stats[rank]);
        for call in [
            "MPI_Init",
            "MPI_Isend",
            "MPI_Irecv",
            "MPI_Waitall",
            "MPI_Bcast",
            "MPI_Allreduce",
            "MPI_Finalize",
        ] {
            let key = format!("calls.{call}");
            assert_eq!(
                seen.get(key.as_str()),
                Some(&1),
                "{source} rank {rank}: {seen:?}"
            );
        }
    }
}

/// An unmodified C program under `LD_PRELOAD=libcd.so`.
#[test]
fn unmodified_c_program_is_intercepted_under_ld_preload() {
    preloaded_matches_raw("plain.c", &mpicc());
}

/// Unmodified Fortran programs with `mpif.h`, `use mpi` and `use mpi_f08` under
/// `LD_PRELOAD=libcd.so` (the Fortran bindings reach `PMPI_X` directly).
#[test]
fn unmodified_fortran_programs_are_intercepted_under_ld_preload() {
    let fortran = if mpicc().contains("openmpi") {
        "mpif90.openmpi"
    } else {
        "mpif90"
    };
    for source in ["plain_mpif.f90", "plain_mpi.f90", "plain_f08.f90"] {
        preloaded_matches_raw(source, fortran);
    }
}
