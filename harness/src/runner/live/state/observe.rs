//! What a protocol proxy reports of a worker's traffic with a real broker: each delivery (where
//! a `received` kill happens before the worker sees it), each ack and how the broker answered
//! it, each hand-back and heartbeat. The embedded SQS endpoint records these itself; for the
//! real brokers they are the run's record of broker events, in profile time.

use super::{lock, LiveState};
use crate::profile::KillPoint;
use crate::record::{AckOutcome, EventKind, HandlerEnd, Nanos, Republish, Seq, WorkerId};

impl LiveState {
    fn known_worker(&self, w: WorkerId) -> bool {
        w >= 1 && (w as usize) <= lock(&self.workers).len()
    }

    /// Delivery number `delivery` of message `seq` is on its way to `worker`, its lease ending
    /// at `lease_end` (profile time; `Nanos::MAX` for a kind without a lease timer). Records the
    /// delivery, starts the worker's handler span and checks the `received` kill rules: true
    /// means the worker is being killed and the delivery must not reach it.
    pub fn observed_delivery(
        &self,
        worker: WorkerId,
        seq: Seq,
        delivery: u32,
        lease_end: Nanos,
    ) -> bool {
        self.observed_handout(worker, seq, delivery, lease_end);
        self.observed_arrival(worker, seq, delivery)
    }

    /// Delivery number `delivery` of message `seq` is handed to `worker` (as
    /// [`LiveState::observed_delivery`]), which sees it later (a `delay_delivery`): its handler
    /// span starts now, the `received` kill rules are checked when it arrives.
    pub fn observed_handout(&self, worker: WorkerId, seq: Seq, delivery: u32, lease_end: Nanos) {
        if !self.known_worker(worker) {
            return;
        }
        self.end_handler(worker, HandlerEnd::Finished);
        self.record(EventKind::Delivered {
            seq,
            worker,
            delivery,
            lease_end,
        });
        let mut ws = lock(&self.workers);
        let s = &mut ws[(worker - 1) as usize];
        s.handling = Some((seq, delivery));
        s.holdings.received(seq, delivery);
    }

    /// A delivery handed out reaches `worker`: the `received` kill rules are checked; true means
    /// the worker is being killed and the delivery must not reach it.
    pub fn observed_arrival(&self, worker: WorkerId, seq: Seq, delivery: u32) -> bool {
        self.known_worker(worker)
            && self.at_point(&KillPoint::Received, worker, Some(seq), delivery)
    }

    /// Delivery number `delivery` of message `seq` was handed to `worker`, and a `message` rule
    /// keeps it from the worker for good (`drop_delivery`): it counts as a delivery whose
    /// handler span ends where it began; the worker goes on with what it had.
    pub fn observed_dropped_delivery(
        &self,
        worker: WorkerId,
        seq: Seq,
        delivery: u32,
        lease_end: Nanos,
    ) {
        if !self.known_worker(worker) {
            return;
        }
        self.record(EventKind::Delivered {
            seq,
            worker,
            delivery,
            lease_end,
        });
        self.record(EventKind::HandlerEnded {
            seq,
            worker,
            delivery,
            how: HandlerEnd::Finished,
        });
    }

    /// `worker` acked delivery `delivery` of `seq`, and the broker answered `outcome`
    /// (`Deleted` when it confirmed the ack, a stale outcome when it refused or ignored it).
    /// The worker's handler span for that delivery ends here.
    pub fn observed_ack(&self, worker: WorkerId, seq: Seq, delivery: u32, outcome: AckOutcome) {
        if !self.known_worker(worker) {
            return;
        }
        self.record(EventKind::Acked {
            seq,
            worker,
            delivery,
            outcome,
        });
        self.let_go(worker, seq, delivery);
        self.end_handler_of(worker, seq, delivery);
    }

    /// `worker` acked delivery `delivery` of `seq` and a `message` rule keeps the ack from the
    /// broker (for now, or for good): the worker was told it succeeded and moved on, so its
    /// handler span ends here; the broker's judgement (an `Acked`) comes when the ack reaches
    /// it, if it does.
    pub fn observed_held_ack(&self, worker: WorkerId, seq: Seq, delivery: u32) {
        if !self.known_worker(worker) {
            return;
        }
        self.let_go(worker, seq, delivery);
        self.end_handler_of(worker, seq, delivery);
    }

    /// `worker` handed delivery `delivery` of `seq` back, to be delivered again at `visible_at`
    /// (profile time; now for a requeue): its handler span ends.
    pub fn observed_release(&self, worker: WorkerId, seq: Seq, delivery: u32, visible_at: Nanos) {
        if !self.known_worker(worker) {
            return;
        }
        self.record(EventKind::VisibilityChanged {
            seq,
            worker,
            delivery,
            lease_end: visible_at,
        });
        self.let_go(worker, seq, delivery);
        self.end_handler_of(worker, seq, delivery);
    }

    /// The broker took delivery `delivery` of `seq` back from `worker` (RabbitMQ returns what
    /// a closed channel held): the worker no longer holds it. Its handler span is left as it
    /// is: the worker may still be working on it.
    pub fn observed_return(&self, worker: WorkerId, seq: Seq, delivery: u32) {
        if self.known_worker(worker) {
            self.let_go(worker, seq, delivery);
        }
    }

    fn let_go(&self, worker: WorkerId, seq: Seq, delivery: u32) {
        lock(&self.workers)[(worker - 1) as usize]
            .holdings
            .let_go(seq, delivery);
    }

    /// `worker` extended its hold on delivery `delivery` of `seq` to `lease_end` (a heartbeat:
    /// NATS `+WPI`, Redis XCLAIM to itself).
    pub fn observed_extend(&self, worker: WorkerId, seq: Seq, delivery: u32, lease_end: Nanos) {
        if !self.known_worker(worker) {
            return;
        }
        self.record(EventKind::VisibilityChanged {
            seq,
            worker,
            delivery,
            lease_end,
        });
    }

    /// Ends `worker`'s handler span if it is the one of (`seq`, `delivery`).
    fn end_handler_of(&self, worker: WorkerId, seq: Seq, delivery: u32) {
        let ended = {
            let mut ws = lock(&self.workers);
            let s = &mut ws[(worker - 1) as usize];
            if s.handling == Some((seq, delivery)) {
                s.handling.take()
            } else {
                None
            }
        };
        if ended.is_some() {
            self.record(EventKind::HandlerEnded {
                seq,
                worker,
                delivery,
                how: HandlerEnd::Finished,
            });
        }
    }

    /// Ends whatever handler span `worker` has open (it moved on to another delivery).
    fn end_handler(&self, worker: WorkerId, how: HandlerEnd) {
        let ended = lock(&self.workers)[(worker - 1) as usize].handling.take();
        if let Some((seq, delivery)) = ended {
            self.record(EventKind::HandlerEnded {
                seq,
                worker,
                delivery,
                how,
            });
        }
    }

    /// `worker` published message `seq` again itself, to `to` ([`EventKind::Republished`]):
    /// from the handler of its delivery `delivery` (a retry), or, with `delivery` 0, moving it
    /// between its framework's own places.
    pub fn observed_republish(&self, worker: WorkerId, seq: Seq, delivery: u32, to: Republish) {
        if self.known_worker(worker) {
            self.record(EventKind::Republished {
                seq,
                worker,
                delivery,
                to,
            });
        }
    }

    /// The seq of the published message with `key`, if the run published one.
    pub fn seq_of_key(&self, key: &str) -> Option<Seq> {
        lock(&self.keys).seq_of(key)
    }
}
