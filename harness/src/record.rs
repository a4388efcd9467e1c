//! What a run records: the one interface between the runner and `metrics/`, `verdict/` and
//! `report/`, which are pure functions of it.
//!
//! Times are virtual nanoseconds since the start of the run ([`Nanos`]). Messages are numbered by
//! publish order from 1 (`seq`); index `seq - 1` of [`RunRecord::messages`]. Workers are numbered
//! from 1.
//!
//! A record holds what happened and nothing computed from it: a run that folds its history as it
//! goes keeps its description here (messages, events and ledger empty) and its folds beside it,
//! in its [`Sink`].

use std::time::Duration;

pub mod attribution;
pub mod broker;
pub mod commit_handlers;
pub mod ingress;
pub mod key;
pub mod publisher;
pub mod returned;
pub mod sink;
pub mod worker_logs;

pub use attribution::{Unattributed, UnattributedCall};
#[cfg(feature = "live")]
pub use broker::Unavailable;
pub use broker::{BrokerSample, BrokerSamples};
pub use commit_handlers::CommitHandlers;
#[cfg(feature = "live")]
pub use ingress::IngressRequest;
pub use ingress::{GooseTotals, IngressRecord};
pub use key::Key;
pub use publisher::PublisherRecord;
pub use returned::{ReturnCounts, ReturnWhy};
pub use sink::{Batched, GaveUp, Recorded, RunStart, Sink};
#[cfg(feature = "live")]
pub use worker_logs::StderrTail;
pub use worker_logs::WorkerLogsRecord;

/// Nanoseconds since the start of the run.
pub type Nanos = u64;

