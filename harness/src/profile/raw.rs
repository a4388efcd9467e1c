//! The profile exactly as written: every section and key of the YAML, nothing defaulted or
//! checked beyond types. Unknown keys are refused everywhere (`deny_unknown_fields`), so a typo
//! is an error, never a silently ignored setting. [`super::resolve`] turns this into a
//! [`super::Scenario`].

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

use super::kinds::{self, KindDescriptor};
use super::scalar::{DurationText, Text};

/// A whole profile.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a profile: a mapping with the sections name, description, mode, seed, run, \
                 broker, workload, consumer, provider, chaos, redrive, budgets"
)]
pub struct RawProfile {
    pub name: Option<Text>,
    pub description: Option<Text>,
    pub mode: Option<ModeName>,
    pub seed: Option<u64>,
    pub run: Option<RawRun>,
    pub broker: Option<RawBroker>,
    pub workload: Option<RawWorkload>,
    pub consumer: Option<RawConsumer>,
    pub provider: Option<RawProvider>,
    pub chaos: Option<Vec<super::faults::RawChaosRule>>,
    pub redrive: Option<RawRedrive>,
    pub budgets: Option<RawBudgets>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModeName {
    Sim,
    Live,
}

/// `run`: how long the workload publishes and how long the run may settle after.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys duration, drain, sample_every, time_scale, publish_window"
)]
pub struct RawRun {
    pub duration: Option<DurationText>,
    pub drain: Option<DurationText>,
    pub sample_every: Option<DurationText>,
    /// Live mode: wall seconds per profile second (0.05 runs 90 minutes in 4.5).
    pub time_scale: Option<f64>,
    /// Live mode: the most publishes the run's producer leaves unconfirmed at once.
    pub publish_window: Option<u64>,
}

