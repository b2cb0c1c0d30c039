//! Multi-rank tests: this program launches itself under `mpirun` as the test driver and checks
//! the driver's verdict. MPICH's `mpirun` by default; `scripts/test.sh` also builds it against
//! Open MPI (`MPICC=mpicc.openmpi`, its own target directory) and runs it with
//! `MPIRUN="mpirun.openmpi --oversubscribe ..."`.
//!
//! Run by `cargo test` without a harness (`harness = false`): `main` runs each launch below in
//! turn with `mpirun -np N <this program> DIR ARGS` and the environment variable
//! `CD_REDSET_DRIVER=1`, under which `main` runs the driver (`driver.rs`) instead. Each launch
//! runs many scenarios inside one job; ranks outnumber the cores here, and MPICH busy-polls, so
//! launches are few, one at a time, the 8-rank ones use large pieces, and every launch has
//! `MPIEXEC_TIMEOUT`. Failure groups are simulated with `CD_REDSET_FAILURE_GROUP`. A missing
//! `mpirun` fails the tests (CI installs MPI); they never pass silently.
//!
//! The extended launches (every scheme's full 7- and 8-rank matrices, sets of 16 ranks) run
//! only with `CD_REDSET_TEST_EXTENDED=1` (the Open MPI run of `scripts/test.sh` sets it) or
//! when named.
//!
//! The crate's examples run last, under `mpirun` as a user would run them ([`EXAMPLES`]).
//!
//! Arguments that do not start with `-` select the launches whose name contains one of them
//! (`cargo test -p cd-redset --test mpi -- eight_ranks`; `examples` selects the examples).

mod driver;
#[path = "../../../tests/support/mpi_launch.rs"]
mod mpi_launch;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Set in the environment of the ranks: run the driver, not the launcher.
const DRIVER_ENV: &str = "CD_REDSET_DRIVER";

/// The launcher: `$MPIRUN` split at whitespace (a program and its options, e.g.
/// `mpirun.openmpi --oversubscribe` for the second MPI family), else `mpirun`.
fn mpirun() -> Vec<String> {
    let words: Vec<String> = std::env::var("MPIRUN")
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    if words.is_empty() {
        vec!["mpirun".to_string()]
    } else {
        words
    }
}

/// Seconds after which a launch gives up: `MPIEXEC_TIMEOUT` as inherited (MPICH's hydra and
/// Open MPI's mpirun both read it), else 280.
fn timeout() -> String {
    std::env::var("MPIEXEC_TIMEOUT")
        .ok()
        .filter(|v| v.parse::<u32>().is_ok_and(|t| t > 0))
        .unwrap_or_else(|| "280".to_string())
}

fn scratch(name: &str) -> PathBuf {
    let base = if std::path::Path::new("/dev/shm").is_dir() {
        PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    base.join(format!("cd-redset-test-{}-{name}", std::process::id()))
}

/// One `mpirun` job of the driver.
struct Launch {
    /// Test name.
    name: &'static str,
    /// What it covers.
    doc: &'static str,
    /// Number of ranks.
    np: usize,
    /// `CD_REDSET_FAILURE_GROUP` template.
    groups: &'static str,
    /// Driver arguments after the scratch directory.
    args: &'static [&'static str],
    /// Runs only with `CD_REDSET_TEST_EXTENDED=1` ([`EXTENDED_ENV`]) or when named.
    extended: bool,
    /// Runs with `CD_REDSET_STATS=1` and checks every rank's summary lines on stderr.
    stats: bool,
}

/// The crate's example programs, run under `mpirun` as users would run them: each must exit
/// with success and every rank must report its checkpoint bytes identical after the rebuild.
/// They are found beside this test binary (`target/<profile>/examples/`), built by
/// `cargo test` (all targets) or by `--example NAME`.
const EXAMPLES: &[(&str, usize, &[&str])] = &[
    ("checkpoint_loss", 4, &["xor"]),
    ("checkpoint_loss", 4, &["rs2"]),
    ("checkpoint_loss", 4, &["partner1"]),
];