pub fn nanos(d: Duration) -> Nanos {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

pub fn secs_f64(n: Nanos) -> f64 {
    n as f64 / 1e9
}

/// The earlier of two instants either of which may be absent (nothing due).
#[inline]
pub fn earliest(a: Option<Nanos>, b: Option<Nanos>) -> Option<Nanos> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// 1-based message number in publish order.
pub type Seq = u32;
/// 1-based worker id.
pub type WorkerId = u32;

/// Everything a run recorded.
#[derive(Debug, Clone, Default)]
pub struct RunRecord {
    pub messages: Vec<MessageRecord>,
    /// Broker and worker events in the order they happened (non-decreasing `at`).
    pub events: Vec<Event>,
    /// The effect ledger: every provider call and every effect.
    pub ledger: Ledger,
    /// Virtual time at which the run stopped.
    pub end: Nanos,
    /// When publishing stopped (`run.duration`).
    pub publish_end: Nanos,
    /// The kind's lease (`broker.lease`: a visibility timeout, an AckWait, a consumer timeout,
    /// a min idle time, a poll interval).
    pub lease: Nanos,
    pub workers: u32,
    /// Provider phases as run, for charts: (from, to, label).
    pub phases: Vec<(Nanos, Nanos, String)>,
    /// What an HTTP ingress load recorded (`workload.ingress`), if the run had one.
    pub ingress: Option<IngressRecord>,
    /// Why the run stopped before its end (an interruption), if it did: the record then holds
    /// what happened up to [`RunRecord::end`] and nothing after. `None` for a run that ran to its
    /// end (drained, or at `run.duration + run.drain`).
    pub incomplete: Option<String>,
    /// The profile's chaos rules, by index (`FaultFired::rule`), as the report names them.
    pub chaos: Vec<ChaosRuleRecord>,
    /// The broker kind the run modelled (`broker.kind`: `sqs`, `rabbitmq`, `nats`,
    /// `redis-streams`), so reports use its words; empty reads as `sqs`.
    pub broker_kind: crate::profile::kinds::KindName,
    /// Every send of the producer that reached the broker, in time order, when the run models
    /// the producer or the broker's deduplication (`workload.producer`, `broker.fifo`); `None`
    /// otherwise (one send per message, each a publish). A key published more than once has
    /// one [`MessageRecord`] per accepted send: effects are counted by key, across them.
    pub publishes: Option<Vec<PublishRecord>>,
    /// How a live run's own producer kept the plan's schedule (each send's lag, the broker's
    /// push-back); `None` for a sim run and a run whose ingress load published.
    pub publisher: Option<PublisherRecord>,
    /// What a live run read from the broker itself every `run.sample_every` (its DLQ depth,
    /// backlog, in-flight count); `None` for a sim run and the embedded broker, whose events
    /// are the whole story.
    pub broker_samples: Option<BrokerSamples>,
    /// The clock a live run's consumer programs ran on (`consumer.clock`); `None` for a sim run
    /// and for built-in targets, which run on the run's own clock.
    pub consumer_clock: Option<ConsumerClockRecord>,
    /// Where a live run's worker processes wrote, and the end of each one's stderr; `None` for
    /// a sim run and for built-in targets, which write nothing of their own.
    pub worker_logs: Option<WorkerLogsRecord>,
    /// The provider calls of a live run that could not be matched to one delivery their worker
    /// held (none in a sim run, whose calls are made inside their delivery).
    pub unattributed_calls: Vec<UnattributedCall>,
    /// A capacity run's ramp (`workload.arrival: ramp`): each step's planned rate; `None` for
    /// every other arrival.
    pub ramp: Option<RampRecord>,
    /// How much CPU ackbench's own process used over a live run (step by step on a ramp);
    /// `None` for a sim run, or where the system does not tell (no `/proc`).
    pub harness_cpu: Option<HarnessCpu>,
    /// A live Kafka run's handlers as its commits tell them (its handler spans follow the
    /// fetches, not the handlers); `None` for every other run, whose handler spans are its
    /// handlers.
    pub commit_handlers: Option<CommitHandlers>,
    /// A live run: the queues removed at its end that still held messages, and how many (each
    /// message was counted first: unfinished, or in the DLQ).
    pub removed: Vec<RemovedQueue>,
    /// A live run: the worker connections its proxy closed because they broke (a frame over
    /// the broker's limits, bytes that are no frame of its protocol, a panic of the proxy's
    /// reader), in the order they broke; none in a sim run.
    pub broken_connections: Vec<BrokenConnection>,
    /// A live run: what the broker's side says of the run that its counts do not (how its
    /// lease expiries were recorded, its group's joins, rejoins and fenced commits); none in a
    /// sim run.
    pub broker_notes: Vec<String>,
}

/// A worker connection the proxy closed because it broke: the worker saw it closed, as from a
/// dead broker, and the run went on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokenConnection {
    /// When (profile time).
    pub at: Nanos,
    pub worker: WorkerId,
    /// Why, in words: `PUB of 2147483648 bytes over the server's max_payload (1048576)`.
    pub why: String,
}

/// A queue a live run removed at its end while it held messages.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RemovedQueue {
    pub queue: String,
    pub messages: u64,
}

/// A capacity run's ramp: step `k` publishes at `rates[k]` messages per second from
/// `k * hold` to `(k + 1) * hold`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RampRecord {
    pub hold: Nanos,
    pub rates: Vec<f64>,
}

/// ackbench's own CPU time (user + system, its threads, not its children: the worker
/// processes are not counted) read at instants of a live run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HarnessCpu {
    /// (profile-time instant, CPU seconds used since the run started), ascending.
    pub readings: Vec<(Nanos, f64)>,
    /// Wall seconds per profile second (`run.time_scale`): a reading's CPU seconds are wall
    /// seconds.
    pub time_scale: f64,
}

