//! Hand-built run records for tests: every scenario is written event by event, in the order the
//! runner would record it, with times in (fractional) seconds.

use crate::record::{
    AckOutcome, CallOutcome, CallRecord, EffectRecord, EffectSource, Event, EventKind, HandlerEnd,
    MessageRecord, Nanos, ReturnWhy, RunRecord, Seq, WorkerId,
};

/// Seconds to nanoseconds.
pub fn s(secs: f64) -> Nanos {
    (secs * 1e9).round() as Nanos
}

/// A run record under construction.
pub struct Rec {
    r: RunRecord,
}

impl Rec {
    /// An empty run with this visibility timeout (seconds) and worker count.
    pub fn new(visibility_timeout_s: f64, workers: u32) -> Self {
        Rec {
            r: RunRecord {
                lease: s(visibility_timeout_s),
                workers,
                ..RunRecord::default()
            },
        }
    }

    pub fn ev(&mut self, at: f64, kind: EventKind) -> &mut Self {
        self.r.events.push(Event { at: s(at), kind });
        self
    }

    /// Publishes the next message (`msg-<seq>`) at `at`.
    pub fn publish(&mut self, at: f64) -> Seq {
        self.publish_poison(at, false)
    }

    pub fn publish_poison(&mut self, at: f64, poison: bool) -> Seq {
        let seq = Seq::try_from(self.r.messages.len() + 1).unwrap_or(Seq::MAX);
        self.r.messages.push(MessageRecord {
            key: format!("msg-{seq}").into(),
            published_at: s(at),
            poison,
        });
        self.ev(at, EventKind::Published { seq });
        seq
    }

    /// Delivery `delivery` of `seq` to `worker`, with a lease of the visibility timeout.
    pub fn deliver(&mut self, at: f64, seq: Seq, worker: WorkerId, delivery: u32) -> &mut Self {
        let lease_end = s(at) + self.r.lease;
        self.ev(
            at,
            EventKind::Delivered {
                seq,
                worker,
                delivery,
                lease_end,
            },
        )
    }

    /// Delivery `delivery` of `seq` to `worker` with a lease of `lease_s` seconds (a receive
    /// that names its own visibility timeout).
    pub fn deliver_for(
        &mut self,
        at: f64,
        seq: Seq,
        worker: WorkerId,
        delivery: u32,
        lease_s: f64,
    ) -> &mut Self {
        self.ev(
            at,
            EventKind::Delivered {
                seq,
                worker,
                delivery,
                lease_end: s(at + lease_s),
            },
        )
    }

    /// The holder of delivery `delivery` sets its lease to end at `lease_end` seconds (`at`
    /// itself: a release).
    pub fn change_visibility(
        &mut self,
        at: f64,
        seq: Seq,
        worker: WorkerId,
        delivery: u32,
        lease_end: f64,
    ) -> &mut Self {
        self.ev(
            at,
            EventKind::VisibilityChanged {
                seq,
                worker,
                delivery,
                lease_end: s(lease_end),
            },
        )
    }

    pub fn ack(
        &mut self,
        at: f64,
        seq: Seq,
        worker: WorkerId,
        delivery: u32,
        outcome: AckOutcome,
    ) -> &mut Self {
        self.ev(
            at,
            EventKind::Acked {
                seq,
                worker,
                delivery,
                outcome,
            },
        )
    }

    pub fn expire(&mut self, at: f64, seq: Seq, delivery: u32) -> &mut Self {
        self.ev(at, EventKind::LeaseExpired { seq, delivery })
    }

    /// The broker takes delivery `delivery` of `seq` back from `worker` for `why`, as a live
    /// RabbitMQ proxy records it: the reason, then the message visible again.
    pub fn take_back(
        &mut self,
        at: f64,
        seq: Seq,
        worker: WorkerId,
        delivery: u32,
        why: ReturnWhy,
    ) -> &mut Self {
        self.ev(
            at,
            EventKind::Returned {
                seq,
                worker,
                delivery,
                why,
            },
        )
        .expire(at, seq, delivery)
    }

