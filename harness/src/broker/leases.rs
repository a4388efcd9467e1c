//! A broker model's lease index: when each current lease (or the kind's equivalent: AckWait,
//! min-idle-time, consumer_timeout tick) ends, earliest first.
//!
//! A binary heap of (lease end, seq) whose entries are never removed in place: an ack or a
//! visibility change leaves the old entry behind, and an entry is *stale* when the message is no
//! longer leased with that end (the caller says which, through `is_current`). Stale entries are
//! dropped when they reach the top ([`LeaseIndex::trim`]), so after a trim the top is the next
//! lease end that is due, exactly as an ordered set with removals would say, at the cost of a
//! push instead of a tree insert and a remove.
//!
//! Most leases are pushed in the order they end (one lease length, handed out as time goes on),
//! so entries that end no earlier than the last one queued go to a FIFO and only the others to
//! the heap: the earliest entry is the smaller of the two fronts, the order of a single heap at
//! the cost of a queue push for the common case.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::record::{Nanos, Seq};

#[derive(Debug, Clone, Default)]
pub(super) struct LeaseIndex {
    /// Entries pushed in ascending (end, seq) order.
    in_order: VecDeque<(Nanos, Seq)>,
    /// The rest.
    heap: BinaryHeap<Reverse<(Nanos, Seq)>>,
}

impl LeaseIndex {
    pub fn insert(&mut self, end: Nanos, seq: Seq) {
        let entry = (end, seq);
        if self.in_order.back().is_none_or(|&last| last <= entry) {
            self.in_order.push_back(entry);
        } else {
            self.heap.push(Reverse(entry));
        }
    }

    /// The earliest entry, stale or not, and whether it is the heap's (on a tie, the queue's
    /// comes first).
    fn earliest(&self) -> Option<((Nanos, Seq), bool)> {
        let queued = self.in_order.front().copied();
        let heaped = self.heap.peek().map(|&Reverse(e)| e);
        match (queued, heaped) {
            (Some(q), Some(h)) if h < q => Some((h, true)),
            (Some(q), _) => Some((q, false)),
            (None, h) => h.map(|h| (h, true)),
        }
    }

    /// The earliest entry, stale or not.
    fn peek(&self) -> Option<(Nanos, Seq)> {
        self.earliest().map(|(e, _)| e)
    }

    /// Drops the earliest entry.
    fn pop(&mut self) {
        match self.earliest() {
            Some((_, true)) => {
                self.heap.pop();
            }
            Some((_, false)) => {
                self.in_order.pop_front();
            }
            None => {}
        }
    }

    /// The earliest entry's end; exact once [`LeaseIndex::trim`] has run since the last change.
    pub fn first_end(&self) -> Option<Nanos> {
        self.peek().map(|(t, _)| t)
    }

    /// The earliest entry's message; exact once [`LeaseIndex::trim`] has run.
    pub fn first_seq(&self) -> Option<Seq> {
        self.peek().map(|(_, seq)| seq)
    }

    /// Drops stale entries from the top until the top is a current lease (or none is left).
    pub fn trim(&mut self, is_current: impl Fn(Nanos, Seq) -> bool) {
        while let Some((t, seq)) = self.peek() {
            if is_current(t, seq) {
                break;
            }
            self.pop();
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
        while let Some((t2, seq)) = self.peek() {
            if t2 != t {
                break;
            }
            self.pop();
            if is_current(t2, seq) && seqs.last() != Some(&seq) {
                seqs.push(seq);
            }
        }
        Some((t, seqs))
    }

    /// Entries, stale ones included.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.in_order.len() + self.heap.len()
    }

    pub fn clear(&mut self) {
        self.in_order.clear();
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

    proptest::proptest! {
        /// Whatever order entries come in (mostly ascending, as leases are, or not), they come
        /// out in ascending (end, seq) order, as from one heap, interleaved with inserts.
        #[test]
        fn entries_come_out_in_ascending_order(
            ops in proptest::collection::vec((0u64..50, 1u32..6, proptest::bool::ANY), 0..200),
        ) {
            let mut ix = LeaseIndex::default();
            let mut reference: Vec<(Nanos, Seq)> = Vec::new();
            let mut clock = 0;
            for (step, seq, pop) in ops {
                if pop {
                    reference.sort_unstable();
                    let want = (!reference.is_empty()).then(|| reference.remove(0));
                    proptest::prop_assert_eq!(ix.peek(), want);
                    ix.pop();
                } else {
                    // Mostly later than the last (a lease of one length), sometimes earlier.
                    clock += step;
                    let end = if step % 7 == 0 { clock / 2 } else { clock };
                    ix.insert(end, seq);
                    reference.push((end, seq));
                }
                proptest::prop_assert_eq!(ix.len(), reference.len());
            }
        }
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
