//! `message` faults on a live run: a rule that fires on an ack (an SQS delete, an AMQP
//! `basic.ack`) or a delivery is recorded (`FaultFired`) at once; the embedded SQS endpoint or
//! the kind's proxy does the rest (answers a held delete success, leaves a dropped delivery out
//! of its answer, keeps an ack frame from the broker or passes it on later).

use std::time::Duration;

use super::{lock, LiveState};
use crate::broker::sqs::Delete;
use crate::chaos::message::Fired;
use crate::chaos::MessageHit;
use crate::record::{EventKind, HandlerEnd, Seq, WorkerId};

/// What a `message` rule that fired does with an ack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeldAck {
    /// The broker never gets it.
    Dropped,
    /// The broker gets it this much wall time later.
    Later(Duration),
}

/// What a `message` rule that fired does with a delivery a proxy sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeldDelivery {
    /// The worker never sees it.
    Dropped,
    /// The worker sees it this much wall time later.
    Later(Duration),
}

impl LiveState {
    /// Whether some `message` rule acts on deliveries: a proxy then reads each delivery whole
    /// before it passes it on.
    pub fn message_faults_on_deliveries(&self) -> bool {
        lock(&self.faults).messages.on_deliveries()
    }

    /// What the `message` rules do with delivery `delivery` of `seq`, handed to `w`: `None`, it
    /// goes on now.
    pub fn delivery_fault(&self, w: WorkerId, seq: Seq, delivery: u32) -> Option<HeldDelivery> {
        let fired = self.message_fired(w, seq, delivery, false)?;
        Some(match fired.delay {
            None => HeldDelivery::Dropped,
            Some(d) => HeldDelivery::Later(self.clock.wall(d)),
        })
    }

    /// Whether some `message` rule acts on acks: a proxy then reads each ack before it passes
    /// it on.
    pub fn message_faults_on_acks(&self) -> bool {
        lock(&self.faults).messages.on_acks()
    }

    /// What the `message` rules do with `w`'s ack of delivery `delivery` of `seq`: `None`, it
    /// goes on now.
    pub fn ack_fault(&self, w: WorkerId, seq: Seq, delivery: u32) -> Option<HeldAck> {
        let fired = self.message_fired(w, seq, delivery, true)?;
        Some(match fired.delay {
            None => HeldAck::Dropped,
            Some(d) => HeldAck::Later(self.clock.wall(d)),
        })
    }

    /// What the `message` rules do with `w`'s delete of delivery `delivery` of `seq`.
    pub fn delete_fault(&self, w: WorkerId, seq: Seq, delivery: u32) -> Delete {
        match self.ack_fault(w, seq, delivery) {
            None => Delete::Now,
            Some(HeldAck::Dropped) => Delete::Dropped,
            Some(HeldAck::Later(d)) => Delete::Later(d),
        }
    }

    /// Whether the `message` rules drop delivery `delivery` of `seq`, leased to `w`: its handler
    /// span (the worker never sees it) ends at once, as on virtual time.
    pub fn delivery_dropped(&self, w: WorkerId, seq: Seq, delivery: u32) -> bool {
        let dropped = self.message_fired(w, seq, delivery, false).is_some();
        if dropped {
            self.record(EventKind::HandlerEnded {
                seq,
                worker: w,
                delivery,
                how: HandlerEnd::Finished,
            });
        }
        dropped
    }

    fn message_fired(&self, w: WorkerId, seq: Seq, delivery: u32, ack: bool) -> Option<Fired> {
        if lock(&self.faults).messages.is_empty() {
            return None;
        }
        let key = lock(&self.keys)
            .get(seq)
            .map(str::to_string)
            .unwrap_or_default();
        let hit = MessageHit {
            seq,
            key: &key,
            delivery,
            now: self.clock.now(),
        };
        let fired = {
            let mut faults = lock(&self.faults);
            match ack {
                true => faults.messages.ack(hit),
                false => faults.messages.delivery(hit),
            }
        }?;
        self.record(EventKind::FaultFired {
            worker: w,
            rule: fired.rule,
        });
        Some(fired)
    }
}
