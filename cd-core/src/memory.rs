//! The memory the runtime holds, the cap a job may put on it, and the pool's budget.
//!
//! Three kinds of bytes are counted, process-wide:
//! - **stores**: the buffers of saved bytes (CD stores, and the buffer an add or advance fills
//!   before it swaps), from the heap or mapped (see `store`);
//! - **pool**: freed store mappings kept for the next buffer of about the same size (within
//!   the budget, and the spares past it: below);
//! - **logs**: MPI logs' heap chunks (with the spare blocks kept for reuse) and the entries
//!   handed over by `add_MPI_log_to_cd`. Spilled chunks live in files and are not counted.
//!
//! `CD_MEMORY_LIMIT` (bytes, with an optional `k`, `M` or `G` suffix; or
//! [`set_memory_limit`]) caps their sum. A store buffer that would take the sum past the cap
//! first evicts pooled mappings, and if that is not enough it is refused with
//! [`CdError::MemoryLimit`]: the add or advance that asked for it fails before it changed
//! anything (they allocate before they mutate), and the CD stays usable. Log records are
//! counted but never refused: an MPI call must not fail for a checkpoint's sake, and a long
//! log spills to files (`CD_MPI_LOG_SPILL`) instead of growing the heap.
//!
//! # The pool's budget: one policy
//! The pool keeps freed store mappings up to a budget: `CD_POOL_BYTES` if set (`0` disables
//! the pool, spares included), else an eighth of the node's physical memory divided among the
//! ranks on the node, at most 2 GiB per rank. The rank count comes from the launcher's
//! environment: `MPI_LOCALNRANKS` (MPICH's Hydra), `OMPI_COMM_WORLD_LOCAL_SIZE` (Open MPI),
//! `SLURM_NTASKS_PER_NODE` (Slurm), else 1.
//!
//! Past the budget the pool keeps *spares* (see `store`'s `POOL`): a freed mapping stays when
//! a store buffer alive now, of its size class, may need it for its next advance (an advance
//! fills its new buffer before it frees the old one). The spares of a class never outnumber
//! the live buffers of that class and their bytes never exceed the live mapped store bytes;
//! spares that no live buffer needs any more (its CD ended) are unmapped at once. So an
//! advance loop over any number of CDs of any sizes, such as a GPU code's (whose buffers a
//! device space pins), gets its buffers back each time instead of faulting fresh ones in,
//! and the pool holds at most the budget plus the live store. Spares and pooled mappings
//! count toward `CD_MEMORY_LIMIT`; a store buffer that needs the room evicts them in a fixed
//! order (spares first, then the mappings within the budget, each oldest first), so the pool
//! never makes an add or advance fail. [`MemoryHeld::mappings_made`] counts the fresh
//! mappings, which a loop that reuses its buffers does not increase.

use crate::error::{CdError, Result};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The environment variable capping the bytes held in stores, pool and logs.
pub const MEMORY_LIMIT_ENV: &str = "CD_MEMORY_LIMIT";
/// The environment variable setting the pool's budget in bytes (overrides the node share).
pub const POOL_BYTES_ENV: &str = "CD_POOL_BYTES";
/// The launchers' variables that give the number of ranks on this node, in the order read.
pub const LOCAL_RANKS_ENV: [&str; 3] = [
    "MPI_LOCALNRANKS",
    "OMPI_COMM_WORLD_LOCAL_SIZE",
    "SLURM_NTASKS_PER_NODE",
];

/// The most the pool keeps per rank when `CD_POOL_BYTES` is not set.
const POOL_CAP: u64 = 2 << 30;
/// The limit value that means "no limit".
const UNLIMITED: u64 = u64::MAX;

/// What a counted byte is used for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Use {
    Store = 0,
    Pool = 1,
    Logs = 2,
}

static HELD: [AtomicU64; 3] = [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];
static TOTAL: AtomicU64 = AtomicU64::new(0);
static PEAK: AtomicU64 = AtomicU64::new(0);
static MAPPINGS: AtomicU64 = AtomicU64::new(0);

/// Bytes the runtime holds now, by kind, and the peak of their sum.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryHeld {
    /// In store buffers.
    pub stores: u64,
    /// In the pool of freed store mappings.
    pub pool: u64,
    /// In MPI logs (heap chunks, spare blocks, handed-over entries).
    pub logs: u64,
    /// The most the three ever held together.
    pub peak: u64,
    /// Fresh store mappings made so far (a count, not bytes). Each one faults its pages in,
    /// and a device space pins it anew; a loop whose buffers come back from the pool leaves
    /// it unchanged.
    pub mappings_made: u64,
}

