//! `cd-timeline-merge`: merges the per-rank files of `CD_TIMELINE` into one Chrome trace with
//! a process per rank.
//!
//! ```text
//! cd-timeline-merge <prefix> [-o <output>]
//! cd-timeline-merge <file>... -o <output>
//! ```
//!
//! With a prefix, the files are `<prefix>.<rank>.json` (as libcd names them) and the output
//! defaults to `<prefix>.json`. Each rank's events get the rank as their process (`pid`; the
//! layer writes `1`), a process named `rank N`, and their times shifted so that all ranks
//! share one clock: each file's `timeline start` event holds the wall-clock time at which
//! that rank's clock read 0. Each `recovery` slice begins with the `restore_cd` that started
//! it (see [`enclose_restores`]). A file cut short (a rank killed before exit left no closing `]`)
//! is read up to its last whole event. Open the output in <https://ui.perfetto.dev> or
//! `chrome://tracing`.
//!
//! Why a binary of cd-ffi rather than a script: it is built with libcd by the step the README
//! gives (`cargo build -p cd-ffi`), reads JSON with the `serde_json` libcd already links (for
//! `tracing-chrome`), and needs no `jq` or Python on the machine.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "usage: cd-timeline-merge <prefix> [-o <output>]\n       \
                     cd-timeline-merge <file>... -o <output>";

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(problem) => {
            eprintln!("cd-timeline-merge: {problem}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Vec<String>) -> Result<(), String> {
    let mut inputs = Vec::new();
    let mut output = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            "-o" => output = Some(PathBuf::from(args.next().ok_or("-o needs a path")?)),
            _ => inputs.push(arg),
        }
    }
    let (files, output) = match (inputs.as_slice(), output) {
        ([], _) => return Err(USAGE.to_owned()),
        ([prefix], output) if !Path::new(prefix).is_file() => {
            let files = rank_files(prefix)?;
            (
                files,
                output.unwrap_or_else(|| format!("{prefix}.json").into()),
            )
        }
        (_, Some(output)) => {
            let files = inputs
                .iter()
                .map(|f| Ok((rank_of(f)?, PathBuf::from(f))))
                .collect::<Result<Vec<_>, String>>()?;
            (files, output)
        }
        (_, None) => return Err(format!("several files need -o <output>\n{USAGE}")),
    };
    let mut ranks = Vec::new();
    for (rank, path) in files {
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let events = parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        ranks.push((rank, events));
    }
    let merged = merge(ranks);
    let text = serde_json::to_string(&merged).map_err(|e| e.to_string())?;
    std::fs::write(&output, text).map_err(|e| format!("{}: {e}", output.display()))?;
    println!("{}", output.display());
    Ok(())
}

/// The files `<prefix>.<rank>.json`, by rank.
fn rank_files(prefix: &str) -> Result<Vec<(u64, PathBuf)>, String> {
    let prefix = Path::new(prefix);
    let dir = match prefix.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let stem = prefix
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or("the prefix names no file")?;
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let rank = name
            .strip_prefix(stem)
            .and_then(|r| r.strip_prefix('.'))
            .and_then(|r| r.strip_suffix(".json"))
            .and_then(|r| r.parse().ok());
        if let Some(rank) = rank {
            files.push((rank, path));
        }
    }
    if files.is_empty() {
        return Err(format!("no {}.<rank>.json", prefix.display()));
    }
    files.sort();
    Ok(files)
}

/// The rank of a file named `<prefix>.<rank>.json`.
fn rank_of(file: &str) -> Result<u64, String> {
    file.strip_suffix(".json")
        .and_then(|f| f.rsplit('.').next())
        .and_then(|r| r.parse().ok())
        .ok_or_else(|| format!("{file}: not named <prefix>.<rank>.json"))
}

