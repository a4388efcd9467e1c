//! A broker model's lease index: when each current lease (or the kind's equivalent: AckWait,
//! min-idle-time, consumer_timeout tick) ends, earliest first.
//!
//! A binary heap of (lease end, seq) whose entries are never removed in place: an ack or a
//! visibility change leaves the old entry behind, and an entry is *stale* when the message is no
//! longer leased with that end (the caller says which, through `is_current`). Stale entries are
//! dropped when they reach the top ([`LeaseIndex::trim`]), so after a trim the top is the next
//! lease end that is due, exactly as an ordered set with removals would say, at the cost of a
//! push instead of a tree insert and a remove.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::record::{Nanos, Seq};

#[derive(Debug, Clone, Default)]
pub(super) struct LeaseIndex {
    heap: BinaryHeap<Reverse<(Nanos, Seq)>>,
}

impl LeaseIndex {
    pub fn insert(&mut self, end: Nanos, seq: Seq) {
        self.heap.push(Reverse((end, seq)));
    }

    /// The earliest entry's end; exact once [`LeaseIndex::trim`] has run since the last change.
    pub fn first_end(&self) -> Option<Nanos> {
        self.heap.peek().map(|Reverse((t, _))| *t)
    }

    /// The earliest entry's message; exact once [`LeaseIndex::trim`] has run.
    pub fn first_seq(&self) -> Option<Seq> {
        self.heap.peek().map(|Reverse((_, seq))| *seq)
    }

    /// Drops stale entries from the top until the top is a current lease (or none is left).
    pub fn trim(&mut self, is_current: impl Fn(Nanos, Seq) -> bool) {
        while let Some(&Reverse((t, seq))) = self.heap.peek() {
            if is_current(t, seq) {
                break;
            }
            self.heap.pop();
        }
    }

    /// Takes every current lease ending at the earliest end, if that end is at or before `now`:
    /// that end and the seqs, ascending (each once, even if it was indexed twice with the same
    /// end). Stale entries met on the way are dropped.
    pub fn pop_due(
        &mut self,
        now: Nanos,
        is_current: impl Fn(Nanos, Seq) -> bool,
    ) -> Option<(Nanos, Vec<Seq>)> {
        self.trim(&is_current);
        let t = self.first_end().filter(|&t| t <= now)?;
        let mut seqs: Vec<Seq> = Vec::new();
        while let Some(&Reverse((t2, seq))) = self.heap.peek() {
            if t2 != t {
                break;
            }
            self.heap.pop();
            if is_current(t2, seq) && seqs.last() != Some(&seq) {
                seqs.push(seq);
            }
        }
        Some((t, seqs))
    }

    /// Entries, stale ones included.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn clear(&mut self) {
        self.heap.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn stale_entries_are_skipped_and_one_instant_comes_out_together_in_seq_order() {
        // Current leases: seq 3 ends at 10, seq 1 at 10, seq 2 at 20 (moved there from 5),
        // seq 4 was acked (its entry at 7 is stale).
        let mut current: BTreeMap<Seq, Nanos> = BTreeMap::new();
        let mut ix = LeaseIndex::default();
        for (end, seq) in [(10, 3), (5, 2), (10, 1), (7, 4), (20, 2)] {
            ix.insert(end, seq);
            current.insert(seq, end);
        }
        current.remove(&4);
        let live = |t: Nanos, s: Seq| current.get(&s) == Some(&t);
        // Trimmed: (5, 2) and (7, 4) are stale, so the first end is 10.
        ix.trim(live);
        assert_eq!(ix.first_end(), Some(10));
        // Nothing due before 10.
        assert_eq!(ix.pop_due(9, live), None);
        // At 10: seqs 1 and 3 together, ascending.
        assert_eq!(ix.pop_due(10, live), Some((10, vec![1, 3])));
        assert_eq!(ix.pop_due(30, live), Some((20, vec![2])));
        assert_eq!(ix.pop_due(30, live), None);
        assert_eq!(ix.first_end(), None);
    }

    #[test]
    fn an_entry_indexed_twice_with_the_same_end_comes_out_once() {
        // seq 1 leased to 10, moved to 15, moved back to 10: two entries (10, 1), one lease.
        let mut ix = LeaseIndex::default();
        ix.insert(10, 1);
        ix.insert(15, 1);
        ix.insert(10, 1);
        let live = |t: Nanos, s: Seq| (t, s) == (10, 1);
        assert_eq!(ix.pop_due(10, live), Some((10, vec![1])));
        // The (15, 1) entry is stale and trimmed away.
        assert_eq!(ix.pop_due(100, live), None);
    }
}
