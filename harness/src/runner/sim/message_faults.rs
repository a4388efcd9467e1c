//! `message` faults on virtual time: a rule that fires on an ack or a delivery is recorded
//! (`FaultFired`) at once; what it does follows.
//!
//! - `drop_ack`: the consumer's ack returns success and the broker never hears of it (the lease
//!   runs out, or RabbitMQ keeps the message unacked until its consumer goes or times out).
//! - `delay_ack`: the ack returns success; the broker gets it `delay` later and judges it then
//!   (a late ack is the kind's stale-ack case).
//! - `drop_delivery`: the broker leased and counted the delivery, but the worker never sees it:
//!   its handler span ends at once, and the worker waits on in its receive.
//! - `delay_delivery`: the worker sees the delivery `delay` later, its lease running meanwhile.

use super::world::{Handling, OpId, OpResult, TimerKind, World, CLASS_HANDLER};
use crate::broker::{Handout, Receipt};
use crate::chaos::message::Fired;
use crate::chaos::MessageHit;
use crate::profile::KillPoint;
use crate::record::{Event, EventKind, HandlerEnd, WorkerId};

/// What became of a hand-out the `message` rules looked at.
pub(super) enum HandedOut {
    /// No rule fired: the worker gets it now.
    Now,
    /// Dropped: the worker still waits in its receive.
    Dropped,
    /// Delayed: the worker gets it later (a timer).
    Later,
}

impl World {
    /// The `message` rules at worker `w`'s ack of `receipt`: true when one fired (the ack is then
    /// dropped, or scheduled to reach the broker later), false when the broker takes it now.
    pub fn ack_fault(&mut self, w: WorkerId, receipt: Receipt) -> bool {
        if !self.faults.messages.on_acks() {
            return false;
        }
        // The delivery acked: the one the worker handles, else the receipt's own number.
        let delivery = match self.slot(w).handling {
            Some(h) if h.seq == receipt.seq => h.delivery,
            _ => receipt.nonce,
        };
        let Some(fired) = self.message_fired(w, receipt.seq, delivery, true) else {
            return false;
        };
        if let Some(delay) = fired.delay {
            let at = self.now + delay;
            self.schedule(
                at,
                CLASS_HANDLER,
                TimerKind::DelayedAck { worker: w, receipt },
            );
        }
        true
    }

    /// A delayed ack reaches the broker, which judges it by its kind's rules (the worker was
    /// told it succeeded long ago: a refusal is recorded, not returned).
    pub fn delayed_ack(&mut self, w: WorkerId, receipt: Receipt) {
        let now = self.now;
        let _judged = self.broker.ack(now, receipt, w, &mut self.events);
    }

    /// The `message` rules at the broker's hand-out `h` to worker `w`, whose receive is
    /// operation `op`.
    pub fn delivery_fault(&mut self, w: WorkerId, op: OpId, h: Handout) -> HandedOut {
        if !self.faults.messages.on_deliveries() {
            return HandedOut::Now;
        }
        let Some(fired) = self.message_fired(w, h.receipt.seq, h.receive_count, false) else {
            return HandedOut::Now;
        };
        match fired.delay {
            None => {
                let at = self.now;
                self.events.push(Event {
                    at,
                    kind: EventKind::HandlerEnded {
                        seq: h.receipt.seq,
                        worker: w,
                        delivery: h.receive_count,
                        how: HandlerEnd::Finished,
                    },
                });
                HandedOut::Dropped
            }
            Some(delay) => {
                let slot = self.slot(w);
                slot.handling = Some(Handling {
                    seq: h.receipt.seq,
                    delivery: h.receive_count,
                });
                let incarnation = slot.incarnation;
                let at = self.now + delay;
                let kind = TimerKind::DelayedDelivery {
                    worker: w,
                    incarnation,
                    op,
                    handout: h,
                };
                self.schedule(at, CLASS_HANDLER, kind);
                HandedOut::Later
            }
        }
    }

    /// A delayed delivery reaches worker `w` (still the incarnation that asked): true when it
    /// does, and the worker is to be polled.
    pub fn delayed_delivery(
        &mut self,
        w: WorkerId,
        incarnation: u32,
        op: OpId,
        h: Handout,
    ) -> bool {
        let s = self.slot(w);
        if !s.alive || s.incarnation != incarnation {
            return false;
        }
        s.results.push((op, OpResult::Delivery(h)));
        self.kill_point(
            w,
            &KillPoint::Received,
            Some(h.receipt.seq),
            h.receive_count,
        );
        true
    }

    /// The first `message` rule that fires for delivery `delivery` of `seq` (an ack's or a
    /// hand-out's), recorded.
    fn message_fired(&mut self, w: WorkerId, seq: u32, delivery: u32, ack: bool) -> Option<Fired> {
        let key = self.key_of(seq).into_owned();
        let hit = MessageHit {
            seq,
            key: &key,
            delivery,
            now: self.now,
        };
        let fired = match ack {
            true => self.faults.messages.ack(hit),
            false => self.faults.messages.delivery(hit),
        }?;
        let at = self.now;
        self.events.push(Event {
            at,
            kind: EventKind::FaultFired {
                worker: w,
                rule: fired.rule,
            },
        });
        Some(fired)
    }
}
