//! The broker anomaly checker: reads the recorded history of deliveries and acks and names
//! every step no broker should take, whatever its kind.
//!
//! - **Delivered after its ack was confirmed**: a delivery of a message the broker had already
//!   confirmed deleted (an ack it accepted as current). A redelivery of an acked message means
//!   an ack the consumer was told succeeded did not hold (nats-server 2.9.10 can do this when a
//!   redelivery meets an expiring pull request).
//! - **Delivery count went down**: a message's delivery number lower than an earlier one of the
//!   same message (a redrive, which gives the message a new delivery budget, starts it again).
//! - **Ack accepted for a settled message**: the broker accepted an ack as current for a message
//!   it had already confirmed deleted, or dead-lettered, which nobody held any more.
//!
//! On a broker that settles by committed offsets (Kafka) the first rule does not hold and is not
//! checked: a consumer works through the batch its last poll returned even after its partition
//! moved and the next owner committed those records (its own commits are then fenced): the
//! record is handed out again by the application, not by the broker.
//!
//! Only acks the broker confirmed as current (`Deleted`) count as confirmations: a success
//! reported for a stale or expired receipt (`StaleDeleted`, `LateDeleted`) is the stale-ack
//! policy's reading of an answer SQS documents as ambiguous, so it confirms nothing.
//!
//! On the embedded broker none of these can happen (its proptests check it); on a real server
//! each is counted in `broker_anomalies` and listed with the message and the instant.

use rustc_hash::FxHashMap as HashMap;

use serde::{Deserialize, Serialize};

use super::seconds;
use crate::record::{AckOutcome, EventKind, Nanos, RunRecord, Seq, WorkerId};

/// Which step broke the rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnomalyKind {
    DeliveredAfterConfirmedAck,
    DeliveryCountWentDown,
    AckAcceptedForSettledMessage,
}

impl AnomalyKind {
    pub fn describe(self) -> &'static str {
        match self {
            AnomalyKind::DeliveredAfterConfirmedAck => "delivered after its ack was confirmed",
            AnomalyKind::DeliveryCountWentDown => "delivery count went down",
            AnomalyKind::AckAcceptedForSettledMessage => "ack accepted for a settled message",
        }
    }
}

/// One anomaly, as summary.json lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Anomaly {
    pub kind: AnomalyKind,
    /// The message's key.
    pub key: String,
    /// When it happened, seconds since the start of the run (profile time).
    pub at_s: f64,
    pub worker: WorkerId,
    /// The delivery number the step carried.
    pub delivery: u32,
}

/// What the history says of one message so far.
#[derive(Debug, Default, Clone, Copy)]
pub struct Seen {
    /// The highest delivery number handed out since the message's last redrive.
    delivery: u32,
    /// The broker confirmed an ack as current.
    acked: bool,
    /// The message left the queue for good (acked, dead-lettered or dropped).
    settled: bool,
}

/// The run's anomalies, in time order.
pub fn anomalies(record: &RunRecord) -> Vec<Anomaly> {
    let offsets = record.broker_kind.settles_by_offsets();
    let mut checker = Checker::new(offsets);
    for e in &record.events {
        checker.event(e.at, &e.kind);
    }
    let key = |seq: Seq| {
        record
            .messages
            .get((seq as usize).wrapping_sub(1))
            .map_or_else(|| format!("#{seq}"), |m| m.key.to_string())
    };
    checker.finish(key)
}

/// The checker read one event at a time: what [`anomalies`] folds over a whole record, and a
/// streamed run folds as it goes.
///
/// What it knows of a message is a [`Seen`]: [`Checker::event`] keeps them in a map by seq; a
/// caller that already keeps a record per message (the streamed accounting's table, which lets
/// a message go once nothing more can happen to it) keeps them there and hands them to
/// [`Checker::event_on`].
#[derive(Default)]
pub struct Checker {
    /// The broker settles by offsets: a delivery after a confirmed ack is no anomaly.
    offsets: bool,
    seen: HashMap<Seq, Seen>,
    /// (kind, seq, at, worker, delivery), named when the run is over.
    found: Vec<(AnomalyKind, Seq, Nanos, WorkerId, u32)>,
}

