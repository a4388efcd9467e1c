//! Consistency checks between settings: each a pure function of [`Settings`], each saying in
//! one sentence what holds or what breaks.
//!
//! 1. [`client_timeout_below_lease`]: a provider call must give up before its lease ends, or a
//!    slow or hung call outlives the lease and the message is handed to someone else.
//! 2. [`dedup_window_outlives_retries`]: a deduplication window must outlive the retry deadline,
//!    or the last tries are not recognised as repeats. With a retrying producer
//!    (`workload.producer`) the tries are its sends, and the window a FIFO queue's: an attempt
//!    that goes out after the window ended is a second message (the check names the first such
//!    attempt). Otherwise the tries are the consumer's deliveries (backoff delays plus a lease
//!    per delivery up to the limit) against a window in front of the consumer. A claim window
//!    is not such a window: a stamped claim never expires, and the window is how long an
//!    unstamped claim counts as in flight (checks 3, 4).
//! 3. [`claim_window_outlives_provider`]: a claim window must outlive the longest a first
//!    attempt stays in flight (the provider's worst latency, per try, plus backoff), or a
//!    second delivery sends again while the first call is still running.
//! 4. [`limit_leaves_a_spare`]: the delivery limit must leave at least one delivery after the
//!    target's slowest recovery path: "no room for one more try" is a finding.
//! 5. [`dlq_is_watched`]: with a delivery limit there is a DLQ, and a DLQ nobody watches is a
//!    silent loss: a budget (`budgets.dlq` or `budgets.dlq_with_effect`) must watch it.
//! 6. On a consumer group only, [`super::partitions::check`]: the workers must not outnumber
//!    the partitions, or the members past them sit idle.

use std::time::Duration;

use serde::Serialize;

use super::limit::{recovery_path, spare, RecoveryPath};
use super::settings::Settings;
use crate::profile::{format_duration, LeaseRole, RetrySpec};

/// The outcome of a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Status {
    #[serde(rename = "pass")]
    Pass,
    #[serde(rename = "fail")]
    Fail,
    /// The check does not apply to these settings (e.g. no claim window).
    #[serde(rename = "n/a")]
    NotApplicable,
}

/// One check's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// A stable name (sizing.json).
    pub name: &'static str,
    pub status: Status,
    /// Why, in one sentence.
    pub detail: String,
}

fn check(name: &'static str, pass: bool, detail: String) -> Check {
    let status = if pass { Status::Pass } else { Status::Fail };
    Check {
        name,
        status,
        detail,
    }
}

fn not_applicable(name: &'static str, detail: impl Into<String>) -> Check {
    Check {
        name,
        status: Status::NotApplicable,
        detail: detail.into(),
    }
}

/// A duration as a profile writes it, to the millisecond.
fn t(d: Duration) -> String {
    format_duration(Duration::from_millis(
        u64::try_from(d.as_millis()).unwrap_or(u64::MAX),
    ))
}

/// Every check, in order.
pub fn all(s: &Settings) -> Vec<Check> {
    let path = recovery_path(
        &s.target,
        s.lease,
        s.claim_window,
        s.kind.words.sizing.lease,
    );
    let mut all = vec![
        client_timeout_below_lease(s),
        dedup_window_outlives_retries(s),
        claim_window_outlives_provider(s),
        limit_leaves_a_spare(s, &path),
        dlq_is_watched(s),
    ];
    // A consumer group's workers against its partitions ([`super::partitions`]).
    all.extend(super::partitions::check(s.partitions, s.workers));
    all
}