    pub fn dead_letter(&mut self, at: f64, seq: Seq, delivery: u32) -> &mut Self {
        self.ev(at, EventKind::DeadLettered { seq, delivery })
    }

    pub fn redrive(&mut self, at: f64, seq: Seq) -> &mut Self {
        self.ev(at, EventKind::Redriven { seq })
    }

    pub fn reject(&mut self, at: f64, seq: Seq, worker: WorkerId) -> &mut Self {
        self.ev(at, EventKind::Rejected { seq, worker })
    }

    pub fn end_handler(
        &mut self,
        at: f64,
        seq: Seq,
        worker: WorkerId,
        delivery: u32,
        how: HandlerEnd,
    ) -> &mut Self {
        self.ev(
            at,
            EventKind::HandlerEnded {
                seq,
                worker,
                delivery,
                how,
            },
        )
    }

    /// Rule 0 kills `worker`: its firing, then the kill.
    pub fn kill(&mut self, at: f64, worker: WorkerId) -> &mut Self {
        self.ev(at, EventKind::FaultFired { worker, rule: 0 })
            .ev(at, EventKind::WorkerKilled { worker, rule: 0 })
    }

    pub fn crash(&mut self, at: f64, worker: WorkerId) -> &mut Self {
        self.ev(
            at,
            EventKind::WorkerCrashed {
                worker,
                exit: crate::record::WorkerExit::TargetCrashed,
            },
        )
    }

    pub fn restart(&mut self, at: f64, worker: WorkerId) -> &mut Self {
        self.ev(at, EventKind::WorkerRestarted { worker })
    }

    /// A provider call answered at `ended` (effect at request time, recorded separately).
    pub fn call(
        &mut self,
        started: f64,
        ended: Option<f64>,
        seq: Option<Seq>,
        worker: WorkerId,
        delivery: u32,
        outcome: CallOutcome,
    ) -> &mut Self {
        let key = seq.map_or_else(|| "unknown".to_string(), |q| format!("msg-{q}"));
        self.r.ledger.calls.push(CallRecord {
            seq,
            key: Some(key),
            worker,
            delivery,
            started: s(started),
            ended: ended.map(s),
            outcome,
        });
        self
    }

    /// One effect for `seq` (`None`: a key that was never published).
    pub fn effect(
        &mut self,
        at: f64,
        seq: Option<Seq>,
        worker: WorkerId,
        delivery: u32,
    ) -> &mut Self {
        self.r.ledger.effects.push(EffectRecord {
            seq,
            at: s(at),
            worker,
            delivery,
            source: EffectSource::Provider,
        });
        self
    }

    /// The record, stopped at `end`; events sorted by time (stable: same-instant events keep the
    /// order they were written in).
    pub fn finish(&mut self, end: f64) -> RunRecord {
        let mut r = std::mem::take(&mut self.r);
        r.events.sort_by_key(|e| e.at);
        r.end = s(end);
        r.publish_end = r.messages.last().map_or(0, |m| m.published_at);
        r
    }
}