/// The clock a live run's consumer programs ran on, and what the run measured of it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ConsumerClockRecord {
    /// `scaled` (sped up by `1 / run.time_scale`) or `real` (the machine's clock).
    pub clock: String,
    /// The speed asked of a scaled clock: profile seconds per wall second; `None` for `real`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<f64>,
    /// The speed the run's clock probe measured; `None` when it could not measure it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<f64>,
    /// Why a compressed run's consumer ran on the real clock, or what went wrong with the
    /// measure (a speed off by more than 5%, a probe that failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One send of the producer that reached the broker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PublishRecord {
    pub at: Nanos,
    /// The message of the workload it sends (1-based, in plan order): a key's attempts share it.
    pub planned: u32,
    /// 1 for the first attempt of the message, 2 for its first retry, ...
    pub attempt: u32,
    /// The broker message it became; `None` when the broker dropped it as a duplicate (its
    /// deduplication id was seen within the window).
    pub seq: Option<Seq>,
    /// The producer got the broker's answer; `false`: it retries after its backoff (or gives up
    /// after its last attempt).
    pub acknowledged: bool,
    /// Its FIFO message group (0-based; reports name it `group-<n + 1>`), when the workload
    /// names groups (`workload.groups`); `None` otherwise.
    pub group: Option<u32>,
}

/// One chaos rule of the run, described for the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChaosRuleRecord {
    /// Its fault's name in the profile (`kill_worker`, `deploy`).
    pub fault: &'static str,
    /// What the rule does, as in `kill_worker at call_started (delivery 5)`.
    pub label: String,
    /// `optional: true`: a run in which it never fires is not a failure.
    pub optional: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MessageRecord {
    pub key: Key,
    pub published_at: Nanos,
    pub poison: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Event {
    pub at: Nanos,
    pub kind: EventKind,
}

/// How a handler's span ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandlerEnd {
    /// The worker asked for its next message.
    Finished,
    /// A chaos rule killed the worker.
    Killed,
    /// The target itself died (e.g. a poison message with `on_poison: crash`).
    Crashed,
}

/// How a worker that crashed ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerExit {
    /// A worker process exited by itself with this status code (0 included: a consumer is
    /// meant to run until it is stopped).
    Status(i32),
    /// A worker process was ended by this signal, which the run did not send.
    Signal(i32),
    /// A built-in target gave up (e.g. a poison message with `on_poison: crash`).
    TargetCrashed,
    /// A built-in target's worker task panicked (live mode).
    Panicked,
}

impl std::fmt::Display for WorkerExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            WorkerExit::Status(code) => write!(f, "exit status {code}"),
            WorkerExit::Signal(sig) => match nix::sys::signal::Signal::try_from(sig) {
                Ok(s) => write!(f, "signal {sig} ({})", s.as_str()),
                Err(_) => write!(f, "signal {sig}"),
            },
            WorkerExit::TargetCrashed => f.write_str("the target crashed"),
            WorkerExit::Panicked => f.write_str("the worker task panicked"),
        }
    }
}

/// What the broker did with an ack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckOutcome {
    /// The receipt was current: the message is deleted.
    Deleted,
    /// Stale receipt, `stale_ack: reject`: refused, message untouched.
    StaleRejected,
    /// Stale receipt, `stale_ack: ignore`: success reported, message untouched.
    StaleIgnored,
    /// Stale receipt, `stale_ack: delete`: success reported, message deleted.
    StaleDeleted,
    /// Stale receipt, `stale_ack: sqs`: the latest receipt of a message whose lease ended and
    /// that nobody received since: success reported, message deleted (SQS accepts it).
    LateDeleted,
    /// Stale receipt for a message already deleted or dead-lettered: nothing to do
    /// (`reject` refuses it, the others report success).
    StaleGone,
    /// The ack of a delivery whose message its consumer had already published again (a
    /// retry): it removes the old copy; the message lives on as the copy published.
    Superseded,
    /// Kafka: a commit the broker accepted that changes nothing, its partition's committed
    /// offset being past the record already (an auto-commit of the offsets a poll stored ran
    /// ahead of the consumer's own commit). Not stale: the consumer's membership was current.
    Covered,
}

