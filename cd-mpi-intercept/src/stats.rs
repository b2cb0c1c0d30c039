//! Per-rank statistics, written at `MPI_Finalize` when `CD_MPI_STATS=<path prefix>` is set.
//!
//! The file is `<prefix><rank>` (for example `CD_MPI_STATS=/tmp/run1/stats.` gives
//! `/tmp/run1/stats.0`, ...), one `key value` pair per line: `calls.MPI_Send 12` for every
//! call seen (with or without a CD), then the totals `records.logged`, `bytes.logged`,
//! `records.replayed`, `sends.dropped`, `calls.unreplayable`, `receives.drained`,
//! `receives.cancelled`, `sends.settled`, `sends.unsettled`, `replay.mismatches`,
//! `log.failures`, `handles.held`, `handles.released`, `handles.freed_early` (communicators
//! and persistent requests freed while logging, held until no log can replay them, freed
//! since, and of those the ones freed past `CD_MPI_HELD_MAX`), and `bytes.spilled` (log
//! bytes written to spill files, from cd-core), the advice on when to advance of every CD
//! level the rank used (cd-core's `advice`: `advice.<root name>.<depth>.interval_ns` and the
//! inputs, see [`advice_lines`]), and what the linking library's [`crate::Hooks::statistics`] adds
//! (libcd: persistence's counters, `persist.*`, `recover.*`, ...; see cd-persist's `stats`).
//! Nothing is counted here (not even calls) unless the variable is set, so the counters cost one
//! relaxed load when off; persistence counts once per collective persist step, which writes files
//! anyway.

use crate::pmpi::Call;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The environment variable naming the statistics file prefix.
pub const STATS_ENV: &str = "CD_MPI_STATS";

static ENABLED: AtomicBool = AtomicBool::new(false);

const CALLS: usize = 512;
static COUNTS: [AtomicU64; CALLS] = [const { AtomicU64::new(0) }; CALLS];

