//! What an HTTP ingress load records: one entry per request, and goose's own totals.
//!
//! Request instants are profile time, like the rest of the record; response times are wall
//! time (the ingress service's real latency, whatever `run.time_scale`).

use std::collections::BTreeMap;

use super::Nanos;

/// One request of the ingress load, for one planned message.
#[derive(Debug, Clone, PartialEq)]
pub struct IngressRequest {
    /// The planned message's key (what the request carries).
    pub key: String,
    /// When the schedule wanted it sent (`None`: no schedule, `users` alone).
    pub due: Option<Nanos>,
    /// When it was sent.
    pub sent_at: Nanos,
    /// Wall microseconds to the answer (or to the failure).
    pub response_us: u64,
    /// The HTTP status, `None` when no answer came (refused connection, timeout).
    pub status: Option<u16>,
    /// Why no answer came.
    pub error: Option<String>,
}

impl IngressRequest {
    /// Answered with a 2xx: the service said it took the message.
    pub fn accepted(&self) -> bool {
        self.status.is_some_and(|s| (200..300).contains(&s))
    }
}

/// Goose's aggregate of the load's requests, as goose measured them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GooseTotals {
    pub requests: u64,
    pub successes: u64,
    pub failures: u64,
    /// Response time percentiles and extremes, wall microseconds (goose's histogram buckets).
    pub min_us: u64,
    pub mean_us: u64,
    pub p50_us: u64,
    pub p90_us: u64,
    pub p99_us: u64,
    pub max_us: u64,
    pub status_codes: BTreeMap<u16, u64>,
    /// Wall seconds the load ran, as goose timed it.
    pub duration_s: f64,
    /// Users goose ran at most.
    pub users: u64,
}

/// Everything an ingress load recorded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IngressRecord {
    /// Requests in plan order; a request never sent (the run ended first) is absent.
    pub requests: Vec<IngressRequest>,
    /// How many requests the plan had.
    pub planned: u64,
    pub users: u32,
    pub scheduled: bool,
    pub goose: GooseTotals,
    /// Messages whose key had been published before (producer-side duplicates).
    pub duplicate_publishes: u64,
    /// Messages the endpoint stored without a key at `message_key`.
    pub unkeyed: u64,
}
