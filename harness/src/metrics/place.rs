//! Where each message is, replayed from the broker's events: the one state machine that the
//! accounting and the time series share, so that both always agree.

use crate::record::{AckOutcome, EventKind, Republish, Seq};

/// Where one message is at an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Place {
    /// Not published yet.
    #[default]
    Unpublished,
    /// In the main queue, waiting for a receive. A message published with a delay counts as
    /// visible from its publish: the record does not say when a delay ends.
    Visible,
    /// In the main queue under a lease: handed to a worker, not yet acked, expired or
    /// dead-lettered. A lease extended or pushed back by a visibility change stays in flight
    /// until it ends, as SQS counts it.
    InFlight,
    /// Deleted by an ack (current receipt, or a stale one under `stale_ack: delete`).
    Deleted,
    /// In the dead-letter queue.
    DeadLettered,
    /// Published again by its consumer for a later try: in a delay queue, or held by the
    /// consumer's framework until the retry is due.
    Delayed,
}

impl Place {
    /// True while the main queue holds the message (visible or in flight).
    pub fn in_main_queue(self) -> bool {
        matches!(self, Place::Visible | Place::InFlight)
    }

    /// A small index, for per-place counters.
    pub fn slot(self) -> usize {
        match self {
            Place::Unpublished => 0,
            Place::Visible => 1,
            Place::InFlight => 2,
            Place::Deleted => 3,
            Place::DeadLettered => 4,
            Place::Delayed => 5,
        }
    }
}

/// One message moved from one place to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Move {
    /// Index of the message in [`crate::record::RunRecord::messages`] (`seq - 1`).
    pub index: usize,
    pub from: Place,
    pub to: Place,
}

/// The index of `seq` in a record of `len` messages, if it names one.
pub fn index_of(seq: Seq, len: usize) -> Option<usize> {
    let i = usize::try_from(seq.checked_sub(1)?).ok()?;
    (i < len).then_some(i)
}

/// The message an event may move and the place it would move it to; `None` for an event that
/// moves no message.
#[inline]
pub fn destination(kind: &EventKind) -> Option<(Seq, Place)> {
    Some(match *kind {
        EventKind::Published { seq } => (seq, Place::Visible),
        EventKind::Delivered { seq, .. } => (seq, Place::InFlight),
        EventKind::LeaseExpired { seq, .. } => (seq, Place::Visible),
        EventKind::Acked {
            seq,
            outcome: AckOutcome::Deleted | AckOutcome::StaleDeleted | AckOutcome::LateDeleted,
            ..
        } => (seq, Place::Deleted),
        // From a visible message only: `stale_ack: sqs` leases it again to the latest
        // receipt's holder (from a leased one it is no move).
        EventKind::VisibilityChanged { seq, .. } => (seq, Place::InFlight),
        EventKind::DeadLettered { seq, .. } => (seq, Place::DeadLettered),
        EventKind::Dropped { seq, .. } => (seq, Place::Deleted),
        EventKind::Redriven { seq } => (seq, Place::Visible),
        EventKind::Republished { seq, to, .. } => (
            seq,
            match to {
                Republish::Queue => Place::Visible,
                Republish::Delayed => Place::Delayed,
                Republish::DeadLetter => Place::DeadLettered,
            },
        ),
        _ => return None,
    })
}

/// Whether `kind` moves a message that is at `from` to `to` (its [`destination`]): events that
/// do not fit the message's place change nothing.
#[inline]
pub fn moves(kind: &EventKind, from: Place, to: Place) -> bool {
    let allowed = match (kind, from) {
        (EventKind::Published { .. }, Place::Unpublished) => true,
        // A delayed retry comes due as a hand-back's lease ends (the sim's stand-in for a
        // framework's delay).
        (EventKind::LeaseExpired { .. }, Place::InFlight | Place::Delayed) => true,
        // A copy taken from wherever the framework kept it.
        (EventKind::Delivered { .. }, Place::Delayed) => true,
        (EventKind::Redriven { .. }, Place::DeadLettered) => true,
        (EventKind::VisibilityChanged { .. }, Place::Visible) => true,
        // The consumer's copy is the message's next life, wherever its last one ended.
        (EventKind::Republished { .. }, from) => from != Place::Unpublished,
        // The ack of the copy a retry replaced moves nothing: the message lives on.
        (
            EventKind::Acked {
                outcome: AckOutcome::Superseded,
                ..
            },
            _,
        ) => false,
        (
            EventKind::Delivered { .. }
            | EventKind::Acked { .. }
            | EventKind::DeadLettered { .. }
            | EventKind::Dropped { .. },
            _,
        ) => from.in_main_queue(),
        _ => false,
    };
    allowed && from != to
}

/// The place of every message, advanced one event at a time.
///
/// Events that do not fit (a delivery of a deleted message, a seq that names no message) change
/// nothing: the replay never fails on a record.
#[derive(Debug, Clone)]
pub struct Places {
    places: Vec<Place>,
}

