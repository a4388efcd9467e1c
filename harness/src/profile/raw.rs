//! The profile exactly as written: every section and key of the YAML, nothing defaulted or
//! checked beyond types. Unknown keys are refused everywhere (`deny_unknown_fields`), so a typo
//! is an error, never a silently ignored setting; under `broker`, a kind's own keys are read by
//! the kind ([`super::raw_broker`]) and refused when they are not the profile kind's.
//! [`super::resolve`] turns this into a [`super::Scenario`].

use serde::Deserialize;

pub use super::raw_broker::{ObserveName, RawBroker};
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
    pub overlapping_executions: Option<u64>,
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
