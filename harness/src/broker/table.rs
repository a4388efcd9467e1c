//! The brokers' per-message table, by seq (messages are numbered from 1 in publish order).
//!
//! A table either remembers every message ever published (a live run's embedded SQS broker,
//! and the models the tests inspect message by message), or forgets a message once it is
//! settled, so that its memory is bounded by the messages it still holds, not by every message
//! it carried: what sim runs use (a message is forgotten once deleted) and a long-running SQS
//! endpoint (once deleted, purged or taken from the DLQ).
//!
//! What a forgotten message still answers: that it was published (its seq is at most the count
//! of messages published) and so settled, and the delivery number a receipt of it stands for.
//! A receipt's delivery number is its nonce less the deliveries made before the message's last
//! redrive; that offset is 0 unless the message was redriven, so it is kept, after the message
//! is forgotten, only for messages that were redriven ([`Table::delivery_of`]).
//!
//! A table keeps its messages in a [`SeqWindow`], since messages mostly settle in about the
//! order they were published.

use std::collections::HashMap;

use super::queue::Receipt;
use crate::record::Seq;
use crate::seq_window::SeqWindow;

/// What the table needs to know of a message: its delivery count and its receipts' nonces.
pub(super) trait Entry {
    /// Deliveries since publish (or since the last redrive).
    fn deliveries(&self) -> u32;
    /// Deliveries ever: the last receipt's nonce.
    fn nonce(&self) -> u32;
}

/// One message of the SQS broker.
#[derive(Debug, Clone)]
pub(super) struct Message {
    pub state: super::state::MessageState,
    /// Deliveries since publish (or since the last redrive).
    pub receive_count: u32,
    /// Deliveries ever; the last receipt's nonce.
    pub nonce: u32,
    /// Its message group on a FIFO queue with groups (0 otherwise).
    pub group: u32,
}

impl Entry for Message {
    fn deliveries(&self) -> u32 {
        self.receive_count
    }
    fn nonce(&self) -> u32 {
        self.nonce
    }
}

/// Messages by seq; see the module's documentation.
#[derive(Debug, Clone)]
pub(super) struct Table<T> {
    /// Settled messages are forgotten ([`Table::forget`]); otherwise every message is kept.
    forgets: bool,
    messages: SeqWindow<T>,
    /// Forgotten messages that were redriven: deliveries made before their last redrive.
    redriven: HashMap<Seq, u32>,
}

impl<T: Entry> Table<T> {
    /// A table that keeps every message.
    pub fn remembering() -> Table<T> {
        Table::with(false)
    }

    /// A table that forgets a message when told it is settled.
    pub fn forgetting() -> Table<T> {
        Table::with(true)
    }

    fn with(forgets: bool) -> Table<T> {
        Table {
            forgets,
            messages: SeqWindow::default(),
            redriven: HashMap::new(),
        }
    }

    /// Messages published so far.
    pub fn published(&self) -> usize {
        self.messages.next_seq() as usize - 1
    }

    /// Messages the table holds in memory.
    #[cfg(test)]
    pub fn held_count(&self) -> usize {
        self.messages.held()
    }

    /// Slots and entries the table has room for (its memory, in messages).
    #[cfg(test)]
    pub fn room(&self) -> usize {
        self.messages.room() + self.redriven.capacity()
    }

    /// Appends a message; returns its seq.
    #[inline]
    pub fn push(&mut self, m: T) -> Seq {
        self.messages.push(m)
    }

    #[inline]
    pub fn get(&self, seq: Seq) -> Option<&T> {
        self.messages.get(seq)
    }

    #[inline]
    pub fn get_mut(&mut self, seq: Seq) -> Option<&mut T> {
        self.messages.get_mut(seq)
    }

    /// True when `seq` was published but is no longer held (only a forgetting table forgets).
    pub fn forgotten(&self, seq: Seq) -> bool {
        self.messages.was_pushed(seq) && self.get(seq).is_none()
    }

    /// The delivery number (since its last redrive) of the delivery a receipt of message
    /// `r.seq` belongs to: the receipt's nonce less the deliveries before the message's last
    /// redrive (0 for a receipt older than that redrive).
    #[inline]
    pub fn delivery_of(&self, r: Receipt) -> u32 {
        let before = match self.get(r.seq) {
            // Deliveries since the last redrive keep nonce - deliveries constant.
            Some(m) => m.nonce() - m.deliveries(),
            None if self.redriven.is_empty() => 0,
            None => self.redriven.get(&r.seq).copied().unwrap_or(0),
        };
        r.nonce.saturating_sub(before)
    }