impl RunRecord {
    /// The key call `c` named.
    pub fn call_key<'a>(&'a self, c: &'a CallRecord) -> std::borrow::Cow<'a, str> {
        match (&c.key, c.seq) {
            (Some(k), _) => k.as_str().into(),
            (None, Some(seq)) => self
                .messages
                .get((seq - 1) as usize)
                .map_or("".into(), |m| m.key.as_str()),
            (None, None) => "".into(),
        }
    }
}

impl AckOutcome {
    pub fn is_stale(self) -> bool {
        !matches!(
            self,
            AckOutcome::Deleted | AckOutcome::Covered | AckOutcome::Superseded
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EventKind {
    /// The message entered the broker (visible at once unless delayed).
    Published { seq: Seq },
    /// A worker received the message: `delivery` is its receive count (1 = first delivery).
    Delivered {
        seq: Seq,
        worker: WorkerId,
        delivery: u32,
        lease_end: Nanos,
    },
    /// A worker acked (deleted) by receipt of delivery `delivery`.
    Acked {
        seq: Seq,
        worker: WorkerId,
        delivery: u32,
        outcome: AckOutcome,
    },
    /// A worker changed the visibility of its current lease (0 = released now).
    VisibilityChanged {
        seq: Seq,
        worker: WorkerId,
        delivery: u32,
        lease_end: Nanos,
    },
    /// A lease ran out (or was released) and the message is visible again.
    LeaseExpired { seq: Seq, delivery: u32 },
    /// The broker took delivery `delivery` back from `worker`, for `why` (a RabbitMQ channel or
    /// connection that closed): recorded just before the `LeaseExpired` it explains. A
    /// `LeaseExpired` without one is the broker's timer (or a release before it).
    Returned {
        seq: Seq,
        worker: WorkerId,
        delivery: u32,
        why: ReturnWhy,
    },
    /// The broker moved the message to the DLQ.
    DeadLettered { seq: Seq, delivery: u32 },
    /// The target acked a message it refused to process (`on_poison: dead_letter`).
    Rejected { seq: Seq, worker: WorkerId },
    /// A handler span ended: from its `Delivered` to this instant.
    HandlerEnded {
        seq: Seq,
        worker: WorkerId,
        delivery: u32,
        how: HandlerEnd,
    },
    /// A chaos rule killed the worker (`rule` is its index in `chaos`).
    WorkerKilled { worker: WorkerId, rule: u32 },
    /// A chaos rule fired on the worker (`rule` is its index in `chaos`): a `kill_worker`'s kill
    /// (its `WorkerKilled` follows), a `deploy`'s stop signal. Firings are counted from these.
    FaultFired { worker: WorkerId, rule: u32 },
    /// A `deploy` rule's rollout started (its workers' `FaultFired` follow).
    DeployStarted { rule: u32 },
    /// A worker told to stop exited by itself, within its grace (not a kill, not a crash).
    WorkerStopped { worker: WorkerId },
    /// The target died by itself, nobody having asked it to (not a chaos kill, not the run's
    /// end): how it ended is kept, so every crash can be named.
    WorkerCrashed { worker: WorkerId, exit: WorkerExit },
    /// The supervisor restarted the worker.
    WorkerRestarted { worker: WorkerId },
    /// An operator moved a DLQ entry back to the main queue.
    Redriven { seq: Seq },
    /// The broker discarded the message at its delivery limit, having nowhere to dead-letter it
    /// (RabbitMQ without a dead-letter exchange).
    Dropped { seq: Seq, delivery: u32 },
    /// Kafka: the group coordinator finished a rebalance: generation `generation` has
    /// `members` members, `moved` partitions changed owner.
    Rebalanced {
        generation: u32,
        members: u32,
        moved: u32,
        why: RebalanceWhy,
    },
    /// The consumer published the message again itself, through its own broker connection: a
    /// framework's retry (Dramatiq's delay queue, Celery's `retry`), or a framework moving it
    /// between its own places (a delayed message coming due). The message lives on at `to`.
    /// `delivery` is the delivery whose handler published it (a retry), 0 when no handler did
    /// (the framework's own move).
    Republished {
        seq: Seq,
        worker: WorkerId,
        delivery: u32,
        to: Republish,
    },
    /// Kafka: the coordinator refused `worker`'s commit of the record (its member was removed
    /// from the group, or rejoined as another: CommitFailedException, UNKNOWN_MEMBER_ID,
    /// ILLEGAL_GENERATION). Logged after the ack it refused (a stale ack).
    CommitFenced { seq: Seq, worker: WorkerId },
    /// An `autoscale` rule (`rule`) changed the replica count from `from` to `to`, `by` KEDA's
    /// poll or the HPA's sync, on reading the queue at `metric` messages. The workers a
    /// scale-in removes follow (`ReplicaRemoved`), as do those a scale-out makes
    /// (`ReplicaMade`; `WorkerAdded` once each started).
    Scaled {
        rule: u32,
        from: u32,
        to: u32,
        by: ScaledBy,
        metric: u64,
    },
    /// A scale-out of `autoscale` rule `rule` made a replica in the worker's slot; it starts
    /// (`WorkerAdded`) after the rule's startup, unless a scale-in removes it first.
    ReplicaMade { worker: WorkerId, rule: u32 },
    /// A worker a scale-out made started (past its startup).
    WorkerAdded { worker: WorkerId },
    /// A scale-in of `autoscale` rule `rule` removed the worker's replica: it is told to stop
    /// (its `WorkerStopped` within the grace, or the rule's `WorkerKilled` at its end, follows)
    /// and is not brought back.
    ReplicaRemoved { worker: WorkerId, rule: u32 },
}

/// Which controller changed a fleet's replica count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScaledBy {
    /// KEDA's activation poll: woken from zero, or back to zero after the cooldown.
    Keda,
    /// The HorizontalPodAutoscaler's sync: the count the queue's length asks for.
    Hpa,
}

impl ScaledBy {
    pub fn name(self) -> &'static str {
        match self {
            ScaledBy::Keda => "KEDA",
            ScaledBy::Hpa => "the HPA",
        }
    }
}

/// Where a message the consumer published again went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Republish {
    /// The run's queue: handed out again as soon as a worker asks (a framework may still hold
    /// it until its ETA once it has it).
    Queue,
    /// A delay queue, or the framework's own hold until the retry is due.
    Delayed,
    /// The framework's dead-letter place: the consumer gave up on it.
    DeadLetter,
}

