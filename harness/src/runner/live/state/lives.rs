//! A message's lives on a broker that numbers every message it stores (the embedded SQS
//! endpoint): a copy a consumer sends again itself (a framework's retry: Celery's `retry` sends
//! the task anew) is a new message to the broker, with a number of its own, and the run's own
//! later messages are numbered after it. [`Lives`] maps the broker's numbers back to the run's
//! messages, and each copy's deliveries onto its message's: a copy's first delivery is its
//! message's next one.
//!
//! A copy is known when it is sent (the endpoint tells the run under its lock, before anything
//! later is stored), so the run's message behind any other number is that number less the copies
//! stored before it: known as soon as the message can be handed out. The broker's numbers are
//! the run's until a consumer sends a copy, so a run without one is recorded as before.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::record::{AckOutcome, EventKind, Seq};

#[derive(Debug, Default)]
pub struct Lives {
    /// The broker numbers of the copies consumers sent -> the run's message of each.
    copies: BTreeMap<Seq, Seq>,
    /// (broker number, its delivery) -> the message's delivery, for a copy's deliveries.
    deliveries: HashMap<(Seq, u32), u32>,
    /// Deliveries so far of each message, over all its copies.
    delivered: HashMap<Seq, u32>,
    /// Deliveries (run seq, delivery) whose handler sent the message again: their ack removes
    /// the copy the retry replaced.
    retired: HashSet<(Seq, u32)>,
    /// Messages whose latest copy went to a delay queue: the next copy to the queue is the
    /// framework's move of it, not another retry.
    delayed: HashSet<Seq>,
}

impl Lives {
    /// Broker message `broker` is a copy of the run's message `seq`, sent by the handler of its
    /// delivery `delivery` (0: none).
    pub fn copied(&mut self, broker: Seq, seq: Seq, delivery: u32) {
        self.copies.insert(broker, seq);
        self.retire(seq, delivery);
    }

    /// The handler of delivery `delivery` of `seq` sent the message again: that delivery's
    /// ack will remove the copy the retry replaced.
    pub fn retire(&mut self, seq: Seq, delivery: u32) {
        if delivery > 0 {
            self.retired.insert((seq, delivery));
        }
    }

    /// A copy of `seq` went to `to`: true when it is the framework moving the delayed copy to
    /// the queue (no retry of a handler's).
    pub fn moved(&mut self, seq: Seq, to: crate::record::Republish) -> bool {
        use crate::record::Republish;
        match to {
            Republish::Delayed => {
                self.delayed.insert(seq);
                false
            }
            Republish::Queue => self.delayed.remove(&seq),
            Republish::DeadLetter => {
                self.delayed.remove(&seq);
                false
            }
        }
    }

    /// Whether delivery `delivery` of `seq` is one a retry replaced (asked once, by its ack).
    pub fn replaced(&mut self, seq: Seq, delivery: u32) -> bool {
        self.retired.remove(&(seq, delivery))
    }

    /// The run's message of broker message `broker`: a copy's message, else the run's message
    /// numbered `broker` less the copies before it.
    pub fn seq(&self, broker: Seq) -> Seq {
        match self.copies.get(&broker) {
            Some(&seq) => seq,
            None => broker - self.copies.range(..broker).count() as Seq,
        }
    }

    /// Broker message `broker` was handed out as its delivery `delivery`: the run's message and
    /// its delivery number.
    pub fn delivered(&mut self, broker: Seq, delivery: u32) -> (Seq, u32) {
        let seq = self.seq(broker);
        let n = self.delivered.entry(seq).or_insert(0);
        if self.copies.contains_key(&broker) {
            *n += 1;
            self.deliveries.insert((broker, delivery), *n);
            (seq, *n)
        } else {
            *n = (*n).max(delivery);
            (seq, delivery)
        }
    }

    /// The run's message and delivery of broker message `broker`'s delivery `delivery`.
    pub fn delivery(&self, broker: Seq, delivery: u32) -> (Seq, u32) {
        let d = self
            .deliveries
            .get(&(broker, delivery))
            .copied()
            .unwrap_or(delivery);
        (self.seq(broker), d)
    }