/// What the runtime holds now (see the module docs for what is counted).
pub fn memory_held() -> MemoryHeld {
    let load = |k: Use| HELD[k as usize].load(Ordering::Relaxed);
    MemoryHeld {
        stores: load(Use::Store),
        pool: load(Use::Pool),
        logs: load(Use::Logs),
        peak: PEAK.load(Ordering::Relaxed),
        mappings_made: MAPPINGS.load(Ordering::Relaxed),
    }
}

fn limit_cell() -> &'static AtomicU64 {
    static LIMIT: OnceLock<AtomicU64> = OnceLock::new();
    LIMIT.get_or_init(|| {
        let limit = match std::env::var(MEMORY_LIMIT_ENV) {
            Ok(text) => parse_bytes(&text).unwrap_or_else(|| {
                tracing::warn!(
                    "{MEMORY_LIMIT_ENV}={text:?} is not a size (bytes with k, M or G); \
                     no limit is applied"
                );
                UNLIMITED
            }),
            Err(_) => UNLIMITED,
        };
        AtomicU64::new(limit)
    })
}

/// The cap on the bytes held in stores, pool and logs (`None`: no cap). It comes from
/// `CD_MEMORY_LIMIT` (read once) unless [`set_memory_limit`] set it.
pub fn memory_limit() -> Option<u64> {
    Some(limit_cell().load(Ordering::Relaxed)).filter(|&l| l != UNLIMITED)
}

/// Sets the cap for allocations from now on (`None`: no cap), overriding `CD_MEMORY_LIMIT`.
/// Bytes already held stay; only new store buffers are checked against it.
pub fn set_memory_limit(limit: Option<u64>) {
    limit_cell().store(limit.unwrap_or(UNLIMITED), Ordering::Relaxed);
}

/// Counts `bytes` more of `kind` if that keeps the total within the cap.
pub(crate) fn reserve(kind: Use, bytes: usize) -> Result<()> {
    let bytes = bytes as u64;
    let limit = limit_cell().load(Ordering::Relaxed);
    let mut held = TOTAL.load(Ordering::Relaxed);
    loop {
        let total = held.saturating_add(bytes);
        if total > limit {
            return Err(CdError::MemoryLimit {
                limit,
                asked: bytes,
                held,
            });
        }
        match TOTAL.compare_exchange_weak(held, total, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => {
                HELD[kind as usize].fetch_add(bytes, Ordering::Relaxed);
                PEAK.fetch_max(total, Ordering::Relaxed);
                return Ok(());
            }
            Err(now) => held = now,
        }
    }
}

/// Counts `bytes` more of `kind`, whatever the cap.
pub(crate) fn charge(kind: Use, bytes: usize) {
    let total = TOTAL.fetch_add(bytes as u64, Ordering::Relaxed) + bytes as u64;
    HELD[kind as usize].fetch_add(bytes as u64, Ordering::Relaxed);
    PEAK.fetch_max(total, Ordering::Relaxed);
}

/// Counts `bytes` of MPI log memory another layer holds (the MPI interposer's sender-side
/// journal) in [`memory_held`]'s `logs`, and so in `cd_stats`' `log_bytes`.
pub fn charge_log_memory(bytes: usize) {
    charge(Use::Logs, bytes);
}

/// Counts `bytes` of [`charge_log_memory`]'s as freed.
pub fn release_log_memory(bytes: usize) {
    release(Use::Logs, bytes);
}

/// Counts `bytes` of `kind` as freed.
pub(crate) fn release(kind: Use, bytes: usize) {
    TOTAL.fetch_sub(bytes as u64, Ordering::Relaxed);
    HELD[kind as usize].fetch_sub(bytes as u64, Ordering::Relaxed);
}

/// Counts `bytes` as moved from one kind to another (a mapping entering or leaving the pool).
pub(crate) fn moved(from: Use, to: Use, bytes: usize) {
    HELD[to as usize].fetch_add(bytes as u64, Ordering::Relaxed);
    HELD[from as usize].fetch_sub(bytes as u64, Ordering::Relaxed);
}

