//! The state of a sim run: clock, timers, broker, provider, ledger, workers.

use std::collections::HashMap;

use ackbench_targets::message::{Body, Order};
use ackbench_targets::ProviderError;
use rand_chacha::ChaCha8Rng;

use super::timers::Timers;
pub(super) use super::timers::{TimerKind, CLASS_HANDLER, CLASS_SUPERVISOR};
use super::waiting::Waiting;
use crate::broker::setup::Silence;
use crate::broker::{BrokerModel, Handout};
use crate::chaos::{Faults, PointHit};
use crate::profile::KillPoint;
use crate::provider::{CallId, EffectLedger, ProviderModel};
use crate::record::{
    earliest, Batched, CallOutcome, Event, EventKind, HandlerEnd, Key, MessageRecord, Nanos,
    PublishRecord, Seq, Sink, WorkerId,
};
use crate::workload::{Plan, SendCursor};

/// Identifies one awaited operation of a worker.
pub(super) type OpId = u64;

/// What an awaited operation completed with.
#[derive(Debug, Clone)]
pub(super) enum OpResult {
    Delivery(Handout),
    Unit,
    Call(Result<(), ProviderError>),
    /// A broker operation's answer over a connection in the way ([`super::connection`]).
    Queue(Result<(), ackbench_targets::QueueError>),
}

/// The delivery a worker is handling now.
#[derive(Debug, Clone, Copy)]
pub(super) struct Handling {
    pub seq: Seq,
    pub delivery: u32,
}

/// Why a worker must die once its current poll returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Doom {
    Killed {
        rule: u32,
    },
    /// Told to stop, it asked for its next message: it exits.
    Stopped,
}

#[derive(Debug)]
pub(super) struct WorkerSlot {
    pub id: WorkerId,
    /// Bumped at each restart; timers of an older incarnation are ignored.
    pub incarnation: u32,
    pub alive: bool,
    pub handling: Option<Handling>,
    /// Completed operations not yet seen by the worker.
    pub results: Vec<(OpId, OpResult)>,
    pub open_calls: Vec<CallId>,
    pub doom: Option<Doom>,
    /// Told to stop (a `deploy`): it takes no more messages, and exits at its next receive.
    pub stopping: bool,
    /// Not part of the fleet (removed by a scale-in, or a slot no replica holds yet): the
    /// supervisor does not bring it back.
    pub removed: bool,
    /// When the replica in this slot was made (0 for the fleet the run starts with), and when
    /// it started (`None` while starting): what a scale-in ranks it by.
    pub made: Nanos,
    pub ready: Option<Nanos>,
}

impl WorkerSlot {
    /// A slot whose worker starts with the run.
    pub fn new(id: WorkerId) -> WorkerSlot {
        WorkerSlot {
            id,
            incarnation: 0,
            alive: true,
            handling: None,
            results: Vec::new(),
            open_calls: Vec::new(),
            doom: None,
            stopping: false,
            removed: false,
            made: 0,
            ready: Some(0),
        }
    }
}

/// Everything a sim run mutates.
pub(super) struct World {
    pub now: Nanos,
    timers: Timers,
    next_op: OpId,
    pub broker: BrokerModel,
    pub provider: ProviderModel,
    pub ledger: EffectLedger,
    pub faults: Faults,
    pub plan: Plan,
    /// Next send of the plan to make.
    pub publish_cursor: SendCursor,
    pub messages: Vec<MessageRecord>,
    /// With the producer's sends ([`Plan::sends`]): the plan message (1-based) each broker
    /// message (index seq - 1) carries, and every send as it reached the broker.
    planned_of: Vec<Seq>,
    pub publishes: Vec<PublishRecord>,
    /// Broker and worker events: the whole history, or (streamed) those not yet handed to the
    /// accounting.
    pub events: Vec<Event>,
    /// The run's sink folds its history instant by instant ([`crate::record::Sink`]); `false`:
    /// the record keeps every message, event, call and effect (`messages`, `events`, the
    /// ledger).
    pub folds: bool,
    /// What the broker said of records fetched batches hold after their commit and the run has
    /// not handed over yet (a folding run).
    batched: Vec<Batched>,
    /// Messages published so far.
    pub published: Seq,
    key_index: HashMap<String, Seq>,
    pub workers: Vec<WorkerSlot>,
    /// The workers waiting in a receive for a hand-out.
    pub waiting: Waiting,
    pub target_rng: ChaCha8Rng,
    /// The target's own database.
    pub tables: ackbench_targets::Tables,
    pub restart_after: Nanos,
    pub http_timeout: Option<Nanos>,
    /// A redrive still to come keeps the run going even when the queue is settled.
    pub redrive_pending: bool,
    /// What the broker does with a silent connection.
    pub silence: Silence,
    /// How many times each message was published again by a target's retry (`republish`).
    pub retries: HashMap<Seq, u32>,
}

