//! A map from disjoint byte ranges to values, kept merged.
//!
//! A CD tracks address ranges, and the spec says what happens when they overlap, are partly
//! promoted, or partly deleted: ranges split. It also says adjacent ranges may be combined. This
//! map does both: every operation first splits the intervals at the boundaries it touches, does
//! its work on whole intervals, then merges each touched interval with its neighbours when the
//! value says they continue each other ([`Piece::continues`]).
//!
//! Intervals live in a `BTreeMap` keyed by their start, so finding the interval that holds an
//! address, splitting, inserting and removing are all O(log n) in the number of intervals, plus
//! O(k) in the number of intervals an operation covers. A CD with 100,000 ranges stays fast.
//!
//! The same map holds two things in a CD: the entries (labels and restoration type: a value that
//! continues its neighbour when it has the same labels, unless either holds its few saved bytes
//! inline: then it is [`Piece::isolated`]) and the data segments (where the other saved bytes
//! are: a value that continues its neighbour when the bytes are contiguous in the same buffer).
//! An entry's value includes the device region that holds it, so entries never merge across a
//! region boundary, and a copy made per entry never spans two device allocations.

use std::collections::BTreeMap;

/// A value that can describe part of an interval.
pub trait Piece: Clone {
    /// The value for the part of an interval that starts `offset` bytes into it.
    fn skip(&self, offset: usize) -> Self;
    /// Whether `next`, which starts right where `self` (of `len` bytes) ends, continues it, so
    /// that the two intervals can become one.
    fn continues(&self, len: usize, next: &Self) -> bool;
    /// Whether this value never continues a neighbour and is never continued by one, whatever
    /// they are: inserting it then needs no look at its neighbours (one descent of the tree,
    /// not two). The default is `false`.
    fn isolated(&self) -> bool {
        false
    }
}

/// What [`IntervalMap::insert_uncovered`] would merge a new interval with, found by
/// [`IntervalMap::probe`] in the same descent that checks the interval is uncovered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    /// The start of the interval ending where the new one starts, if it continues into it.
    prev: Option<usize>,
    /// The end of the interval starting where the new one ends, if the new one continues
    /// into it.
    next: Option<usize>,
}

/// Disjoint, non-empty, half-open intervals `[start, end)` with a value each.
#[derive(Clone, Debug)]
pub struct IntervalMap<V> {
    /// start -> (end, value)
    map: BTreeMap<usize, (usize, V)>,
}

impl<V> IntervalMap<V> {
    /// An empty map, usable in `static` initializers.
    pub const EMPTY: Self = IntervalMap {
        map: BTreeMap::new(),
    };
}

impl<V> Default for IntervalMap<V> {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl<V: Piece> IntervalMap<V> {
    /// The number of intervals.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether the map holds no interval.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The total number of bytes covered.
    pub fn covered_bytes(&self) -> usize {
        self.map.iter().map(|(s, (e, _))| e - s).sum()
    }

    /// All intervals as `(start, end, value)`, in address order.
    pub fn iter(&self) -> impl Iterator<Item = (usize, usize, &V)> + '_ {
        self.map.iter().map(|(&s, (e, v))| (s, *e, v))
    }