/// `broker`: the broker kind and its lease and delivery-limit settings. Every kind's keys are
/// read here; which belong to the chosen kind is checked when resolving.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys kind and that kind's keys: sqs: visibility_timeout, \
                 max_receives, stale_ack, fifo, dedup_window; rabbitmq: queue_type, consumer_timeout, \
                 timeout_check_every, delivery_limit, prefetch, dead_letter, heartbeat; nats: ack_wait, \
                 max_deliver, backoff, max_ack_pending; redis-streams: min_idle, claim_every, \
                 max_deliveries; kafka: partitions, max_poll_interval, session_timeout, \
                 heartbeat_interval, max_poll_records, enable_auto_commit, auto_commit_interval, \
                 assignment, static_membership; kafka-share: partitions, record_lock_duration, \
                 delivery_count_limit; any kind: observe, queue, reuse; rabbitmq: arguments"
)]
pub struct RawBroker {
    pub kind: Option<BrokerKindName>,
    // the real server of a live run: `url` (rabbitmq, nats, redis-streams, kafka, kafka-share),
    // `endpoint` (sqs)
    pub url: Option<String>,
    pub endpoint: Option<String>,
    // sqs
    pub visibility_timeout: Option<DurationText>,
    pub max_receives: Option<u32>,
    pub stale_ack: Option<StaleAckName>,
    /// A FIFO queue: deduplication (and, later, message groups).
    pub fifo: Option<bool>,
    /// How long a FIFO queue remembers a deduplication id (SQS: 5 minutes).
    pub dedup_window: Option<DurationText>,
    // rabbitmq
    pub queue_type: Option<QueueTypeName>,
    pub consumer_timeout: Option<DurationText>,
    pub timeout_check_every: Option<DurationText>,
    pub delivery_limit: Option<u32>,
    pub prefetch: Option<u32>,
    pub dead_letter: Option<bool>,
    /// The connection's heartbeat timeout (RabbitMQ's `heartbeat`).
    pub heartbeat: Option<DurationText>,
    // nats
    pub ack_wait: Option<DurationText>,
    pub max_deliver: Option<u32>,
    pub backoff: Option<Vec<DurationText>>,
    pub max_ack_pending: Option<u32>,
    // redis-streams
    pub min_idle: Option<DurationText>,
    pub claim_every: Option<DurationText>,
    pub max_deliveries: Option<u32>,
    // kafka, kafka-share
    pub partitions: Option<u32>,
    pub max_poll_interval: Option<DurationText>,
    pub session_timeout: Option<DurationText>,
    pub heartbeat_interval: Option<DurationText>,
    pub max_poll_records: Option<u32>,
    pub enable_auto_commit: Option<bool>,
    pub auto_commit_interval: Option<DurationText>,
    pub assignment: Option<KafkaAssignmentName>,
    pub static_membership: Option<bool>,
    // kafka-share
    pub record_lock_duration: Option<DurationText>,
    pub delivery_count_limit: Option<u32>,
    // every kind, live mode on a real broker
    pub observe: Option<ObserveName>,
    /// The run's queue (stream) by a fixed name, as the consumer's framework names it.
    pub queue: Option<Text>,
    /// Use `queue` when it already exists (empty), rather than refuse the run.
    pub reuse: Option<bool>,
    // rabbitmq: the queue's arguments, as the consumer's framework declares them
    pub arguments: Option<yaml_serde::Mapping>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ObserveName {
    Proxy,
    None,
}

/// `broker.kind`: the kind's descriptor, read by its name or an alias ([`super::kinds`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BrokerKindName(pub &'static KindDescriptor);

impl<'de> Deserialize<'de> for BrokerKindName {
    /// As serde derives it for an enum of unit variants, one per kind (its aliases before its
    /// name), so that what a profile is told is the same.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl<'de> Visitor<'de> for Name {
            type Value = &'static KindDescriptor;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("variant identifier")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                usize::try_from(v)
                    .ok()
                    .and_then(|i| kinds::KINDS.get(i).copied())
                    .ok_or_else(|| {
                        let index = format!("variant index 0 <= i < {}", kinds::KINDS.len());
                        E::invalid_value(de::Unexpected::Unsigned(v), &index.as_str())
                    })
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                kinds::named(v).ok_or_else(|| E::unknown_variant(v, kinds::names()))
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Self::Value, E> {
                self.visit_str(&String::from_utf8_lossy(v))
            }
        }
        struct Variant(&'static KindDescriptor);
        impl<'de> Deserialize<'de> for Variant {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                deserializer.deserialize_identifier(Name).map(Variant)
            }
        }
        struct Kind;
        impl<'de> Visitor<'de> for Kind {
            type Value = BrokerKindName;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("enum BrokerKindName")
            }
            fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
                let (Variant(kind), variant) = data.variant()?;
                de::VariantAccess::unit_variant(variant)?;
                Ok(BrokerKindName(kind))
            }
        }
        deserializer.deserialize_enum("BrokerKindName", kinds::names(), Kind)
    }
}

