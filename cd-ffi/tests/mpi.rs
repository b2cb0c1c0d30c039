//! Multi-rank tests of the MPI interposer: C programs of `tests/mpi/`, compiled with `mpicc`
//! against libcd (which carries the CD API and the PMPI wrappers) and run under a real
//! `mpirun -np 4` (MPICH's hydra). Each scenario runs fault-free and with a fault; the faulty
//! run's per-rank results must be bitwise equal to the fault-free run's, and the statistics
//! (`CD_MPI_STATS`) of the ranks that did not fail must show exactly the fault-free run's MPI
//! calls: isolation is checked, not assumed. Tests of one program share its fault-free run
//! (and its executable); the programs also run under Open MPI (`MPICC=mpicc.openmpi` and
//! `MPIRUN="mpirun.openmpi ..."`, see `scripts/test.sh`).

mod edges;
mod held;
mod mpi4;
mod persist_device;
mod persistent_inflight;
mod rewinds;
mod timeline;
mod trace;

use crate::mpi_launch::{is_open_mpi, Mpirun};
use crate::util::{check, lib_dir, library_path, work_dir, workspace};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// Ranks of every launch (more than the 2 cores of CI: keep the programs short).
const RANKS: usize = 4;

/// The launcher and its options: `$MPIRUN` (default `mpirun`, MPICH's hydra), in a launch of
/// its own (`tests/support/mpi_launch.rs`). With Open MPI's `mpirun` the environment is passed
/// on with `-x NAME` (hydra passes all of it).
fn mpirun(env: &[(&str, &str)]) -> Mpirun {
    let launcher = std::env::var("MPIRUN").unwrap_or_else(|_| "mpirun".to_owned());
    let words: Vec<String> = launcher.split_whitespace().map(str::to_owned).collect();
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
    if mpicc().contains("openmpi") {
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
        mpicc().contains("openmpi") || !needed.iter().any(|l| l.contains("libmpi")),
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
/// `LD_PRELOAD=libcd.so` (the Fortran bindings reach `PMPI_X` directly).
///
/// Debian's Open MPI Fortran wrapper (`mpif90.openmpi`, `mpifort.openmpi`) links its bindings
/// with `-L<libdir>/fortran/gfortran -lmpi`, a directory that does not exist, so `-lmpi` is
/// found in the default path: `/usr/lib/<triplet>/libmpi.so`, the `libmpi.so` alternative, which
/// points at MPICH's library when MPICH is the default MPI. The program then loads both MPICH
/// and Open MPI, `MPI_Init` binds to MPICH's, and Open MPI's Fortran bindings abort ("MPI_Comm_f2c
/// called before MPI_INIT"). Naming Open MPI's library directory (from the C wrapper,
/// `--showme:libdirs`) links the right `libmpi`.
#[test]
fn unmodified_fortran_programs_are_intercepted_under_ld_preload() {
    let (fortran, extra) = mpi_fortran();
    for source in ["plain_mpif.f90", "plain_mpi.f90", "plain_f08.f90"] {
        preloaded_matches_raw(source, fortran, &extra);
    }
}

/// The MPI family's Fortran compiler and the options it needs (see above).
fn mpi_fortran() -> (&'static str, Vec<String>) {
    if mpicc().contains("openmpi") {
        let out = Command::new(mpicc())
            .arg("--showme:libdirs")
            .output()
            .expect("run mpicc.openmpi --showme:libdirs");
        check(&out, "mpicc --showme:libdirs");
        let dirs = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(|d| format!("-L{d}"))
            .collect();
        ("mpif90.openmpi", dirs)
    } else {
        ("mpif90", Vec::new())
    }
}

/// One launch of `tests/mpi/heat_persist.c` on four simulated nodes (one rank each, through
/// `CD_REDSET_FAILURE_GROUP`), whose caches are `<cache>/node<rank>`: the output, and whether
/// every rank exited cleanly.
fn heat(cache: &Path, env: &[(&str, &str)]) -> (bool, String) {
    heat_run(&compile("heat_persist"), cache, env)
}

/// [`heat`] with another build of the program (the Fortran one).
fn heat_run(exe: &Path, cache: &Path, env: &[(&str, &str)]) -> (bool, String) {
    let cache = cache.to_str().expect("UTF-8 path").to_owned();
    let mut all = vec![
        ("CD_REDSET_FAILURE_GROUP", "node{rank}"),
        ("HEAT_CACHE", &cache),
    ];
    all.extend_from_slice(env);
    let mut cmd = mpirun(&all);
    let timeout = std::env::var("MPIEXEC_TIMEOUT").unwrap_or_else(|_| "120".to_owned());
    cmd.arg("-np")
        .arg(RANKS.to_string())
        .env("MPIEXEC_TIMEOUT", &timeout)
        .arg(exe)
        .current_dir(work_dir());
    let out = cmd.output().expect("run mpirun");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

/// The result lines each rank of `heat_persist` prints (its final array, in parts).
const HEAT_RESULT_PARTS: usize = 3;

/// The lines of `text` that start with `heat rank` and contain `word`, sorted.
fn heat_lines(text: &str, word: &str) -> Vec<String> {
    let mut lines: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with("heat rank") && l.contains(word))
        .map(str::to_owned)
        .collect();
    lines.sort();
    lines
}

/// A fresh cache: `<work>/<tag>/node0..3`, empty.
fn fresh_cache(tag: &str) -> PathBuf {
    let cache = work_dir().join(tag);
    let _ = std::fs::remove_dir_all(&cache);
    for rank in 0..RANKS {
        std::fs::create_dir_all(cache.join(format!("node{rank}"))).expect("create cache");
    }
    cache
}

/// Issue 10, test 1: killed (SIGKILL, every rank) at step 55 of 100 with a persist every 10
/// steps, one simulated node's cache lost, restarted: it resumes from step 50 (rebuilt by XOR)
/// and ends bitwise equal to a fault-free run.
#[test]
fn persistent_cd_survives_a_kill_and_a_lost_node_cache() {
    let (ok, clean) = heat(&fresh_cache("persist-clean"), &[]);
    assert!(ok, "{clean}");
    let expected = heat_lines(&clean, " result ");
    assert_eq!(expected.len(), RANKS * HEAT_RESULT_PARTS, "{clean}");

    let cache = fresh_cache("persist-killed");
    let (ok, killed) = heat(&cache, &[("HEAT_KILL_AT", "55")]);
    assert!(!ok, "the run should have been killed:\n{killed}");
    assert!(heat_lines(&killed, " result ").is_empty(), "{killed}");
    // node 2 comes back with an empty cache
    std::fs::remove_dir_all(cache.join("node2")).expect("remove node2's cache");
    std::fs::create_dir(cache.join("node2")).expect("empty cache");

    let (ok, restarted) = heat(&cache, &[]);
    assert!(ok, "{restarted}");
    let resumed = heat_lines(&restarted, " resumed ");
    assert_eq!(resumed.len(), RANKS, "{restarted}");
    assert!(
        resumed.iter().all(|l| l.contains(" resumed 50 version 5")),
        "{restarted}"
    );
    assert_eq!(heat_lines(&restarted, " result "), expected);
}

/// Issue 10, test 5 (part): bad `storage_info` values and a missing cache directory are clear
/// errors naming the key, and lose nothing persisted before; a restart that adds its ranges in
/// another order or size is a clear error at `restore_cd`, and a correct one still recovers.
#[test]
fn persistent_cd_errors_are_clear_and_lose_nothing() {
    let cache = fresh_cache("persist-errors");
    let (ok, first) = heat(&cache, &[("HEAT_KILL_AT", "35")]);
    assert!(!ok, "{first}");
    let dir = format!("dir={}/node{{rank}}", cache.display());
    let missing = format!("dir={}/nowhere{{rank}}", cache.display());
    let cases = [
        (format!("{dir};scheme=raid6"), "\"scheme\""),
        (format!("{dir};set_size=1"), "\"set_size\""),
        (format!("{dir};keep=0"), "\"keep\""),
        (format!("{dir};scheme=xor;replicas=2"), "\"replicas\""),
        (
            format!("{dir};flush=background"),
            "\"flush\" needs key \"global_dir\"",
        ),
        (
            format!("{dir};global_dir={}/no-such-global", cache.display()),
            "key \"global_dir\": the directory",
        ),
        (format!("{dir};sceme=xor"), "\"sceme\""),
        (missing, "does not exist"),
    ];
    for (info, expected) in &cases {
        let (ok, out) = heat(&cache, &[("HEAT_STORAGE_INFO", info)]);
        assert!(ok, "{out}");
        let errors = heat_lines(&out, " error ");
        assert_eq!(errors.len(), RANKS, "{info}:\n{out}");
        assert!(
            errors
                .iter()
                .all(|l| l.contains("create_cd") && l.contains(expected)),
            "{info}: expected {expected}:\n{out}"
        );
    }
    for (var, value, what) in [
        (
            "HEAT_ORDER",
            "swapped",
            "entry 0 was persisted as COPY of 528 bytes",
        ),
        (
            "HEAT_SHORT",
            "1",
            "entry 0 was persisted as COPY of 528 bytes",
        ),
    ] {
        let (ok, out) = heat(&cache, &[(var, value)]);
        assert!(ok, "{out}");
        let errors = heat_lines(&out, " error ");
        assert_eq!(errors.len(), RANKS, "{var}:\n{out}");
        assert!(
            errors
                .iter()
                .all(|l| l.contains("error 76 restore_cd") && l.contains(what)),
            "{var}:\n{out}"
        );
    }
    // nothing persisted was lost: the right restart resumes from step 30
    let (ok, out) = heat(&cache, &[]);
    assert!(ok, "{out}");
    let resumed = heat_lines(&out, " resumed ");
    assert!(
        resumed.len() == RANKS && resumed.iter().all(|l| l.contains(" resumed 30 version 3")),
        "{out}"
    );
}

/// The result lines of a fault-free run of `heat_persist.c` (one run, shared by the tests).
fn heat_clean() -> Vec<String> {
    static CLEAN: OnceLock<Vec<String>> = OnceLock::new();
    CLEAN
        .get_or_init(|| {
            let (ok, clean) = heat(&fresh_cache("persist-clean-shared"), &[]);
            assert!(ok, "{clean}");
            let lines = heat_lines(&clean, " result ");
            assert_eq!(lines.len(), RANKS * HEAT_RESULT_PARTS, "{clean}");
            lines
        })
        .clone()
}

/// Restarts `heat_persist.c` on `cache` and checks that every rank resumed from one of the
/// `allowed` (step, version) points and ended bitwise equal to the fault-free run.
fn heat_restart_resumes(cache: &Path, allowed: &[(u32, u64)], what: &str) {
    let (ok, restarted) = heat(cache, &[]);
    assert!(ok, "{what}: the restart failed:\n{restarted}");
    let resumed = heat_lines(&restarted, " resumed ");
    assert!(
        resumed.len() == RANKS
            && allowed.iter().any(|(step, version)| {
                let expected = format!(" resumed {step} version {version}");
                resumed.iter().all(|l| l.ends_with(&expected))
            }),
        "{what}: expected every rank to resume from one of (step, version) {allowed:?}:\n{restarted}"
    );
    assert_eq!(
        heat_lines(&restarted, " result "),
        heat_clean(),
        "{what}: the result differs from the fault-free run"
    );
}

/// Issue 10, test 2: the job killed at every crash point of a persist (`CD_PERSIST_CRASH_AT`,
/// documented in cd-persist's `inject` module), on every rank or on one: the restart uses the
/// newest complete version (the previous one before the commit markers, the new one after)
/// and ends bitwise equal to a fault-free run. When one rank dies after cd-redset's apply,
/// the others may write their commit markers before mpirun kills them: then the new version
/// is complete, and either is right.
#[test]
fn persistent_cd_killed_at_every_crash_point_restarts_from_a_complete_version() {
    // (point of the persist of version 6 at step 60, the (step, version) a restart may use)
    let cases: [(&str, &[(u32, u64)]); 6] = [
        ("data-written@6", &[(50, 5)]),
        ("data-renamed@6:2", &[(50, 5)]),
        ("redset-applied@6", &[(50, 5)]),
        ("redset-applied@6:0", &[(50, 5), (60, 6)]),
        ("committed@6:1", &[(60, 6)]),
        ("cleaned@6", &[(60, 6)]),
    ];
    for (point, allowed) in cases {
        let cache = fresh_cache(&format!("persist-crash-{}", point.replace([':', '@'], "-")));
        let (ok, out) = heat(&cache, &[("CD_PERSIST_CRASH_AT", point)]);
        assert!(!ok, "{point}: the run should have been killed:\n{out}");
        assert!(
            out.contains(&format!(
                "killed at {}",
                point.split(['@', ':']).next().unwrap()
            )),
            "{point}:\n{out}"
        );
        heat_restart_resumes(&cache, allowed, point);
    }
}

/// Issue 10, test 4: a byte flipped in a persisted data file is found by its CRC32C at the
/// restart and the file is rebuilt from the redundancy data (XOR); the restart resumes from
/// that version and ends bitwise equal to a fault-free run.
#[test]
fn persistent_cd_flipped_byte_is_detected_and_rebuilt() {
    let cache = fresh_cache("persist-flip");
    let (ok, out) = heat(&cache, &[("HEAT_KILL_AT", "55")]);
    assert!(!ok, "{out}");
    let data = cache.join("node1/heat/v00000005/data.1.cdp");
    let mut bytes = std::fs::read(&data).expect("read the persisted data file");
    // past the header (44 bytes), the 2-entry table and its CRC: inside the array's bytes
    bytes[80 + 100] ^= 0x10;
    std::fs::write(&data, &bytes).expect("write the damaged data file");
    // what `cd-persist list --verify` shows: version 5 complete, rank 1 lost, rebuildable
    let layout = cd_persist::inspect::Layout {
        dir: format!("{}/node{{rank}}", cache.display()),
        ranks: RANKS,
        global: None,
    };
    let health = cd_persist::inspect::versions(&layout, "heat", true);
    let shown: Vec<String> = health.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [
            "v00000004 complete, intact",
            "v00000005 complete, rebuildable, lost ranks 1"
        ],
        "{health:?}"
    );
    assert!(health[1].lost[&1].contains("CRC32C mismatch"), "{health:?}");

    let (ok, restarted) = heat(&cache, &[("CD_REDSET_STATS", "1")]);
    assert!(ok, "{restarted}");
    assert!(
        restarted
            .lines()
            .any(|l| l.contains("cd-redset rank 1: recover") && l.contains("rebuilt (")),
        "rank 1's data file was not rebuilt:\n{restarted}"
    );
    let resumed = heat_lines(&restarted, " resumed ");
    assert!(
        resumed.len() == RANKS && resumed.iter().all(|l| l.ends_with(" resumed 50 version 5")),
        "{restarted}"
    );
    assert_eq!(heat_lines(&restarted, " result "), heat_clean());
}

/// Kills `heat_persist.c` (with `info` as its storage_info) at step 55, empties the caches
/// of the simulated nodes `lost`, and restarts it with `CD_MPI_STATS`: the restart's output
/// and each rank's statistics.
fn heat_lose_nodes(
    tag: &str,
    info: &dyn Fn(&Path) -> String,
    env: &[(&str, &str)],
    lost: &[usize],
) -> (bool, String, Vec<BTreeMap<String, u64>>) {
    let cache = fresh_cache(tag);
    std::fs::create_dir_all(cache.join("global")).expect("create the global directory");
    let info = info(&cache);
    let mut first = vec![("HEAT_STORAGE_INFO", info.as_str()), ("HEAT_KILL_AT", "55")];
    first.extend_from_slice(env);
    let (ok, out) = heat(&cache, &first);
    assert!(!ok, "{tag}: the run should have been killed:\n{out}");
    for node in lost {
        let dir = cache.join(format!("node{node}"));
        std::fs::remove_dir_all(&dir).expect("remove a node's cache");
        std::fs::create_dir(&dir).expect("empty cache");
    }
    let stats = work_dir().join(format!("stats-{tag}."));
    let stats = stats.to_str().expect("UTF-8 path");
    let (ok, out) = heat(
        &cache,
        &[
            ("HEAT_STORAGE_INFO", info.as_str()),
            ("CD_MPI_STATS", stats),
        ],
    );
    let stats = (0..RANKS)
        .map(|rank| {
            std::fs::read_to_string(format!("{stats}{rank}"))
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.split_once(' '))
                .map(|(k, v)| (k.to_owned(), v.parse().unwrap_or(0)))
                .collect()
        })
        .collect();
    (ok, out, stats)
}