impl Places {
    /// `messages` messages, none published yet.
    pub fn new(messages: usize) -> Self {
        Places {
            places: vec![Place::Unpublished; messages],
        }
    }

    /// The place of message `index`.
    pub fn get(&self, index: usize) -> Place {
        self.places.get(index).copied().unwrap_or_default()
    }

    /// Applies one event; returns the move it made, if it moved a message.
    pub fn apply(&mut self, kind: &EventKind) -> Option<Move> {
        let (seq, to) = destination(kind)?;
        let index = index_of(seq, self.places.len())?;
        let from = self.places[index];
        if !moves(kind, from, to) {
            return None;
        }
        self.places[index] = to;
        Some(Move { index, from, to })
    }

    /// The places, indexed like the record's messages.
    pub fn into_vec(self) -> Vec<Place> {
        self.places
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_consumers_retry_is_the_messages_next_life_wherever_it_waits() {
        use crate::record::Republish;
        let mut p = Places::new(1);
        let ack = |delivery, outcome| EventKind::Acked {
            seq: 1,
            worker: 1,
            delivery,
            outcome,
        };
        let delivered = |delivery| EventKind::Delivered {
            seq: 1,
            worker: 1,
            delivery,
            lease_end: 90,
        };
        let republished = |delivery, to| EventKind::Republished {
            seq: 1,
            worker: 1,
            delivery,
            to,
        };
        let moves: Vec<_> = [
            EventKind::Published { seq: 1 },
            delivered(1),
            // Live: published to a delay queue, the replaced copy acked (no move), moved to the
            // queue when due, delivered again and acked.
            republished(1, Republish::Delayed),
            ack(1, AckOutcome::Superseded),
            republished(0, Republish::Queue),
            delivered(2),
            // An ack-first consumer's retry: deleted, then its copy lives on; the sim's delayed
            // retry comes due as its hand-back ends.
            ack(2, AckOutcome::Deleted),
            republished(2, Republish::Delayed),
            EventKind::LeaseExpired {
                seq: 1,
                delivery: 2,
            },
            delivered(3),
            // Out of retries: the framework's dead-letter queue.
            republished(3, Republish::DeadLetter),
            ack(3, AckOutcome::Superseded),
        ]
        .iter()
        .filter_map(|k| p.apply(k).map(|m| m.to))
        .collect();
        use Place::*;
        assert_eq!(
            moves,
            vec![
                Visible,
                InFlight,
                Delayed,
                Visible,
                InFlight,
                Deleted,
                Delayed,
                Visible,
                InFlight,
                DeadLettered,
            ]
        );
    }

    #[test]
    fn a_lease_that_expires_returns_the_message_and_a_redrive_brings_it_back() {
        let mut p = Places::new(1);
        let moves: Vec<_> = [
            EventKind::Published { seq: 1 },
            EventKind::Delivered {
                seq: 1,
                worker: 1,
                delivery: 1,
                lease_end: 30,
            },
            EventKind::LeaseExpired {
                seq: 1,
                delivery: 1,
            },
            EventKind::Delivered {
                seq: 1,
                worker: 2,
                delivery: 2,
                lease_end: 60,
            },
            EventKind::DeadLettered {
                seq: 1,
                delivery: 2,
            },
            EventKind::Acked {
                seq: 1,
                worker: 1,
                delivery: 1,
                outcome: AckOutcome::StaleGone,
            },
            EventKind::Redriven { seq: 1 },
            EventKind::Delivered {
                seq: 1,
                worker: 1,
                delivery: 1,
                lease_end: 90,
            },
            EventKind::Acked {
                seq: 1,
                worker: 1,
                delivery: 1,
                outcome: AckOutcome::Deleted,
            },
        ]
        .iter()
        .filter_map(|k| p.apply(k).map(|m| m.to))
        .collect();
        use Place::*;
        assert_eq!(
            moves,
            vec![
                Visible,
                InFlight,
                Visible,
                InFlight,
                DeadLettered,
                Visible,
                InFlight,
                Deleted
            ]
        );
    }

    #[test]
    fn events_that_do_not_fit_change_nothing() {
        let mut p = Places::new(1);
        assert_eq!(
            p.apply(&EventKind::Delivered {
                seq: 1,
                worker: 1,
                delivery: 1,
                lease_end: 0
            }),
            None
        );
        assert_eq!(p.apply(&EventKind::Published { seq: 0 }), None);
        assert_eq!(p.apply(&EventKind::Published { seq: 2 }), None);
        assert!(p.apply(&EventKind::Published { seq: 1 }).is_some());
        assert_eq!(p.apply(&EventKind::Published { seq: 1 }), None);
        assert_eq!(p.apply(&EventKind::Redriven { seq: 1 }), None);
        assert_eq!(
            p.apply(&EventKind::Acked {
                seq: 1,
                worker: 1,
                delivery: 1,
                outcome: AckOutcome::StaleIgnored
            }),
            None
        );
        assert_eq!(p.get(0), Place::Visible);
    }
}
