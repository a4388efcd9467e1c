//! What the run knows of its messages on the JetStream consumer, shared by every worker's proxy
//! connection and the run's advisory listener: which run seq each stream sequence is, the latest
//! delivery of each message, and whether the server confirmed an ack of it or gave up on it.
//!
//! JetStream matches an ack by stream sequence only: an ack from any delivery of the message is
//! accepted and acts on the message under its current holder. So an ack is judged here as the
//! sim model judges it: from the latest delivery, `Deleted`; from an earlier one, `StaleDeleted`
//! (accepted, a stale ack); for a message already acked or past MaxDeliver, `StaleGone`.

use std::collections::HashMap;

use crate::record::{AckOutcome, Nanos, Seq};

#[derive(Debug, Default)]
pub struct Book {
    /// Stream sequence -> run seq, from each publish's ack.
    seqs: HashMap<u64, Seq>,
    held: HashMap<Seq, Held>,
    dead_lettered: u64,
}

#[derive(Debug, Default, Clone, Copy)]
struct Held {
    /// The latest delivery seen (0: never delivered).
    latest: u32,
    /// When the latest delivery's AckWait (or nak delay) ends, profile time.
    lease_end: Nanos,
    acked: bool,
    dead: bool,
}

impl Book {
    /// Message `seq` of the run has `stream_seq` in the run's stream.
    pub fn published(&mut self, stream_seq: u64, seq: Seq) {
        self.seqs.insert(stream_seq, seq);
        self.held.entry(seq).or_default();
    }

    /// Messages published so far.
    pub fn published_count(&self) -> u64 {
        self.seqs.len() as u64
    }

    pub fn seq_of(&self, stream_seq: u64) -> Option<Seq> {
        self.seqs.get(&stream_seq).copied()
    }

    /// Delivery `delivery` of `seq` is on its way, its wait ending at `lease_end`. Returns the
    /// delivery it replaces (its wait ended unacked: the server redelivers), if any.
    pub fn delivered(&mut self, seq: Seq, delivery: u32, lease_end: Nanos) -> Option<u32> {
        let h = self.held.entry(seq).or_default();
        let before = (h.latest > 0 && h.latest < delivery && !h.acked).then_some(h.latest);
        h.latest = h.latest.max(delivery);
        h.lease_end = lease_end;
        before
    }

    /// The server confirmed (or, without a reply inbox, was sent) an ack of delivery `delivery`.
    pub fn acked(&mut self, seq: Seq, delivery: u32) -> AckOutcome {
        let h = self.held.entry(seq).or_default();
        let outcome = if h.acked || h.dead {
            AckOutcome::StaleGone
        } else if delivery >= h.latest {
            AckOutcome::Deleted
        } else {
            AckOutcome::StaleDeleted
        };
        h.acked = true;
        outcome
    }

    /// The latest delivery of `seq` (0: never delivered).
    pub fn latest(&self, seq: Seq) -> u32 {
        self.held.get(&seq).map_or(0, |h| h.latest)
    }

    /// The latest delivery's wait now ends at `lease_end` (`+WPI`, `-NAK` with a delay).
    pub fn moved(&mut self, seq: Seq, lease_end: Nanos) {
        if let Some(h) = self.held.get_mut(&seq) {
            h.lease_end = lease_end;
        }
    }

    /// The server gave up on `seq` (MaxDeliver reached). False if it already had.
    pub fn dead_lettered(&mut self, seq: Seq) -> bool {
        let h = self.held.entry(seq).or_default();
        if h.dead {
            return false;
        }
        h.dead = true;
        self.dead_lettered += 1;
        true
    }

    /// Messages the server gave up on, from its MAX_DELIVERIES advisories.
    pub fn dead_count(&self) -> u64 {
        self.dead_lettered
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thursday_order_late_ack_accepted_then_the_second_ack_finds_it_gone() {
        let mut b = Book::default();
        b.published(1, 1);
        assert_eq!(b.seq_of(1), Some(1));
        // Delivery 1 at 0 s (AckWait 30 s); unacked at 30 s, delivery 2 replaces it.
        assert_eq!(b.delivered(1, 1, 30), None);
        assert_eq!(b.delivered(1, 2, 60), Some(1));
        // Delivery 1's ack at 31-40 s acks the message under delivery 2: a stale ack, accepted.
        assert_eq!(b.acked(1, 1), AckOutcome::StaleDeleted);
        // Delivery 2's own ack finds the message acked already.
        assert_eq!(b.acked(1, 2), AckOutcome::StaleGone);
    }

    #[test]
    fn an_ack_of_the_latest_delivery_deletes_and_a_dead_message_takes_no_ack() {
        let mut b = Book::default();
        b.published(7, 1);
        b.published(8, 2);
        b.delivered(1, 1, 10);
        assert_eq!(b.acked(1, 1), AckOutcome::Deleted);
        b.delivered(2, 3, 10);
        assert!(b.dead_lettered(2));
        assert!(!b.dead_lettered(2), "one advisory per message counts");
        assert_eq!(b.dead_count(), 1);
        assert_eq!(b.acked(2, 3), AckOutcome::StaleGone);
    }

    #[test]
    fn a_delivery_after_a_confirmed_ack_replaces_nothing_but_is_the_latest() {
        // nats-server 2.9.10 can deliver an acked message again: the book keeps it acked (the
        // run's record shows the delivery after the confirmed ack as it happened).
        let mut b = Book::default();
        b.published(1, 1);
        b.delivered(1, 1, 30);
        assert_eq!(b.acked(1, 1), AckOutcome::Deleted);
        assert_eq!(b.delivered(1, 2, 60), None);
        assert_eq!(b.latest(1), 2);
        assert_eq!(b.acked(1, 2), AckOutcome::StaleGone);
    }
}