impl RawBroker {
    /// Each key that belongs to some kinds (a kind's [`KindDescriptor::keys`]), and whether the
    /// profile sets it.
    pub fn keys_set(&self) -> [(&'static str, bool); 33] {
        [
            ("url", self.url.is_some()),
            ("endpoint", self.endpoint.is_some()),
            ("visibility_timeout", self.visibility_timeout.is_some()),
            ("max_receives", self.max_receives.is_some()),
            ("stale_ack", self.stale_ack.is_some()),
            ("fifo", self.fifo.is_some()),
            ("dedup_window", self.dedup_window.is_some()),
            ("queue_type", self.queue_type.is_some()),
            ("consumer_timeout", self.consumer_timeout.is_some()),
            ("timeout_check_every", self.timeout_check_every.is_some()),
            ("delivery_limit", self.delivery_limit.is_some()),
            ("prefetch", self.prefetch.is_some()),
            ("dead_letter", self.dead_letter.is_some()),
            ("heartbeat", self.heartbeat.is_some()),
            ("arguments", self.arguments.is_some()),
            ("ack_wait", self.ack_wait.is_some()),
            ("max_deliver", self.max_deliver.is_some()),
            ("backoff", self.backoff.is_some()),
            ("max_ack_pending", self.max_ack_pending.is_some()),
            ("min_idle", self.min_idle.is_some()),
            ("claim_every", self.claim_every.is_some()),
            ("max_deliveries", self.max_deliveries.is_some()),
            ("partitions", self.partitions.is_some()),
            ("max_poll_interval", self.max_poll_interval.is_some()),
            ("session_timeout", self.session_timeout.is_some()),
            ("heartbeat_interval", self.heartbeat_interval.is_some()),
            ("max_poll_records", self.max_poll_records.is_some()),
            ("enable_auto_commit", self.enable_auto_commit.is_some()),
            ("auto_commit_interval", self.auto_commit_interval.is_some()),
            ("assignment", self.assignment.is_some()),
            ("static_membership", self.static_membership.is_some()),
            ("record_lock_duration", self.record_lock_duration.is_some()),
            ("delivery_count_limit", self.delivery_count_limit.is_some()),
        ]
    }
}

/// `broker.assignment` (kafka): the consumer's `partition.assignment.strategy`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KafkaAssignmentName {
    Range,
    CooperativeSticky,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueTypeName {
    Quorum,
    Classic,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StaleAckName {
    Reject,
    Delete,
    Ignore,
    Sqs,
}

/// `workload`: what is published, and when.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys arrival, count, poison, keys, ingress, producer, groups, \
                 message"
)]
pub struct RawWorkload {
    pub arrival: Option<RawArrival>,
    pub count: Option<u64>,
    pub poison: Option<RawPoison>,
    pub keys: Option<Vec<Text>>,
    pub ingress: Option<RawIngress>,
    pub producer: Option<RawProducer>,
    /// FIFO message groups: messages go round-robin into this many groups.
    pub groups: Option<u32>,
    /// The message as the consumer expects it (live mode).
    pub message: Option<RawMessage>,
}

/// `workload.message`: a framework preset (`format`) or a shape of the profile's own. Its parts
/// stay YAML here; [`super::resolve`] reads their placeholders and encoding steps.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys format, task, args, kwargs, body, headers, content_type, \
                 content_encoding, correlation_id, fields, attributes"
)]
pub struct RawMessage {
    pub format: Option<FormatName>,
    pub task: Option<Text>,
    pub args: Option<yaml_serde::Value>,
    pub kwargs: Option<yaml_serde::Value>,
    pub body: Option<yaml_serde::Value>,
    pub headers: Option<yaml_serde::Mapping>,
    pub content_type: Option<Text>,
    pub content_encoding: Option<Text>,
    pub correlation_id: Option<Text>,
    pub fields: Option<yaml_serde::Mapping>,
    pub attributes: Option<yaml_serde::Mapping>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FormatName {
    Custom,
    Celery,
    Dramatiq,
    #[serde(rename = "faststream")]
    FastStream,
}

/// `workload.producer`: a producer whose sends are not always acknowledged, and that retries.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys probability or first_attempts, keys, and backoff or retry, \
                 as in { first_attempts: 3, backoff: [1m, 2m, 4m] }"
)]
pub struct RawProducer {
    /// Each attempt goes unacknowledged with this probability.
    pub probability: Option<f64>,
    /// The first N attempts of each chosen key go unacknowledged.
    pub first_attempts: Option<u32>,
    /// Only these keys' sends go unacknowledged (default: every key).
    pub keys: Option<Vec<Text>>,
    /// The delay before each retry, in order.
    pub backoff: Option<Vec<DurationText>>,
    /// Exponential backoff, as `consumer.options.retry`.
    pub retry: Option<RawRetry>,
}

