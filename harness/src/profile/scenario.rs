//! The resolved scenario: a profile after parsing, defaults and validation.
//!
//! Everything the runner reads comes from here. Every value is already checked (durations are
//! positive where they must be, weights sum to a positive number, options belong to the target),
//! so the runner never re-validates.

use std::time::Duration;

use super::faults::ChaosRule;

pub use ackbench_targets::{Exhausted, OnPoison, RepublishSpec, RetrySpec, TargetOptions};

/// A validated, fully defaulted profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    pub mode: Mode,
    pub seed: u64,
    pub run: RunSpec,
    pub broker: BrokerSpec,
    pub workload: WorkloadSpec,
    pub consumer: ConsumerSpec,
    pub provider: ProviderSpec,
    pub chaos: Vec<ChaosRule>,
    /// An operator's redrive: at this instant every DLQ entry moves back to the main queue.
    pub redrive: Option<Duration>,
    pub budgets: Budgets,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Sim,
    Live,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RunSpec {
    /// How long the workload publishes.
    pub duration: Duration,
    /// The longest the run settles after `duration` (it stops earlier once nothing is left).
    pub drain: Duration,
    /// Interval of `timeseries.csv`; `None` picks one from the run's length.
    pub sample_every: Option<Duration>,
    /// Live mode: wall seconds per profile second (1.0 in sim mode, where it means nothing).
    pub time_scale: f64,
    /// Live mode: the most publishes the run's own producer has handed to the broker and not
    /// yet seen confirmed; at that many it waits for the oldest (1: each send waits for its
    /// confirmation). Sim runs publish instantly and do not read it.
    pub publish_window: u32,
    /// How a sim run keeps its history: set by `ackbench run --record`, not a profile key.
    pub record: Record,
}

/// How a sim run keeps its history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Record {
    /// Streams its accounting above 50 planned messages, keeps the full record up to that (the
    /// worker timeline is drawn from it), and always with a modelled producer.
    #[default]
    Auto,
    /// Every event, call and effect, as the batch analysis and `--trace` read them.
    Full,
    /// Metrics folded as the run goes; memory is what is in flight.
    Stream,
}

pub use super::kinds::spec::*;
pub use super::ramp::Ramp;

#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadSpec {
    pub arrival: Arrival,
    /// Cap on published messages; `None` = as many as the arrival process makes in `run.duration`.
    pub count: Option<u64>,
    pub poison: Poison,
    /// Explicit message keys, in publish order; `None` = `msg-1`, `msg-2`, ...
    pub keys: Option<Vec<String>>,
    /// Live mode: publish through the system's own HTTP endpoint instead of straight to the queue.
    pub ingress: Option<IngressSpec>,
    /// A producer whose sends are not always acknowledged and that retries them
    /// (`workload.producer`); `None`: every send is acknowledged, one publish per message.
    pub producer: Option<ProducerSpec>,
    /// A FIFO queue's message groups (`workload.groups: N`, needs `broker.fifo`): message i (in
    /// plan order, from 1) goes to group `(i - 1) % N`, named `group-1` to `group-N`. `None`:
    /// each message is a group of its own (its key is its `MessageGroupId`), so only a key's
    /// own messages are ordered behind each other.
    pub groups: Option<u32>,
    /// `workload.message`: the message as the consumer expects it (a framework's format or a
    /// shape of the profile's own); `None`: the order's JSON body, as the built-in targets read
    /// it. Sim runs do not read it (the built-in targets take the order itself).
    pub message: Option<super::message::MessageSpec>,
}

/// `workload.producer`: which sends the producer gets no answer for, and when it retries them.
/// Every attempt reaches the broker (what is lost is the broker's answer), so each is a publish
/// unless the broker's deduplication drops it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProducerSpec {
    pub unacknowledged: Unacknowledged,
    /// The keys whose sends go unacknowledged; `None` = every key.
    pub keys: Option<Vec<String>>,
    pub backoff: ProducerBackoff,
}

/// Which attempts of a chosen key go unacknowledged.
#[derive(Debug, Clone, PartialEq)]
pub enum Unacknowledged {
    /// Each attempt, independently, with this probability (drawn from the seed).
    Probability(f64),
    /// The first N attempts of each key.
    FirstAttempts(u32),
}

/// When the producer retries an unacknowledged send.
#[derive(Debug, Clone, PartialEq)]
pub enum ProducerBackoff {
    /// The delay before retry n is the n-th value; after the last, the producer gives up.
    List(Vec<Duration>),
    /// `min(cap, base * 2^(n-1))` with jitter, `max_attempts` attempts in all.
    Exponential(RetrySpec),
}

impl ProducerBackoff {
    /// Attempts in all, the first included.
    pub fn max_attempts(&self) -> u32 {
        match self {
            ProducerBackoff::List(l) => {
                u32::try_from(l.len()).unwrap_or(u32::MAX).saturating_add(1)
            }
            ProducerBackoff::Exponential(r) => r.max_attempts,
        }
    }