/// A background flush started by the last persist before the program ends is completed at
/// `MPI_Finalize`: the global directory holds the run's last version (10, at step 100) marked
/// complete, so a restart that loses every node's cache fetches it.
#[test]
fn persistent_cd_last_background_flush_completes_at_finalize() {
    let cache = fresh_cache("persist-last-flush");
    let global = cache.join("global");
    std::fs::create_dir_all(&global).expect("create the global directory");
    let info = format!(
        "dir={}/node{{rank}};scheme=xor;set_size=4;keep=2;global_dir={};flush=background",
        cache.display(),
        global.display()
    );
    let (ok, out) = heat(&cache, &[("HEAT_STORAGE_INFO", info.as_str())]);
    assert!(ok, "{out}");
    let marker = global.join("heat/v00000010/FLUSHED");
    assert!(
        marker.is_file(),
        "the last version's flush was not completed: {} missing\n{out}",
        marker.display()
    );
    for node in 0..RANKS {
        let dir = cache.join(format!("node{node}"));
        std::fs::remove_dir_all(&dir).expect("remove a node's cache");
        std::fs::create_dir(&dir).expect("empty cache");
    }
    let (ok, out) = heat(&cache, &[("HEAT_STORAGE_INFO", info.as_str())]);
    assert!(ok, "{out}");
    assert_eq!(
        heat_lines(&out, "resumed").len(),
        RANKS,
        "every rank fetched the last flushed version:\n{out}"
    );
    assert!(
        heat_lines(&out, "resumed")
            .iter()
            .all(|l| l.contains("resumed 100 version 10")),
        "{out}"
    );
}

