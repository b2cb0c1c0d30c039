//! Where the time of an operation goes, per phase, and how this thread waits for MPI.
//!
//! Every public collective operation ([`crate::Redset::apply`], [`crate::Redset::recover`],
//! [`crate::Redset::unapply`]) starts an `Op` on the calling thread; the pipelines add the
//! wall-clock time of each read, write, CRC, kernel call, fsync and MPI wait to thread-local
//! counters, and the operation returns them as [`PhaseTimes`]. An `Instant::now()` pair costs some
//! tens of nanoseconds; the pipelines time pieces of hundreds of KiB, so the counters cost nothing
//! measurable.
//!
//! The wait mode lives here too: MPI implementations busy-poll in `MPI_Wait` (MPICH spins at
//! 100% CPU), which starves the other ranks sharing a core when ranks outnumber cores. With
//! [`crate::Options::yield_while_waiting`] (the default) a wait is `MPI_Test` followed by
//! `sched_yield` until done: the same latency on a dedicated core, and the core goes to a rank
//! that has work when it is shared.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// Wall-clock time one rank spent in each phase of an `apply`, `recover` or `unapply`.
///
/// `other` is the rest of `total`: opening and stat-ing files, building and parsing headers,
/// the descriptor file, renames, memory allocation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhaseTimes {
    /// Reading data files and redundancy payloads.
    pub read: Duration,
    /// Writing redundancy payloads, rebuilt data files, headers and descriptor files.
    pub write: Duration,
    /// Computing CRC32C.
    pub crc: Duration,
    /// XOR and GF(2^8) kernels.
    pub kernel: Duration,
    /// Posting and waiting for point-to-point messages and collectives.
    pub mpi: Duration,
    /// fsync.
    pub sync: Duration,
    /// Everything else (`total` minus the phases above).
    pub other: Duration,
    /// The whole operation on this rank.
    pub total: Duration,
}

impl PhaseTimes {
    /// The phases with their names, in display order (`other` and `total` last).
    pub fn named(&self) -> [(&'static str, Duration); 8] {
        [
            ("read", self.read),
            ("crc", self.crc),
            ("kernel", self.kernel),
            ("mpi", self.mpi),
            ("write", self.write),
            ("sync", self.sync),
            ("other", self.other),
            ("total", self.total),
        ]
    }
}

impl std::fmt::Display for PhaseTimes {
    /// `read 11.7 ms, crc 3.4 ms, ..., total 72.0 ms`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, (name, d)) in self.named().iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}{name} {:.1} ms", d.as_secs_f64() * 1e3)?;
        }
        Ok(())
    }
}

/// The environment variable that asks for a per-rank summary line on standard error after
/// every `apply`, `recover` and `unapply` (any value but empty or `0`).
pub const STATS_ENV: &str = "CD_REDSET_STATS";

/// Whether [`STATS_ENV`] asks for summaries (read once).
pub(crate) fn stats_wanted() -> bool {
    static WANTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WANTED.get_or_init(|| std::env::var(STATS_ENV).is_ok_and(|v| !v.is_empty() && v != "0"))
}

/// Writes `line` to standard error in one call, so that the lines of ranks sharing the
/// launcher's stderr do not interleave (`eprintln!` may write a line in several pieces).
pub(crate) fn print_line(line: &str) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// A timed phase.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Phase {
    Read = 0,
    Write,
    Crc,
    Kernel,
    Mpi,
    Sync,
}

const PHASES: usize = 6;

thread_local! {
    static ACC: Cell<[Duration; PHASES]> = const { Cell::new([Duration::ZERO; PHASES]) };
    static YIELD: Cell<bool> = const { Cell::new(true) };
}

/// Adds `d` to phase `ph` of the running operation.
pub(crate) fn add(ph: Phase, d: Duration) {
    ACC.with(|a| {
        let mut v = a.get();
        v[ph as usize] += d;
        a.set(v);
    });
}

/// Runs `f`, counting its wall-clock time in phase `ph`.
pub(crate) fn timed<T>(ph: Phase, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let v = f();
    add(ph, t.elapsed());
    v
}

/// Whether MPI waits yield the core between tests (see the module docs).
pub(crate) fn yielding() -> bool {
    YIELD.with(Cell::get)
}

/// A running public operation on this thread.
pub(crate) struct Op {
    start: Instant,
    saved: ([Duration; PHASES], bool),
}

impl Op {
    /// Starts counting (from zero) with the given wait mode.
    pub fn begin(yield_while_waiting: bool) -> Op {
        let saved = (
            ACC.with(|a| a.replace([Duration::ZERO; PHASES])),
            YIELD.with(|y| y.replace(yield_while_waiting)),
        );
        Op {
            start: Instant::now(),
            saved,
        }
    }

    /// The times counted since `begin`.
    pub fn finish(self) -> PhaseTimes {
        let total = self.start.elapsed();
        let v = ACC.with(Cell::get);
        let sum: Duration = v.iter().sum();
        PhaseTimes {
            read: v[Phase::Read as usize],
            write: v[Phase::Write as usize],
            crc: v[Phase::Crc as usize],
            kernel: v[Phase::Kernel as usize],
            mpi: v[Phase::Mpi as usize],
            sync: v[Phase::Sync as usize],
            other: total.saturating_sub(sum),
            total,
        }
    }
}

impl Drop for Op {
    fn drop(&mut self) {
        ACC.with(|a| a.set(self.saved.0));
        YIELD.with(|y| y.set(self.saved.1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_add_up_and_restore() {
        let outer = Op::begin(false);
        add(Phase::Read, Duration::from_millis(5));
        {
            let inner = Op::begin(true);
            assert!(yielding());
            timed(Phase::Crc, || std::thread::sleep(Duration::from_millis(2)));
            timed(Phase::Mpi, || std::thread::sleep(Duration::from_millis(1)));
            let t = inner.finish();
            assert_eq!(t.read, Duration::ZERO);
            assert!(t.crc >= Duration::from_millis(2));
            assert!(t.mpi >= Duration::from_millis(1));
            assert!(t.total >= t.crc + t.mpi);
            assert_eq!(t.other, t.total - t.crc - t.mpi);
        }
        assert!(!yielding());
        let t = outer.finish();
        assert_eq!(t.read, Duration::from_millis(5));
        assert_eq!(t.crc, Duration::ZERO);
        assert_eq!(
            t.named().iter().map(|(n, _)| *n).collect::<Vec<_>>(),
            ["read", "crc", "kernel", "mpi", "write", "sync", "other", "total"]
        );
    }
}