    /// The delay before attempt `n + 1`, after attempt `n` (1-based) went unacknowledged, given
    /// a uniform draw `u` in [0, 1) for the jitter; `None` when attempt `n` was the last.
    pub fn delay(&self, n: u32, u: f64) -> Option<Duration> {
        if n >= self.max_attempts() {
            return None;
        }
        match self {
            ProducerBackoff::List(l) => l.get(n as usize - 1).copied(),
            ProducerBackoff::Exponential(r) => Some(r.delay(n, u)),
        }
    }

    /// When each attempt goes out, from the first, if every attempt goes unacknowledged and no
    /// jitter shortens a delay: the longest the producer keeps retrying one message.
    pub fn attempt_offsets(&self) -> Vec<Duration> {
        let mut at = Duration::ZERO;
        let mut out = vec![at];
        for n in 1..self.max_attempts() {
            match self.delay(n, 0.0) {
                Some(d) => {
                    at += d;
                    out.push(at);
                }
                None => break,
            }
        }
        out
    }
}

impl WorkloadSpec {
    /// Messages per second while the workload publishes (`duration` is `run.duration`); 0 when
    /// no rate is known before the run (an ingress load's users pace themselves).
    pub fn arrival_rate(&self, duration: Duration) -> f64 {
        match &self.arrival {
            Arrival::Every(d) if !d.is_zero() => 1.0 / d.as_secs_f64(),
            Arrival::Every(_) => 0.0,
            Arrival::Closed => 0.0,
            Arrival::Rate { rate_per_s, .. } => *rate_per_s,
            // The mean over the run: the ramp's publishes over `duration`.
            Arrival::Ramp(r) => {
                let publishes: f64 = (0..r.steps)
                    .map(|k| r.publishes_below(k, r.hold_nanos()) as f64)
                    .sum();
                if duration.is_zero() {
                    0.0
                } else {
                    publishes / duration.as_secs_f64()
                }
            }
            Arrival::At(instants) => {
                let span = instants
                    .last()
                    .copied()
                    .unwrap_or_default()
                    .max(duration)
                    .as_secs_f64();
                if span > 0.0 {
                    instants.len() as f64 / span
                } else {
                    0.0
                }
            }
        }
    }
}