/// Issue 10, test 3: XOR with two nodes of its one set lost cannot rebuild, so the restart
/// fetches the newest flushed version from the global directory (flushed every 2nd version
/// in the background: version 4, at step 40) and ends bitwise equal; without a global
/// directory the same loss is a clear error on every rank; RS with 2 checksums rebuilds two
/// lost nodes; a blocking flush killed between the copies and its marker does not hide the
/// previous flushed version.
#[test]
fn persistent_cd_fetches_the_flushed_copy_when_the_rebuild_cannot_succeed() {
    let base = |cache: &Path| format!("dir={}/node{{rank}};set_size=4", cache.display());
    let flushed = |cache: &Path| {
        format!(
            "{};scheme=xor;global_dir={}/global;flush_every=2;flush=background",
            base(cache),
            cache.display()
        )
    };
    let (ok, out, stats) = heat_lose_nodes("persist-fetch", &flushed, &[], &[1, 2]);
    assert!(ok, "{out}");
    let resumed = heat_lines(&out, " resumed ");
    assert!(
        resumed.len() == RANKS && resumed.iter().all(|l| l.ends_with(" resumed 40 version 4")),
        "{out}"
    );
    assert_eq!(heat_lines(&out, " result "), heat_clean());
    for (rank, s) in stats.iter().enumerate() {
        assert_eq!(s.get("fetch.count"), Some(&1), "rank {rank}: {s:?}");
        assert!(s.get("fetch.bytes") > Some(&0), "rank {rank}: {s:?}");
        assert!(s.get("persist.count") >= Some(&6), "rank {rank}: {s:?}");
        assert!(s.get("flush.bytes") > Some(&0), "rank {rank}: {s:?}");
    }

    let xor = |cache: &Path| format!("{};scheme=xor", base(cache));
    let (ok, out, _) = heat_lose_nodes("persist-nofetch", &xor, &[], &[1, 2]);
    assert!(ok, "{out}");
    let errors = heat_lines(&out, " error ");
    assert!(
        errors.len() == RANKS
            && errors.iter().all(|l| l.contains("create_cd")
                && l.contains("none can be recovered")
                && l.contains("no global directory")),
        "{out}"
    );

    let rs = |cache: &Path| format!("{};scheme=rs;checksums=2", base(cache));
    let (ok, out, stats) = heat_lose_nodes("persist-rs2", &rs, &[], &[1, 2]);
    assert!(ok, "{out}");
    let resumed = heat_lines(&out, " resumed ");
    assert!(
        resumed.len() == RANKS && resumed.iter().all(|l| l.ends_with(" resumed 50 version 5")),
        "{out}"
    );
    assert_eq!(heat_lines(&out, " result "), heat_clean());
    assert!(
        stats.iter().all(|s| s.get("recover.count") == Some(&1)),
        "{stats:?}"
    );

    // killed (at step 60) between version 6's copies and its flush marker, every node lost
    let blocking = |cache: &Path| {
        format!(
            "{};scheme=xor;global_dir={}/global",
            base(cache),
            cache.display()
        )
    };
    let (ok, out, _) = heat_lose_nodes(
        "persist-flush-crash",
        &blocking,
        &[("CD_PERSIST_CRASH_AT", "flush-copied@6")],
        &[0, 1, 2, 3],
    );
    assert!(ok, "{out}");
    let resumed = heat_lines(&out, " resumed ");
    assert!(
        resumed.len() == RANKS && resumed.iter().all(|l| l.ends_with(" resumed 50 version 5")),
        "{out}"
    );
    assert_eq!(heat_lines(&out, " result "), heat_clean());
}

