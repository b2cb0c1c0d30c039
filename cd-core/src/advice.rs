//! Advice on when to advance: the interval between advances that minimises expected run time,
//! from the measured cost of an advance and the mean time between faults.
//!
//! # What is measured
//! A synchronous advance is timed from its call to its new point in time being current, every
//! restore from its call to memory restored: two monotonic clock reads, about 75 ns together
//! on our VMs (`cd-core/BENCHMARKS.md`). That is nothing next to an advance that copies
//! megabytes, but 10% of the smallest advances (a promotion of a few bytes, ~0.8 us). So a
//! thread whose last timed advance took under [`CHEAP_NS`] times only one advance in
//! [`CHEAP_SAMPLE`] after it (the others cost one thread-local decrement); the mean advance
//! cost is taken over the timed advances, which are then a sample of that thread's advances
//! chosen by the cost of the one before, not by their own. Restores are rare: all are timed.
//! An asynchronous advance is not timed: its copy overlaps the work, so its cost is not one an
//! interval trades against.
//!
//! The measurements go to the CD's own [`Stats`](crate::Stats) (`timed_advances`,
//! `advance_ns`, `restore_ns`)
//! and to its *level*: the CDs at the same depth of trees whose roots have the same name.
//! Advice is per level, so a child CD created and committed every iteration gets what its
//! predecessors measured, and the levels outlive their CDs (the MPI layer's `CD_MPI_STATS`
//! lists them at `MPI_Finalize`, when the CDs are usually gone). A level's record is found
//! through a per-thread cache and updated with relaxed atomic adds, as the process-wide
//! counters are.
//!
//! # The mean time between faults
//! `CD_MTBF=<seconds>` when set (a positive number), else the level's observed mean time
//! between restores: the time from its first timed advance or restore to now, divided by its
//! restores. That window counts time when no CD of the level was live, so a program that runs
//! a level, pauses long, then runs it again should set `CD_MTBF`. With neither (no `CD_MTBF`,
//! no restore yet) it is unknown, and so is the interval: [`Advice::interval_s`] is `None`, never a
//! made-up number. The advance cost is unknown until a synchronous advance of the level completed.
//!
//! # The formula
//! Young's first-order optimum is `sqrt(2 C M)` (C the cost of one advance, M the mean time
//! between faults). The advice is Daly's higher-order estimate (J. T. Daly, "A higher order
//! estimate of the optimum checkpoint interval for restart dumps", FGCS 22(3), 2006, eq. 37):
//! `sqrt(2 C M) (1 + sqrt(C / 2M) / 3 + (C / 2M) / 9) - C` for `C < 2M`, else `M`. It is the
//! same model (exponential faults, work lost since the last advance, a restart cost that does
//! not move the optimum) without Young's assumption that C is much smaller than M: it tends to
//! Young's as C/M tends to 0, stays within 0.5% of a numerically optimised interval for
//! C/M up to about 0.5 where Young's overestimates, and stays defined (M) where Young's
//! interval would exceed the time to the next fault. Both are reported
//! ([`Advice::young_interval_s`]). The interval is compute time between advances, the
//! advance's own cost not included.
//!
//! # Where it shows
//! [`cd_advice`] (the facade's `advice()`, C's `cd_get_advice`), the description of a CD
//! ([`CdInfo::advice`](crate::CdInfo::advice); C's `cd_get_info` carries the interval), the
//! MPI layer's `CD_MPI_STATS`, and, when a subscriber wants `DEBUG` events (libcd's
//! `CD_TIMELINE` and `CD_TRACE=cd_core=debug`), an event after every timed advance with the
//! advice as it stands.

use crate::active;
use crate::callback;
use crate::error::Result;
use crate::ids::CdRef;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

/// The environment variable giving the mean time between faults, in seconds.
pub const MTBF_ENV: &str = "CD_MTBF";

