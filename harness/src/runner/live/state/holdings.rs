//! The deliveries one worker holds, and which of them a provider call belongs to.
//!
//! A consumer with a prefetch above 1 (FastStream on RabbitMQ takes every ready message by
//! default) holds several deliveries at once and works on them in any order, so "the delivery
//! the worker received last" says nothing about which one a call is for. A call names its
//! message by its effect key: it belongs to the delivery of that key the worker holds (received,
//! not yet acked, handed back or returned). A worker may also call after letting go of its
//! delivery (an ack before the work): the last few deliveries it let go of are kept to match
//! those calls. A new delivery of a message the worker already held supersedes the old one (the
//! broker gave it again: the old one's lease or channel is gone).

use crate::record::Seq;

/// How many deliveries a worker let go of are kept to match later calls: the most recent ones.
pub const LET_GO_KEPT: usize = 64;

/// One delivery a worker received in its current incarnation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    seq: Seq,
    delivery: u32,
    /// Not yet acked, handed back, returned or superseded.
    held: bool,
}

/// The deliveries of one worker incarnation, in the order received: those it holds, and the last
/// [`LET_GO_KEPT`] it let go of.
#[derive(Debug, Default, Clone)]
pub struct Holdings {
    entries: Vec<Entry>,
    let_go: usize,
}

/// Which delivery a call belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    /// The one delivery of the call's key the worker holds: (seq, receive count).
    Held(Seq, u32),
    /// No held delivery has the key; the latest the worker let go of does (it calls after its
    /// ack).
    LetGo(Seq, u32),
    /// Several held deliveries have the key (a key published more than once): the latest.
    Ambiguous(Seq, u32),
    /// No delivery the worker holds or let go of lately has the key.
    NotHeld,
}

impl Match {
    /// The receive count the call is counted against (0 when none).
    pub fn delivery(self) -> u32 {
        match self {
            Match::Held(_, d) | Match::LetGo(_, d) | Match::Ambiguous(_, d) => d,
            Match::NotHeld => 0,
        }
    }
}

impl Holdings {
    /// Delivery `delivery` of `seq` reached the worker.
    pub fn received(&mut self, seq: Seq, delivery: u32) {
        let mut superseded = 0;
        for e in self.entries.iter_mut().filter(|e| e.held && e.seq == seq) {
            e.held = false;
            superseded += 1;
        }
        self.let_go += superseded;
        self.entries.push(Entry {
            seq,
            delivery,
            held: true,
        });
        self.prune();
    }

    /// The worker acked, handed back, or lost to a return, delivery `delivery` of `seq`.
    pub fn let_go(&mut self, seq: Seq, delivery: u32) {
        let found = self
            .entries
            .iter_mut()
            .rev()
            .find(|e| e.held && e.seq == seq && e.delivery == delivery);
        if let Some(e) = found {
            e.held = false;
            self.let_go += 1;
            self.prune();
        }
    }

    /// The worker let go of everything it held (an SQS consumer asking for more messages has
    /// finished what it had).
    pub fn let_go_all(&mut self) {
        for e in self.entries.iter_mut().filter(|e| e.held) {
            e.held = false;
        }
        self.let_go = self.entries.len();
        self.prune();
    }