    /// A broker event in the run's terms: `None` for the publish of a copy (the run recorded
    /// the copy when it was sent).
    pub fn event(&self, kind: EventKind) -> Option<EventKind> {
        if self.copies.is_empty() {
            return Some(kind);
        }
        Some(match kind {
            EventKind::Published { seq } if self.copies.contains_key(&seq) => return None,
            EventKind::Published { seq } => EventKind::Published { seq: self.seq(seq) },
            EventKind::Delivered {
                seq,
                worker,
                delivery,
                lease_end,
            } => {
                let (seq, delivery) = self.delivery(seq, delivery);
                EventKind::Delivered {
                    seq,
                    worker,
                    delivery,
                    lease_end,
                }
            }
            EventKind::Acked {
                seq,
                worker,
                delivery,
                outcome,
            } => {
                let (seq, delivery) = self.delivery(seq, delivery);
                let replaced =
                    outcome == AckOutcome::Deleted && self.retired.contains(&(seq, delivery));
                EventKind::Acked {
                    seq,
                    worker,
                    delivery,
                    outcome: if replaced {
                        AckOutcome::Superseded
                    } else {
                        outcome
                    },
                }
            }
            EventKind::VisibilityChanged {
                seq,
                worker,
                delivery,
                lease_end,
            } => {
                let (seq, delivery) = self.delivery(seq, delivery);
                EventKind::VisibilityChanged {
                    seq,
                    worker,
                    delivery,
                    lease_end,
                }
            }
            EventKind::LeaseExpired { seq, delivery } => {
                let (seq, delivery) = self.delivery(seq, delivery);
                EventKind::LeaseExpired { seq, delivery }
            }
            EventKind::DeadLettered { seq, delivery } => {
                let (seq, delivery) = self.delivery(seq, delivery);
                EventKind::DeadLettered { seq, delivery }
            }
            EventKind::Dropped { seq, delivery } => {
                let (seq, delivery) = self.delivery(seq, delivery);
                EventKind::Dropped { seq, delivery }
            }
            EventKind::Redriven { seq } => EventKind::Redriven { seq: self.seq(seq) },
            EventKind::Rejected { seq, worker } => EventKind::Rejected {
                seq: self.seq(seq),
                worker,
            },
            other => other,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_is_its_messages_next_delivery_and_later_messages_keep_their_numbers() {
        let mut l = Lives::default();
        // Messages 1 and 2 are broker numbers 1 and 2. Message 1's first delivery fails and
        // its handler sends a copy: broker number 3. The run's message 3 becomes broker 4.
        assert_eq!(l.delivered(1, 1), (1, 1));
        l.copied(3, 1, 1);
        // The copy's first delivery is message 1's second; message 3's is its first.
        assert_eq!(l.delivered(3, 1), (1, 2));
        assert_eq!(l.delivered(4, 1), (3, 1));
        // The broker's log in the run's terms: the copy's publish is gone (recorded when
        // sent), the original's delete is the ack of the replaced copy, the copy's delete is
        // message 1's delivery 2 deleted.
        let ack = |seq, delivery| EventKind::Acked {
            seq,
            worker: 1,
            delivery,
            outcome: AckOutcome::Deleted,
        };
        assert_eq!(l.event(EventKind::Published { seq: 3 }), None);
        assert_eq!(
            l.event(EventKind::Published { seq: 4 }),
            Some(EventKind::Published { seq: 3 })
        );
        assert_eq!(
            l.event(ack(1, 1)),
            Some(EventKind::Acked {
                seq: 1,
                worker: 1,
                delivery: 1,
                outcome: AckOutcome::Superseded
            })
        );
        assert_eq!(l.event(ack(3, 1)), Some(ack(1, 2)));
        assert_eq!(l.event(ack(4, 1)), Some(ack(3, 1)));
    }

    #[test]
    fn without_a_copy_every_number_is_the_runs() {
        let mut l = Lives::default();
        assert_eq!(l.delivered(5, 2), (5, 2));
        let e = EventKind::LeaseExpired {
            seq: 5,
            delivery: 2,
        };
        assert_eq!(l.event(e), Some(e));
    }
}