/// `workload.ingress`: the system's HTTP endpoint that publishes to the queue, driven by goose
/// users. One request per planned message, on the plan's schedule (or as fast as the users get
/// answers, with `users` alone).
#[derive(Debug, Clone, PartialEq)]
pub struct IngressSpec {
    /// The ingress service: a program ackbench starts once, with the run's SQS endpoint, queue
    /// URL and a port to listen on in its environment.
    pub command: Vec<String>,
    /// Extra environment of the ingress service.
    pub env: Vec<(String, String)>,
    /// Where each request goes (`{port}`, `{key}`, `{seq}` filled in).
    pub url: super::template::Template,
    pub method: IngressMethod,
    /// The request body (`{body}`, `{key}`, `{seq}`); `None` sends none.
    pub body: Option<super::template::Template>,
    /// Request headers, values templated like the body.
    pub headers: Vec<(String, super::template::Template)>,
    /// Concurrent goose users (closed model: each waits for its answer before its next request).
    pub users: u32,
    /// Whether requests start on the plan's schedule (`false`: `users` alone, no schedule).
    pub scheduled: bool,
    /// Where a published message's key is in its body: a JSON pointer, or steps through its
    /// encodings (`base64|/body|base64|/0/0`).
    pub message_key: super::key_path::KeyPath,
    /// How long one request may take before it counts as failed (wall time).
    pub timeout: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IngressMethod {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Arrival {
    /// One message every period, the first at 0 s.
    Every(Duration),
    /// `rate_per_s` messages per second on average.
    Rate {
        rate_per_s: f64,
        process: RateProcess,
    },
    /// Explicit publish instants (sorted ascending by validation).
    At(Vec<Duration>),
    /// A rate climbing in steps (a capacity run), uniform gaps within each step; nothing is
    /// published after the last step.
    Ramp(Ramp),
    /// No schedule: `workload.ingress` with `users` alone. Every message is due at 0 s and the
    /// ingress load's users send the next request as soon as their previous one is answered.
    Closed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateProcess {
    /// Exponential gaps drawn from the seed.
    Poisson,
    /// Constant gaps of 1 / rate.
    Uniform,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Poison {
    None,
    /// The first N published messages are poison.
    First(u64),
    /// Each message is poison with this probability (drawn from the seed).
    Fraction(f64),
    /// These keys are poison.
    Keys(Vec<String>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct ConsumerSpec {
    /// A built-in target's name (see `ackbench_targets::TARGETS`).
    pub target: String,
    pub workers: u32,
    pub restart_after: Duration,
    pub options: TargetOptions,
    /// Live mode: the consumer as a program (argv), started once per worker; `target` is then
    /// `command`.
    pub command: Option<Vec<String>>,
    /// Live mode: extra environment of each worker process, by name; a value's
    /// `${ACKBENCH_...}` is that worker's run variable.
    pub env: Vec<(String, crate::profile::env_value::EnvValue)>,
    /// Live mode: the clock a command's processes run on, as the profile asks; `None` leaves
    /// it to the run (scaled when the time scale is below 1 and the mechanism is there).
    pub clock: Option<ConsumerClock>,
}

/// The clock of the programs a live run starts (the consumer command's workers and the
/// ingress service).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsumerClock {
    /// Sped up by `1 / run.time_scale`: the program's sleeps, timeouts and clock reads are in
    /// profile time, and so are the durations it sends over the broker's API.
    Scaled,
    /// The machine's clock: the program scales its own durations (`ACKBENCH_TIME_SCALE`).
    Real,
}

impl ConsumerClock {
    /// The name a profile and a report use.
    pub fn name(self) -> &'static str {
        match self {
            ConsumerClock::Scaled => "scaled",
            ConsumerClock::Real => "real",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EffectAt {
    /// The effect happens when the call arrives at the provider.
    Request,
    /// The effect happens when the provider answers.
    Response,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ProviderSpec {
    pub effect_at: EffectAt,
    /// Live mode: where a call's effect key is.
    pub key: super::key_source::KeySource,
    pub latency: LatencyDist,
    /// Phases, in profile order; the first phase selecting a call applies.
    pub phases: Vec<Phase>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum LatencyDist {
    Fixed(Duration),
    Uniform {
        min: Duration,
        max: Duration,
    },
    LogNormal {
        median: Duration,
        p99: Duration,
    },
    /// The i-th published message (1-based seq i) takes `values[(i-1) % len]` on every delivery.
    PerMessage(Vec<Duration>),
    /// Weights are positive and finite; their sum is positive.
    Mix(Vec<(f64, LatencyDist)>),
}

/// `provider.phases[]`: what the provider does to the calls a phase selects. A call is selected
/// by the phase's time window and by every selector the phase has; the first phase selecting a
/// call applies.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Phase {
    /// The window's start (0s when the profile gives selectors and no `from`).
    pub from: Duration,
    /// The window's end, exclusive; `None`: the end of the run.
    pub to: Option<Duration>,
    /// Only calls whose effect key is one of these.
    pub keys: Option<Vec<String>>,
    /// Only the n-th call the provider receives for its key (1-based, every call of the run
    /// for that key counted), for each n listed.
    pub attempts: Option<Vec<u32>>,
    /// Only calls made within this delivery (receive count) of their message.
    pub delivery: Option<u32>,
    /// Replaces the provider's latency during the phase.
    pub latency: Option<LatencyDist>,
    /// Adds errors during the phase.
    pub errors: Option<ErrorSpec>,
    /// Calls that never get an answer; only the caller's own client timeout
    /// (`consumer.options.http_timeout`) ends its wait.
    pub hang: Option<HangSpec>,
}

impl Phase {
    /// Whether the phase selects calls by more than time.
    pub fn has_selectors(&self) -> bool {
        self.keys.is_some() || self.attempts.is_some() || self.delivery.is_some()
    }
}

/// What an injected error answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorAnswer {
    /// An HTTP error status (400..=599).
    Status(u16),
    /// No answer: the provider closes the call's connection (the caller sees a connection
    /// error).
    Reset,
}

impl std::fmt::Display for ErrorAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ErrorAnswer::Status(s) => write!(f, "{s}"),
            ErrorAnswer::Reset => f.write_str("reset"),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ErrorSpec {
    pub answer: ErrorAnswer,
    /// Probability per call, 0.0 ..= 1.0.
    pub rate: f64,
    /// The provider does the call's work (its effect, at `effect_at`) before the error; `false`:
    /// the error is instead of the work.
    pub after_effect: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HangSpec {
    /// Probability per call, 0.0 ..= 1.0.
    pub rate: f64,
    /// The provider does the call's work (its effect, at `effect_at`; with `response`, when
    /// the answer would have left) and then never answers; `false`: it never does the work.
    /// Defaults to `true` with `effect_at: request` and `false` with `response`: as an
    /// accepted call whose answer never comes.
    pub after_effect: bool,
}

/// Budgets, all optional. A run passes when every budget that is set holds.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Budgets {
    pub duplicate_rate: Option<f64>,
    pub duplicate_effects: Option<u64>,
    pub lost: Option<u64>,
    pub late: Option<LateBudget>,
    pub dlq: Option<u64>,
    pub dlq_with_effect: Option<u64>,
    pub p99_over_visibility: Option<f64>,
    pub p999_handler_latency: Option<Duration>,
    pub max_oldest_age: Option<Duration>,
    pub worker_busy_fraction: Option<f64>,
    pub rejected: Option<u64>,
    /// Orders an HTTP ingress accepted (2xx) that never reached the queue.
    pub ingress_lost: Option<u64>,
    /// Messages still in the main queue when the run stopped (a profile gets 0 unless it sets
    /// another limit).
    pub unfinished: Option<u64>,
    /// When a first effect counts as late (`budgets.late.after`, default 5m), even without a
    /// `late` budget: `summary.late` always uses it.
    pub late_after: Duration,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LateBudget {
    pub after: Duration,
    pub max: u64,
}

pub const DEFAULT_LATE_AFTER: Duration = Duration::from_secs(300);