/// Issue 10, test 5 (a full disk and an unwritable cache, injected with
/// `CD_PERSIST_FAIL_WRITE` since root ignores file modes and CI cannot mount a small tmpfs):
/// the failed persist is a clear error on every rank (naming the failed rank and the
/// kernel's reason), the previous version stays intact, and the next persist succeeds; an
/// unwritable cache at create is refused naming the key.
#[test]
fn persistent_cd_write_failures_are_clear_and_lose_nothing() {
    // (injection, kill after step, the rank that fails or none, the reason, resumed from)
    let cases = [
        ("enospc@6", "75", None, "No space left on device", (70, 6)),
        ("eacces@6:2", "65", Some(2), "Permission denied", (50, 5)),
    ];
    for (fault, kill, failing, reason, (step, version)) in cases {
        let cache = fresh_cache(&format!("persist-fail-{}", fault.replace([':', '@'], "-")));
        let (ok, out) = heat(
            &cache,
            &[
                ("CD_PERSIST_FAIL_WRITE", fault),
                ("HEAT_PERSIST_ERRORS", "continue"),
                ("HEAT_KILL_AT", kill),
            ],
        );
        assert!(!ok, "{fault}: the run should have been killed:\n{out}");
        let errors = heat_lines(&out, " persist error ");
        assert!(
            errors.len() == RANKS
                && errors.iter().all(|l| l.contains(" persist error at 60: ")
                    && l.contains("persisting version 6 failed")
                    && l.contains(reason)
                    && failing.is_none_or(
                        |r| l.contains(&format!("node{r}/heat/v00000006/data.{r}.cdp"))
                    )),
            "{fault}:\n{out}"
        );
        // the previous version is intact on every node
        for rank in 0..RANKS {
            let v5 = cache.join(format!("node{rank}/heat/v00000005"));
            assert!(
                v5.join(format!("COMMIT.{rank}")).is_file(),
                "{fault}: {v5:?}"
            );
        }
        heat_restart_resumes(&cache, &[(step, version)], fault);
    }
    // an unwritable cache at create
    let cache = fresh_cache("persist-fail-create");
    let (ok, out) = heat(&cache, &[("CD_PERSIST_FAIL_WRITE", "eacces")]);
    assert!(ok, "{out}");
    let errors = heat_lines(&out, " error ");
    assert!(
        errors.len() == RANKS
            && errors.iter().all(|l| l.contains("create_cd")
                && l.contains("key \"dir\": the directory is not writable")
                && l.contains("Permission denied")),
        "{out}"
    );
}