/// A file's events: a JSON array, or one cut short (no closing `]`, maybe half an event).
fn parse(text: &str) -> Result<Vec<Value>, String> {
    if let Ok(Value::Array(events)) = serde_json::from_str(text) {
        return Ok(events);
    }
    if !text.trim_start().starts_with('[') {
        return Err("not a Chrome trace-event array".to_owned());
    }
    // Cut short: keep the whole events (the layer writes one per line).
    let mut kept = String::from("[");
    for line in text.lines().skip(1) {
        let event = line.trim_end_matches(',');
        if event.starts_with('{') && serde_json::from_str::<Value>(event).is_ok() {
            if kept.len() > 1 {
                kept.push(',');
            }
            kept.push_str(event);
        }
    }
    kept.push(']');
    match serde_json::from_str(&kept) {
        Ok(Value::Array(events)) => Ok(events),
        _ => Err("not a Chrome trace-event array".to_owned()),
    }
}

/// The wall-clock microseconds at which a rank's clock read 0 (its `timeline start` event).
fn start_of(events: &[Value]) -> Option<f64> {
    events.iter().find_map(|e| {
        let args = e.get("args")?;
        (args.get("message")?.as_str()? == "timeline start")
            .then(|| {
                let unix = args.get("unix_us")?;
                unix.as_f64().or_else(|| unix.as_str()?.parse().ok())
            })?
            .map(|unix| unix - e.get("ts").and_then(Value::as_f64).unwrap_or(0.0))
    })
}

/// Makes each `recovery` slice begin with the `restore_cd` before it, so that the restore and
/// the replay it started are one slice: the layer's `recovery` opens at the first call the log
/// serves, since a span cannot begin inside `restore_cd`'s and outlive it; here its begin moves
/// to just before that `restore_cd`'s, on the same thread and at the same depth (what ran on
/// that thread between the two then nests inside it).
fn enclose_restores(events: Vec<Value>) -> Vec<Value> {
    use std::collections::HashMap;
    // Per thread: the open slices' begin indices, and the last restore_cd closed (its depth
    // and its begin's index) while nothing at a lower depth closed since.
    let mut open: HashMap<u64, Vec<usize>> = HashMap::new();
    let mut restored: HashMap<u64, (usize, usize)> = HashMap::new();
    let mut moves: HashMap<usize, usize> = HashMap::new(); // recovery begin -> restore begin
    for (i, event) in events.iter().enumerate() {
        let tid = event.get("tid").and_then(Value::as_u64).unwrap_or(0);
        let stack = open.entry(tid).or_default();
        match event.get("ph").and_then(Value::as_str) {
            Some("B") => {
                if event["name"] == "recovery" {
                    if let Some(&(depth, at)) = restored.get(&tid) {
                        if depth == stack.len() {
                            moves.insert(i, at);
                            restored.remove(&tid);
                        }
                    }
                }
                stack.push(i);
            }
            Some("E") => {
                let began = stack.pop();
                if restored
                    .get(&tid)
                    .is_some_and(|&(depth, _)| stack.len() < depth)
                {
                    restored.remove(&tid);
                }
                if let (Some(began), true) = (began, event["name"] == "restore_cd") {
                    restored.insert(tid, (stack.len(), began));
                }
            }
            _ => {}
        }
    }
    if moves.is_empty() {
        return events;
    }
    let before: HashMap<usize, usize> = moves.iter().map(|(&from, &to)| (to, from)).collect();
    let mut events: Vec<Option<Value>> = events.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(events.len());
    for i in 0..events.len() {
        if moves.contains_key(&i) {
            continue;
        }
        if let Some(&from) = before.get(&i) {
            if let Some(mut recovery) = events[from].take() {
                let ts = events[i].as_ref().and_then(|e| e.get("ts")?.as_f64());
                if let Some(ts) = ts {
                    recovery["ts"] = json!(ts - 0.001);
                }
                out.push(recovery);
            }
        }
        if let Some(event) = events[i].take() {
            out.push(event);
        }
    }
    out
}