    /// The parts of intervals that lie inside `[start, end)`, clipped to it, in address order.
    pub fn overlapping(
        &self,
        start: usize,
        end: usize,
    ) -> impl Iterator<Item = (usize, usize, V)> + '_ {
        let first = self.first_key_touching(start);
        self.map
            .range(first..end)
            .filter(move |(_, (e, _))| *e > start)
            .map(move |(&s, (e, v))| {
                let cs = s.max(start);
                (
                    cs,
                    (*e).min(end),
                    if cs > s { v.skip(cs - s) } else { v.clone() },
                )
            })
    }

    /// The whole interval (unclipped) that holds `address`, if any: one descent of the tree.
    pub fn containing(&self, address: usize) -> Option<(usize, usize, &V)> {
        match self.map.range(..=address).next_back() {
            Some((&s, (e, v))) if *e > address => Some((s, *e, v)),
            _ => None,
        }
    }

    /// The sub-ranges of `[start, end)` that no interval covers, in address order.
    pub fn gaps(&self, start: usize, end: usize) -> Vec<(usize, usize)> {
        let mut gaps = Vec::new();
        let mut cursor = start;
        for (s, e, _) in self.overlapping_raw(start, end) {
            if s > cursor {
                gaps.push((cursor, s));
            }
            cursor = cursor.max(e);
        }
        if cursor < end {
            gaps.push((cursor, end));
        }
        gaps
    }

    /// Fills the uncovered parts of `[start, end)` with `value` (skipped to each gap's offset
    /// from `start`); covered parts keep their values. Returns the gaps filled.
    pub fn fill_gaps(&mut self, start: usize, end: usize, value: &V) -> Vec<(usize, usize)> {
        let gaps = self.gaps(start, end);
        for &(s, e) in &gaps {
            self.insert_uncovered(s, e, value.skip(s - start));
        }
        gaps
    }

    /// Whether no interval touches `[start, end)`: one descent of the tree.
    pub fn is_uncovered(&self, start: usize, end: usize) -> bool {
        match self.map.range(..end).next_back() {
            Some((_, &(e, _))) => e <= start,
            None => true,
        }
    }

    /// Whether `[start, end)` is uncovered (`Some`), and if so which neighbours `value` would
    /// merge with there: one descent of the tree, for [`insert_probed`](Self::insert_probed).
    pub fn probe(&self, start: usize, end: usize, value: &V) -> Option<Probe> {
        let mut around = self.map.range(..=end);
        let mut last = around.next_back();
        let mut next = None;
        if let Some((&k, (e, v))) = last {
            if k == end {
                next = value.continues(end - start, v).then_some(*e);
                last = around.next_back();
            }
        }
        let prev = match last {
            // The last interval starting before `end` reaches into `[start, end)`: covered.
            Some((_, &(e, _))) if e > start => return None,
            Some((&s, (e, v))) => (*e == start && v.continues(start - s, value)).then_some(s),
            None => None,
        };
        Some(Probe { prev, next })
    }

    /// Inserts `value` over `[start, end)` as [`insert_uncovered`](Self::insert_uncovered)
    /// does, with the neighbours `probe` found for the same range and value, the map unchanged
    /// since: one descent (the insert or the merge), not two.
    pub fn insert_probed(&mut self, start: usize, end: usize, value: V, probe: Probe) {
        debug_assert_eq!(self.probe(start, end, &value), Some(probe));
        match probe {
            Probe {
                prev: Some(prev),
                next,
            } => {
                if next.is_some() {
                    self.map.remove(&end);
                }
                if let Some(interval) = self.map.get_mut(&prev) {
                    interval.0 = next.unwrap_or(end);
                }
            }
            Probe {
                prev: None,
                next: Some(next_end),
            } => {
                self.map.remove(&end);
                self.map.insert(start, (next_end, value));
            }
            Probe {
                prev: None,
                next: None,
            } => {
                self.map.insert(start, (end, value));
            }
        }
    }

    /// Inserts `value` over `[start, end)`, which must be uncovered, merging it with the
    /// intervals right before and after it when they continue each other.
    pub fn insert_uncovered(&mut self, start: usize, end: usize, value: V) {
        debug_assert!(start < end);
        debug_assert!(self.is_uncovered(start, end));
        if value.isolated() {
            self.map.insert(start, (end, value));
            return;
        }
        // One descent finds both neighbours: the interval starting at `end`, if any, is the
        // last one starting at or before `end`, and the one before it precedes `start`.
        let mut around = self.map.range_mut(..=end);
        let mut last = around.next_back();
        let next = match last {
            Some((&k, ref mut slot)) if k == end => {
                let merges = value.continues(end - start, &slot.1);
                let next_end = slot.0;
                last = around.next_back();
                merges.then_some(next_end)
            }
            _ => None,
        };
        if let Some((&prev_start, prev)) = last {
            if prev.0 == start && prev.1.continues(start - prev_start, &value) {
                prev.0 = next.unwrap_or(end);
                if next.is_some() {
                    self.map.remove(&end);
                }
                return;
            }
        }
        if let Some(next_end) = next {
            self.map.remove(&end);
            self.map.insert(start, (next_end, value));
        } else {
            self.map.insert(start, (end, value));
        }
    }

    /// Applies `f` to the value of every interval part inside `[start, end)`, splitting the
    /// intervals that cross its bounds, then merges what became equal.
    pub fn update(&mut self, start: usize, end: usize, mut f: impl FnMut(&mut V)) {
        self.split_at(start);
        self.split_at(end);
        for (_, (_, v)) in self.map.range_mut(start..end) {
            f(v);
        }
        self.merge_window(start, end);
    }

    /// Removes every interval part inside `[start, end)` and returns them in address order.
    pub fn remove(&mut self, start: usize, end: usize) -> Vec<(usize, usize, V)> {
        self.split_at(start);
        self.split_at(end);
        let keys: Vec<usize> = self.map.range(start..end).map(|(&s, _)| s).collect();
        keys.into_iter()
            .map(|s| {
                let (e, v) = self.map.remove(&s).expect("key just listed");
                (s, e, v)
            })
            .collect()
    }

    /// Removes every interval.
    pub fn clear(&mut self) {
        self.map.clear();
    }

    /// Like [`overlapping`](Self::overlapping) but without clipping the values.
    pub(crate) fn overlapping_raw(
        &self,
        start: usize,
        end: usize,
    ) -> impl Iterator<Item = (usize, usize, &V)> + '_ {
        let first = self.first_key_touching(start);
        self.map
            .range(first..end)
            .filter(move |(_, (e, _))| *e > start)
            .map(|(&s, (e, v))| (s, *e, v))
    }

    /// The start of the interval holding `pos`, or `pos` itself when none does.
    fn first_key_touching(&self, pos: usize) -> usize {
        match self.map.range(..pos).next_back() {
            Some((&s, &(e, _))) if e > pos => s,
            _ => pos,
        }
    }

    /// Splits the interval that strictly contains `pos` into two at `pos`.
    fn split_at(&mut self, pos: usize) {
        let Some((&s, &(e, _))) = self.map.range(..pos).next_back() else {
            return;
        };
        if e <= pos {
            return;
        }
        let entry = self.map.get_mut(&s).expect("key just found");
        entry.0 = pos;
        let tail = entry.1.skip(pos - s);
        self.map.insert(pos, (e, tail));
    }

    /// Merges neighbours that continue each other, for every interval boundary that lies in
    /// `[start, end]` plus the intervals just outside it.
    fn merge_window(&mut self, start: usize, end: usize) {
        let lo = match self.map.range(..start).next_back() {
            Some((&s, _)) => s,
            None => start,
        };
        // Every interval that starts in [lo, end] may merge with its predecessor.
        let starts: Vec<usize> = self.map.range(lo..=end).map(|(&s, _)| s).collect();
        let mut prev: Option<usize> = None;
        for s in starts {
            if let Some(p) = prev {
                let (pe, pv) = &self.map[&p];
                let (e, v) = &self.map[&s];
                if *pe == s && pv.continues(s - p, v) {
                    let e = *e;
                    self.map.remove(&s);
                    self.map.get_mut(&p).expect("predecessor present").0 = e;
                    continue; // `p` stays the predecessor of the next one
                }
            }
            prev = Some(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A label value: merges with an equal neighbour.
    #[derive(Clone, Debug, PartialEq)]
    struct Label(u8);
    impl Piece for Label {
        fn skip(&self, _: usize) -> Self {
            self.clone()
        }
        fn continues(&self, _: usize, next: &Self) -> bool {
            self == next
        }
    }

    /// A data value: byte `i` of the interval is `base + i` (mod 256).
    #[derive(Clone, Debug, PartialEq)]
    struct Run(usize);
    impl Piece for Run {
        fn skip(&self, offset: usize) -> Self {
            Run(self.0 + offset)
        }
        fn continues(&self, len: usize, next: &Self) -> bool {
            self.0 + len == next.0
        }
    }

    fn intervals<V: Piece + PartialEq + std::fmt::Debug>(
        m: &IntervalMap<V>,
    ) -> Vec<(usize, usize, V)> {
        m.iter().map(|(s, e, v)| (s, e, v.clone())).collect()
    }

    #[test]
    fn overlap_keeps_old_value_and_fills_the_rest() {
        // The spec's diagram: 0..10 of 1's, then 5..15 of 2's: only 10..15 gets 2's.
        let mut m = IntervalMap::default();
        m.fill_gaps(0, 10, &Label(1));
        let filled = m.fill_gaps(5, 15, &Label(2));
        assert_eq!(filled, vec![(10, 15)]);
        assert_eq!(intervals(&m), vec![(0, 10, Label(1)), (10, 15, Label(2))]);
    }

    #[test]
    fn adjacent_equal_values_merge() {
        let mut m = IntervalMap::default();
        m.fill_gaps(10, 20, &Label(1));
        m.fill_gaps(30, 40, &Label(1));
        m.fill_gaps(20, 30, &Label(1));
        assert_eq!(intervals(&m), vec![(10, 40, Label(1))]);
        m.fill_gaps(40, 50, &Label(2));
        assert_eq!(m.len(), 2);
    }

    #[test]
    fn partial_update_splits_then_merges_back() {
        let mut m = IntervalMap::default();
        m.fill_gaps(0, 100, &Label(0));
        m.update(40, 49, |v| v.0 = 1);
        assert_eq!(
            intervals(&m),
            vec![(0, 40, Label(0)), (40, 49, Label(1)), (49, 100, Label(0))]
        );
        m.update(0, 100, |v| v.0 = 0);
        assert_eq!(intervals(&m), vec![(0, 100, Label(0))]);
    }

    #[test]
    fn split_data_runs_stay_contiguous_and_remerge() {
        let mut m = IntervalMap::default();
        m.fill_gaps(100, 200, &Run(1000));
        let removed = m.remove(150, 160);
        assert_eq!(removed, vec![(150, 160, Run(1050))]);
        assert_eq!(
            intervals(&m),
            vec![(100, 150, Run(1000)), (160, 200, Run(1060))]
        );
        m.insert_uncovered(150, 160, Run(1050));
        assert_eq!(intervals(&m), vec![(100, 200, Run(1000))]);
        assert_eq!(
            m.overlapping(120, 130).collect::<Vec<_>>(),
            vec![(120, 130, Run(1020))]
        );
    }

    #[test]
    fn containing_finds_the_whole_interval() {
        let mut m = IntervalMap::default();
        m.fill_gaps(10, 20, &Label(0));
        m.fill_gaps(20, 30, &Label(1));
        assert_eq!(m.containing(9), None);
        assert_eq!(m.containing(10), Some((10, 20, &Label(0))));
        assert_eq!(m.containing(19), Some((10, 20, &Label(0))));
        assert_eq!(m.containing(20), Some((20, 30, &Label(1))));
        assert_eq!(m.containing(30), None);
    }

    #[test]
    fn gaps() {
        let mut m = IntervalMap::default();
        m.fill_gaps(10, 20, &Label(0));
        m.fill_gaps(30, 40, &Label(1));
        assert_eq!(m.gaps(0, 50), vec![(0, 10), (20, 30), (40, 50)]);
        assert_eq!(m.gaps(12, 18), vec![]);
        assert_eq!(m.gaps(31, 35), vec![]);
        assert_eq!(m.gaps(10, 31), vec![(20, 30)]);
    }

    /// Operations of the property test.
    #[derive(Debug, Clone)]
    enum Op {
        Fill(usize, usize, u8),
        Update(usize, usize, u8),
        Remove(usize, usize),
        /// `probe`, then `insert_probed` where it said uncovered.
        Insert(usize, usize, u8),
    }

    fn op() -> impl Strategy<Value = Op> {
        let range = (0usize..64, 1usize..24).prop_map(|(s, l)| (s, s + l));
        prop_oneof![
            (range.clone(), 0u8..3).prop_map(|((s, e), v)| Op::Fill(s, e, v)),
            (range.clone(), 0u8..3).prop_map(|((s, e), v)| Op::Update(s, e, v)),
            (range.clone(), 0u8..3).prop_map(|((s, e), v)| Op::Insert(s, e, v)),
            range.prop_map(|(s, e)| Op::Remove(s, e)),
        ]
    }

    proptest! {
        /// The map agrees with a byte-per-slot model after every operation, and stays merged.
        #[test]
        fn agrees_with_a_byte_model(ops in proptest::collection::vec(op(), 1..40)) {
            let mut m = IntervalMap::default();
            let mut model: Vec<Option<u8>> = vec![None; 96];
            for op in ops {
                match op {
                    Op::Fill(s, e, v) => {
                        m.fill_gaps(s, e, &Label(v));
                        for slot in &mut model[s..e] { slot.get_or_insert(v); }
                    }
                    Op::Update(s, e, v) => {
                        m.update(s, e, |x| x.0 = v);
                        for slot in model[s..e].iter_mut().flatten() { *slot = v; }
                    }
                    Op::Remove(s, e) => {
                        m.remove(s, e);
                        model[s..e].fill(None);
                    }
                    Op::Insert(s, e, v) => match m.probe(s, e, &Label(v)) {
                        Some(probe) => {
                            prop_assert!(model[s..e].iter().all(Option::is_none));
                            m.insert_probed(s, e, Label(v), probe);
                            model[s..e].fill(Some(v));
                        }
                        None => prop_assert!(model[s..e].iter().any(Option::is_some)),
                    },
                }
                let mut seen: Vec<Option<u8>> = vec![None; 96];
                let mut last: Option<(usize, u8)> = None;
                for (s, e, v) in m.iter() {
                    prop_assert!(s < e);
                    if let Some((le, lv)) = last {
                        prop_assert!(!(le == s && lv == v.0), "unmerged neighbours at {}", s);
                        prop_assert!(le <= s);
                    }
                    seen[s..e].fill(Some(v.0));
                    last = Some((e, v.0));
                }
                prop_assert_eq!(&seen, &model);
            }
        }
    }
}
