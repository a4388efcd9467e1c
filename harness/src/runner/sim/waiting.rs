//! The workers waiting for a hand-out, as a bitset over their slots: a round of hand-outs
//! visits only them, in ascending worker id, instead of every worker of the run.

use super::world::OpId;

/// Which worker slots (index = worker id - 1) wait in a receive, and with which operation.
#[derive(Debug, Default)]
pub(super) struct Waiting {
    words: Vec<u64>,
    ops: Vec<Option<OpId>>,
}

impl Waiting {
    pub fn new(slots: usize) -> Waiting {
        Waiting {
            words: vec![0; slots.div_ceil(64)],
            ops: vec![None; slots],
        }
    }

    /// Room for `slots` slots (a fleet that grew).
    pub fn grow(&mut self, slots: usize) {
        self.words
            .resize(slots.div_ceil(64).max(self.words.len()), 0);
        self.ops.resize(slots.max(self.ops.len()), None);
    }

    /// Slot `i` waits in receive operation `op`.
    pub fn insert(&mut self, i: usize, op: OpId) {
        self.words[i / 64] |= 1 << (i % 64);
        self.ops[i] = Some(op);
    }

    /// Slot `i` waits no more; returns the operation it waited in, if it did.
    pub fn remove(&mut self, i: usize) -> Option<OpId> {
        self.words[i / 64] &= !(1 << (i % 64));
        self.ops[i].take()
    }

    /// The receive operation slot `i` waits in, if it does.
    pub fn op(&self, i: usize) -> Option<OpId> {
        self.ops[i]
    }

    /// The lowest waiting slot at or after `from` that is not in `passed` (a bitset of the same
    /// layout, possibly shorter).
    pub fn next_from_except(&self, from: usize, passed: &[u64]) -> Option<usize> {
        let mut word = from / 64;
        let skip = |word: usize| passed.get(word).copied().unwrap_or(0);
        let mut bits = *self.words.get(word)? & !skip(word) & (!0u64 << (from % 64));
        loop {
            if bits != 0 {
                return Some(word * 64 + bits.trailing_zeros() as usize);
            }
            word += 1;
            bits = *self.words.get(word)? & !skip(word);
        }
    }

    /// The lowest waiting slot at or after `from`.
    #[cfg(test)]
    pub fn next_from(&self, from: usize) -> Option<usize> {
        self.next_from_except(from, &[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visits_waiting_slots_in_ascending_order_across_words() {
        // 130 slots span three words; slots 0, 63, 64 and 129 wait, then 63 stops waiting.
        let mut w = Waiting::new(130);
        for i in [129, 0, 64, 63] {
            w.insert(i, i as OpId + 1000);
        }
        assert_eq!(w.remove(63), Some(1063));
        assert_eq!(w.remove(63), None);
        let mut seen = Vec::new();
        let mut from = 0;
        while let Some(i) = w.next_from(from) {
            seen.push((i, w.op(i)));
            from = i + 1;
        }
        assert_eq!(
            seen,
            vec![(0, Some(1000)), (64, Some(1064)), (129, Some(1129))]
        );
        assert_eq!(w.next_from(130), None);
        assert_eq!(Waiting::new(0).next_from(0), None);
    }

    #[test]
    fn passes_over_the_slots_a_broker_marks_idle() {
        // Slots 0, 5, 64 and 129 wait. Marked idle: 5 (word 0) and 64 (word 1); the mask has
        // no word 2, so 129 is not passed over. Visited from 0: 0 and 129; from 1: 129.
        let mut w = Waiting::new(130);
        for i in [0, 5, 64, 129] {
            w.insert(i, i as OpId);
        }
        let idle = [1u64 << 5, 1u64];
        assert_eq!(w.next_from_except(0, &idle), Some(0));
        assert_eq!(w.next_from_except(1, &idle), Some(129));
        assert_eq!(w.next_from_except(130, &idle), None);
        assert_eq!(w.next_from_except(1, &[]), Some(5));
    }
}
