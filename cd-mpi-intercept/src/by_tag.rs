//! Messages received from one peer counted per tag, for in-job recovery (`crate::recovery`).
//!
//! MPI keeps messages in order only per source, communicator and tag: a rank that receives a
//! peer's messages by tag may take a later one before an earlier one of another tag (a
//! receive of the second tag posted first, or an eager message beside a large one). What a
//! rank received from one peer since a version is therefore not the first `k` messages that
//! peer sent, but, for each tag, the first `k(tag)` of that tag (a receive, whatever its tag
//! argument, takes the earliest message that matches it, so what it left of one tag is always
//! a suffix). Recovery resends and drops per tag accordingly.
//!
//! The count is kept beside `crate::traffic`'s total, in a ULFM job only, with a few slots
//! claimed without a lock (an application uses few tags per peer) and a map beyond them.

use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;

/// How many tags one peer's counter holds without a lock.
const SLOTS: usize = 4;
/// An unclaimed slot (no MPI tag is negative).
const FREE: i64 = -1;

/// One peer's received messages by tag, counted by every thread.
pub(crate) struct TagCounter {
    tags: [AtomicI64; SLOTS],
    counts: [AtomicU64; SLOTS],
    more: Mutex<HashMap<c_int, u64>>,
}

impl Default for TagCounter {
    fn default() -> TagCounter {
        TagCounter {
            tags: std::array::from_fn(|_| AtomicI64::new(FREE)),
            counts: Default::default(),
            more: Mutex::default(),
        }
    }
}

impl TagCounter {
    /// Counts one message of `tag`.
    #[inline]
    pub(crate) fn bump(&self, tag: c_int) {
        let want = i64::from(tag);
        for (slot, count) in self.tags.iter().zip(&self.counts) {
            let held = slot.load(Ordering::Acquire);
            let mine = held == want
                || (held == FREE
                    && match slot.compare_exchange(FREE, want, Ordering::AcqRel, Ordering::Acquire)
                    {
                        Ok(_) => true,
                        Err(other) => other == want,
                    });
            if mine {
                count.fetch_add(1, Ordering::Relaxed);
                return;
            }
        }
        let mut more = self.more.lock().unwrap_or_else(|e| e.into_inner());
        *more.entry(tag).or_insert(0) += 1;
    }

    /// The counts now.
    pub(crate) fn read(&self) -> ByTag {
        let mut out = ByTag::default();
        for (slot, count) in self.tags.iter().zip(&self.counts) {
            if let Ok(tag) = c_int::try_from(slot.load(Ordering::Acquire)) {
                out.add(tag, count.load(Ordering::Relaxed));
            }
        }
        let more = self.more.lock().unwrap_or_else(|e| e.into_inner());
        for (&tag, &n) in more.iter() {
            out.add(tag, n);
        }
        out
    }
}

/// Message counts by tag (sorted by tag, no zero counts).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ByTag(Vec<(c_int, u64)>);

impl ByTag {
    /// Adds `n` messages of `tag`.
    pub(crate) fn add(&mut self, tag: c_int, n: u64) {
        if n == 0 {
            return;
        }
        match self.0.binary_search_by_key(&tag, |&(t, _)| t) {
            Ok(i) => self.0[i].1 += n,
            Err(i) => self.0.insert(i, (tag, n)),
        }
    }

    /// The messages of `tag`.
    pub(crate) fn get(&self, tag: c_int) -> u64 {
        self.0
            .binary_search_by_key(&tag, |&(t, _)| t)
            .map_or(0, |i| self.0[i].1)
    }

    /// The messages of every tag.
    pub(crate) fn total(&self) -> u64 {
        self.0.iter().map(|&(_, n)| n).sum()
    }

    /// Adds every count of `other`.
    pub(crate) fn add_all(&mut self, other: &ByTag) {
        for &(tag, n) in &other.0 {
            self.add(tag, n);
        }
    }

    /// The counts beyond `earlier`'s, tag by tag.
    pub(crate) fn since(&self, earlier: &ByTag) -> ByTag {
        let mut out = ByTag::default();
        for &(tag, n) in &self.0 {
            out.add(tag, n.saturating_sub(earlier.get(tag)));
        }
        out
    }

    /// The (tag, count) pairs, by tag.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (c_int, u64)> + '_ {
        self.0.iter().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_tag_beyond_the_lock_free_slots() {
        let counter = TagCounter::default();
        for tag in [7, 3, 7, 9, 1, 11, 12, 3, 12] {
            counter.bump(tag);
        }
        let read = counter.read();
        let expected: Vec<(c_int, u64)> = vec![(1, 1), (3, 2), (7, 2), (9, 1), (11, 1), (12, 2)];
        assert_eq!(read.iter().collect::<Vec<_>>(), expected);
        assert_eq!(read.total(), 9);
    }

    #[test]
    fn threads_claiming_slots_lose_no_count() {
        let counter = std::sync::Arc::new(TagCounter::default());
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let counter = std::sync::Arc::clone(&counter);
                std::thread::spawn(move || {
                    for i in 0..1000 {
                        counter.bump((i + t) % 6);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let read = counter.read();
        assert_eq!(read.total(), 4000);
        assert!(read.iter().all(|(tag, n)| (0..6).contains(&tag) && n > 600));
    }

    #[test]
    fn since_is_per_tag_and_never_negative() {
        let mut now = ByTag::default();
        now.add(1, 5);
        now.add(2, 3);
        let mut then = ByTag::default();
        then.add(1, 2);
        then.add(2, 4);
        then.add(3, 1);
        let since = now.since(&then);
        assert_eq!(since.iter().collect::<Vec<_>>(), vec![(1, 3)]);
        let mut sum = since.clone();
        sum.add_all(&then);
        assert_eq!(sum.get(1), 5);
        assert_eq!(sum.get(3), 1);
    }
}