/// Issue 10, test 1 in Fortran: `tests/mpi/heat_persist.f90` (`use Containment_Domains`,
/// `cd_recovered_version`), killed at step 55, one node's cache lost, restarted: it resumes
/// from step 50 and ends bitwise equal to the C program's fault-free run (the same
/// arithmetic in the same order).
#[test]
fn persistent_cd_survives_a_kill_and_a_lost_node_cache_in_fortran() {
    let (fortran, extra) = mpi_fortran();
    let exe = work_dir().join("mpi-heat_persist-f");
    let modules = work_dir().join("mod-heat_persist-f");
    std::fs::create_dir_all(&modules).expect("create the module directory");
    let out = Command::new(fortran)
        .args(["-Wall", "-Werror", "-std=f2008", "-g", "-O1"])
        .arg(format!("-J{}", modules.display()))
        .arg(workspace().join("fortran/containment_domains.f90"))
        .arg(workspace().join("tests/mpi/heat_persist.f90"))
        .arg("-o")
        .arg(&exe)
        .args(&extra)
        .arg(format!("-L{}", lib_dir().display()))
        .arg("-lcd")
        .arg(format!("-Wl,-rpath,{}", lib_dir().display()))
        .output()
        .unwrap_or_else(|e| panic!("run {fortran}: {e}"));
    check(&out, "compiling tests/mpi/heat_persist.f90");

    let cache = fresh_cache("persist-killed-f");
    let (ok, killed) = heat_run(&exe, &cache, &[("HEAT_KILL_AT", "55")]);
    assert!(!ok, "the run should have been killed:\n{killed}");
    std::fs::remove_dir_all(cache.join("node2")).expect("remove node2's cache");
    std::fs::create_dir(cache.join("node2")).expect("empty cache");
    let (ok, restarted) = heat_run(&exe, &cache, &[]);
    assert!(ok, "{restarted}");
    let resumed = heat_lines(&restarted, " resumed ");
    assert!(
        resumed.len() == RANKS && resumed.iter().all(|l| l.ends_with(" resumed 50 version 5")),
        "{restarted}"
    );
    assert_eq!(heat_lines(&restarted, " result "), heat_clean());
}
