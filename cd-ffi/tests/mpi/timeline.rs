//! `CD_TIMELINE` (cd-ffi/src/timeline.rs): one Chrome trace-event file per rank, named by the
//! rank, that parses, closes every slice it opens, shows the faulty rank's replayed calls and
//! dropped sends and no replay on the other ranks; set together with `CD_TRACE`, both are
//! written; `cd-timeline-merge` makes one trace with a process per rank; and a prefix that
//! cannot be written is refused in one line per rank without stopping the program.

use super::{assert_isolated, compile, launch, RANKS};
use crate::util::{closed_slices, work_dir};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The files in the work directory whose names start with `<prefix>.`, after none or all.
fn files(prefix: &str) -> Vec<PathBuf> {
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

/// A string argument of an event (`tracing-chrome` writes a field's `Debug` form).
fn arg<'a>(event: &'a Value, name: &str) -> Option<&'a str> {
    event.get("args")?.get(name)?.as_str()
}

#[test]
fn cd_timeline_writes_a_chrome_trace_per_rank_with_the_faulty_rank_s_replay_and_merges() {
    let exe = compile("halo");
    let prefix = "timeline-halo";
    let trace_prefix = "timeline-halo-text";
    for old in files(prefix).into_iter().chain(files(trace_prefix)) {
        std::fs::remove_file(old).expect("remove an old timeline");
    }
    let timeline = work_dir().join(prefix);
    let timeline = timeline.to_str().expect("a UTF-8 path");
    let text = work_dir().join(trace_prefix);
    let text = text.to_str().expect("a UTF-8 path");
    let clean = launch(&exe, "timeline-clean", "halo rank", &[]);
    let faulty = launch(
        &exe,
        "timeline-fault",
        "halo rank",
        &[
            ("FAULT_RANK", "2"),
            ("FAULT_STEP", "27"),
            ("CD_TIMELINE", timeline),
            // Both at once: the text trace of cd-core's spans too.
            ("CD_TRACE", "cd_core=debug"),
            ("CD_TRACE_FILE", text),
        ],
    );
    // With a timeline, the run is the same: results bitwise, the other ranks' MPI calls.
    assert_isolated(&clean, &faulty, 2);
    let texts = files(trace_prefix);
    assert_eq!(texts.len(), RANKS, "CD_TRACE's files beside: {texts:?}");
    for path in &texts {
        let text = std::fs::read_to_string(path).expect("a text trace");
        assert!(
            text.contains("create_cd{"),
            "{} has no create_cd",
            path.display()
        );
    }

    // One file per rank, named by the rank (none left under the pid's name).
    let written = files(prefix);
    let expected: Vec<PathBuf> = (0..RANKS)
        .map(|rank| work_dir().join(format!("{prefix}.{rank}.json")))
        .collect();
    assert_eq!(written, expected, "one file per rank, by rank");

    for (rank, path) in expected.iter().enumerate() {
        let json = std::fs::read_to_string(path).expect("read a timeline");
        let events: Vec<Value> = serde_json::from_str(&json)
            .unwrap_or_else(|e| panic!("{} is not a JSON array: {e}", path.display()));
        let slices = closed_slices(path, &events);
        let named = |name: &'static str| slices.iter().filter(move |e| e["name"] == name);
        // The CD calls, with the root's name, and the MPI calls, each a slice.
        assert!(
            named("create_cd").any(|e| arg(e, "name") == Some("\"halo\"")),
            "{}: no create_cd of \"halo\"",
            path.display()
        );
        for name in [
            "add_to_cd_via_copy",
            "advance_cd_point_in_time",
            "MPI_Init",
            "MPI_Isend",
            "MPI_Irecv",
            "MPI_Waitall",
            "MPI_Finalize",
        ] {
            assert!(named(name).count() > 0, "{}: no {name}", path.display());
        }
        // The advice on when to advance, after the timed advances.
        assert!(
            events.iter().any(|e| e["ph"] == "i"
                && e["args"]["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("advice on when to advance"))),
            "{}: no advice event",
            path.display()
        );
        // Every MPI call says what became of it.
        let routes: BTreeMap<&str, usize> = slices
            .iter()
            .filter(|e| e["name"].as_str().is_some_and(|n| n.starts_with("MPI_")))
            .fold(BTreeMap::new(), |mut m, e| {
                let route = arg(e, "route").unwrap_or("(none)");
                *m.entry(route).or_default() += 1;
                m
            });
        assert!(
            !routes.contains_key("(none)"),
            "{}: MPI calls without a route: {routes:?}",
            path.display()
        );
        assert!(
            routes.get("logged") > Some(&0),
            "{}: {routes:?}",
            path.display()
        );
        assert_eq!(
            routes.get("live"),
            Some(&2),
            "Init and Finalize: {routes:?}"
        );
        let replayed = |call: &'static str, route: &str| {
            named(call)
                .filter(|e| arg(e, "route") == Some(route))
                .count()
        };
        if rank == 2 {
            assert_eq!(named("restore_cd").count(), 1, "{}", path.display());
            for call in ["MPI_Irecv", "MPI_Waitall", "MPI_Allreduce"] {
                assert!(
                    replayed(call, "replayed") > 0,
                    "rank 2 replayed no {call}: {routes:?}"
                );
            }
            assert!(
                replayed("MPI_Isend", "dropped send") > 0,
                "rank 2 dropped no send: {routes:?}"
            );
            // The replay is one `recovery` slice, after the restore, around every call the
            // log served.
            let ts = |e: &Value| e["ts"].as_f64().expect("a time");
            let recovery: Vec<f64> = events
                .iter()
                .filter(|e| e["name"] == "recovery")
                .map(ts)
                .collect();
            assert_eq!(
                recovery.len(),
                2,
                "one recovery, begun and ended: {recovery:?}"
            );
            let restored = named("restore_cd").map(ts).next().expect("restore_cd");
            assert!(
                restored <= recovery[0],
                "the recovery begins after the restore"
            );
            for call in slices
                .iter()
                .filter(|e| matches!(arg(e, "route"), Some("replayed") | Some("dropped send")))
            {
                assert!(
                    (recovery[0]..=recovery[1]).contains(&ts(call)),
                    "{call} outside the recovery {recovery:?}"
                );
            }
        } else {
            assert_eq!(named("recovery").count(), 0, "{}", path.display());
            assert_eq!(named("restore_cd").count(), 0, "{}", path.display());
            assert!(
                !routes.contains_key("replayed") && !routes.contains_key("dropped send"),
                "rank {rank} replayed: {routes:?}"
            );
        }
    }

    // Merged: one trace, a process per rank, every event kept.
    let merged_path = work_dir().join(format!("{prefix}.json"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cd-timeline-merge"))
        .arg(timeline)
        .output()
        .expect("run cd-timeline-merge");
    crate::util::check(&out, "cd-timeline-merge");
    let merged: Value =
        serde_json::from_str(&std::fs::read_to_string(&merged_path).expect("the merged trace"))
            .expect("merged JSON");
    let events = merged["traceEvents"].as_array().expect("traceEvents");
    for rank in 0..RANKS {
        let rank = rank as u64;
        assert!(
            events.iter().any(|e| e["name"] == "process_name"
                && e["pid"] == rank
                && e["args"]["name"] == format!("rank {rank}")),
            "no process for rank {rank}"
        );
    }
    let replayed_in = |pid: u64| {
        events
            .iter()
            .filter(|e| e["pid"] == pid && arg(e, "route") == Some("replayed"))
            .count()
    };
    assert!(replayed_in(2) > 0, "the merge lost rank 2's replay");
    // Each rank's slices still nest; rank 2's recovery now begins with its restore.
    for rank in 0..RANKS as u64 {
        let mine: Vec<Value> = events
            .iter()
            .filter(|e| e["pid"] == rank)
            .cloned()
            .collect();
        let slices = closed_slices(&merged_path, &mine);
        let began = |name: &str| {
            mine.iter()
                .find(|e| e["ph"] == "B" && e["name"] == name)
                .and_then(|e| e["ts"].as_f64())
        };
        if rank == 2 {
            let (recovery, restore) = (began("recovery"), began("restore_cd"));
            assert!(
                recovery.is_some() && recovery < restore,
                "the merged recovery does not enclose the restore: {recovery:?} {restore:?}"
            );
            assert_eq!(slices.iter().filter(|e| e["name"] == "recovery").count(), 1);
        }
    }
    assert_eq!(replayed_in(0) + replayed_in(1) + replayed_in(3), 0);
    let total: usize = expected
        .iter()
        .map(|p| {
            let events: Vec<Value> =
                serde_json::from_str(&std::fs::read_to_string(p).expect("read")).expect("json");
            events.len()
        })
        .sum();
    assert_eq!(
        events.len(),
        total + 2 * RANKS,
        "every event, and two per process"
    );
}

#[test]
fn cd_timeline_that_cannot_be_written_says_so_once_per_rank_and_the_program_runs() {
    let prefix = work_dir().join("no-such-directory/timeline");
    super::trace::refused_setting_leaves_results_unchanged(
        "timeline-bad",
        ("CD_TIMELINE", prefix.to_str().expect("a UTF-8 path")),
        "libcd: CD_TIMELINE ignored: cannot create ",
    );
}