/// Check 1: the target's client timeout on the provider call is below the lease.
pub fn client_timeout_below_lease(s: &Settings) -> Check {
    const NAME: &str = "client_timeout_below_lease";
    if !s.calls_provider() {
        return not_applicable(NAME, format!("{} makes no provider call", s.target));
    }
    match s.http_timeout {
        // A poll interval bounds a member, not a message: a hung call keeps the member from
        // its next poll.
        None if s.kind.lease.role == LeaseRole::PollInterval => check(
            NAME,
            false,
            format!(
                "no client timeout (consumer.options.http_timeout): a call that hangs keeps its \
                 member from polling past the {} {}, and the member is removed from the group \
                 and its {} fetched again while the call still runs",
                t(s.lease),
                s.kind.lease.words,
                s.kind.words.message.1
            ),
        ),
        None => check(
            NAME,
            false,
            format!(
                "no client timeout (consumer.options.http_timeout): a call that hangs holds its \
                 {} past the {} {}, and it is delivered again while the call still runs",
                s.kind.words.message.0,
                t(s.lease),
                s.kind.words.sizing.lease
            ),
        ),
        Some(timeout) if timeout < s.lease => check(
            NAME,
            true,
            format!(
                "the {} client timeout ends a call before the {} {}",
                t(timeout),
                t(s.lease),
                s.kind.words.sizing.lease
            ),
        ),
        Some(timeout) => check(
            NAME,
            false,
            format!(
                "the {} client timeout is not below the {} {lease}: a call can outlive its {lease}",
                t(timeout),
                t(s.lease),
                lease = s.kind.words.sizing.lease
            ),
        ),
    }
}

/// The sum of the backoff delays between tries inside one handler (no jitter: the longest).
pub fn backoff_total(retry: Option<&RetrySpec>) -> Duration {
    retry.map_or(Duration::ZERO, |r| {
        (1..r.max_attempts).map(|n| r.delay(n, 0.0)).sum()
    })
}

/// How long the broker may keep handing out one message: the backoff delays plus a lease per
/// delivery up to the limit; `None` without a limit.
pub fn retry_deadline(s: &Settings) -> Option<Duration> {
    (s.limit > 0).then(|| backoff_total(s.retry.as_ref()) + s.lease * s.limit)
}

/// Check 2: a deduplication window outlives the retry deadline.
pub fn dedup_window_outlives_retries(s: &Settings) -> Check {
    const NAME: &str = "dedup_window_outlives_retries";
    if let Some(attempts) = &s.producer_attempts {
        return producer_inside_window(NAME, attempts, s.dedup_window);
    }
    let Some(window) = s.dedup_window else {
        return not_applicable(
            NAME,
            "no deduplication window in front of the consumer (--dedup-window); a claim window \
             is checked by claim_window_outlives_provider and limit_leaves_a_spare",
        );
    };
    match retry_deadline(s) {
        None => check(
            NAME,
            false,
            format!(
                "no delivery limit: a message can be delivered again long after the {} \
                 deduplication window forgot it",
                t(window)
            ),
        ),
        Some(deadline) => check(
            NAME,
            window > deadline,
            format!(
                "the {} deduplication window {} the retry deadline of {} (backoff {} + {} \
                 deliveries x {} lease)",
                t(window),
                if window > deadline {
                    "outlives"
                } else {
                    "does not outlive"
                },
                t(deadline),
                t(backoff_total(s.retry.as_ref())),
                s.limit,
                t(s.lease)
            ),
        ),
    }
}

/// The producer's attempts at one message (offsets from its first send) against the window that
/// drops its repeats: the window counts from the first accepted send, so attempt n is dropped
/// while its offset is below the window; the first attempt at or past it is accepted as a second
/// message.
fn producer_inside_window(
    name: &'static str,
    attempts: &[Duration],
    window: Option<Duration>,
) -> Check {
    let last = attempts.len();
    let last_at = attempts.last().copied().unwrap_or_default();
    let delays: Vec<String> = attempts.windows(2).map(|w| t(w[1] - w[0])).collect();
    let schedule = if delays.is_empty() {
        String::new()
    } else {
        format!(": backoff {}", delays.join(" + "))
    };
    let Some(window) = window else {
        return check(
            name,
            last <= 1,
            format!(
                "no deduplication window (a standard queue; broker.fifo or --dedup-window): each \
                 of the producer's {last} attempts{schedule} that reaches the broker is a message \
                 of its own"
            ),
        );
    };
    match attempts.iter().position(|&at| at >= window) {
        Some(i) => check(
            name,
            false,
            format!(
                "attempt {} of the producer (at {}{schedule}) falls outside the {} \
                 deduplication window: the broker accepts it as a second message",
                i + 1,
                t(attempts[i]),
                t(window)
            ),
        ),
        None => check(
            name,
            true,
            format!(
                "every attempt of the producer falls inside the {} deduplication window (the \
                 last, attempt {last}, at {}{schedule}): the broker drops each retry",
                t(window),
                t(last_at)
            ),
        ),
    }
}