impl World {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        broker: BrokerModel,
        provider: ProviderModel,
        ledger: EffectLedger,
        faults: Faults,
        plan: Plan,
        workers: u32,
        target_rng: ChaCha8Rng,
        restart_after: Nanos,
        http_timeout: Option<Nanos>,
        folds: bool,
    ) -> World {
        let n = if folds { 0 } else { plan.len() };
        let mut broker = broker;
        if folds {
            broker.tell_batched();
        }
        let publish_cursor = SendCursor::new(&plan);
        let mut ledger = ledger;
        ledger.reserve(n);
        World {
            now: 0,
            timers: Timers::default(),
            next_op: 0,
            broker,
            provider,
            ledger,
            faults,
            plan,
            publish_cursor,
            messages: Vec::with_capacity(n),
            planned_of: Vec::new(),
            publishes: Vec::new(),
            events: Vec::with_capacity(n * 6),
            folds,
            batched: Vec::new(),
            published: 0,
            key_index: HashMap::with_capacity(n),
            waiting: Waiting::new(workers as usize),
            workers: (1..=workers).map(WorkerSlot::new).collect(),
            target_rng,
            tables: ackbench_targets::Tables::default(),
            restart_after,
            http_timeout,
            redrive_pending: false,
            silence: Silence::Nothing,
            retries: HashMap::new(),
        }
    }

    pub fn slot(&mut self, w: WorkerId) -> &mut WorkerSlot {
        &mut self.workers[(w - 1) as usize]
    }

    pub fn new_op(&mut self) -> OpId {
        self.next_op += 1;
        self.next_op
    }

    #[inline]
    pub fn schedule(&mut self, at: Nanos, class: u8, kind: TimerKind) {
        self.timers.schedule(at, class, kind);
    }

    /// The next timer if it is due at or before `t`.
    #[inline]
    pub fn pop_timer_due(&mut self, t: Nanos) -> Option<TimerKind> {
        self.timers.pop_due(t)
    }

    /// The next instant anything is due: a publish, a lease or delay end, a timer.
    #[inline]
    pub fn next_due(&self) -> Option<Nanos> {
        earliest(
            earliest(self.publish_cursor.next_at(), self.broker.next_due()),
            self.timers.next_at(),
        )
    }

    /// Publishes every planned message due at or before `now`.
    pub fn publish_due(&mut self) {
        if self.plan.sends.is_some() {
            return self.send_due();
        }
        while let Some(at) = self.publish_cursor.next_at() {
            if at > self.now {
                break;
            }
            let poison = self.publish_cursor.advance(&self.plan);
            let seq = self.broker.publish(self.now, &mut self.events);
            self.published = seq;
            if self.plan.has_explicit_keys() {
                self.key_index.insert(self.plan.key(seq), seq);
            }
            if !self.folds {
                let key = self.plan.message_key(seq);
                self.messages.push(MessageRecord {
                    key,
                    published_at: self.now,
                    poison,
                });
            }
        }
    }

    /// Makes every send of the producer due at or before `now`: each reaches the broker, which
    /// publishes it unless its deduplication drops it (the id is the message key).
    fn send_due(&mut self) {
        while let Some(a) = self
            .plan
            .sends
            .as_ref()
            .and_then(|s| s.get(self.publish_cursor.sent()))
            .copied()
        {
            if a.at > self.now {
                break;
            }
            let poison = self.publish_cursor.advance(&self.plan);
            let key = self.plan.key(a.planned);
            let group = self.plan.group(a.planned);
            let seq = self
                .broker
                .publish_send(self.now, &key, group, &mut self.events);
            if let Some(seq) = seq {
                self.published = seq;
                self.key_index.entry(key).or_insert(seq);
                self.planned_of.push(a.planned);
                self.messages.push(MessageRecord {
                    key: self.plan.message_key(a.planned),
                    published_at: self.now,
                    poison,
                });
            }
            self.publishes.push(PublishRecord {
                at: self.now,
                planned: a.planned,
                attempt: a.attempt,
                seq,
                acknowledged: a.acknowledged,
                group: self.plan.groups.map(|_| group),
            });
        }
    }

    /// The body a consumer receives for broker message `seq`: its plan message's (a key sent
    /// twice carries the same body twice), typed (the order itself) unless it is poison, whose
    /// old-schema text the target must fail to read as it would in live mode.
    pub fn body(&self, seq: Seq) -> Body {
        let planned = match self.plan.sends {
            Some(_) => self.planned_of[(seq - 1) as usize],
            None => seq,
        };
        let poison = match self.messages.get((seq - 1) as usize) {
            Some(m) => m.poison,
            // A streamed run keeps no messages: the plan says (in constant time).
            None => self.plan.poison(planned),
        };
        if poison {
            Body::Text(self.plan.body(planned))
        } else {
            Body::Order(
                self.plan
                    .with_key(planned, |key| Order::of(key, u64::from(planned))),
            )
        }
    }

    /// The message a call or an effect of `worker` for `key` is about: the one the worker holds
    /// if it carries that key (a key published twice has two messages), else [`World::seq_of`].
    #[inline]
    pub fn seq_for(&self, worker: WorkerId, key: &str) -> Option<Seq> {
        if self.plan.sends.is_some() {
            if let Some(h) = self.workers[(worker - 1) as usize].handling {
                if self.messages[(h.seq - 1) as usize].key.is(key) {
                    return Some(h.seq);
                }
            }
        }
        self.seq_of(key)
    }

    /// The published message whose key is `key` (its first, if the producer published it more
    /// than once). Default keys (`msg-<seq>`) are parsed rather than looked up.
    #[inline]
    pub fn seq_of(&self, key: &str) -> Option<Seq> {
        if self.plan.has_explicit_keys() || self.plan.sends.is_some() {
            return self.key_index.get(key).copied();
        }
        // Message n's key is `msg-<n>` (only that spelling): parsed once, no lookup.
        let seq = Key::number_of(key)?;
        (seq >= 1 && seq <= self.published).then_some(seq)
    }

    /// True when every planned message is published, the queue holds nothing and no handler runs.
    pub fn is_drained(&self) -> bool {
        self.publish_cursor.sent() == self.plan.send_count()
            && !self.redrive_pending
            && self.broker.is_settled()
            && self.workers.iter().all(|w| w.handling.is_none())
    }

    /// Where the run is, for a progress display.
    pub fn progress(&self) -> crate::runner::Progress {
        let (effects, duplicate_effects) = self.ledger.running_counts();
        crate::runner::Progress {
            now_s: crate::record::secs_f64(self.now),
            published: u64::from(self.published),
            effects,
            duplicate_effects,
            dlq: self.broker.counts().dead_lettered,
        }
    }

    /// The key of published message `seq`.
    pub fn key_of(&self, seq: Seq) -> std::borrow::Cow<'_, str> {
        match self.messages.get((seq - 1) as usize) {
            Some(m) => m.key.as_str(),
            // A streamed run keeps no messages; its broker messages are the plan's (it has no
            // producer's sends).
            None => self.plan.message_key(seq).to_string().into(),
        }
    }

    /// The instant is over: a folding run hands its history to its sink (a full record keeps
    /// it): its events, what the ledger recorded (the calls started, the effects, the calls
    /// closed) and what the broker said of records batches hold after their commit.
    pub fn flush(&mut self, sink: &mut dyn Sink) {
        if self.folds {
            self.broker.take_batched(&mut self.batched);
            let recorded = self.ledger.recorded(&mut self.batched);
            sink.instant(self.now, &mut self.events, recorded);
        }
    }

    /// The run's last instant is over: a folding run hands its sink everything left (as
    /// [`World::flush`], with the broker's changes of batched records, [`Batched`]).
    pub fn flush_last(&mut self, sink: &mut dyn Sink) {
        if self.folds {
            self.broker.take_batched(&mut self.batched);
            let recorded = self.ledger.recorded(&mut self.batched);
            sink.last_instant(self.now, &mut self.events, recorded);
        }
    }

    /// Closes the worker's current handler span, if any.
    pub fn end_handler(&mut self, w: WorkerId, how: HandlerEnd) {
        if let Some(h) = self.slot(w).handling.take() {
            let at = self.now;
            self.events.push(Event {
                at,
                kind: EventKind::HandlerEnded {
                    seq: h.seq,
                    worker: w,
                    delivery: h.delivery,
                    how,
                },
            });
        }
    }

    /// Checks the kill rules at a handler point. A kill without delay dooms the worker (it dies
    /// when its current poll returns); a delayed one is scheduled. Returns true if doomed now.
    pub fn kill_point(
        &mut self,
        w: WorkerId,
        point: &KillPoint,
        seq: Option<Seq>,
        delivery: u32,
    ) -> bool {
        if self.faults.kills.is_empty() {
            return false;
        }
        let key = seq.map_or(String::new(), |s| self.key_of(s).into_owned());
        let hit = PointHit {
            point,
            worker: w,
            key: &key,
            delivery,
            now: self.now,
        };
        match self.faults.kills.at_point(hit) {
            Some((rule, 0)) => {
                self.doom(w, rule);
                true
            }
            Some((rule, delay)) => {
                let incarnation = self.slot(w).incarnation;
                let at = self.now + delay;
                self.schedule(
                    at,
                    CLASS_HANDLER,
                    TimerKind::DelayedKill {
                        worker: w,
                        incarnation,
                        rule,
                    },
                );
                false
            }
            None => false,
        }
    }

    /// Rule `rule` kills worker `w` when its current poll returns: the firing is recorded now.
    pub fn doom(&mut self, w: WorkerId, rule: u32) {
        let at = self.now;
        self.events.push(Event {
            at,
            kind: EventKind::FaultFired { worker: w, rule },
        });
        self.slot(w).doom = Some(Doom::Killed { rule });
    }

    /// The worker dies (killed or crashed) or stopped on its own (a deploy): its handler span
    /// ends, its open calls are abandoned, the broker learns its consumer is gone (what it does
    /// then is the kind's rule: RabbitMQ requeues, the others leave the lease to its timer; a
    /// stopped Kafka member leaves its group at once), and the supervisor restarts it after
    /// `restart_after`, unless a scale-in removed it: then it returns true (gone for good).
    pub fn bury(&mut self, w: WorkerId, how: HandlerEnd, event: EventKind) -> bool {
        self.end_handler(w, how);
        let at = self.now;
        // A worker that stopped on its own closed its consumer on the way out.
        let stopped = matches!(event, EventKind::WorkerStopped { .. });
        self.events.push(Event { at, kind: event });
        if stopped {
            self.broker.consumer_stopped(at, w, &mut self.events);
        } else {
            self.broker.consumer_died(at, w, &mut self.events);
        }
        let calls = std::mem::take(&mut self.slot(w).open_calls);
        for c in calls {
            self.ledger.abandon(c, CallOutcome::Abandoned);
        }
        let s = self.slot(w);
        s.alive = false;
        self.waiting.remove((w - 1) as usize);
        let s = self.slot(w);
        s.results.clear();
        s.doom = None;
        s.stopping = false;
        if s.removed {
            // Scaled in: its replica is gone for good.
            return true;
        }
        let restart = self.now + self.restart_after;
        self.schedule(restart, CLASS_SUPERVISOR, TimerKind::Restart { worker: w });
        false
    }
}
