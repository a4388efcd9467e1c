//! The lease (or heartbeat) recommendation and why.

use std::time::Duration;

use super::{ms_text, Assembly};
use crate::profile::{format_duration as t, LeaseRole};
use crate::sizing::lease::LeaseAdvice;
use crate::sizing::plan::LeaseSection;

/// The lease section; a note in `notes` when too few handlers were measured to see the tail.
pub(super) fn build(a: &Assembly, notes: &mut Vec<String>) -> LeaseSection {
    let now = a.now;
    let rule = a.rule;
    let new_lease = a.lease.advice.lease();
    let tail = Duration::from_micros(a.lease.tail_us);
    let small_sample = (a.lease.handlers as f64) < 1.0 / rule.target_risk;
    let measured = match a.source.kind {
        "file" => "recorded",
        _ => "simulated",
    };
    let reason = match (&a.poll, now.kind.batch.as_ref()) {
        // The interval covers a poll's whole batch: the poll rule sets it.
        (Some(p), Some(batch)) => format!(
            "It must cover a poll's whole batch, not one record: {} (now {}), with {} at {} (see \
             below); a member that dies hands its partitions back after its session timeout, \
             whatever the interval.",
            t(p.interval()),
            t(now.lease),
            batch.words,
            p.records()
        ),
        _ => lease_reason(a, measured, tail),
    };
    if small_sample {
        notes.push(format!(
            "Only {} handlers were measured, fewer than the {} needed to see a 1-in-{} tail: \
             the slowest seen sets the lease; a longer recording (--latency-from) sizes it better.",
            a.lease.handlers,
            (1.0 / rule.target_risk).round(),
            (1.0 / rule.target_risk).round()
        ));
    }
    LeaseSection {
        advice: a.lease.advice,
        tail_ms: a.lease.tail_us as f64 / 1000.0,
        with_margin_s: a.lease.with_margin.as_secs_f64(),
        recovery_time_current_s: now.lease.as_secs_f64(),
        recovery_time_recommended_s: new_lease.as_secs_f64(),
        reason,
    }
}

/// The lease rule's reason: the tail, the margin, and what the lease costs on this kind.
fn lease_reason(a: &Assembly, measured: &str, tail: Duration) -> String {
    let (now, rule) = (a.now, a.rule);
    match a.lease.advice {
        LeaseAdvice::Lease { lease } => format!(
            "Fewer than {} of the {} {measured} handlers outlive {}, so with the {}x margin ({}) \
             the lease is {}, rounded up to a readable value; {}",
            rule.target_risk,
            a.lease.handlers,
            ms_text(tail),
            rule.margin,
            ms_text(a.lease.with_margin),
            t(lease),
            match now.kind.lease.role {
                // A dead consumer's connection closes and RabbitMQ requeues at once: the
                // consumer timeout only ends a holder that is alive but stuck.
                LeaseRole::StuckConsumerGuard => format!(
                    "a consumer that dies hands its {} back at once (its connection closes), so \
                     the price is only how long a stuck but living consumer holds its {}: {} \
                     (now {}).",
                    now.kind.words.message.1,
                    now.kind.words.message.0,
                    t(lease),
                    t(now.lease)
                ),
                // A dead member stops heartbeating: its partitions move after the session
                // timeout; max.poll.interval.ms ends a member that is alive but stuck.
                LeaseRole::PollInterval => format!(
                    "a member that dies hands its partitions back after its session timeout, so \
                     the price is only how long a stuck but living member holds its partitions: \
                     {} (now {}).",
                    t(lease),
                    t(now.lease)
                ),
                LeaseRole::Lease => format!(
                    "the price is recovery time: a worker that dies right after receiving \
                     leaves its message hidden for {} (now {}).",
                    t(lease),
                    t(now.lease)
                ),
            }
        ),
        LeaseAdvice::Heartbeat {
            lease,
            extend_every,
            max_extension,
        } => format!(
            "The tail with its {}x margin ({}) is past the {} bound for a lease, so keep a {} \
             lease (the recovery time) and extend it every {} while the handler works, for at \
             most {} of extra time, past which the handler is presumed wedged and its message \
             goes back to the queue.",
            rule.margin,
            ms_text(a.lease.with_margin),
            t(rule.max_lease),
            t(lease),
            t(extend_every),
            t(max_extension)
        ),
    }
}