/// The longest one attempt stays in flight: per try the provider's worst latency (or the client
/// timeout, if shorter), times the tries, plus the backoff between them; `None` when a call can
/// hang with no client timeout.
pub fn in_flight_bound(s: &Settings) -> Option<Duration> {
    let per_try = match (s.worst_call, s.http_timeout) {
        (Some(w), Some(t)) => w.min(t),
        (Some(w), None) => w,
        (None, Some(t)) => t,
        (None, None) => return None,
    };
    let tries = s.retry.as_ref().map_or(1, |r| r.max_attempts.max(1));
    Some(per_try * tries + backoff_total(s.retry.as_ref()))
}

/// Check 3: a claim window is longer than the provider's worst latency (per attempt, retries
/// included).
pub fn claim_window_outlives_provider(s: &Settings) -> Check {
    const NAME: &str = "claim_window_outlives_provider";
    let Some(window) = s.claim_window else {
        return not_applicable(NAME, format!("{} has no claim window", s.target));
    };
    match in_flight_bound(s) {
        None => check(
            NAME,
            false,
            format!(
                "a provider call can hang with no client timeout: after the {} window a \
                 redelivery sends again while the first call may still be running",
                t(window)
            ),
        ),
        Some(bound) => check(
            NAME,
            window > bound,
            format!(
                "the {} claim window {} the longest a first attempt stays in flight ({}: the \
                 provider's worst call per try, plus backoff)",
                t(window),
                if window > bound {
                    "outlives"
                } else {
                    "does not outlive"
                },
                t(bound)
            ),
        ),
    }
}

/// Check 4: the delivery limit leaves at least one delivery after the slowest recovery path.
pub fn limit_leaves_a_spare(s: &Settings, path: &RecoveryPath) -> Check {
    const NAME: &str = "limit_leaves_a_spare";
    match spare(s.limit, path) {
        None => not_applicable(
            NAME,
            "no delivery limit: every recovery path fits (and so does a poison message, forever)",
        ),
        Some(n) if n >= 1 => check(
            NAME,
            true,
            format!(
                "a limit of {} leaves {n} spare {} after the slowest recovery path ({} \
                 deliveries: {})",
                s.limit,
                if n == 1 { "delivery" } else { "deliveries" },
                path.deliveries,
                path.description
            ),
        ),
        Some(n) => check(
            NAME,
            false,
            format!(
                "no room for one more try: a limit of {} leaves {} after the slowest recovery \
                 path ({} deliveries: {})",
                s.limit,
                if n == 0 {
                    "no spare delivery".to_string()
                } else {
                    format!("{} deliveries too few", -n)
                },
                path.deliveries,
                path.description
            ),
        ),
    }
}

/// Check 5: a DLQ budget (or alarm) watches the DLQ.
pub fn dlq_is_watched(s: &Settings) -> Check {
    const NAME: &str = "dlq_is_watched";
    if s.limit == 0 {
        return not_applicable(NAME, "no delivery limit, so no DLQ to watch");
    }
    check(
        NAME,
        s.dlq_alarm,
        if s.dlq_alarm {
            "a DLQ budget watches the DLQ (budgets.dlq or budgets.dlq_with_effect)".into()
        } else {
            "no DLQ budget or alarm (budgets.dlq, budgets.dlq_with_effect): a DLQ nobody watches \
             is a silent loss"
                .into()
        },
    )
}

#[cfg(test)]
mod tests;
