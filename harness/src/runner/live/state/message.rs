//! `message` faults on a live run's embedded SQS endpoint: a rule that fires on a delete (the
//! ack) or a delivery is recorded (`FaultFired`) at once; the endpoint does the rest (answers a
//! held delete success, leaves a dropped delivery out of its answer).

use super::{lock, LiveState};
use crate::broker::sqs::Delete;
use crate::chaos::message::Fired;
use crate::chaos::MessageHit;
use crate::record::{EventKind, HandlerEnd, Seq, WorkerId};

impl LiveState {
    /// What the `message` rules do with `w`'s delete of delivery `delivery` of `seq`.
    pub fn delete_fault(&self, w: WorkerId, seq: Seq, delivery: u32) -> Delete {
        match self.message_fired(w, seq, delivery, true) {
            None => Delete::Now,
            Some(Fired { delay: None, .. }) => Delete::Dropped,
            Some(Fired { delay: Some(d), .. }) => Delete::Later(self.clock.wall(d)),
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
            .get((seq as usize).wrapping_sub(1))
            .cloned()
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