/// Counts a fresh store mapping (see [`MemoryHeld::mappings_made`]).
pub(crate) fn count_mapping() {
    MAPPINGS.fetch_add(1, Ordering::Relaxed);
}

/// The number of ranks on this node, from the launcher's environment (1 without one).
pub fn local_ranks() -> usize {
    static RANKS: OnceLock<usize> = OnceLock::new();
    *RANKS.get_or_init(|| ranks_from(|name| std::env::var(name).ok()))
}

/// The first of [`LOCAL_RANKS_ENV`] that `var` gives as a count of at least 1, else 1.
fn ranks_from(var: impl Fn(&str) -> Option<String>) -> usize {
    LOCAL_RANKS_ENV
        .iter()
        .find_map(|name| {
            let text = var(name)?;
            // Slurm may write "4(x2)" (4 tasks on each of 2 nodes): the count comes first.
            let digits: String = text
                .trim()
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse::<usize>().ok().filter(|&n| n >= 1)
        })
        .unwrap_or(1)
}

/// The pool's budget in bytes: `CD_POOL_BYTES`, else this rank's share of an eighth of the
/// node's memory, at most 2 GiB (see the module docs).
pub fn pool_budget() -> u64 {
    static BUDGET: OnceLock<u64> = OnceLock::new();
    *BUDGET.get_or_init(|| {
        if let Ok(text) = std::env::var(POOL_BYTES_ENV) {
            match parse_bytes(&text) {
                Some(bytes) => return bytes,
                None => tracing::warn!(
                    "{POOL_BYTES_ENV}={text:?} is not a size (bytes with k, M or G); using \
                     the node share"
                ),
            }
        }
        node_share(physical_memory(), local_ranks())
    })
}

/// A rank's share of the pool budget of a node with `physical` bytes and `ranks` ranks.
fn node_share(physical: u64, ranks: usize) -> u64 {
    (physical / 8 / ranks.max(1) as u64).min(POOL_CAP)
}

fn physical_memory() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    (pages.max(0) as u64).saturating_mul(page.max(0) as u64)
}

/// Parses a size: bytes with an optional `k`, `M` or `G` suffix (powers of 1024); `None` if
/// malformed or too large.
pub(crate) fn parse_bytes(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, shift) = match text.as_bytes().last()? {
        b'k' | b'K' => (&text[..text.len() - 1], 10),
        b'm' | b'M' => (&text[..text.len() - 1], 20),
        b'g' | b'G' => (&text[..text.len() - 1], 30),
        _ => (text, 0),
    };
    let n: u64 = digits.trim().parse().ok()?;
    n.checked_mul(1 << shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_suffixes() {
        assert_eq!(parse_bytes("512"), Some(512));
        assert_eq!(parse_bytes(" 3k"), Some(3 << 10));
        assert_eq!(parse_bytes("2M"), Some(2 << 20));
        assert_eq!(parse_bytes("1g"), Some(1 << 30));
        assert_eq!(parse_bytes("lots"), None);
        assert_eq!(parse_bytes(""), None);
        assert_eq!(parse_bytes("99999999999G"), None);
    }

    #[test]
    fn local_ranks_come_from_the_first_launcher_variable_set() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(ranks_from(env(&[])), 1);
        assert_eq!(ranks_from(env(&[("MPI_LOCALNRANKS", "16")])), 16);
        assert_eq!(ranks_from(env(&[("OMPI_COMM_WORLD_LOCAL_SIZE", "8")])), 8);
        assert_eq!(ranks_from(env(&[("SLURM_NTASKS_PER_NODE", "4(x2)")])), 4);
        assert_eq!(
            ranks_from(env(&[
                ("MPI_LOCALNRANKS", "0"),
                ("OMPI_COMM_WORLD_LOCAL_SIZE", "junk"),
                ("SLURM_NTASKS_PER_NODE", "2"),
            ])),
            2,
            "unusable values are skipped"
        );
    }

    #[test]
    fn the_node_share_divides_among_ranks_and_is_capped() {
        const GIB: u64 = 1 << 30;
        assert_eq!(node_share(16 * GIB, 1), 2 * GIB);
        assert_eq!(node_share(16 * GIB, 4), GIB / 2);
        assert_eq!(node_share(512 * GIB, 64), GIB);
        assert_eq!(node_share(512 * GIB, 1), 2 * GIB, "at most 2 GiB per rank");
        assert_eq!(node_share(GIB, 0), GIB / 8, "no ranks counts as one");
    }
}