/// The reference incident for one message: a 30 s lease, a delivery limit of 3 and a provider
/// that takes 34 s, every delivery sending an email at receive time; `outcomes` are what the
/// broker answered to the acks of deliveries 1, 2 and 3 under a stale-ack policy.
///
/// - reject / ignore: delivery 1 at 0 s, 2 at 30 s, 3 at 60 s, DLQ at 90 s; acks at 34, 64, 94 s
///   all stale (the last after the DLQ move).
/// - delete: delivery 2 at 30 s; delivery 1's stale ack at 34 s deletes the message; delivery
///   2's ack at 64 s finds it gone.
pub fn slow_handler(policy: crate::profile::StaleAck) -> RunRecord {
    use crate::profile::StaleAck;
    let mut r = Rec::new(30.0, 3);
    let m = r.publish(0.0);
    r.deliver(0.0, m, 1, 1)
        .call(0.0, Some(34.0), Some(m), 1, 1, CallOutcome::Accepted)
        .effect(0.0, Some(m), 1, 1);
    r.expire(30.0, m, 1);
    r.deliver(30.0, m, 2, 2)
        .call(30.0, Some(64.0), Some(m), 2, 2, CallOutcome::Accepted)
        .effect(30.0, Some(m), 2, 2);
    match policy {
        // sqs: every late ack comes after another delivery: the ignore outcome.
        StaleAck::Reject | StaleAck::Ignore | StaleAck::Sqs => {
            let stale = if policy == StaleAck::Reject {
                AckOutcome::StaleRejected
            } else {
                AckOutcome::StaleIgnored
            };
            r.ack(34.0, m, 1, 1, stale)
                .end_handler(34.0, m, 1, 1, HandlerEnd::Finished);
            r.expire(60.0, m, 2);
            r.deliver(60.0, m, 3, 3)
                .call(60.0, Some(94.0), Some(m), 3, 3, CallOutcome::Accepted)
                .effect(60.0, Some(m), 3, 3);
            r.ack(64.0, m, 2, 2, stale)
                .end_handler(64.0, m, 2, 2, HandlerEnd::Finished);
            r.dead_letter(90.0, m, 3);
            r.ack(94.0, m, 3, 3, AckOutcome::StaleGone).end_handler(
                94.0,
                m,
                3,
                3,
                HandlerEnd::Finished,
            );
            r.finish(94.0)
        }
        StaleAck::Delete => {
            r.ack(34.0, m, 1, 1, AckOutcome::StaleDeleted).end_handler(
                34.0,
                m,
                1,
                1,
                HandlerEnd::Finished,
            );
            r.ack(64.0, m, 2, 2, AckOutcome::StaleGone).end_handler(
                64.0,
                m,
                2,
                2,
                HandlerEnd::Finished,
            );
            r.finish(64.0)
        }
    }
}

/// Ack before the work, and a worker that dies in between: message 1 is acked at 0 s and its
/// worker killed at 0.5 s before the call; message 2 (published at 1 s) is done by worker 2 at
/// 1.25 s; message 3 is poison and refused (`on_poison: dead_letter`) at 2 s. Run ends at 3 s.
pub fn ack_before_work() -> RunRecord {
    let mut r = Rec::new(30.0, 2);
    let m1 = r.publish(0.0);
    r.deliver(0.0, m1, 1, 1)
        .ack(0.0, m1, 1, 1, AckOutcome::Deleted);
    r.kill(0.5, 1)
        .end_handler(0.5, m1, 1, 1, HandlerEnd::Killed);
    let m2 = r.publish(1.0);
    r.deliver(1.0, m2, 2, 1)
        .ack(1.0, m2, 2, 1, AckOutcome::Deleted);
    r.call(1.0, Some(1.25), Some(m2), 2, 1, CallOutcome::Accepted)
        .effect(1.0, Some(m2), 2, 1);
    r.end_handler(1.25, m2, 2, 1, HandlerEnd::Finished);
    r.restart(1.5, 1);
    let m3 = r.publish_poison(2.0, true);
    r.deliver(2.0, m3, 1, 1)
        .reject(2.0, m3, 1)
        .ack(2.0, m3, 1, 1, AckOutcome::Deleted);
    r.end_handler(2.0, m3, 1, 1, HandlerEnd::Finished);
    r.finish(3.0)
}

/// A consumer whose calls name keys no published message has (the provider reads the key where
/// the consumer does not put it): two messages, each delivered once at 0 s and 1 s to worker 1,
/// sent once and acked 0.25 s later; both effects unmatched.
pub fn mis_keyed() -> RunRecord {
    let mut r = Rec::new(30.0, 1);
    for t in [0.0, 1.0] {
        let m = r.publish(t);
        r.deliver(t, m, 1, 1)
            .call(t, Some(t + 0.25), None, 1, 1, CallOutcome::Accepted)
            .effect(t, None, 1, 1)
            .ack(t + 0.25, m, 1, 1, AckOutcome::Deleted)
            .end_handler(t + 0.25, m, 1, 1, HandlerEnd::Finished);
    }
    r.finish(3.0)
}