    /// A new incarnation holds nothing.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.let_go = 0;
    }

    /// Deliveries held now.
    #[cfg(test)]
    pub fn held(&self) -> usize {
        self.entries.len() - self.let_go
    }

    /// The delivery a call belongs to whose key is that of the messages `has_key` accepts.
    pub fn find(&self, has_key: impl Fn(Seq) -> bool) -> Match {
        let mut held = self
            .entries
            .iter()
            .rev()
            .filter(|e| e.held && has_key(e.seq));
        if let Some(latest) = held.next() {
            return match held.next() {
                None => Match::Held(latest.seq, latest.delivery),
                Some(_) => Match::Ambiguous(latest.seq, latest.delivery),
            };
        }
        self.entries
            .iter()
            .rev()
            .find(|e| !e.held && has_key(e.seq))
            .map_or(Match::NotHeld, |e| Match::LetGo(e.seq, e.delivery))
    }

    /// The latest delivery of `seq` the worker received, held or lately let go of, if any.
    pub fn latest_of(&self, seq: Seq) -> Option<u32> {
        self.entries
            .iter()
            .rev()
            .find(|e| e.seq == seq)
            .map(|e| e.delivery)
    }

    /// Forgets the oldest deliveries let go of beyond [`LET_GO_KEPT`].
    fn prune(&mut self) {
        if self.let_go <= LET_GO_KEPT {
            return;
        }
        let mut extra = self.let_go - LET_GO_KEPT;
        self.entries.retain(|e| {
            let drop = extra > 0 && !e.held;
            extra -= usize::from(drop);
            !drop
        });
        self.let_go = LET_GO_KEPT;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys of the messages in these tests: message n has key n, except 7, which has the key of
    /// message 3 (a producer's retry published it again).
    fn key(seq: Seq) -> Seq {
        if seq == 7 {
            3
        } else {
            seq
        }
    }

    fn find(h: &Holdings, k: Seq) -> Match {
        h.find(|s| key(s) == k)
    }

    #[test]
    fn a_call_belongs_to_the_held_delivery_of_its_key_not_the_latest_received() {
        // Unlimited prefetch: the worker holds 1, 2 and 4 (its first deliveries), then message 5
        // returned by another worker's death (its delivery 2). A call for 1 is delivery 1 of
        // message 1, one for 5 delivery 2 of message 5, whatever came last.
        let mut h = Holdings::default();
        for seq in [1, 2, 4] {
            h.received(seq, 1);
        }
        h.received(5, 2);
        assert_eq!(h.held(), 4);
        assert_eq!(find(&h, 1), Match::Held(1, 1));
        assert_eq!(find(&h, 5), Match::Held(5, 2));
        // It acks 1, then calls for 1 again (its own ack came first: an ack-before-work
        // consumer): still delivery 1 of message 1, from those it let go of.
        h.let_go(1, 1);
        assert_eq!(find(&h, 1), Match::LetGo(1, 1));
        assert_eq!(h.held(), 3);
        // Message 3 it never received: no delivery.
        assert_eq!(find(&h, 3), Match::NotHeld);
        assert_eq!(Match::NotHeld.delivery(), 0);
    }

    #[test]
    fn a_key_held_twice_is_ambiguous_and_a_redelivery_supersedes() {
        // Messages 3 and 7 share a key; the worker holds both: a call with that key is
        // ambiguous, counted against the latest received (7, delivery 1).
        let mut h = Holdings::default();
        h.received(3, 1);
        h.received(7, 1);
        assert_eq!(find(&h, 3), Match::Ambiguous(7, 1));
        // Message 2 comes again to the same worker (its lease ended): delivery 2 supersedes 1.
        h.received(2, 1);
        h.received(2, 2);
        assert_eq!(find(&h, 2), Match::Held(2, 2));
        assert_eq!(h.held(), 3);
        // An SQS consumer asking for more let go of all three; a late call still finds them.
        h.let_go_all();
        assert_eq!(h.held(), 0);
        assert_eq!(find(&h, 2), Match::LetGo(2, 2));
        h.clear();
        assert_eq!(find(&h, 2), Match::NotHeld);
    }

    #[test]
    fn only_the_latest_deliveries_let_go_of_are_kept() {
        // 100 deliveries received and acked in turn, message 1000 held throughout: the 64 latest
        // let go of (37 to 100) are kept, the 36 before are forgotten, the held one is not.
        let mut h = Holdings::default();
        h.received(1000, 1);
        for seq in 1..=100 {
            h.received(seq, 1);
            h.let_go(seq, 1);
        }
        assert_eq!(h.entries.len(), 1 + LET_GO_KEPT);
        assert_eq!(find(&h, 36), Match::NotHeld);
        assert_eq!(find(&h, 37), Match::LetGo(37, 1));
        assert_eq!(find(&h, 1000), Match::Held(1000, 1));
    }
}