/// One trace: each rank a process, on one clock.
fn merge(ranks: Vec<(u64, Vec<Value>)>) -> Value {
    let starts: Vec<Option<f64>> = ranks.iter().map(|(_, e)| start_of(e)).collect();
    let first = starts
        .iter()
        .flatten()
        .copied()
        .fold(f64::INFINITY, f64::min);
    let mut out = Vec::new();
    for ((rank, events), start) in ranks.into_iter().zip(starts) {
        let shift = match start {
            Some(start) if first.is_finite() => start - first,
            _ => 0.0,
        };
        out.push(
            json!({"ph": "M", "pid": rank, "tid": 0, "name": "process_name",
                        "args": {"name": format!("rank {rank}")}}),
        );
        out.push(
            json!({"ph": "M", "pid": rank, "tid": 0, "name": "process_sort_index",
                        "args": {"sort_index": rank}}),
        );
        for mut event in enclose_restores(events) {
            event["pid"] = json!(rank);
            if let Some(ts) = event.get("ts").and_then(Value::as_f64) {
                event["ts"] = json!(ts + shift);
            }
            out.push(event);
        }
    }
    json!({"traceEvents": out, "displayTimeUnit": "ns"})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_cut_short_is_read_up_to_its_last_whole_event() {
        let whole = "[\n{\"ph\":\"B\",\"ts\":1.0},\n{\"ph\":\"E\",\"ts\":2.0}\n]";
        assert_eq!(parse(whole).expect("whole").len(), 2);
        let cut = "[\n{\"ph\":\"B\",\"ts\":1.0},\n{\"ph\":\"E\",\"ts\":2.0},\n{\"ph\":\"B\",\"t";
        assert_eq!(parse(cut).expect("cut").len(), 2);
        assert!(parse("not json").is_err());
    }

    #[test]
    fn a_recovery_begins_with_its_restore() {
        let ev =
            |ph: &str, name: &str, ts: f64| json!({"ph": ph, "tid": 0, "name": name, "ts": ts});
        let events = vec![
            ev("B", "restore_cd", 1.0),
            ev("E", "restore_cd", 2.0),
            ev("B", "add_to_cd_via_copy", 3.0),
            ev("E", "add_to_cd_via_copy", 4.0),
            ev("B", "recovery", 5.0),
            ev("B", "MPI_Irecv", 5.5),
            ev("E", "MPI_Irecv", 6.0),
            ev("E", "recovery", 7.0),
        ];
        let out = enclose_restores(events);
        let order: Vec<(&str, &str)> = out
            .iter()
            .map(|e| (e["ph"].as_str().unwrap(), e["name"].as_str().unwrap()))
            .collect();
        assert_eq!(order[0], ("B", "recovery"));
        assert_eq!(order[1], ("B", "restore_cd"));
        assert_eq!(out.len(), 8);
        assert!(out[0]["ts"].as_f64().unwrap() < 1.0);
        // A recovery at another depth than the restore stays where it was.
        let nested = vec![
            ev("B", "outer", 0.0),
            ev("B", "restore_cd", 1.0),
            ev("E", "restore_cd", 2.0),
            ev("E", "outer", 3.0),
            ev("B", "recovery", 5.0),
            ev("E", "recovery", 7.0),
        ];
        assert_eq!(enclose_restores(nested.clone()), nested);
    }

    #[test]
    fn files_are_named_by_rank() {
        assert_eq!(rank_of("/tmp/run.a.3.json"), Ok(3));
        assert!(rank_of("/tmp/run.json").is_err());
    }

    #[test]
    fn each_rank_is_a_process_on_one_clock() {
        let start = |unix: &str, ts: f64| {
            json!({"ph": "i", "pid": 1, "ts": ts,
                   "args": {"message": "timeline start", "unix_us": unix}})
        };
        let slice = |ts: f64| json!({"ph": "B", "pid": 1, "ts": ts, "name": "x"});
        let merged = merge(vec![
            (0, vec![start("1000", 10.0), slice(50.0)]),
            (1, vec![start("1030", 10.0), slice(50.0)]),
        ]);
        let events = merged["traceEvents"].as_array().expect("events");
        assert_eq!(events.len(), 8, "two events and two metadata per rank");
        let slices: Vec<(u64, f64)> = events
            .iter()
            .filter(|e| e["ph"] == "B")
            .map(|e| (e["pid"].as_u64().unwrap(), e["ts"].as_f64().unwrap()))
            .collect();
        // Rank 1's clock started 30 us after rank 0's.
        assert_eq!(slices, vec![(0, 50.0), (1, 80.0)]);
        assert!(events.iter().any(|e| e["name"] == "process_name"
            && e["pid"] == 1
            && e["args"]["name"] == "rank 1"));
    }
}