/// An advance that took less than this (nanoseconds) is cheap: the thread then times only
/// one advance in [`CHEAP_SAMPLE`] until a timed one is not cheap (module docs).
pub const CHEAP_NS: u64 = 20_000;

/// How many advances a thread skips timing after a cheap one, plus one.
pub const CHEAP_SAMPLE: u32 = 32;

thread_local! {
    /// Advances this thread still leaves untimed (see [`CHEAP_NS`]).
    static UNTIMED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// When a synchronous advance starts: `Some(now_ns())` if this one is timed.
#[inline]
pub(crate) fn advance_started() -> Option<u64> {
    let skip = UNTIMED.try_with(|u| {
        let left = u.get();
        if left > 0 {
            u.set(left - 1);
        }
        left > 0
    });
    match skip {
        Ok(true) => None,
        _ => Some(now_ns()),
    }
}

/// Where the mean time between faults of an [`Advice`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MtbfSource {
    /// Neither `CD_MTBF` nor a restore: unknown.
    Unknown,
    /// Observed: the time the level ran, divided by its restores.
    Observed,
    /// Given by `CD_MTBF`.
    Given,
}

/// When to advance a CD (its level: the CDs at its depth under roots of the same name).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Advice {
    /// The interval of work between advances that minimises expected time, in seconds
    /// (Daly's higher-order estimate); `None` while the advance cost or the mean time between
    /// faults is unknown.
    pub interval_s: Option<f64>,
    /// Young's first-order interval `sqrt(2 C M)`, in seconds; `None` when `interval_s` is.
    pub young_interval_s: Option<f64>,
    /// The mean time of one synchronous advance (over the timed ones), in seconds; `None`
    /// before the first.
    pub advance_cost_s: Option<f64>,
    /// The mean time of one restore, in seconds; `None` before the first.
    pub restore_cost_s: Option<f64>,
    /// The mean time between faults used, in seconds; `None` when unknown.
    pub mtbf_s: Option<f64>,
    /// Where `mtbf_s` came from.
    pub mtbf_source: MtbfSource,
    /// Synchronous advances timed (all of them, but one in [`CHEAP_SAMPLE`] of the cheap).
    pub advances: u64,
    /// Restores seen.
    pub restores: u64,
    /// Seconds from the level's first timed advance or restore to the query.
    pub observed_s: f64,
}

/// Young's first-order optimum interval, `sqrt(2 C M)`.
pub fn young_interval(advance_cost_s: f64, mtbf_s: f64) -> f64 {
    (2.0 * advance_cost_s * mtbf_s).sqrt()
}

/// Daly's higher-order optimum interval: `sqrt(2 C M) (1 + sqrt(C/2M)/3 + (C/2M)/9) - C` for
/// `C < 2M`, else `M` (module docs).
pub fn daly_interval(advance_cost_s: f64, mtbf_s: f64) -> f64 {
    let (c, m) = (advance_cost_s, mtbf_s);
    if c >= 2.0 * m {
        return m;
    }
    let x = c / (2.0 * m);
    young_interval(c, m) * (1.0 + x.sqrt() / 3.0 + x / 9.0) - c
}

/// What a level measured: the inputs of [`Advice::from_measured`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Measured {
    /// Synchronous advances timed.
    pub advances: u64,
    /// Their total time, in nanoseconds.
    pub advance_ns: u64,
    /// Restores.
    pub restores: u64,
    /// Their total time, in nanoseconds.
    pub restore_ns: u64,
    /// Seconds observed (from the first timed operation to now).
    pub observed_s: f64,
}

