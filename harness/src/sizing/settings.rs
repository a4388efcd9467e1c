//! The settings sizing reasons about, gathered from a scenario (and what its run showed), so
//! that every rule and check is a function of plain values that tests build by hand.

use std::time::Duration;

use ackbench_targets::options::target_info;
use serde::Serialize;

use crate::profile::{KindDescriptor, RetrySpec, Scenario};
use crate::record::{CallOutcome, RunRecord};

/// What the sizing rules and the consistency checks read.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The target's name (`claim-then-send`, ...).
    pub target: String,
    /// The broker kind: its words, its keys, what it can do.
    pub kind: &'static KindDescriptor,
    /// The lease by meaning (`broker.visibility_timeout`, `consumer_timeout`, `ack_wait`,
    /// `min_idle`).
    pub lease: Duration,
    /// The profile key of the lease for this kind.
    pub lease_key: &'static str,
    /// Deliveries allowed by meaning (0 = no limit): `broker.max_receives`, `max_deliver`,
    /// `max_deliveries`, RabbitMQ `delivery_limit` + 1.
    pub limit: u32,
    /// The profile key of the delivery limit; `None` when the kind has none (a classic queue).
    pub limit_key: Option<&'static str>,
    /// RabbitMQ: the tick on which the consumer timeout is checked.
    pub check_every: Option<Duration>,
    /// At most how many records a poll returns, on a kind that polls batches (Kafka's
    /// `max_poll_records`); `None` on the others.
    pub batch: Option<u32>,
    /// The partitions of a consumer group's topic, past which workers sit idle (Kafka's
    /// `partitions`); `None` on the kinds without that bound.
    pub partitions: Option<u32>,
    pub workers: u32,
    /// The target's client timeout on the provider call.
    pub http_timeout: Option<Duration>,
    pub retry: Option<RetrySpec>,
    /// `claim-then-send`'s window.
    pub claim_window: Option<Duration>,
    /// A deduplication window (`--dedup-window`, else a FIFO queue's `broker.dedup_window`).
    pub dedup_window: Option<Duration>,
    /// A retrying producer (`workload.producer`): when each of its attempts at one message goes
    /// out, from the first, if all go unacknowledged (no jitter: the latest each can be).
    pub producer_attempts: Option<Vec<Duration>>,
    /// `heartbeat`'s cap on extra lease time.
    pub max_extension: Option<Duration>,
    /// A DLQ budget is set (`budgets.dlq` or `budgets.dlq_with_effect`).
    pub dlq_alarm: bool,
    /// The provider's slowest call seen; `None` when a call never answered.
    pub worst_call: Option<Duration>,
}

impl Settings {
    /// The settings of `s`, with the slowest call its run showed; `dedup_window` (the command
    /// line's) stands before the profile's FIFO window.
    pub fn of(s: &Scenario, worst_call: Option<Duration>, dedup_window: Option<Duration>) -> Self {
        let o = &s.consumer.options;
        Settings {
            target: s.consumer.target.clone(),
            kind: s.broker.kind.descriptor(),
            lease: s.broker.lease,
            lease_key: s.broker.lease_key(),
            limit: s.broker.max_deliveries,
            limit_key: s.broker.limit_key(),
            check_every: s.broker.lease_check_every(),
            batch: s.broker.poll_batch(),
            partitions: s.broker.group_partitions(),
            workers: s.consumer.workers,
            http_timeout: o.http_timeout,
            retry: o.retry.clone(),
            claim_window: o.claim_window,
            dedup_window: dedup_window.or(s.broker.fifo.as_ref().map(|f| f.dedup_window)),
            producer_attempts: s
                .workload
                .producer
                .as_ref()
                .map(|p| p.backoff.attempt_offsets()),
            max_extension: o.max_extension,
            dlq_alarm: s.budgets.dlq.is_some() || s.budgets.dlq_with_effect.is_some(),
            worst_call,
        }
    }

    /// The value of the kind's delivery-limit key that allows `deliveries` deliveries:
    /// RabbitMQ counts returns, one fewer than deliveries.
    pub fn limit_value(&self, deliveries: u32) -> u32 {
        self.kind.limit_value(deliveries)
    }

    /// Whether the holder can extend its lease (a heartbeat): every kind but RabbitMQ, whose
    /// consumer timeout nothing extends.
    pub fn can_extend(&self) -> bool {
        self.kind.can.extend
    }

    /// Whether the target calls the provider (and so has a client timeout to set).
    pub fn calls_provider(&self) -> bool {
        target_info(&self.target).is_some_and(|t| t.options.contains(&"http_timeout"))
    }
}

/// The settings as sizing.json shows them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SettingsView {
    pub target: String,
    /// The broker kind; the lease and limit below are by meaning, in this kind's keys.
    pub broker_kind: String,
    /// The kind itself, for its words.
    #[serde(skip)]
    pub kind: &'static KindDescriptor,
    pub visibility_timeout_s: f64,
    pub max_receives: u32,
    /// At most how many records a poll returns (Kafka's `max_poll_records`); absent on the
    /// kinds that hand out one message at a time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub poll_records: Option<u32>,
    /// The partitions of a consumer group's topic (Kafka's `partitions`); absent on the kinds
    /// without that bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partitions: Option<u32>,
    pub workers: u32,
    pub http_timeout_s: Option<f64>,
    pub claim_window_s: Option<f64>,
    pub max_extension_s: Option<f64>,
}

impl From<&Settings> for SettingsView {
    fn from(s: &Settings) -> Self {
        SettingsView {
            target: s.target.clone(),
            broker_kind: s.kind.name.to_string(),
            kind: s.kind,
            visibility_timeout_s: s.lease.as_secs_f64(),
            max_receives: s.limit,
            poll_records: s.batch,
            partitions: s.partitions,
            workers: s.workers,
            http_timeout_s: s.http_timeout.map(|d| d.as_secs_f64()),
            claim_window_s: s.claim_window.map(|d| d.as_secs_f64()),
            max_extension_s: s.max_extension.map(|d| d.as_secs_f64()),
        }
    }
}

/// The provider's slowest call in a run (0 without calls); `None` when a call was never
/// answered (a hang that only a client timeout could end).
pub fn worst_call(record: &RunRecord) -> Option<Duration> {
    let mut worst = 0u64;
    for c in &record.ledger.calls {
        match (c.ended, c.outcome) {
            (Some(end), _) => worst = worst.max(end.saturating_sub(c.started)),
            (None, CallOutcome::Abandoned) => {}
            (None, _) => return None,
        }
    }
    Some(Duration::from_nanos(worst))
}
