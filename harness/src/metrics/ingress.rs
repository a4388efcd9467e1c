//! The HTTP ingress load against what reached the queue, joined by message key.
//!
//! Goose says how each request was answered; the endpoint says what was published. Together:
//! an order the front door accepted (2xx) whose key never reached the queue is **lost at the
//! ingress**, work the system said it took and dropped; a key published although every request
//! for it was refused or failed is **published unaccepted** (the caller was told "no", so a
//! retrying client publishes it twice). Request lateness against the schedule shows how far the
//! closed-model load fell behind (coordinated omission made visible).

use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};

use super::latency::{exact_summary as lag_summary, LatencySummary};
use crate::record::{GooseTotals, IngressRecord, RunRecord};

/// The `ingress` object of summary.json (present only for runs with `workload.ingress`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IngressSummary {
    /// Requests the plan had (one per planned message).
    pub planned: u64,
    /// Requests sent.
    pub requests: u64,
    /// Answered 2xx.
    pub accepted: u64,
    /// Answered with another status.
    pub refused: u64,
    /// No answer: refused connection, timeout.
    pub failed: u64,
    /// Messages the ingress published to the queue.
    pub published: u64,
    /// Accepted keys that never reached the queue.
    pub lost: u64,
    /// Keys published although no request for them was accepted.
    pub published_unaccepted: u64,
    /// Messages whose key had been published before.
    pub duplicate_publishes: u64,
    /// Messages without a key at `message_key`.
    pub unkeyed: u64,
    pub users: u32,
    /// Whether requests followed a schedule (`false`: `users` alone).
    pub scheduled: bool,
    /// Planned requests per profile second over the schedule (0 without one).
    pub target_rate_per_s: f64,
    /// Requests sent per profile second, first to last.
    pub achieved_rate_per_s: f64,
    /// How late requests started against their schedule, profile milliseconds.
    pub schedule_lag_ms: LatencySummary,
    /// Goose's own totals of the load (response times are wall milliseconds).
    pub goose: GooseSummary,
}

/// Goose's aggregate, as goose measured it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GooseSummary {
    pub requests: u64,
    pub successes: u64,
    pub failures: u64,
    pub response_ms: GooseResponse,
    /// Answers by HTTP status.
    pub status_codes: BTreeMap<u16, u64>,
    /// Wall seconds the load ran.
    pub duration_s: f64,
    pub users: u64,
}

/// Goose's response times, wall milliseconds (goose's histogram buckets).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GooseResponse {
    pub min: f64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// Rounds to the microsecond of a second (6 decimals) so the bytes are stable.
fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

fn goose_summary(g: &GooseTotals) -> GooseSummary {
    GooseSummary {
        requests: g.requests,
        successes: g.successes,
        failures: g.failures,
        response_ms: GooseResponse {
            min: ms(g.min_us),
            mean: ms(g.mean_us),
            p50: ms(g.p50_us),
            p90: ms(g.p90_us),
            p99: ms(g.p99_us),
            max: ms(g.max_us),
        },
        status_codes: g.status_codes.clone(),
        duration_s: round6(g.duration_s),
        users: g.users,
    }
}

