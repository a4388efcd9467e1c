//! Entries numbered by seq (messages are numbered from 1 in publish order), kept in a window of
//! slots from the oldest seq still held up to the newest, indexed like a vector: what a broker
//! model keeps per message it still holds, what streamed accounting keeps per message it has
//! not yet counted, and a streamed effect ledger's open provider calls (numbered from 1 as they
//! start). All let go of their entries in about the order they were numbered.
//!
//! An entry held long after those around it were let go (a poison message in the DLQ, a slow
//! delivery, a message waiting for a redrive) would keep the window from moving: once the
//! window is more than twice the entries in it (and a fixed slack) long, its oldest entries move
//! to a map and the window moves past them. So the window's slots and the map together are at
//! most three times the entries held, plus the slack.

use std::collections::VecDeque;

use rustc_hash::FxHashMap as HashMap;

use crate::record::Seq;

/// Slots a window may hold beyond twice its entries before it moves past its oldest ones (a few
/// in the crate's tests, so that every test moves windows past held entries).
pub const SLACK: usize = if cfg!(test) { 4 } else { 4096 };

/// Entries by seq; see the module's documentation.
#[derive(Debug, Clone)]
pub struct SeqWindow<T> {
    /// Entry `base + i` in slot `i`; `None` once taken. `base + window.len()` is the next seq.
    window: VecDeque<Option<T>>,
    base: Seq,
    /// Entries held in `window`.
    in_window: usize,
    /// Entries held whose seq is below `base`.
    older: HashMap<Seq, T>,
}

impl<T> Default for SeqWindow<T> {
    fn default() -> Self {
        SeqWindow {
            window: VecDeque::new(),
            base: 1,
            in_window: 0,
            older: HashMap::default(),
        }
    }
}

impl<T> SeqWindow<T> {
    /// The seq the next entry pushed gets (1 for the first).
    pub fn next_seq(&self) -> Seq {
        self.base + Seq::try_from(self.window.len()).expect("fewer than 2^32 entries")
    }

    /// Whether `seq` was pushed, held or taken since.
    pub fn was_pushed(&self, seq: Seq) -> bool {
        seq >= 1 && seq < self.next_seq()
    }

    /// Entries held.
    #[cfg(test)]
    pub fn held(&self) -> usize {
        self.in_window + self.older.len()
    }

    /// Slots and map entries there is room for (its memory, in entries).
    #[cfg(test)]
    pub fn room(&self) -> usize {
        self.window.capacity() + self.older.capacity()
    }

    /// Appends an entry; returns its seq.
    #[inline]
    pub fn push(&mut self, entry: T) -> Seq {
        let seq = self.next_seq();
        assert!(seq < Seq::MAX, "fewer than 2^32 entries");
        self.window.push_back(Some(entry));
        self.in_window += 1;
        seq
    }

    #[inline]
    pub fn get(&self, seq: Seq) -> Option<&T> {
        if seq >= self.base {
            self.window
                .get((seq - self.base) as usize)
                .and_then(Option::as_ref)
        } else if self.older.is_empty() {
            None
        } else {
            self.older.get(&seq)
        }
    }

    #[inline]
    pub fn get_mut(&mut self, seq: Seq) -> Option<&mut T> {
        if seq >= self.base {
            self.window
                .get_mut((seq - self.base) as usize)
                .and_then(Option::as_mut)
        } else if self.older.is_empty() {
            None
        } else {
            self.older.get_mut(&seq)
        }
    }

    /// Takes entry `seq` out, if it is held.
    #[inline]
    pub fn take(&mut self, seq: Seq) -> Option<T> {
        let entry = if seq >= self.base {
            let entry = self.window.get_mut((seq - self.base) as usize)?.take()?;
            self.in_window -= 1;
            entry
        } else {
            let entry = self.older.remove(&seq)?;
            if self.older.capacity() > 1024 && self.older.len() < self.older.capacity() / 4 {
                self.older.shrink_to(self.older.len() * 2);
            }
            entry
        };
        self.tidy();
        Some(entry)
    }

    /// Lets entry `seq` go where it lies (dropped in place, not moved out); false if it was not
    /// held.
    #[inline]
    pub fn remove(&mut self, seq: Seq) -> bool {
        if seq >= self.base {
            match self.window.get_mut((seq - self.base) as usize) {
                Some(slot @ Some(_)) => *slot = None,
                _ => return false,
            }
            self.in_window -= 1;
            self.tidy();
            true
        } else {
            self.take(seq).is_some()
        }
    }