impl Republish {
    pub fn words(self) -> &'static str {
        match self {
            Republish::Queue => "the queue",
            Republish::Delayed => "a delay queue",
            Republish::DeadLetter => "the framework's dead-letter queue",
        }
    }
}

/// What started a Kafka rebalance (summary.json's `rebalance_log` names it in snake case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RebalanceWhy {
    /// A consumer joined the group (its first poll, or its poll after it was removed).
    Join,
    /// A member went longer than `max.poll.interval.ms` without polling and left the group.
    MaxPollInterval,
    /// A member stopped heartbeating (it died) and its session timed out.
    SessionTimeout,
    /// A consumer closed on its way out (a worker that stopped within its grace) sent
    /// LeaveGroup: its member left at once.
    Leave,
}

impl RebalanceWhy {
    pub fn words(self) -> &'static str {
        match self {
            RebalanceWhy::Join => "a member joined",
            RebalanceWhy::MaxPollInterval => "max.poll.interval.ms exceeded",
            RebalanceWhy::SessionTimeout => "session.timeout.ms expired",
            RebalanceWhy::Leave => "a member left (LeaveGroup on close)",
        }
    }
}

impl EventKind {
    /// The message the event is about; `None` for a worker's own events (kills, crashes,
    /// restarts) and a Kafka group's (rebalances, fenced commits).
    #[inline(always)]
    pub fn seq(&self) -> Option<Seq> {
        match *self {
            EventKind::Published { seq }
            | EventKind::Delivered { seq, .. }
            | EventKind::Acked { seq, .. }
            | EventKind::VisibilityChanged { seq, .. }
            | EventKind::LeaseExpired { seq, .. }
            | EventKind::Returned { seq, .. }
            | EventKind::DeadLettered { seq, .. }
            | EventKind::Rejected { seq, .. }
            | EventKind::HandlerEnded { seq, .. }
            | EventKind::Redriven { seq }
            | EventKind::Dropped { seq, .. }
            | EventKind::Republished { seq, .. } => Some(seq),
            EventKind::WorkerKilled { .. }
            | EventKind::FaultFired { .. }
            | EventKind::DeployStarted { .. }
            | EventKind::WorkerStopped { .. }
            | EventKind::WorkerCrashed { .. }
            | EventKind::WorkerRestarted { .. }
            // The group's events: the refused ack before a fence names its message.
            | EventKind::Rebalanced { .. }
            | EventKind::CommitFenced { .. }
            // The fleet's.
            | EventKind::Scaled { .. }
            | EventKind::ReplicaMade { .. }
            | EventKind::WorkerAdded { .. }
            | EventKind::ReplicaRemoved { .. } => None,
        }
    }
}