macro_rules! totals {
    ($($name:ident => $key:literal, $doc:literal;)*) => {
        $(#[doc = $doc] static $name: AtomicU64 = AtomicU64::new(0);)*
        const TOTALS: &[(&str, &AtomicU64)] = &[$(($key, &$name),)*];
    };
}

totals! {
    RECORDS => "records.logged", "Log records appended.";
    BYTES => "bytes.logged", "Bytes of log records appended.";
    REPLAYED => "records.replayed", "Log records served to re-executed calls.";
    DROPPED => "sends.dropped", "Re-executed sends not sent again.";
    UNREPLAYABLE => "calls.unreplayable", "Calls that pass through and cannot be replayed.";
    DRAINED => "receives.drained", "Receives in flight at restore_cd that had data.";
    CANCELLED => "receives.cancelled", "Receives in flight at restore_cd that were cancelled.";
    SETTLED => "sends.settled", "Sends in flight at restore_cd completed before memory was restored.";
    UNSETTLED => "sends.unsettled", "Sends still in flight when restore_cd stopped waiting for them.";
    MISMATCHES => "replay.mismatches", "Re-executed calls that did not match the log.";
    LOG_FAILURES => "log.failures", "Records the log refused.";
    HELD => "handles.held", "Communicators and persistent requests freed while logging, held.";
    RELEASED => "handles.released", "Held handles freed once no log could replay them, or past the cap.";
    FREED_EARLY => "handles.freed_early", "Held handles freed past CD_MPI_HELD_MAX, their logs made unreplayable.";
}

/// Reads `CD_MPI_STATS` (at `MPI_Init`).
pub(crate) fn init() {
    let enabled = std::env::var_os(STATS_ENV).is_some();
    ENABLED.store(enabled, Ordering::Relaxed);
    if enabled {
        crate::intercept();
    }
}

#[inline]
fn add(counter: &AtomicU64, n: u64) {
    if ENABLED.load(Ordering::Relaxed) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

/// Counts a call.
#[inline]
pub(crate) fn count(call: Call) {
    add(&COUNTS[call as usize], 1);
}

/// Counts an appended record of `bytes`.
pub(crate) fn logged(bytes: usize) {
    add(&RECORDS, 1);
    add(&BYTES, bytes as u64);
}

/// Counts a replayed record.
pub(crate) fn replayed() {
    add(&REPLAYED, 1);
}

/// Counts a dropped send.
pub(crate) fn dropped() {
    add(&DROPPED, 1);
}

/// Counts an unreplayable call.
pub(crate) fn unreplayable() {
    add(&UNREPLAYABLE, 1);
}

/// Counts a drained receive (`true`: it had data; `false`: cancelled).
pub(crate) fn drained(with_data: bool) {
    add(if with_data { &DRAINED } else { &CANCELLED }, 1);
}

/// Counts a send in flight at restore (`true`: it completed before memory was restored).
pub(crate) fn settled(completed: bool) {
    add(if completed { &SETTLED } else { &UNSETTLED }, 1);
}

/// Counts a replay mismatch.
pub(crate) fn mismatch() {
    add(&MISMATCHES, 1);
}

/// Counts a handle held at its free (`comm`).
pub(crate) fn held() {
    add(&HELD, 1);
}

/// Counts a held handle freed (`comm`).
pub(crate) fn released() {
    add(&RELEASED, 1);
}

/// Counts a held handle freed past the cap (counted as released too).
pub(crate) fn freed_early() {
    add(&FREED_EARLY, 1);
}

/// Counts a refused record.
pub(crate) fn log_failed() {
    add(&LOG_FAILURES, 1);
}

/// Writes the summary for `rank` (at `MPI_Finalize`), with `extra` lines of the layers above
/// (in-job recovery's); errors go to `tracing` only.
pub(crate) fn write(rank: i32, extra: Vec<(String, u64)>) {
    let Some(prefix) = std::env::var_os(STATS_ENV) else {
        return;
    };
    let mut path = prefix;
    path.push(rank.to_string());
    let mut text = String::new();
    for call in Call::ALL {
        let n = COUNTS[*call as usize].load(Ordering::Relaxed);
        if n > 0 {
            text.push_str(&format!("calls.{} {n}\n", call.name()));
        }
    }
    for (key, counter) in TOTALS {
        text.push_str(&format!("{key} {}\n", counter.load(Ordering::Relaxed)));
    }
    text.push_str(&format!("bytes.spilled {}\n", cd_core::log_spilled_total()));
    text.push_str(&advice_lines(&cd_core::all_advice()));
    for (key, value) in extra {
        text.push_str(&format!("{key} {value}\n"));
    }
    if let Some(hooks) = crate::hooks::hooks() {
        for (key, value) in (hooks.statistics)() {
            text.push_str(&format!("{key} {value}\n"));
        }
    }
    let result = std::fs::File::create(&path).and_then(|mut f| f.write_all(text.as_bytes()));
    if let Err(error) = result {
        tracing::warn!(path = %path.to_string_lossy(), %error, "cannot write the MPI statistics");
    }
}

/// The advice lines, per level (the root's name, `unnamed` for unnamed roots, with blanks
/// as `_`; the depth), `advice.<name>.<depth>.<key> <value>` with integer values as every line
/// of the file: `interval_known` (1 or 0), then, only when known, `interval_ns` (Daly's),
/// `young_interval_ns`, `advance_cost_ns`, `restore_cost_ns` and `mtbf_ns`, then
/// `mtbf_source` (0 unknown, 1 observed, 2 given by `CD_MTBF`: cd.h's `CD_MTBF_*`),
/// `advances` (timed) and `restores`. A value that is not known has no line: never a guess.
pub(crate) fn advice_lines(levels: &[(Option<String>, u32, cd_core::Advice)]) -> String {
    let mut text = String::new();
    for (name, depth, a) in levels {
        let name: String = name
            .as_deref()
            .unwrap_or("unnamed")
            .chars()
            .map(|c| if c.is_whitespace() { '_' } else { c })
            .collect();
        let mut line = |key: &str, value: u64| {
            text.push_str(&format!("advice.{name}.{depth}.{key} {value}\n"));
        };
        line("interval_known", u64::from(a.interval_s.is_some()));
        let times = [
            ("interval_ns", a.interval_s),
            ("young_interval_ns", a.young_interval_s),
            ("advance_cost_ns", a.advance_cost_s),
            ("restore_cost_ns", a.restore_cost_s),
            ("mtbf_ns", a.mtbf_s),
        ];
        for (key, seconds) in times {
            if let Some(s) = seconds {
                line(key, (s * 1e9).round() as u64);
            }
        }
        let source = match a.mtbf_source {
            cd_core::MtbfSource::Unknown => 0,
            cd_core::MtbfSource::Observed => 1,
            cd_core::MtbfSource::Given => 2,
        };
        line("mtbf_source", source);
        line("advances", a.advances);
        line("restores", a.restores);
    }
    text
}

const _: () = assert!(Call::ALL.len() <= CALLS);

#[cfg(test)]
mod tests {
    use super::advice_lines;
    use cd_core::{Advice, Measured};

    #[test]
    fn advice_lines_leave_out_the_unknown_and_give_the_interval() {
        let measured = Measured {
            advances: 4,
            advance_ns: 8_000_000,
            restores: 0,
            restore_ns: 0,
            observed_s: 10.0,
        };
        let unknown = Advice::from_measured(measured, None);
        let given = Advice::from_measured(measured, Some(100.0));
        let text = advice_lines(&[(Some("heat solver".into()), 0, unknown), (None, 1, given)]);
        let lines: Vec<&str> = text.lines().collect();
        let interval = (cd_core::daly_interval(0.002, 100.0) * 1e9).round() as u64;
        let expected = [
            "advice.heat_solver.0.interval_known 0".to_owned(),
            "advice.heat_solver.0.advance_cost_ns 2000000".to_owned(),
            "advice.heat_solver.0.mtbf_source 0".to_owned(),
            "advice.heat_solver.0.advances 4".to_owned(),
            "advice.heat_solver.0.restores 0".to_owned(),
            "advice.unnamed.1.interval_known 1".to_owned(),
            format!("advice.unnamed.1.interval_ns {interval}"),
            "advice.unnamed.1.young_interval_ns 632455532".to_owned(),
            "advice.unnamed.1.advance_cost_ns 2000000".to_owned(),
            "advice.unnamed.1.mtbf_ns 100000000000".to_owned(),
            "advice.unnamed.1.mtbf_source 2".to_owned(),
            "advice.unnamed.1.advances 4".to_owned(),
            "advice.unnamed.1.restores 0".to_owned(),
        ];
        assert_eq!(lines, expected);
        // Every value is an integer, as the file's other lines (readers parse them so).
        for l in &lines {
            let (_, v) = l.split_once(' ').unwrap();
            v.parse::<u64>().unwrap();
        }
    }
}