impl Advice {
    /// The advice for `measured`, with `given_mtbf_s` (`CD_MTBF`) when set.
    pub fn from_measured(measured: Measured, given_mtbf_s: Option<f64>) -> Advice {
        let mean = |ns: u64, n: u64| (n > 0).then(|| ns as f64 / n as f64 / 1e9);
        let advance_cost_s = mean(measured.advance_ns, measured.advances);
        let restore_cost_s = mean(measured.restore_ns, measured.restores);
        let (mtbf_s, mtbf_source) = match given_mtbf_s {
            Some(m) => (Some(m), MtbfSource::Given),
            None if measured.restores > 0 && measured.observed_s > 0.0 => (
                Some(measured.observed_s / measured.restores as f64),
                MtbfSource::Observed,
            ),
            None => (None, MtbfSource::Unknown),
        };
        let both = advance_cost_s.zip(mtbf_s);
        Advice {
            interval_s: both.map(|(c, m)| daly_interval(c, m)),
            young_interval_s: both.map(|(c, m)| young_interval(c, m)),
            advance_cost_s,
            restore_cost_s,
            mtbf_s,
            mtbf_source,
            advances: measured.advances,
            restores: measured.restores,
            observed_s: measured.observed_s,
        }
    }
}

/// `CD_MTBF` in seconds: `None` when unset, or when not a positive finite number (warned
/// once per process). Read at every query, so a program may set it as it runs.
pub fn given_mtbf() -> Option<f64> {
    static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let text = std::env::var(MTBF_ENV).ok()?;
    match text.trim().parse::<f64>() {
        Ok(m) if m.is_finite() && m > 0.0 => Some(m),
        _ => {
            if !WARNED.swap(true, Ordering::Relaxed) {
                tracing::warn!(value = %text, "{MTBF_ENV} is not a positive number of seconds: ignored");
            }
            None
        }
    }
}

/// Nanoseconds on the runtime's monotonic clock, from its first reading; never 0 (0 means
/// "not yet" in [`Level::first_ns`]).
pub(crate) fn now_ns() -> u64 {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    let origin = ORIGIN.get_or_init(Instant::now);
    origin.elapsed().as_nanos() as u64 + 1
}

/// One level's measurements (never freed: there are as many as distinct names and depths).
#[derive(Default)]
struct Level {
    first_ns: AtomicU64,
    advances: AtomicU64,
    advance_ns: AtomicU64,
    restores: AtomicU64,
    restore_ns: AtomicU64,
}

impl Level {
    fn start(&self, at: u64) {
        if self.first_ns.load(Ordering::Relaxed) == 0 {
            let _ = self
                .first_ns
                .compare_exchange(0, at, Ordering::Relaxed, Ordering::Relaxed);
        }
    }

    fn measured(&self, now: u64) -> Measured {
        let first = self.first_ns.load(Ordering::Relaxed);
        Measured {
            advances: self.advances.load(Ordering::Relaxed),
            advance_ns: self.advance_ns.load(Ordering::Relaxed),
            restores: self.restores.load(Ordering::Relaxed),
            restore_ns: self.restore_ns.load(Ordering::Relaxed),
            observed_s: if first == 0 {
                0.0
            } else {
                now.saturating_sub(first) as f64 / 1e9
            },
        }
    }
}

/// A level's key: the root's name and the depth.
type Key = (Option<Arc<str>>, u32);

fn same(a: &Option<Arc<str>>, b: &Option<Arc<str>>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => Arc::ptr_eq(a, b) || **a == **b,
        _ => false,
    }
}

