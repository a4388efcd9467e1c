//! `broker.kind: sqs` (alias `embedded`): the SQS model, served by the embedded broker or, with
//! `broker.endpoint`, an external SQS endpoint.

use serde::Deserialize;

use super::keda::KedaScaler;
use super::read::{duration_or, server_url};
use super::spec::{BrokerKind, BrokerSpec, FifoSpec, Observe, QueueName, StaleAck};
use super::{
    Capabilities, Connections, Dlq, KindDescriptor, Lease, LeaseRole, Limit, LimitCounts, Live,
    LiveMessageFaults, ScaledClock, Settle,
};
use crate::profile::defaults;
use crate::profile::duration::format_duration;
use crate::profile::message::Carrier;
use crate::profile::message_action::MessageAction;
use crate::profile::path::FieldPath;
use crate::profile::problem::{read_value, Problem};
use crate::profile::resolve::checks::positive;
use crate::profile::run_variables::QUEUE_URL;
use crate::profile::scalar::DurationText;

pub const KIND: KindDescriptor = KindDescriptor {
    name: "sqs",
    aliases: &["embedded"],
    keys: &[
        "endpoint",
        "visibility_timeout",
        "max_receives",
        "stale_ack",
        "fifo",
        "dedup_window",
    ],
    lease: Lease {
        key: "visibility_timeout",
        words: "visibility timeout",
        role: LeaseRole::Lease,
    },
    limit: Some(Limit {
        key: "max_receives",
        words: "maxReceiveCount",
        counts: LimitCounts::Deliveries,
    }),
    batch: None,
    dlq: Dlq {
        gave_up: "moved to the DLQ",
        row: "",
    },
    can: Capabilities {
        // ChangeMessageVisibility, to a new lease or to the delay.
        extend: true,
        release_with_delay: true,
        settle: Settle::PerMessage,
        reuse_queue: false,
    },
    scaled_clock: ScaledClock::Embedded {
        external: "an external SQS endpoint takes its durations in whole seconds, which \
                   ackbench cannot convert between profile and wall time exactly",
    },
    live: Live::Runs,
    live_message: LiveMessageFaults {
        actions: &[
            MessageAction::DropAck,
            MessageAction::DelayAck,
            MessageAction::DropDelivery,
        ],
        why_not: "the embedded endpoint answers a ReceiveMessage with all its messages at once: \
                  holding one back would hold the others with it",
        external: Some(
            "ackbench applies message faults in its embedded SQS endpoint; an external one \
             takes the workers' calls itself",
        ),
    },
    connections: Connections::Embedded {
        external: "the observing proxy in front of an endpoint of your own (broker.endpoint) \
                   reads whole HTTP requests and answers: it has no worker connection to cut, \
                   delay or hold; on the embedded broker (no broker.endpoint) it runs",
    },
    carrier: Carrier::Sqs,
    queue_by_framework: None,
    run_variables: &[QUEUE_URL],
    words: super::words::QUEUE,
    keda: Some(KedaScaler {
        scaler: "aws-sqs-queue",
        target: "queueLength",
        activation: "activationQueueLength",
        ready: Some(&[("scaleOnInFlight", "false")]),
        ready_and_in_flight: Some(&[("scaleOnInFlight", "true")]),
        placeholders: &[
            ("queueURL", "<the queue's URL>"),
            ("awsRegion", "<the queue's region>"),
        ],
        not_live: None,
    }),
    resolve,
};

/// `broker.stale_ack`'s value as run.json writes it.
pub fn stale_ack_name(s: StaleAck) -> &'static str {
    match s {
        StaleAck::Reject => "reject",
        StaleAck::Delete => "delete",
        StaleAck::Ignore => "ignore",
        StaleAck::Sqs => "sqs",
    }
}

/// The keys of a SQS queue under `broker`, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSqs {
    endpoint: Option<String>,
    visibility_timeout: Option<DurationText>,
    max_receives: Option<u32>,
    stale_ack: Option<StaleAckName>,
    fifo: Option<bool>,
    dedup_window: Option<DurationText>,
}

/// `broker.stale_ack`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum StaleAckName {
    Reject,
    Delete,
    Ignore,
    Sqs,
}

fn resolve(own: &yaml_serde::Value, path: &FieldPath) -> Result<BrokerSpec, Problem> {
    let raw: RawSqs = read_value(own, path)?;
    let vt_path = path.key("visibility_timeout");
    let lease = positive(
        duration_or(raw.visibility_timeout, defaults::VISIBILITY_TIMEOUT),
        &vt_path,
    )?;
    if lease > defaults::MAX_VISIBILITY_TIMEOUT {
        return Err(Problem::new(
            vt_path,
            format!(
                "must be at most 12h (SQS's maximum), got {}",
                format_duration(lease)
            ),
        ));
    }
    let url = match raw.endpoint {
        None => None,
        Some(u) => Some(server_url(&u, &["http", "https"], &path.key("endpoint"))?),
    };
    let fifo = fifo(raw.fifo, raw.dedup_window, path)?;
    Ok(BrokerSpec {
        observe: Observe::Proxy,
        queue: QueueName::default(),
        kind: BrokerKind::Sqs,
        url,
        lease,
        max_deliveries: raw.max_receives.unwrap_or(0),
        stale_ack: match raw.stale_ack {
            None | Some(StaleAckName::Reject) => StaleAck::Reject,
            Some(StaleAckName::Delete) => StaleAck::Delete,
            Some(StaleAckName::Ignore) => StaleAck::Ignore,
            Some(StaleAckName::Sqs) => StaleAck::Sqs,
        },
        fifo,
    })
}

/// `fifo` and `dedup_window`: a deduplication window belongs to a FIFO queue only (a standard
/// queue deduplicates nothing).
fn fifo(
    fifo: Option<bool>,
    window: Option<crate::profile::scalar::DurationText>,
    path: &FieldPath,
) -> Result<Option<FifoSpec>, Problem> {
    match (fifo.unwrap_or(false), window) {
        (false, Some(_)) => Err(Problem::at_key(
            path.key("dedup_window"),
            "a deduplication window belongs to a FIFO queue: set fifo: true (a standard queue \
             deduplicates nothing)",
        )),
        (false, None) => Ok(None),
        (true, window) => Ok(Some(FifoSpec {
            dedup_window: positive(
                duration_or(window, defaults::DEDUP_WINDOW),
                &path.key("dedup_window"),
            )?,
        })),
    }
}
