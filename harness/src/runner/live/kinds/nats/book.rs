//! What the run knows of its messages on the JetStream consumer, shared by every worker's proxy
//! connection and the run's advisory listener: which run seq each stream sequence is, the latest
//! delivery of each message, and whether the server confirmed an ack of it or gave up on it.
//!
//! JetStream matches an ack by stream sequence only: an ack from any delivery of the message is
//! accepted and acts on the message under its current holder. So an ack is judged here as the
//! sim model judges it: from the latest delivery, `Deleted`; from an earlier one, `StaleDeleted`
//! (accepted, a stale ack); for a message already acked or past MaxDeliver, `StaleGone`.
//!
//! A consumer that publishes a message again itself (its own retry) stores a new stream message,
//! a copy with a stream sequence and delivery counts of its own. Its stream sequence is learnt
//! from its first delivery (the body names the message); its deliveries continue the message's.

use std::collections::HashMap;

use crate::record::{AckOutcome, Nanos, Seq};
use crate::runner::live::state::CopiesOut;

#[derive(Debug, Default)]
pub struct Book {
    /// Stream sequence -> run seq, from each publish's ack.
    seqs: HashMap<u64, Seq>,
    held: HashMap<Seq, Held>,
    dead_lettered: u64,
    /// Stream sequence of a copy -> its message, and the message's deliveries before the copy's.
    copies: HashMap<u64, (Seq, u32)>,
    /// Copies of each message sent and not yet delivered.
    copies_sent: CopiesOut,
    /// Copies workers published, all told.
    copies_published: u64,
}

#[derive(Debug, Default, Clone, Copy)]
struct Held {
    /// The latest delivery seen (0: never delivered).
    latest: u32,
    /// When the latest delivery's AckWait (or nak delay) ends, profile time.
    lease_end: Nanos,
    acked: bool,
    dead: bool,
    /// The latest delivery's ack removed the copy a retry replaced: the next delivery is the
    /// retry's, not a redelivery.
    retired: bool,
}

impl Book {
    /// Message `seq` of the run has `stream_seq` in the run's stream.
    pub fn published(&mut self, stream_seq: u64, seq: Seq) {
        self.seqs.insert(stream_seq, seq);
        self.held.entry(seq).or_default();
    }

    /// The stream sequence the run's next publish should get: after the run's messages and
    /// the copies workers published so far (a copy may still reach the server after the run's
    /// publish: [`Book::stored_at`] then corrects it).
    pub fn next_sequence(&self) -> u64 {
        self.seqs.len() as u64 + self.copies_published + 1
    }

    /// The server stored message `seq` at `stream_seq`, not at the `expected` sequence it was
    /// booked at: a worker's copy came between. False when no worker published a copy (then
    /// something else publishes to the run's subject).
    pub fn stored_at(&mut self, expected: u64, stream_seq: u64, seq: Seq) -> bool {
        if self.copies_published == 0 {
            return false;
        }
        if self.seqs.get(&expected) == Some(&seq) {
            self.seqs.remove(&expected);
        }
        self.seqs.insert(stream_seq, seq);
        true
    }

    /// The run's message of stream message `stream_seq` (a copy's included).
    pub fn seq_of(&self, stream_seq: u64) -> Option<Seq> {
        (self.seqs.get(&stream_seq).copied()).or_else(|| self.copies.get(&stream_seq).map(|c| c.0))
    }

    /// The run's message and delivery number of stream message `stream_seq`'s delivery
    /// `delivered` (JetStream counts a copy's deliveries from 1).
    pub fn delivery_of(&self, stream_seq: u64, delivered: u32) -> Option<(Seq, u32)> {
        match self.seqs.get(&stream_seq) {
            Some(&seq) => Some((seq, delivered)),
            None => (self.copies.get(&stream_seq)).map(|&(seq, before)| (seq, before + delivered)),
        }
    }

    /// A worker published a copy of `seq` (its retry).
    pub fn copy_sent(&mut self, seq: Seq) {
        self.copies_sent.sent(seq);
        self.copies_published += 1;
    }

    /// Stream message `stream_seq`, unknown so far, came with a body naming `seq`: when a copy of
    /// `seq` was sent, it is that copy, whose deliveries continue the message's. Returns
    /// whether it is.
    pub fn copy_delivered(&mut self, stream_seq: u64, seq: Seq) -> bool {
        if !self.copies_sent.found(seq) {
            return false;
        }
        let h = self.held.entry(seq).or_default();
        h.retired = true;
        self.copies.insert(stream_seq, (seq, h.latest));
        true
    }

    /// The ack of `seq`'s delivery `delivery` removed the copy a retry replaced: settles
    /// nothing (if the retry's copy is not out yet, its first delivery replaces no lease).
    pub fn superseded(&mut self, seq: Seq, delivery: u32) {
        let h = self.held.entry(seq).or_default();
        h.retired |= h.latest == delivery;
    }

    /// Delivery `delivery` of `seq` is on its way, its wait ending at `lease_end`. Returns the
    /// delivery it replaces (its wait ended unacked: the server redelivers), if any.
    pub fn delivered(&mut self, seq: Seq, delivery: u32, lease_end: Nanos) -> Option<u32> {
        let h = self.held.entry(seq).or_default();
        let replaced = h.latest > 0 && h.latest < delivery && !h.acked && !h.retired;
        let before = replaced.then_some(h.latest);
        h.retired = false;
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
    fn a_retrys_copy_continues_its_messages_deliveries() {
        let mut b = Book::default();
        b.published(1, 1);
        b.published(2, 2);
        // Message 1's first delivery fails; its handler publishes a copy (stream sequence 3)
        // and acks the delivery, which removes the copy the retry replaced.
        b.delivered(1, 1, 30);
        b.copy_sent(1);
        b.superseded(1, 1);
        // Stream sequence 3 is unknown until delivered; its body names message 1.
        assert_eq!(b.delivery_of(3, 1), None);
        assert!(b.copy_delivered(3, 1));
        // JetStream's delivery 1 of the copy is message 1's delivery 2, replacing nothing.
        assert_eq!(b.delivery_of(3, 1), Some((1, 2)));
        assert_eq!(b.seq_of(3), Some(1));
        assert_eq!(b.delivered(1, 2, 60), None);
        assert_eq!(b.acked(1, 2), AckOutcome::Deleted);
        // A stream message naming message 2, of which no copy was sent, is not a copy.
        assert!(!b.copy_delivered(4, 2));
        assert!(!b.copy_delivered(5, 1), "one copy sent, one copy found");
        // The run's next message is booked after its 2 messages and the copy: sequence 4. If
        // the server stored it at 5 (another copy came first), the booking moves.
        assert_eq!(b.next_sequence(), 4);
        b.published(4, 3);
        assert!(b.stored_at(4, 5, 3));
        assert_eq!((b.seq_of(4), b.seq_of(5)), (None, Some(3)));
    }

    #[test]
    fn a_publish_stored_elsewhere_without_a_copy_is_someone_elses() {
        let mut b = Book::default();
        b.published(1, 1);
        assert!(!b.stored_at(1, 2, 1));
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
