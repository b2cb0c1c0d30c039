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
//! bytes written to spill files, from cd-core),
//! and what the linking library's [`crate::Hooks::statistics`] adds (libcd: persistence's
//! counters, `persist.*`, `recover.*`, ...; see cd-persist's `stats`). Nothing is counted here (not even calls) unless the variable is set,
//! so the counters cost one relaxed load when off; persistence counts once per collective
//! persist step, which writes files anyway.

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

/// Writes the summary for `rank` (at `MPI_Finalize`); errors go to `tracing` only.
pub(crate) fn write(rank: i32) {
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

const _: () = assert!(Call::ALL.len() <= CALLS);