/// Runs one example under `mpirun`; on failure returns its output.
fn run_example(name: &str, np: usize, args: &[&str]) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let example = exe
        .parent()
        .and_then(Path::parent)
        .map(|profile| profile.join("examples").join(name))
        .filter(|p| p.is_file())
        .ok_or(format!(
            "example {name} is not built (cargo test -p cd-redset --example {name})"
        ))?;
    let dir = scratch(&format!("example-{name}"));
    let launcher = mpirun();
    let out = mpi_launch::Mpirun::new(&launcher)
        .args(["-np", &np.to_string()])
        .arg(&example)
        .arg(&dir)
        .args(args)
        .env("MPIEXEC_TIMEOUT", timeout())
        .env("CD_REDSET_FAILURE_GROUP", "node{rank}")
        .output()
        .map_err(|e| format!("cannot run `{}`: {e}", launcher.join(" ")))?;
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    print!("{stdout}");
    let identical = stdout
        .lines()
        .filter(|l| l.ends_with("checkpoint bytes identical"))
        .count();
    if out.status.success() && identical == np {
        Ok(())
    } else {
        Err(format!(
            "status {:?}, {identical} of {np} ranks identical\n--- stderr\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Enables the extended launches (the exhaustive 7- and 8-rank matrices, the 16-rank sets).
/// `scripts/test.sh` sets it for the Open MPI run, where they take about 40 s in all; under
/// MPICH, whose waits spin on the oversubscribed cores, they take many minutes, so the MPICH
/// run samples 8 ranks instead.
const EXTENDED_ENV: &str = "CD_REDSET_TEST_EXTENDED";

const LAUNCHES: &[Launch] = &[
    Launch {
        name: "four_ranks_all_schemes_full_matrix",
        doc: "bad input, then every scheme at 4 ranks (one failure group each): every \
              combination of lost ranks at the scheme's limit and one beyond, both loss modes, \
              three datasets, small pieces",
        np: 4,
        groups: "node{rank}",
        args: &[
            "--errors",
            "--schemes",
            "single,partner1,partner2,xor,rs2,rs3",
        ],
        extended: false,
        stats: false,
    },
    Launch {
        name: "eight_ranks_full_matrix",
        doc: "8 ranks, every combination of lost ranks for XOR and RS k=2 (the limit in both \
              loss modes, one beyond in the data-plus-redundancy mode); larger pieces",
        np: 8,
        groups: "node{rank}",
        args: &[
            "--lean",
            "--schemes",
            "xor,rs2",
            "--datasets",
            "mixed",
            "--piece",
            "1048576",
        ],
        extended: false,
        stats: false,
    },
    Launch {
        name: "eight_ranks_sampled",
        doc: "8 ranks, RS k=3, PARTNER R=1 and R=2 and SINGLE: sampled loss patterns (two at \
              the limit, two beyond) and every dataset",
        np: 8,
        groups: "node{rank}",
        args: &[
            "--schemes",
            "rs3,partner1,partner2,single",
            "--quick",
            "--piece",
            "1048576",
        ],
        extended: false,
        stats: false,
    },
    Launch {
        name: "eight_ranks_two_per_node_lose_nodes",
        doc: "8 ranks on 4 simulated nodes of 2: sets never hold two ranks of one node, so \
              losing a whole node is one loss per set and XOR rebuilds it; losing two nodes \
              is beyond XOR",
        np: 8,
        groups: "node{rank/2}",
        args: &[
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
        extended: false,
        stats: false,
    },
    Launch {
        name: "two_ranks_all_schemes_full_matrix",
        doc: "the smallest sets: 2 ranks, every scheme that fits (SINGLE, PARTNER R=1, XOR, \
              RS k=1), every combination of lost ranks, both loss modes, every dataset",
        np: 2,
        groups: "node{rank}",
        args: &["--errors", "--schemes", "single,partner1,xor,rs1"],
        extended: false,
        stats: true,
    },
    Launch {
        name: "seven_ranks_uneven_sets_exhaustive",
        doc: "7 ranks with set size 3, so sets of 4 and 3: every scheme that fits, every \
              combination of lost ranks at the limit and one beyond, both modes, every dataset",
        np: 7,
        groups: "node{rank}",
        args: &[
            "--set-size",
            "3",
            "--schemes",
            "single,partner1,partner2,xor,rs1,rs2",
        ],
        extended: true,
        stats: false,
    },
    Launch {
        name: "eight_ranks_all_schemes_exhaustive",
        doc: "every scheme at 8 ranks: every combination of lost ranks at the limit and one \
              beyond, both loss modes, every dataset (about 50,000 checks)",
        np: 8,
        groups: "node{rank}",
        args: &["--schemes", "single,partner1,partner2,xor,rs2,rs3"],
        extended: true,
        stats: false,
    },
    Launch {
        name: "sixteen_ranks_sampled",
        doc: "16 ranks in one set of 16 (XOR, RS k=2 and 3, PARTNER R=1 and 2): sampled loss \
              patterns (two at the limit, two beyond), both modes, every dataset",
        np: 16,
        groups: "node{rank}",
        args: &[
            "--set-size",
            "16",
            "--quick",
            "--schemes",
            "xor,rs2,rs3,partner1,partner2",
            "--piece",
            "1048576",
        ],
        extended: true,
        stats: false,
    },
    Launch {
        name: "sixteen_ranks_two_sets_sampled",
        doc: "16 ranks in two sets of 8 (XOR, RS k=3, PARTNER R=2): sampled loss patterns, \
              both modes, every dataset",
        np: 16,
        groups: "node{rank}",
        args: &[
            "--set-size",
            "8",
            "--quick",
            "--schemes",
            "xor,rs3,partner2",
            "--piece",
            "1048576",
        ],
        extended: true,
        stats: false,
    },
];

/// Runs the driver for `l`; on failure returns its output.
fn run(l: &Launch) -> Result<(), String> {
    let dir = scratch(l.name);
    let _ = std::fs::remove_dir_all(&dir);
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let started = std::time::Instant::now();
    let launcher = mpirun();
    let out = mpi_launch::Mpirun::new(&launcher)
        .args(["-np", &l.np.to_string()])
        .arg(&exe)
        .arg(&dir)
        .args(l.args)
        .env(DRIVER_ENV, "1")
        .env("MPIEXEC_TIMEOUT", timeout())
        .env("CD_REDSET_FAILURE_GROUP", l.groups)
        .env(cd_redset::STATS_ENV, if l.stats { "1" } else { "0" })
        .output()
        .map_err(|e| {
            format!(
                "cannot run `{}` ({e}): the multi-rank tests need MPI (MPICH) installed",
                launcher.join(" ")
            )
        })?;
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!(
        "{}: {} ranks, {:.1}s\n{stdout}",
        l.name,
        l.np,
        started.elapsed().as_secs_f64()
    );
    let verdict = stdout
        .lines()
        .rev()
        .find(|line| line.contains(" passed, "))
        .unwrap_or("");
    // with CD_REDSET_STATS, every rank prints a summary line per operation
    let summaries = (0..l.np).all(|r| {
        ["apply", "recover", "unapply"]
            .iter()
            .all(|op| stderr.contains(&format!("cd-redset rank {r}: {op} ")))
    });
    let stats_ok = !l.stats || (summaries && stderr.contains("total "));
    if out.status.success() && verdict.ends_with(", 0 failed") && stats_ok {
        Ok(())
    } else {
        Err(format!(
            "status {:?}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
            out.status
        ))
    }
}

fn main() -> ExitCode {
    if std::env::var_os(DRIVER_ENV).is_some() {
        driver::main();
        return ExitCode::SUCCESS;
    }
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let extended = std::env::var(EXTENDED_ENV).is_ok_and(|v| v == "1");
    let chosen: Vec<&Launch> = LAUNCHES
        .iter()
        .filter(|l| {
            if filters.is_empty() {
                extended || !l.extended
            } else {
                filters.iter().any(|f| l.name.contains(f.as_str()))
            }
        })
        .collect();
    for l in LAUNCHES
        .iter()
        .filter(|l| !chosen.iter().any(|c| c.name == l.name))
    {
        if l.extended && filters.is_empty() {
            println!("skipped {} (set {EXTENDED_ENV}=1 to run it)", l.name);
        }
    }
    println!("\nrunning {} mpirun launches", chosen.len());
    let mut failed = Vec::new();
    for l in chosen {
        println!("test {} ({}) ...", l.name, l.doc);
        match run(l) {
            Ok(()) => println!("test {} ... ok", l.name),
            Err(why) => {
                println!("test {} ... FAILED\n{why}", l.name);
                failed.push(l.name);
            }
        }
    }
    let run_examples =
        filters.is_empty() || filters.iter().any(|f| "examples".contains(f.as_str()));
    for &(name, np, args) in EXAMPLES.iter().filter(|_| run_examples) {
        let label = format!("example {name} {}", args.join(" "));
        println!("test {label} ({np} ranks) ...");
        match run_example(name, np, args) {
            Ok(()) => println!("test {label} ... ok"),
            Err(why) => {
                println!("test {label} ... FAILED\n{why}");
                failed.push("examples");
            }
        }
    }
    if failed.is_empty() {
        println!("\nmpi tests: ok");
        ExitCode::SUCCESS
    } else {
        println!("\nmpi tests FAILED: {}", failed.join(", "));
        ExitCode::FAILURE
    }
}
