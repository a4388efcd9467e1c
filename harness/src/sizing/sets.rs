//! The recommendation as `--set` overrides: `ackbench run PROFILE --set ...` runs it, and the
//! after-run of `ackbench size` is the profile with them.

use super::lease::{LeaseAdvice, SQS_MAX_LEASE};
use super::partitions::size_partitions;
use super::poll::PollSizing;
use super::settings::Settings;
use crate::profile::format_duration;

/// The recommendation as `--set` overrides.
pub fn recommendation_sets(
    now: &Settings,
    advice: &LeaseAdvice,
    poll: Option<&PollSizing>,
    limit: u32,
    workers: u32,
    notes: &mut Vec<String>,
) -> Vec<String> {
    let t = format_duration;
    let key = now.lease_key;
    let mut sets = Vec::new();
    if let Some(every) = now.check_every {
        notes.push(format!(
            "RabbitMQ checks the consumer timeout every {} (timeout_check_every): a delivery \
             times out at the first check after it, so a hung handler holds its message for up \
             to consumer_timeout + {}; a consumer that dies gives its message back at once",
            t(every),
            t(every)
        ));
    }
    match *advice {
        LeaseAdvice::Lease { lease } => {
            if lease != now.lease {
                let lease = t(lease);
                sets.push(format!("broker.{key}={lease}"));
            }
        }
        LeaseAdvice::Heartbeat {
            lease,
            extend_every,
            max_extension,
        } => {
            if matches!(now.target.as_str(), "ack-after-work" | "heartbeat") {
                if lease != now.lease {
                    let lease = t(lease);
                    sets.push(format!("broker.{key}={lease}"));
                }
                if now.target != "heartbeat" {
                    sets.push("consumer.target=heartbeat".into());
                }
                sets.push(format!("consumer.options.extend_every={}", t(extend_every)));
                sets.push(format!(
                    "consumer.options.max_extension={}",
                    t(max_extension)
                ));
            } else {
                let lease = max_extension.min(SQS_MAX_LEASE);
                notes.push(format!(
                    "{} cannot extend its lease, so the after-run checks a plain {} lease \
                     instead of the heartbeat",
                    now.target,
                    t(lease)
                ));
                sets.push(format!("broker.{key}={}", t(lease)));
            }
        }
    }
    if let (Some(p), Some(batch)) = (poll, &now.kind.batch) {
        if Some(p.records()) != now.batch {
            sets.push(format!("broker.{}={}", batch.key, p.records()));
        }
    }
    if let Some(limit_key) = now.limit_key {
        if limit != now.limit {
            sets.push(format!("broker.{limit_key}={}", now.limit_value(limit)));
        }
    }
    if workers != now.workers {
        sets.push(format!("consumer.workers={workers}"));
    }
    // A consumer group keeps at most one member per partition busy.
    if let Some(p) = size_partitions(now.partitions, now.workers, workers) {
        if p.recommended != p.current {
            sets.push(format!("broker.partitions={}", p.recommended));
        }
    }
    sets
}