/// `workload.ingress`: publish through the system's own HTTP endpoint (live mode).
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys command, env, url, method, body, headers, rate_per_s, \
                 users, message_key, timeout"
)]
pub struct RawIngress {
    pub command: Option<Vec<Text>>,
    pub env: Option<std::collections::BTreeMap<String, Text>>,
    pub url: Option<Text>,
    pub method: Option<MethodName>,
    pub body: Option<Text>,
    pub headers: Option<std::collections::BTreeMap<String, Text>>,
    pub rate_per_s: Option<f64>,
    pub users: Option<u32>,
    pub message_key: Option<Text>,
    pub timeout: Option<DurationText>,
}

/// An HTTP method, spelt as HTTP spells it (the profile may write it in lower case too).
#[allow(clippy::upper_case_acronyms)]
#[derive(Debug, Clone, Copy, Deserialize)]
pub enum MethodName {
    #[serde(alias = "get")]
    GET,
    #[serde(alias = "post")]
    POST,
    #[serde(alias = "put")]
    PUT,
    #[serde(alias = "patch")]
    PATCH,
    #[serde(alias = "delete")]
    DELETE,
}

/// `workload.arrival`: exactly one of `every`, `rate_per_s` (with `process`), `at` or `ramp`.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "one of { every: 50s }, { rate_per_s: 2, process: poisson }, { at: [0s, 3s] }, \
                 { ramp: { from: 50, to: 500, step: 50, hold: 20s } }"
)]
pub struct RawArrival {
    pub every: Option<DurationText>,
    pub rate_per_s: Option<f64>,
    pub process: Option<ProcessName>,
    pub at: Option<Vec<DurationText>>,
    pub ramp: Option<RawRamp>,
}

/// `workload.arrival.ramp`: rates in messages per second, each step held for `hold`.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys from, to, step, hold, as in \
                 { from: 50, to: 500, step: 50, hold: 20s }"
)]
pub struct RawRamp {
    pub from: Option<f64>,
    pub to: Option<f64>,
    pub step: Option<f64>,
    pub hold: Option<DurationText>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProcessName {
    Poisson,
    Uniform,
}

/// `workload.poison`: exactly one of `first`, `fraction` or `keys`.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "one of { first: N }, { fraction: 0.01 }, { keys: [...] }"
)]
pub struct RawPoison {
    pub first: Option<u64>,
    pub fraction: Option<f64>,
    pub keys: Option<Vec<Text>>,
}

/// `consumer`: the target under test and how many workers run it.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys target, command, env, clock, sim, workers, restart_after, \
                 options"
)]
pub struct RawConsumer {
    pub target: Option<Text>,
    /// Live mode: the consumer as a program, started once per worker.
    pub command: Option<Vec<Text>>,
    /// Live mode: extra environment of each worker process.
    pub env: Option<std::collections::BTreeMap<String, Text>>,
    /// Live mode: the clock of a command's processes, `scaled` or `real`.
    pub clock: Option<ClockName>,
    pub workers: Option<u32>,
    pub restart_after: Option<DurationText>,
    /// Per-target options, checked against what the chosen target accepts.
    pub options: Option<yaml_serde::Mapping>,
    /// The built-in target that stands in for `command` in sim mode.
    pub sim: Option<RawConsumerSim>,
}

/// `consumer.sim`: a built-in target and its options, run in sim mode in place of a
/// `consumer.command` (which runs only live).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a mapping with keys target, options")]
pub struct RawConsumerSim {
    pub target: Option<Text>,
    pub options: Option<yaml_serde::Mapping>,
}

/// `consumer.clock`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockName {
    Scaled,
    Real,
}

/// `consumer.options.retry`.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys max_attempts, base, cap, jitter"
)]
pub struct RawRetry {
    pub max_attempts: Option<u32>,
    pub base: Option<DurationText>,
    pub cap: Option<DurationText>,
    pub jitter: Option<f64>,
}