/// The message an event the checker reads is about, if it reads it (only those get an entry in
/// its map).
#[inline(always)]
fn checked_seq(kind: &EventKind) -> Option<Seq> {
    match *kind {
        EventKind::Delivered { seq, .. }
        | EventKind::Acked {
            seq,
            outcome: AckOutcome::Deleted,
            ..
        }
        | EventKind::DeadLettered { seq, .. }
        | EventKind::Dropped { seq, .. }
        | EventKind::Redriven { seq }
        | EventKind::Republished { seq, .. } => Some(seq),
        _ => None,
    }
}

impl Checker {
    /// A checker of a run whose broker settles by offsets (`offsets`, Kafka) or per message.
    pub fn new(offsets: bool) -> Checker {
        Checker {
            offsets,
            ..Checker::default()
        }
    }

    /// Applies one event at `at`, what it knows of the message kept in its own map.
    pub fn event(&mut self, at: Nanos, kind: &EventKind) {
        if let Some(seq) = checked_seq(kind) {
            let seen = self.seen.entry(seq).or_default();
            on_message(&mut self.found, self.offsets, seen, seq, at, kind);
        }
    }

    /// Applies one event at `at` about message `seq`, what is known of it being `seen` (kept
    /// by the caller; `Seen::default()` for a message nothing was known of).
    #[inline(always)]
    pub fn event_on(&mut self, seen: &mut Seen, seq: Seq, at: Nanos, kind: &EventKind) {
        on_message(&mut self.found, self.offsets, seen, seq, at, kind);
    }

    /// Takes what this checker's own map holds of message `seq` (events about it before the
    /// caller kept its record), for [`Checker::event_on`] from now on.
    #[inline]
    pub fn take(&mut self, seq: Seq) -> Seen {
        if self.seen.is_empty() {
            return Seen::default();
        }
        self.seen.remove(&seq).unwrap_or_default()
    }

    /// The anomalies found, in time order, each message named by `key`.
    pub fn finish(self, key: impl Fn(Seq) -> String) -> Vec<Anomaly> {
        self.found
            .into_iter()
            .map(|(kind, seq, at, worker, delivery)| Anomaly {
                kind,
                key: key(seq),
                at_s: seconds(at),
                worker,
                delivery,
            })
            .collect()
    }
}