    /// Moves the window past its empty front, and past its oldest entries (into `older`) while
    /// it is more than twice its entries and the slack long; gives room back once the window
    /// uses under a quarter of it.
    fn tidy(&mut self) {
        while matches!(self.window.front(), Some(None)) {
            self.window.pop_front();
            self.base += 1;
        }
        if self.window.len() > 2 * self.in_window + SLACK {
            while self.window.len() > 2 * self.in_window + SLACK / 2 {
                if let Some(Some(entry)) = self.window.pop_front() {
                    self.older.insert(self.base, entry);
                    self.in_window -= 1;
                }
                self.base += 1;
            }
            while matches!(self.window.front(), Some(None)) {
                self.window.pop_front();
                self.base += 1;
            }
        }
        let (len, room) = (self.window.len(), self.window.capacity());
        if room > 4 * len + SLACK {
            self.window.shrink_to(2 * len + SLACK / 2);
        }
    }

    /// Seqs of the entries held that match `pick`, ascending.
    pub fn seqs_where(&self, pick: impl Fn(&T) -> bool) -> Vec<Seq> {
        let mut seqs: Vec<Seq> = self
            .older
            .iter()
            .filter(|(_, e)| pick(e))
            .map(|(&s, _)| s)
            .collect();
        seqs.sort_unstable();
        seqs.extend(
            self.window
                .iter()
                .zip(self.base..)
                .filter(|(e, _)| e.as_ref().is_some_and(&pick))
                .map(|(_, s)| s),
        );
        seqs
    }

    /// Every entry held, the window left empty (the next seq stays where it was).
    pub fn drain(&mut self) -> impl Iterator<Item = T> + '_ {
        self.in_window = 0;
        self.base += Seq::try_from(self.window.len()).expect("fewer than 2^32 entries");
        self.older
            .drain()
            .map(|(_, e)| e)
            .chain(self.window.drain(..).flatten())
    }

    /// The window's length, in slots (held or not).
    #[cfg(test)]
    pub fn window_len(&self) -> usize {
        self.window.len()
    }

    /// Entries held in the window itself.
    #[cfg(test)]
    pub fn in_window(&self) -> usize {
        self.in_window
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Whatever is pushed and taken, the window answers as a map from seq would, stays at
        /// most twice its entries and the slack long, and lists its seqs in order.
        #[test]
        fn answers_as_a_map_and_stays_short(
            ops in proptest::collection::vec((0u8..4, 0u32..40), 1..300),
        ) {
            // Half the steps push; the others take or remove a message `back` seqs behind the
            // newest (mostly recent ones), held or not.
            let mut w = SeqWindow::default();
            let mut map: BTreeMap<Seq, u32> = BTreeMap::new();
            for (op, back) in ops {
                let seq = w.next_seq().saturating_sub(1 + back);
                match op {
                    0 | 1 => {
                        let seq = w.push(back);
                        map.insert(seq, back);
                    }
                    2 => prop_assert_eq!(w.take(seq), map.remove(&seq)),
                    _ => prop_assert_eq!(w.remove(seq), map.remove(&seq).is_some()),
                }
                prop_assert_eq!(w.held(), map.len());
                prop_assert!(w.window_len() <= 2 * w.in_window() + SLACK);
                let top = w.next_seq();
                for seq in 0..=top {
                    prop_assert_eq!(w.get(seq), map.get(&seq));
                    prop_assert_eq!(w.was_pushed(seq), seq >= 1 && seq < top);
                }
                let all: Vec<Seq> = map.keys().copied().collect();
                prop_assert_eq!(w.seqs_where(|_| true), all);
            }
            let next = w.next_seq();
            let mut drained: Vec<u32> = w.drain().collect();
            let mut want: Vec<u32> = map.values().copied().collect();
            drained.sort_unstable();
            want.sort_unstable();
            prop_assert_eq!(drained, want);
            prop_assert_eq!((w.held(), w.next_seq()), (0, next));
        }
    }

    #[test]
    fn a_message_held_for_ever_does_not_hold_the_window_back() {
        // Message 1 stays; a million after it come and go: the window moves past message 1
        // (into the map) and stays short.
        let mut w = SeqWindow::default();
        w.push(0u8);
        for _ in 0..1_000_000 {
            let seq = w.push(1);
            w.take(seq);
        }
        assert_eq!((w.next_seq(), w.held(), w.get(1)), (1_000_002, 1, Some(&0)));
        assert!(w.room() <= 16, "room for {} entries", w.room());
    }
}