/// The effect ledger: the single source of effect counts.
#[derive(Debug, Clone, Default)]
pub struct Ledger {
    pub calls: Vec<CallRecord>,
    pub effects: Vec<EffectRecord>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallOutcome {
    /// The provider accepted the call (HTTP 202).
    Accepted,
    /// The provider answered with an injected error status.
    Error(u16),
    /// The provider closed the call's connection without an answer.
    Reset,
    /// The worker died while the call was open.
    Abandoned,
    /// The caller gave up (its client timeout) before the answer.
    TimedOut,
}

impl CallOutcome {
    /// The provider failed the call: an error answer, or its connection reset (not the
    /// caller's own timeout, nor a death).
    pub fn is_failure(self) -> bool {
        matches!(self, CallOutcome::Error(_) | CallOutcome::Reset)
    }
}

/// One provider call.
#[derive(Debug, Clone, PartialEq)]
pub struct CallRecord {
    /// The message the call's key names; `None` for a key that was never published.
    pub seq: Option<Seq>,
    /// The key the call named; `None` when the run knew it to be the key of message `seq`
    /// (a sim run keeps no copy of it: [`RunRecord::call_key`] reads it).
    pub key: Option<String>,
    pub worker: WorkerId,
    /// Receive count of the worker's delivery when it made the call (0 if it held none).
    pub delivery: u32,
    pub started: Nanos,
    /// When the answer reached (or would have reached) the worker; `None` if never answered.
    pub ended: Option<Nanos>,
    pub outcome: CallOutcome,
}

/// Where an effect was observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EffectSource {
    /// The fake provider accepted a call (an email sent).
    Provider,
    /// A store-backed target wrote its effect row.
    Store,
}

/// What a streamed run's accounting reads of a provider call as it starts: its message, the
/// delivery it was made in (0 if its worker held none) and whether it can still have an effect
/// once the instant is over (`effect_at: response`, accepted) until it closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartedCall {
    pub seq: Option<Seq>,
    pub delivery: u32,
    pub may_have_effect: bool,
    /// When it started, if it fails (an error answer or a reset, decided as it starts).
    pub fails_from: Option<Nanos>,
}

/// One effect: one email accepted, one row written.
#[derive(Debug, Clone, PartialEq)]
pub struct EffectRecord {
    /// `None` for a key that was never published (counted, never dropped).
    pub seq: Option<Seq>,
    pub at: Nanos,
    pub worker: WorkerId,
    pub delivery: u32,
    pub source: EffectSource,
}
