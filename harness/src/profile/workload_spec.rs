//! `workload` resolved: what is published, when, by whom (the run's producer or an HTTP
//! ingress), and which messages are poison.

use std::time::Duration;

use super::ramp::Ramp;
use ackbench_targets::RetrySpec;

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