/// `consumer.options.republish`.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys max_retries, base, cap, jitter, exhausted"
)]
pub struct RawRepublish {
    pub max_retries: Option<u32>,
    pub base: Option<DurationText>,
    pub cap: Option<DurationText>,
    pub jitter: Option<f64>,
    pub exhausted: Option<ExhaustedName>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExhaustedName {
    DeadLetter,
    Ack,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnPoisonName {
    Crash,
    DeadLetter,
    Release,
}

/// `provider`: the fake downstream's latency, errors and timed phases.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys effect_at, key, latency, phases"
)]
pub struct RawProvider {
    pub effect_at: Option<EffectAtName>,
    /// Live mode: where a call's effect key is (`pointer:/key`, `header:NAME`, `segment:N`).
    pub key: Option<Text>,
    pub latency: Option<RawLatency>,
    pub phases: Option<Vec<RawPhase>>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EffectAtName {
    Request,
    Response,
}

/// A latency distribution: `dist` and the keys that distribution takes.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a latency distribution such as { dist: fixed, value: 240ms }"
)]
pub struct RawLatency {
    pub dist: Option<DistName>,
    /// `fixed`.
    pub value: Option<DurationText>,
    /// `uniform`.
    pub min: Option<DurationText>,
    pub max: Option<DurationText>,
    /// `lognormal`.
    pub median: Option<DurationText>,
    pub p99: Option<DurationText>,
    /// `per_message`.
    pub values: Option<Vec<DurationText>>,
    /// `mix`.
    pub parts: Option<Vec<RawLatency>>,
    /// Only in a part of a `mix`.
    pub weight: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DistName {
    Fixed,
    Uniform,
    Lognormal,
    PerMessage,
    Mix,
}

/// `provider.phases[]`: a time window and selectors, with its own latency, errors and/or hangs.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys from, to, keys, attempt, delivery, latency, errors, hang"
)]
pub struct RawPhase {
    pub from: Option<DurationText>,
    pub to: Option<DurationText>,
    pub keys: Option<Vec<Text>>,
    /// A count or a list of counts: read in [`super::resolve`].
    pub attempt: Option<yaml_serde::Value>,
    pub delivery: Option<u32>,
    pub latency: Option<RawLatency>,
    pub errors: Option<RawErrors>,
    /// A probability, or a mapping [`RawHang`]: read in [`super::resolve`].
    pub hang: Option<yaml_serde::Value>,
    /// Belongs inside `errors` or `hang`: read only to say so.
    pub after_effect: Option<bool>,
}

/// `provider.phases[].errors`.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys status, rate, after_effect"
)]
pub struct RawErrors {
    /// An HTTP status or `reset`: read in [`super::resolve`].
    pub status: Option<yaml_serde::Value>,
    pub rate: Option<f64>,
    pub after_effect: Option<bool>,
}

/// `provider.phases[].hang` written as a mapping.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys rate, after_effect"
)]
pub struct RawHang {
    pub rate: Option<f64>,
    pub after_effect: Option<bool>,
}

/// `redrive`: an operator moves every DLQ entry back to the main queue.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with key at, as in { at: 2h }"
)]
pub struct RawRedrive {
    pub at: Option<DurationText>,
}

/// `budgets`: the limits a run must stay within to pass.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a mapping of budget names to limits")]
pub struct RawBudgets {
    pub duplicate_rate: Option<f64>,
    pub duplicate_effects: Option<u64>,
    pub lost: Option<u64>,
    pub late: Option<RawLate>,
    pub dlq: Option<u64>,
    pub dlq_with_effect: Option<u64>,
    pub p99_over_visibility: Option<f64>,
    pub p999_handler_latency: Option<DurationText>,
    pub max_oldest_age: Option<DurationText>,
    pub worker_busy_fraction: Option<f64>,
    pub rejected: Option<u64>,
    pub ingress_lost: Option<u64>,
    pub unfinished: Option<u64>,
}

/// `budgets.late`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a mapping with keys after, max")]
pub struct RawLate {
    pub after: Option<DurationText>,
    pub max: Option<u64>,
}