static LEVELS: Mutex<Vec<(Key, &'static Level)>> = Mutex::new(Vec::new());

thread_local! {
    /// The last level this thread recorded into (the key holds the name alive, so a pointer
    /// match is a name match).
    static LAST: RefCell<Option<(Key, &'static Level)>> = const { RefCell::new(None) };
}

/// The level of CDs named `name` (the root's) at `depth`, made on first use.
fn level(name: &Option<Arc<str>>, depth: u32) -> &'static Level {
    let cached = LAST
        .try_with(|last| {
            let last = last.borrow();
            match &*last {
                Some(((n, d), level)) if *d == depth && same(n, name) => Some(*level),
                _ => None,
            }
        })
        .ok()
        .flatten();
    if let Some(level) = cached {
        return level;
    }
    let level = {
        let mut levels = LEVELS.lock().unwrap_or_else(|e| e.into_inner());
        match levels
            .iter()
            .find(|((n, d), _)| *d == depth && same(n, name))
        {
            Some((_, level)) => *level,
            None => {
                let level: &'static Level = Box::leak(Box::default());
                levels.push(((name.clone(), depth), level));
                level
            }
        }
    };
    let _ = LAST.try_with(|last| *last.borrow_mut() = Some(((name.clone(), depth), level)));
    level
}

/// Records a timed synchronous advance of a CD at (`name`, `depth`) that began at `started`
/// ([`advance_started`]) and ended at `ended`.
pub(crate) fn record_advance(name: &Option<Arc<str>>, depth: u32, started: u64, ended: u64) {
    if ended.saturating_sub(started) < CHEAP_NS {
        let _ = UNTIMED.try_with(|u| u.set(CHEAP_SAMPLE - 1));
    }
    let level = level(name, depth);
    level.start(started);
    level.advances.fetch_add(1, Ordering::Relaxed);
    level
        .advance_ns
        .fetch_add(ended.saturating_sub(started), Ordering::Relaxed);
    // the advice as it stands, for a timeline or trace that wants it (computed only then)
    if tracing::enabled!(tracing::Level::DEBUG) {
        let advice = level_advice(name.as_deref(), depth);
        tracing::debug!(
            cd = name.as_deref().unwrap_or(""),
            depth,
            interval_s = advice.interval_s.unwrap_or(f64::NAN),
            advance_cost_s = advice.advance_cost_s.unwrap_or(f64::NAN),
            mtbf_s = advice.mtbf_s.unwrap_or(f64::NAN),
            "advice on when to advance (NaN: not known yet)"
        );
    }
}

/// Records a restore, as [`record_advance`].
pub(crate) fn record_restore(name: &Option<Arc<str>>, depth: u32, started: u64, ended: u64) {
    let level = level(name, depth);
    level.start(started);
    level.restores.fetch_add(1, Ordering::Relaxed);
    level
        .restore_ns
        .fetch_add(ended.saturating_sub(started), Ordering::Relaxed);
}

/// The advice for a CD's level (`CURRENT_CD` works): see the module docs.
pub fn cd_advice(cd: impl Into<CdRef>) -> Result<Advice> {
    callback::check()?;
    let node = active::resolve(cd.into())?;
    node.check_live()?;
    Ok(level_advice(node.root_name.as_deref(), node.depth))
}

/// The advice for the CDs at `depth` under roots named `name`, whether or not any is live
/// (nothing measured yet: every value unknown).
pub fn level_advice(name: Option<&str>, depth: u32) -> Advice {
    let now = now_ns();
    let measured = {
        let levels = LEVELS.lock().unwrap_or_else(|e| e.into_inner());
        levels
            .iter()
            .find(|((n, d), _)| *d == depth && n.as_deref() == name)
            .map(|(_, level)| level.measured(now))
            .unwrap_or_default()
    };
    Advice::from_measured(measured, given_mtbf())
}

/// Every level measured so far in this process: the root's name (`None`: unnamed roots), the
/// depth and the advice, in the order the levels were first seen.
pub fn all_advice() -> Vec<(Option<String>, u32, Advice)> {
    let now = now_ns();
    let given = given_mtbf();
    let levels = LEVELS.lock().unwrap_or_else(|e| e.into_inner());
    levels
        .iter()
        .map(|((name, depth), level)| {
            (
                name.as_deref().map(str::to_owned),
                *depth,
                Advice::from_measured(level.measured(now), given),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        add_to_cd_via_copy, advance_cd_point_in_time, cd_info, commit_cd, create_cd, restore_cd,
        Access, AddrSpec, LoggingMode,
    };

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn young_and_daly_give_the_known_intervals() {
        // C = 10 s, M = 20000 s: sqrt(2 * 10 * 20000) = sqrt(400000) = 632.4555320336759.
        let young = young_interval(10.0, 20_000.0);
        assert!(close(young, 632.455_532_033_675_9), "{young}");
        // x = C / 2M = 2.5e-4, sqrt(x) = 0.015811388300841896:
        // 632.4555320336759 * (1 + 0.005270462766947299 + 0.0000277777...) - 10.
        let daly = daly_interval(10.0, 20_000.0);
        let expected =
            632.455_532_033_675_9 * (1.0 + 0.015_811_388_300_841_896 / 3.0 + 2.5e-4 / 9.0) - 10.0;
        assert!(close(daly, expected), "{daly} vs {expected}");
        assert!((daly - 625.806_433_576).abs() < 1e-6, "{daly}");
        // C = 1 s, M = 2 s: x = 1/4, sqrt(x) = 1/2: 2 * (1 + 1/6 + 1/36) - 1 = 1.38888...
        assert!(close(
            daly_interval(1.0, 2.0),
            2.0 * (1.0 + 1.0 / 6.0 + 1.0 / 36.0) - 1.0
        ));
        // C >= 2M: the interval is M.
        assert_eq!(daly_interval(5.0, 2.0), 2.0);
        assert_eq!(daly_interval(4.0, 2.0), 2.0);
        // Small C/M: Daly tends to Young (within C).
        let (c, m) = (1e-3, 3600.0);
        assert!((daly_interval(c, m) - young_interval(c, m)).abs() < 2.0 * c);
    }

    #[test]
    fn unknown_inputs_give_no_interval() {
        let nothing = Advice::from_measured(Measured::default(), None);
        assert_eq!(nothing.interval_s, None);
        assert_eq!(nothing.young_interval_s, None);
        assert_eq!(nothing.advance_cost_s, None);
        assert_eq!(nothing.mtbf_s, None);
        assert_eq!(nothing.mtbf_source, MtbfSource::Unknown);
        // Advances measured, no restore and no CD_MTBF: the cost is known, the interval not.
        let advanced = Measured {
            advances: 4,
            advance_ns: 4_000_000,
            observed_s: 10.0,
            ..Measured::default()
        };
        let a = Advice::from_measured(advanced, None);
        assert_eq!(a.advance_cost_s, Some(1e-3));
        assert_eq!((a.interval_s, a.mtbf_source), (None, MtbfSource::Unknown));
        // A given MTBF and no advance: still unknown.
        let b = Advice::from_measured(Measured::default(), Some(100.0));
        assert_eq!((b.interval_s, b.mtbf_s), (None, Some(100.0)));
        assert_eq!(b.mtbf_source, MtbfSource::Given);
    }

    #[test]
    fn observed_and_given_mtbf() {
        // 2 restores in 200 s: M = 100 s; C = 2 ms: Daly(0.002, 100).
        let m = Measured {
            advances: 10,
            advance_ns: 20_000_000,
            restores: 2,
            restore_ns: 6_000_000,
            observed_s: 200.0,
        };
        let a = Advice::from_measured(m, None);
        assert_eq!(a.mtbf_source, MtbfSource::Observed);
        assert!(close(a.mtbf_s.unwrap(), 100.0));
        assert!(close(a.restore_cost_s.unwrap(), 3e-3));
        assert!(close(a.interval_s.unwrap(), daly_interval(2e-3, 100.0)));
        assert!(close(a.young_interval_s.unwrap(), 0.632_455_532_033_675_9));
        // CD_MTBF wins over what was observed.
        let g = Advice::from_measured(m, Some(50.0));
        assert_eq!(g.mtbf_source, MtbfSource::Given);
        assert!(close(g.interval_s.unwrap(), daly_interval(2e-3, 50.0)));
    }

    #[test]
    fn advances_and_restores_are_measured_per_cd_and_per_level() {
        let given = given_mtbf();
        let name = "advice-unit-test";
        let mut x = vec![7u8; 1 << 16];
        let cd = create_cd(None, None, LoggingMode::Disabled, Some(name)).unwrap();
        let before = level_advice(Some(name), 0);
        assert_eq!((before.advances, before.restores), (0, 0));
        assert_eq!(before.advance_cost_s, None);
        assert_eq!(before.interval_s, None);
        // SAFETY: `x` outlives the CD and nothing else touches it during these calls.
        unsafe {
            add_to_cd_via_copy(cd, &[AddrSpec::of(&x[..], Access::ReadWrite)]).unwrap();
            for _ in 0..3 {
                advance_cd_point_in_time(cd).unwrap();
            }
        }
        let info = cd_info(cd).unwrap();
        assert_eq!(info.stats.advances, 3);
        // The first is timed; cheap ones make the thread skip the next ones.
        let timed = info.stats.timed_advances;
        assert!((1..=3).contains(&timed), "{:?}", info.stats);
        assert!(info.stats.advance_ns > 0, "{:?}", info.stats);
        let a = cd_advice(cd).unwrap();
        assert_eq!((a.advances, a.restores), (timed, 0));
        let cost = a.advance_cost_s.unwrap();
        assert!(
            close(cost, info.stats.advance_ns as f64 / timed as f64 / 1e9),
            "{cost}"
        );
        assert_eq!(a.restore_cost_s, None);
        if given.is_none() {
            assert_eq!((a.interval_s, a.mtbf_source), (None, MtbfSource::Unknown));
        }
        x[0] = 1;
        // SAFETY: as above.
        unsafe { restore_cd(cd).unwrap() };
        assert_eq!(x[0], 7);
        let info = cd_info(cd).unwrap();
        assert!(info.stats.restore_ns > 0);
        // `cd_info` carries the same advice.
        assert_eq!((info.advice.advances, info.advice.restores), (timed, 1));
        assert_eq!(info.advice.advance_cost_s, Some(cost));
        let a = cd_advice(cd).unwrap();
        assert_eq!(a.restores, 1);
        assert!(a.restore_cost_s.unwrap() > 0.0);
        let m = a.mtbf_s.unwrap();
        if given.is_none() {
            assert_eq!(a.mtbf_source, MtbfSource::Observed);
            assert!(m > 0.0 && m <= a.observed_s, "{a:?}");
        }
        assert!(close(a.interval_s.unwrap(), daly_interval(cost, m)));
        // A child: its own level (depth 1), empty until it advances.
        let child = create_cd(Some(cd.into()), None, LoggingMode::Disabled, None).unwrap();
        assert_eq!(cd_advice(child).unwrap().advances, 0);
        commit_cd(child).unwrap();
        commit_cd(cd).unwrap();
        // The level outlives its CDs.
        let after = level_advice(Some(name), 0);
        assert_eq!((after.advances, after.restores), (timed, 1));
        assert!(all_advice()
            .iter()
            .any(|(n, d, a)| n.as_deref() == Some(name) && *d == 0 && a.advances == timed));
    }

    #[test]
    fn cheap_advances_are_sampled() {
        // A fresh thread (nothing left untimed); a CD with nothing to copy advances in a few
        // microseconds: one in CHEAP_SAMPLE is timed.
        std::thread::spawn(|| {
            let cd = create_cd(None, None, LoggingMode::Disabled, Some("advice-cheap")).unwrap();
            let n = 4 * u64::from(CHEAP_SAMPLE);
            for _ in 0..n {
                // SAFETY: the CD holds no memory.
                unsafe { advance_cd_point_in_time(cd).unwrap() };
            }
            let stats = cd_info(cd).unwrap().stats;
            assert_eq!(stats.advances, n);
            // 4 if none took CHEAP_NS; a preempted one makes the next one timed too.
            assert!((4..=12).contains(&stats.timed_advances), "{stats:?}");
            assert_eq!(cd_advice(cd).unwrap().advances, stats.timed_advances);
            commit_cd(cd).unwrap();
        })
        .join()
        .unwrap();
    }
}