/// The ingress summary of a run, if it had an ingress load.
pub fn account(record: &RunRecord) -> Option<IngressSummary> {
    let r: &IngressRecord = record.ingress.as_ref()?;
    let published: HashSet<std::borrow::Cow<str>> =
        record.messages.iter().map(|m| m.key.as_str()).collect();
    let accepted_keys: HashSet<&str> = r
        .requests
        .iter()
        .filter(|q| q.accepted())
        .map(|q| q.key.as_str())
        .collect();
    let requested: HashSet<&str> = r.requests.iter().map(|q| q.key.as_str()).collect();
    let accepted = r.requests.iter().filter(|q| q.accepted()).count() as u64;
    let failed = r.requests.iter().filter(|q| q.status.is_none()).count() as u64;
    let lost = accepted_keys
        .iter()
        .filter(|k| !published.contains(**k))
        .count() as u64;
    let published_unaccepted = requested
        .iter()
        .filter(|k| published.contains(**k) && !accepted_keys.contains(*k))
        .count() as u64;
    let dues: Vec<u64> = r.requests.iter().filter_map(|q| q.due).collect();
    let target_rate_per_s = match (dues.iter().min(), dues.iter().max()) {
        (Some(&a), Some(&b)) if b > a && r.scheduled => {
            round6((r.planned.saturating_sub(1)) as f64 / ((b - a) as f64 / 1e9))
        }
        _ => 0.0,
    };
    let sent = r.requests.iter().map(|q| q.sent_at);
    let achieved_rate_per_s = match (sent.clone().min(), sent.max()) {
        (Some(a), Some(b)) if b > a => {
            round6((r.requests.len() - 1) as f64 / ((b - a) as f64 / 1e9))
        }
        _ => 0.0,
    };
    let lags = r
        .requests
        .iter()
        .filter_map(|q| q.due.map(|d| q.sent_at.saturating_sub(d)))
        .collect();
    Some(IngressSummary {
        planned: r.planned,
        requests: r.requests.len() as u64,
        accepted,
        refused: r.requests.len() as u64 - accepted - failed,
        failed,
        published: record.messages.len() as u64,
        lost,
        published_unaccepted,
        duplicate_publishes: r.duplicate_publishes,
        unkeyed: r.unkeyed,
        users: r.users,
        scheduled: r.scheduled,
        target_rate_per_s,
        achieved_rate_per_s,
        schedule_lag_ms: lag_summary(lags),
        goose: goose_summary(&r.goose),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{IngressRequest, MessageRecord};

    fn request(key: &str, due: u64, sent: u64, status: Option<u16>) -> IngressRequest {
        IngressRequest {
            key: key.into(),
            due: Some(due),
            sent_at: sent,
            response_us: 1500,
            status,
            error: status.is_none().then(|| "connect: refused".into()),
        }
    }

    fn message(key: &str) -> MessageRecord {
        MessageRecord {
            key: key.into(),
            published_at: 0,
            poison: false,
        }
    }

    const S: u64 = 1_000_000_000;

    #[test]
    fn requests_join_published_messages_by_key() {
        // a: accepted and published. b: accepted, never published (lost at the ingress).
        // c: refused (503) but published anyway. d: no answer, not published.
        let record = RunRecord {
            messages: vec![message("a"), message("c")],
            ingress: Some(IngressRecord {
                requests: vec![
                    request("a", 0, 0, Some(202)),
                    request("b", S, S + S / 2, Some(202)),
                    request("c", 2 * S, 2 * S, Some(503)),
                    request("d", 3 * S, 3 * S, None),
                ],
                planned: 4,
                users: 2,
                scheduled: true,
                duplicate_publishes: 0,
                unkeyed: 0,
                goose: GooseTotals {
                    requests: 3,
                    successes: 2,
                    failures: 1,
                    p50_us: 1500,
                    status_codes: [(202, 2), (503, 1)].into_iter().collect(),
                    ..GooseTotals::default()
                },
            }),
            ..RunRecord::default()
        };
        let s = account(&record).unwrap();
        assert_eq!((s.requests, s.accepted, s.refused, s.failed), (4, 2, 1, 1));
        assert_eq!((s.published, s.lost, s.published_unaccepted), (2, 1, 1));
        assert_eq!(s.target_rate_per_s, 1.0);
        assert_eq!(s.achieved_rate_per_s, 1.0);
        assert_eq!(s.schedule_lag_ms.max, 500.0);
        assert_eq!(s.schedule_lag_ms.p50, 0.0);
        assert_eq!(s.goose.response_ms.p50, 1.5);
        assert_eq!(s.goose.status_codes[&503], 1);
    }

    #[test]
    fn no_ingress_no_summary_and_a_closed_load_has_no_target_rate() {
        assert_eq!(account(&RunRecord::default()), None);
        let mut q = request("a", 0, 0, Some(200));
        q.due = None;
        let record = RunRecord {
            messages: vec![message("a")],
            ingress: Some(IngressRecord {
                requests: vec![q],
                planned: 1,
                users: 1,
                scheduled: false,
                ..IngressRecord::default()
            }),
            ..RunRecord::default()
        };
        let s = account(&record).unwrap();
        assert_eq!((s.target_rate_per_s, s.achieved_rate_per_s), (0.0, 0.0));
        assert_eq!(s.schedule_lag_ms, LatencySummary::default());
        assert_eq!(s.lost, 0);
    }
}
