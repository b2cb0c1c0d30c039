//! Where persistence spends its time, for `CD_MPI_STATS`: the interposer writes [`totals`]
//! into each rank's statistics file at `MPI_Finalize`.
//!
//! The counters are updated once per persist, recover, fetch or flush (a few relaxed atomic
//! additions next to a collective step that writes files), so they are always kept: there is
//! nothing to save by turning them off.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The operations counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    /// A persist at an advance: data file, redundancy, commit markers.
    Persist,
    /// A restart's recover of a local version (with its rebuild, if any).
    Recover,
    /// A restart's fetch of a flushed version from the global directory.
    Fetch,
    /// Flushing a version to the global directory (the copy; for a background flush, the
    /// bytes only: its time is the thread's, not the application's).
    Flush,
    /// The time an advance waited for the previous background flush to complete.
    FlushWait,
    /// A persist's consistency check: the message counts exchanged and compared (counted
    /// whatever its verdict).
    Check,
}

const OPS: usize = 6;
const NAMES: [&str; OPS] = [
    "persist",
    "recover",
    "fetch",
    "flush",
    "flush_wait",
    "check",
];
static COUNT: [AtomicU64; OPS] = [const { AtomicU64::new(0) }; OPS];
static NANOS: [AtomicU64; OPS] = [const { AtomicU64::new(0) }; OPS];
static BYTES: [AtomicU64; OPS] = [const { AtomicU64::new(0) }; OPS];

/// What an operation's result says of the bytes it wrote.
pub(crate) trait Bytes {
    /// This rank's bytes written (0 when not counted).
    fn bytes(&self) -> u64;
}

impl Bytes for u64 {
    fn bytes(&self) -> u64 {
        *self
    }
}

impl Bytes for () {
    fn bytes(&self) -> u64 {
        0
    }
}

/// Counts one `op` that took `time` and wrote `bytes` on this rank.
pub(crate) fn record(op: Op, time: Duration, bytes: u64) {
    let i = op as usize;
    COUNT[i].fetch_add(1, Ordering::Relaxed);
    NANOS[i].fetch_add(
        u64::try_from(time.as_nanos()).unwrap_or(u64::MAX),
        Ordering::Relaxed,
    );
    BYTES[i].fetch_add(bytes, Ordering::Relaxed);
}

/// Adds `bytes` to `op`'s bytes (a background flush's copy, counted when it completes).
pub(crate) fn add_bytes(op: Op, bytes: u64) {
    BYTES[op as usize].fetch_add(bytes, Ordering::Relaxed);
}

/// Runs `f` as one `op`, counted when it succeeds.
pub(crate) fn timed<T: Bytes, E>(op: Op, f: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
    // A span of the phase (CD_TRACE, CD_TIMELINE): one callsite per operation, named by it.
    let _span = match op {
        Op::Persist => tracing::debug_span!("persist"),
        Op::Recover => tracing::debug_span!("recover"),
        Op::Fetch => tracing::debug_span!("fetch"),
        Op::Flush => tracing::debug_span!("flush"),
        Op::FlushWait => tracing::debug_span!("flush_wait"),
        Op::Check => tracing::debug_span!("check"),
    }
    .entered();
    let start = std::time::Instant::now();
    let out = f();
    if let Ok(v) = &out {
        record(op, start.elapsed(), v.bytes());
    }
    out
}

/// Persists refused because application traffic was in flight.
static REFUSED: AtomicU64 = AtomicU64::new(0);
/// Persists whose consistency check used counts that began after `MPI_Init`.
static UNPROVEN: AtomicU64 = AtomicU64::new(0);

/// Counts a persist refused by the consistency check.
pub(crate) fn refused() {
    REFUSED.fetch_add(1, Ordering::Relaxed);
}

/// Counts a persist checked with counts that began at a `create_cd`, not at `MPI_Init`; the
/// first one is also reported through `tracing`.
pub(crate) fn unproven() {
    if UNPROVEN.fetch_add(1, Ordering::Relaxed) == 0 {
        tracing::warn!(
            "persisting with message counts that began at the first persistent create_cd, not \
             at MPI_Init: a message sent before then is not seen, so the version's consistency \
             is checked but not proven; set dir in CD_STORAGE_INFO to count from MPI_Init"
        );
    }
}

/// The totals of this process, as `CD_MPI_STATS` keys: `persist.count`, `persist.ns`,
/// `persist.bytes`, and the same for `recover`, `fetch`, `flush`, `flush_wait` and `check`
/// (counts and times of successful operations, and of every consistency check; bytes are this
/// rank's data file bytes written, rebuilt or checked, fetched, and copied to the global
/// directory), then `persist.refused` (persists refused because application traffic was in flight)
/// and `persist.unproven` (persists whose consistency check used message counts that began after
/// `MPI_Init`).
pub fn totals() -> Vec<(String, u64)> {
    let mut out = Vec::with_capacity(3 * OPS + 2);
    for (i, name) in NAMES.iter().enumerate() {
        out.push((format!("{name}.count"), COUNT[i].load(Ordering::Relaxed)));
        out.push((format!("{name}.ns"), NANOS[i].load(Ordering::Relaxed)));
        out.push((format!("{name}.bytes"), BYTES[i].load(Ordering::Relaxed)));
    }
    out.push((
        "persist.refused".to_owned(),
        REFUSED.load(Ordering::Relaxed),
    ));
    out.push((
        "persist.unproven".to_owned(),
        UNPROVEN.load(Ordering::Relaxed),
    ));
    out
}