    /// A settled message: a forgetting table forgets it (keeping only its redrive offset, if it
    /// was redriven); a remembering one keeps it.
    #[inline]
    pub fn forget(&mut self, seq: Seq) {
        if !self.forgets {
            return;
        }
        let Some(m) = self.messages.take(seq) else {
            return;
        };
        let before = m.nonce() - m.deliveries();
        if before > 0 {
            self.redriven.insert(seq, before);
        }
    }

    /// Seqs of the messages held whose entry matches `pick`, in publish order.
    pub fn seqs_where(&self, pick: impl Fn(&T) -> bool) -> Vec<Seq> {
        self.messages.seqs_where(pick)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;
    use crate::seq_window::SLACK;

    #[derive(Debug, Clone, PartialEq, Eq)]
    struct E {
        deliveries: u32,
        nonce: u32,
    }

    impl Entry for E {
        fn deliveries(&self) -> u32 {
            self.deliveries
        }
        fn nonce(&self) -> u32 {
            self.nonce
        }
    }

    #[derive(Debug, Clone)]
    enum Op {
        Push,
        Forget(usize),
        Deliver(usize),
        Redrive(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => Just(Op::Push),
            3 => any::<usize>().prop_map(Op::Forget),
            2 => any::<usize>().prop_map(Op::Deliver),
            1 => any::<usize>().prop_map(Op::Redrive),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// A forgetting table answers as a map of the messages not yet forgotten, with every
        /// receipt's delivery number as a table that remembers gives it, and its room stays
        /// within three times what it holds and the slack.
        #[test]
        fn a_forgetting_table_is_a_map_of_what_it_holds(
            ops in prop::collection::vec(op(), 0..3000),
            older_first in any::<bool>(),
        ) {
            let mut keep: Table<E> = Table::remembering();
            let mut forget: Table<E> = Table::forgetting();
            let mut held: BTreeMap<Seq, E> = BTreeMap::new();
            let mut receipts: Vec<Receipt> = Vec::new();
            let fresh = E { deliveries: 0, nonce: 0 };
            for op in ops {
                let pick = |i: usize| -> Option<Seq> {
                    let n = held.len();
                    // Mostly the oldest held messages (they settle in about publish order),
                    // sometimes any: old messages stay behind and the window moves past them.
                    let k = if older_first { i % n.clamp(1, 8) } else { i % n.max(1) };
                    held.keys().nth(k).copied()
                };
                match op {
                    Op::Push => {
                        let s = keep.push(fresh.clone());
                        prop_assert_eq!(s, forget.push(fresh.clone()));
                        held.insert(s, fresh.clone());
                    }
                    Op::Forget(i) => {
                        if let Some(s) = pick(i) {
                            held.remove(&s);
                            keep.forget(s);
                            forget.forget(s);
                        }
                    }
                    Op::Deliver(i) | Op::Redrive(i) => {
                        if let Some(s) = pick(i) {
                            let redrive = matches!(op, Op::Redrive(_));
                            for t in [&mut keep, &mut forget] {
                                let m = t.get_mut(s).unwrap();
                                if redrive { m.deliveries = 0 } else { m.deliveries += 1; m.nonce += 1 }
                            }
                            let m = forget.get(s).unwrap().clone();
                            receipts.push(Receipt { seq: s, nonce: m.nonce });
                            held.insert(s, m);
                        }
                    }
                }
                prop_assert_eq!(forget.published(), keep.published());
                prop_assert_eq!(forget.held_count(), held.len());
                prop_assert!(
                    forget.messages.window_len() <= 2 * forget.messages.in_window() + SLACK
                );
                let all: Vec<Seq> = held.keys().copied().collect();
                prop_assert_eq!(forget.seqs_where(|_| true), all);
            }
            for seq in 0..=keep.published() as Seq + 1 {
                prop_assert_eq!(forget.get(seq), held.get(&seq));
                prop_assert_eq!(forget.forgotten(seq), seq >= 1 && seq as usize <= keep.published() && !held.contains_key(&seq));
            }
            for r in receipts {
                prop_assert_eq!(forget.delivery_of(r), keep.delivery_of(r), "{:?}", r);
            }
        }
    }

    #[test]
    fn a_million_messages_forgotten_leave_only_the_slack() {
        let mut t: Table<E> = Table::forgetting();
        let e = E {
            deliveries: 1,
            nonce: 1,
        };
        // One message held from the start (a poison message in the DLQ) and a million through.
        let poison = t.push(e.clone());
        for _ in 0..1_000_000 {
            let s = t.push(e.clone());
            t.forget(s);
        }
        assert_eq!((t.published(), t.held_count()), (1_000_001, 1));
        assert!(t.room() <= 16, "room for {} messages", t.room());
        assert!(t.get(poison).is_some() && t.forgotten(2));
    }
}
