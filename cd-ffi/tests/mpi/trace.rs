//! `CD_TRACE` (cd-ffi/src/trace.rs): a C program's MPI calls and CD calls as `tracing` spans,
//! one file per rank, asked for by environment variables alone; the program's results and MPI
//! traffic unchanged by it, and a bad filter refused in one line without stopping the program.

use super::{assert_isolated, compile, launch, RANKS};
use crate::util::work_dir;
use std::path::PathBuf;

/// The trace files a launch with `CD_TRACE_FILE=<prefix>` wrote, after removing old ones.
fn trace_files(prefix: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(work_dir())
        .expect("the work directory")
        .map(|e| e.expect("an entry").path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("{prefix}.")))
        })
        .collect();
    files.sort();
    files
}

#[test]
fn cd_trace_writes_every_rank_s_mpi_and_cd_calls_as_spans_without_changing_the_run() {
    let exe = compile("halo");
    let prefix = "trace-halo";
    for old in trace_files(prefix) {
        std::fs::remove_file(old).expect("remove an old trace");
    }
    let file = work_dir().join(prefix);
    let file = file.to_str().expect("a UTF-8 path");
    let clean = launch(&exe, "trace-clean", "halo rank", &[]);
    let traced = launch(
        &exe,
        "trace-fault",
        "halo rank",
        &[
            ("FAULT_RANK", "2"),
            ("FAULT_STEP", "27"),
            ("CD_TRACE", "cd_mpi_intercept=trace,cd_core=debug"),
            ("CD_TRACE_FILE", file),
        ],
    );
    // Traced, the run is the same: results bitwise, the other ranks' MPI calls, the replay.
    assert_isolated(&clean, &traced, 2);
    assert!(
        !traced.stdout.contains("mpi{"),
        "spans went to standard output:\n{}",
        traced.stdout
    );

    let files = trace_files(prefix);
    assert_eq!(files.len(), RANKS, "one trace per rank: {files:?}");
    let mut restored = 0;
    for path in &files {
        let text = std::fs::read_to_string(path).expect("read a trace");
        // Every MPI call the program makes, each span closed with its time.
        for call in [
            "MPI_Init",
            "MPI_Isend",
            "MPI_Irecv",
            "MPI_Waitall",
            "MPI_Finalize",
        ] {
            assert!(
                text.contains(&format!(
                    "mpi{{call=\"{call}\"}}: cd_mpi_intercept::boundary: close time.busy="
                )),
                "{} has no span of {call}:\n{}",
                path.display(),
                &text[..text.len().min(2000)]
            );
        }
        // And the CD API's own spans.
        for span in ["create_cd{", "advance_cd_point_in_time{"] {
            assert!(text.contains(span), "{} has no {span} span", path.display());
        }
        if text.contains("restore_cd{") {
            restored += 1;
            assert!(
                text.contains("replay{call="),
                "{}: a restore without a replay span",
                path.display()
            );
        }
    }
    assert_eq!(restored, 1, "only the faulty rank restores");
}

/// Runs `halo.c` with `env` (a setting libcd refuses), checks that every rank's result is the
/// clean run's, and returns the lines on standard error that start with `prefix` (one per
/// rank expected).
pub(super) fn refused_setting_leaves_results_unchanged(
    tag: &str,
    env: (&str, &str),
    prefix: &str,
) -> Vec<String> {
    let exe = compile("halo");
    let clean = launch(&exe, &format!("{tag}-clean"), "halo rank", &[]);
    let out = super::mpirun(&[env])
        .arg("-np")
        .arg(RANKS.to_string())
        .env(
            "MPIEXEC_TIMEOUT",
            std::env::var("MPIEXEC_TIMEOUT").unwrap_or_else(|_| "280".to_owned()),
        )
        .arg(&exe)
        .current_dir(work_dir())
        .output()
        .expect("run mpirun");
    crate::util::check(&out, &format!("mpirun halo with {}={}", env.0, env.1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    for rank in 0..RANKS {
        assert!(
            stdout.contains(&clean.lines[&rank]),
            "rank {rank}'s result changed:\n{stdout}"
        );
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let said: Vec<String> = stderr
        .lines()
        .filter(|l| l.starts_with(prefix))
        .map(str::to_owned)
        .collect();
    assert_eq!(said.len(), RANKS, "one line per rank:\n{stderr}");
    said
}

#[test]
fn cd_trace_with_a_bad_filter_says_so_once_and_the_program_runs_untraced() {
    let said = refused_setting_leaves_results_unchanged(
        "trace-bad",
        ("CD_TRACE", "cd_core=[["),
        "libcd: CD_TRACE ignored: ",
    );
    assert!(
        said[0].contains("cd_core=[["),
        "the line names the filter: {}",
        said[0]
    );
}
