//! `broker.kind: nats`: a NATS JetStream stream and its durable pull consumer (AckWait,
//! MaxDeliver, BackOff, MaxAckPending).

use std::time::Duration;

use serde::Deserialize;

use super::keda::KedaScaler;
use super::read::{duration_or, kind_url};
use super::spec::{BrokerKind, BrokerSpec, Observe, QueueName, StaleAck};
use super::{
    Capabilities, Connections, Dlq, KindDescriptor, Lease, LeaseRole, Limit, LimitCounts, Live,
    LiveMessageFaults, ScaledClock, Settle,
};
use crate::profile::defaults;
use crate::profile::message::Carrier;
use crate::profile::message_action::MessageAction;
use crate::profile::path::FieldPath;
use crate::profile::problem::{read_value, Problem};
use crate::profile::resolve::checks::{at_least_one, positive};
use crate::profile::run_variables::{CONSUMER, NATS_URL, STREAM, SUBJECT};
use crate::profile::scalar::DurationText;

pub const KIND: KindDescriptor = KindDescriptor {
    name: "nats",
    aliases: &[],
    keys: &[
        "url",
        "ack_wait",
        "max_deliver",
        "backoff",
        "max_ack_pending",
    ],
    lease: Lease {
        key: "ack_wait",
        words: "AckWait",
        role: LeaseRole::Lease,
    },
    limit: Some(Limit {
        key: "max_deliver",
        words: "MaxDeliver",
        counts: LimitCounts::Deliveries,
    }),
    batch: None,
    dlq: Dlq {
        gave_up: "stop being delivered (MaxDeliver reached: it stays in the stream)",
        row: "MaxDeliver reached, ",
    },
    can: Capabilities {
        // In progress (`+WPI`): a full AckWait again.
        extend: true,
        // A nak with a delay.
        release_with_delay: true,
        settle: Settle::PerMessage,
        reuse_queue: false,
    },
    scaled_clock: ScaledClock::Proxy {
        server: "the NATS server",
        converts: "proxy converts the durations a consumer sends (pull expiries, NAK delays, \
                   AckWait) between profile and wall time",
    },
    live: Live::Runs,
    // The NATS proxy keeps an ack publish from the server or passes it on later (a double
    // ack answered for it), and drops a delivery (its pull request ended with a 408) or holds
    // it back.
    live_message: LiveMessageFaults {
        actions: &MessageAction::ALL,
        why_not: "",
        external: None,
    },
    connections: Connections::Seen,
    carrier: Carrier::Nats,
    queue_by_framework: None,
    run_variables: &[NATS_URL, STREAM, CONSUMER, SUBJECT],
    words: super::words::QUEUE,
    // The scaler reads the consumer's num_pending + num_ack_pending.
    keda: Some(KedaScaler {
        scaler: "nats-jetstream",
        target: "lagThreshold",
        activation: "activationLagThreshold",
        ready: None,
        ready_and_in_flight: Some(&[]),
        placeholders: &[
            ("natsServerMonitoringEndpoint", "<host:8222>"),
            ("account", "$G"),
            ("stream", "<the stream>"),
            ("consumer", "<the durable consumer>"),
        ],
        not_live: Some("a live NATS run cannot read its consumer's num_pending while it runs yet"),
    }),
    resolve,
};

#[derive(Debug, Clone, PartialEq)]
pub struct NatsSpec {
    /// AckWait per delivery (the last value repeats); empty = `ack_wait` for every delivery.
    pub backoff: Vec<Duration>,
    pub max_ack_pending: u32,
}

/// The keys of a JetStream stream and consumer under `broker`, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNats {
    url: Option<String>,
    ack_wait: Option<DurationText>,
    max_deliver: Option<u32>,
    backoff: Option<Vec<DurationText>>,
    max_ack_pending: Option<u32>,
}

fn resolve(own: &yaml_serde::Value, path: &FieldPath) -> Result<BrokerSpec, Problem> {
    let raw: RawNats = read_value(own, path)?;
    let ack_wait = positive(
        duration_or(raw.ack_wait, defaults::NATS_ACK_WAIT),
        &path.key("ack_wait"),
    )?;
    let backoff_path = path.key("backoff");
    let mut backoff = Vec::new();
    for (i, d) in raw.backoff.unwrap_or_default().into_iter().enumerate() {
        backoff.push(positive(d.0, &backoff_path.index(i))?);
    }
    let max_deliver = raw.max_deliver.unwrap_or(0);
    if max_deliver > 0 && !backoff.is_empty() && max_deliver as usize <= backoff.len() {
        return Err(Problem::new(
            path.key("max_deliver"),
            format!(
                "must be more than the number of backoff values ({}), as the server requires, \
                 got {max_deliver}",
                backoff.len()
            ),
        ));
    }
    let max_ack_pending = at_least_one(
        raw.max_ack_pending
            .unwrap_or(defaults::NATS_MAX_ACK_PENDING),
        &path.key("max_ack_pending"),
        "a consumer allowed no pending ack gets nothing",
    )?;
    let url = kind_url(raw.url, defaults::NATS_URL, &["nats", "tls"], path)?;
    Ok(BrokerSpec {
        observe: Observe::Proxy,
        queue: QueueName::default(),
        url,
        // With a backoff the server takes its first value as the AckWait.
        lease: backoff.first().copied().unwrap_or(ack_wait),
        kind: BrokerKind::Nats(NatsSpec {
            backoff,
            max_ack_pending,
        }),
        max_deliveries: max_deliver,
        stale_ack: StaleAck::Reject,
        fifo: None,
    })
}