/// One event about message `seq`, what is known of it being `s`; an anomaly found goes to
/// `found`.
#[inline(always)]
fn on_message(
    found: &mut Vec<(AnomalyKind, Seq, Nanos, WorkerId, u32)>,
    offsets: bool,
    s: &mut Seen,
    seq: Seq,
    at: Nanos,
    kind: &EventKind,
) {
    let mut found = |kind, worker, delivery| found.push((kind, seq, at, worker, delivery));
    match *kind {
        EventKind::Delivered {
            worker, delivery, ..
        } => {
            if s.acked && !offsets {
                found(AnomalyKind::DeliveredAfterConfirmedAck, worker, delivery);
            }
            if delivery < s.delivery {
                found(AnomalyKind::DeliveryCountWentDown, worker, delivery);
            }
            s.delivery = s.delivery.max(delivery);
        }
        EventKind::Acked {
            worker,
            delivery,
            outcome: AckOutcome::Deleted,
            ..
        } => {
            if s.settled {
                found(AnomalyKind::AckAcceptedForSettledMessage, worker, delivery);
            }
            s.acked = true;
            s.settled = true;
        }
        // Deletes by a stale or expired receipt are the stale-ack policy's reading of a
        // success the server reported (SQS: "might not be deleted"), not a confirmation: they
        // settle nothing the checker relies on.
        EventKind::DeadLettered { .. } | EventKind::Dropped { .. } => s.settled = true,
        // A redrive puts the message back with a new delivery budget.
        EventKind::Redriven { .. } => *s = Seen::default(),
        // The consumer published it again (a retry): a life after its ack, its deliveries
        // counted on.
        EventKind::Republished { .. } => {
            s.acked = false;
            s.settled = false;
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Event, MessageRecord, Nanos};

    fn delivered(at: Nanos, seq: Seq, worker: WorkerId, delivery: u32) -> Event {
        Event {
            at,
            kind: EventKind::Delivered {
                seq,
                worker,
                delivery,
                lease_end: at + 30_000_000_000,
            },
        }
    }

    fn acked(at: Nanos, seq: Seq, worker: WorkerId, delivery: u32, outcome: AckOutcome) -> Event {
        Event {
            at,
            kind: EventKind::Acked {
                seq,
                worker,
                delivery,
                outcome,
            },
        }
    }

    fn record(events: Vec<Event>) -> RunRecord {
        let m = |key: &str| MessageRecord {
            key: key.into(),
            published_at: 0,
            poison: false,
        };
        RunRecord {
            messages: vec![m("order-1"), m("order-2"), m("order-3")],
            events,
            ..RunRecord::default()
        }
    }

    const S: Nanos = 1_000_000_000;

    #[test]
    fn a_clean_history_has_no_anomaly() {
        // Message 1: delivered, lease ran out, delivered again, acked; a stale ack of the first
        // delivery refused. Message 2: dead-lettered after two deliveries, then redriven and
        // delivered as its delivery 1 again (a new budget), then acked. Nothing is wrong.
        let r = record(vec![
            delivered(0, 1, 1, 1),
            delivered(30 * S, 1, 2, 2),
            acked(31 * S, 1, 2, 2, AckOutcome::Deleted),
            acked(35 * S, 1, 1, 1, AckOutcome::StaleRejected),
            delivered(40 * S, 2, 1, 1),
            delivered(70 * S, 2, 1, 2),
            Event {
                at: 100 * S,
                kind: EventKind::DeadLettered {
                    seq: 2,
                    delivery: 2,
                },
            },
            Event {
                at: 200 * S,
                kind: EventKind::Redriven { seq: 2 },
            },
            delivered(201 * S, 2, 3, 1),
            acked(202 * S, 2, 3, 1, AckOutcome::Deleted),
        ]);
        assert_eq!(anomalies(&r), []);
    }

    #[test]
    fn each_broken_rule_is_named_with_its_message_and_instant() {
        let r = record(vec![
            // Message 1 acked and confirmed at 2 s, then delivered again at 5 s: one anomaly.
            delivered(S, 1, 1, 1),
            acked(2 * S, 1, 1, 1, AckOutcome::Deleted),
            delivered(5 * S, 1, 2, 2),
            // Message 2 delivered as delivery 3, then as delivery 2: the count went down.
            delivered(6 * S, 2, 1, 3),
            delivered(7 * S, 2, 2, 2),
            // Message 3 dead-lettered at 8 s, then an ack accepted as current at 9 s.
            delivered(7 * S, 3, 3, 1),
            Event {
                at: 8 * S,
                kind: EventKind::DeadLettered {
                    seq: 3,
                    delivery: 1,
                },
            },
            acked(9 * S, 3, 3, 1, AckOutcome::Deleted),
        ]);
        let a = anomalies(&r);
        let named: Vec<_> = a
            .iter()
            .map(|a| (a.kind, a.key.as_str(), a.at_s, a.worker, a.delivery))
            .collect();
        assert_eq!(
            named,
            [
                (
                    AnomalyKind::DeliveredAfterConfirmedAck,
                    "order-1",
                    5.0,
                    2,
                    2
                ),
                (AnomalyKind::DeliveryCountWentDown, "order-2", 7.0, 2, 2),
                (
                    AnomalyKind::AckAcceptedForSettledMessage,
                    "order-3",
                    9.0,
                    3,
                    1
                ),
            ]
        );
    }

    #[test]
    fn what_a_caller_keeps_per_message_finds_what_the_map_finds() {
        // Message 1 is acked and confirmed at 2 s and delivered again at 5 s (one anomaly, at
        // 5 s). Its first two events go through the checker's own map; from the third on the
        // caller keeps its `Seen`, taken over from the map (as the streamed accounting does
        // when a message is published after events named it), so the anomaly is still found.
        let events = [
            delivered(S, 1, 1, 1),
            acked(2 * S, 1, 1, 1, AckOutcome::Deleted),
            delivered(5 * S, 1, 2, 2),
        ];
        let mut checker = Checker::default();
        for e in &events[..2] {
            checker.event(e.at, &e.kind);
        }
        let mut seen = checker.take(1);
        assert!(checker.seen.is_empty(), "taken out of the map");
        checker.event_on(&mut seen, 1, events[2].at, &events[2].kind);
        let found = checker.finish(|seq| format!("#{seq}"));
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].kind, found[0].at_s),
            (AnomalyKind::DeliveredAfterConfirmedAck, 5.0)
        );
    }
}
