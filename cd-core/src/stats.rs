//! Counters of what the runtime did: per CD, and for the whole process.
//!
//! Tests read a CD's counters to check, for example, that an advance after promoting 9 bytes of a
//! 1 GiB entry copied exactly 9 bytes. The process-wide counters feed the statistics summary the
//! MPI layer prints at `MPI_Finalize` on request. The process-wide snapshot also reports the
//! memory the runtime holds (see `memory`).
//!
//! The public snapshot, [`global_stats`](crate::global_stats), is `info`'s: it walks the live
//! CDs, and this module sits below the registry so that every CD can hold its counters.
//!
//! MPI log entries are not counted one by one as they are appended (that would put an atomic
//! read-modify-write on every logged MPI call): a CD counts the records its log gained each time
//! it folds them in (`Node::lock`), and adds them to the process's counter then.

use std::sync::atomic::{AtomicU64, Ordering};

/// What happened to a CD (or, summed, to the process).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    /// CDs created.
    pub creates: u64,
    /// CDs committed.
    pub commits: u64,
    /// Successful restores.
    pub restores: u64,
    /// Successful advances.
    pub advances: u64,
    /// Successful add calls (copy, parent and regen).
    pub adds: u64,
    /// Bytes copied from application memory into the store by add_to_cd_via_copy.
    pub bytes_added: u64,
    /// Bytes of application memory saved by advances: the lengths of the ranges saved, of
    /// which `bytes_diffed` were brought up to date by copying only their changed blocks.
    pub bytes_advanced: u64,
    /// Bytes of device ranges that synchronous advances saved differentially: the range's
    /// checksums compared on the device, only the changed blocks copied into its saved copy.
    pub bytes_diffed: u64,
    /// Bytes of the changed blocks those differential advances copied from the device.
    pub diff_bytes_copied: u64,
    /// Blocks those differential advances found changed.
    pub diff_blocks_changed: u64,
    /// Bytes copied from the store into application memory by restores.
    pub bytes_restored: u64,
    /// Regen function calls made by restores.
    pub regen_calls: u64,
    /// MPI log entries added.
    pub log_entries: u64,
    /// Synchronous advances timed: all, except that after a cheap one (under
    /// [`CHEAP_NS`](crate::CHEAP_NS)) a thread times one in [`CHEAP_SAMPLE`](crate::CHEAP_SAMPLE);
    /// asynchronous advances are not timed (see [`cd_advice`](crate::cd_advice)).
    pub timed_advances: u64,
    /// Nanoseconds spent in the timed advances, from the call to the new point in time being
    /// current.
    pub advance_ns: u64,
    /// Nanoseconds spent in restores, from the call to memory restored.
    pub restore_ns: u64,
    /// Bytes held in CD store buffers now (process-wide: [`global_stats`](crate::global_stats)
    /// only; 0 in a CD's own counters, whose saved bytes are `CdInfo::stored_bytes`).
    pub store_bytes: u64,
    /// Bytes held in the pool of freed store mappings now
    /// ([`global_stats`](crate::global_stats) only).
    pub pool_bytes: u64,
    /// Bytes held in MPI logs now: heap chunks, spare blocks, handed-over entries
    /// ([`global_stats`](crate::global_stats) only).
    pub log_bytes: u64,
    /// The most the runtime held in stores, pool and logs together
    /// ([`global_stats`](crate::global_stats) only).
    pub peak_bytes: u64,
}

macro_rules! global_counters {
    ($($field:ident),* $(,)?) => {
        /// The process-wide counters, one atomic per field of [`Stats`].
        struct Global { $($field: AtomicU64,)* }

        static GLOBAL: Global = Global { $($field: AtomicU64::new(0),)* };

        impl Stats {
            /// Adds these counts to the process-wide counters.
            pub(crate) fn publish(&self) {
                $(if self.$field != 0 {
                    GLOBAL.$field.fetch_add(self.$field, Ordering::Relaxed);
                })*
            }

            /// Adds `other` to these counts.
            pub(crate) fn absorb(&mut self, other: &Stats) {
                $(self.$field += other.$field;)*
            }

            /// The process-wide counters as they are now; the memory fields are 0 (the public
            /// snapshot, `global_stats`, folds the live logs first and adds them).
            pub(crate) fn counters() -> Stats {
                Stats {
                    $($field: GLOBAL.$field.load(Ordering::Relaxed),)*
                    ..Stats::default()
                }
            }
        }
    };
}

global_counters!(
    creates,
    commits,
    restores,
    advances,
    adds,
    bytes_added,
    bytes_advanced,
    bytes_diffed,
    diff_bytes_copied,
    diff_blocks_changed,
    bytes_restored,
    regen_calls,
    log_entries,
    timed_advances,
    advance_ns,
    restore_ns,
);

impl std::fmt::Display for Stats {
    /// One line, e.g. for the per-rank summary printed at `MPI_Finalize`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} created, {} committed, {} adds ({} B copied), {} advances ({} B saved, \
             {} B of them differentially: {} B in {} changed blocks copied), {} restores ({} B restored, {} regen calls), {} log entries; {} ns in {} timed \
             advances, {} ns restoring; memory held: {} B in stores, {} B pooled, {} B in logs, peak {} B",
            self.creates,
            self.commits,
            self.adds,
            self.bytes_added,
            self.advances,
            self.bytes_advanced,
            self.bytes_diffed,
            self.diff_bytes_copied,
            self.diff_blocks_changed,
            self.restores,
            self.bytes_restored,
            self.regen_calls,
            self.log_entries,
            self.advance_ns,
            self.timed_advances,
            self.restore_ns,
            self.store_bytes,
            self.pool_bytes,
            self.log_bytes,
            self.peak_bytes
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_line_names_every_counter() {
        let s = Stats {
            creates: 1,
            commits: 2,
            restores: 3,
            advances: 4,
            adds: 5,
            bytes_added: 6,
            bytes_advanced: 7,
            bytes_diffed: 18,
            diff_bytes_copied: 19,
            diff_blocks_changed: 20,
            bytes_restored: 8,
            regen_calls: 9,
            log_entries: 10,
            timed_advances: 17,
            advance_ns: 15,
            restore_ns: 16,
            store_bytes: 11,
            pool_bytes: 12,
            log_bytes: 13,
            peak_bytes: 14,
        };
        assert_eq!(
            s.to_string(),
            "1 created, 2 committed, 5 adds (6 B copied), 4 advances (7 B saved, \
             18 B of them differentially: 19 B in 20 changed blocks copied), 3 restores (8 B restored, 9 regen calls), 10 log entries; 15 ns in 17 timed \
             advances, 16 ns restoring; memory held: 11 B in stores, 12 B pooled, 13 B in logs, peak 14 B"
        );
    }
}
