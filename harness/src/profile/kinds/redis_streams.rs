//! `broker.kind: redis-streams`: a Redis stream, its consumer group, and the claim rule of its
//! consumers (min idle time, a periodic claimer, a delivery limit moving entries to a dead
//! stream).

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
use crate::profile::resolve::checks::positive;
use crate::profile::run_variables::{
    CLAIM_EVERY_MS, CONSUMER, DEAD_STREAM, GROUP, MAX_DELIVERIES, MIN_IDLE_MS, REDIS_URL,
    RUN_START_MS, STREAM,
};
use crate::profile::scalar::DurationText;

pub const KIND: KindDescriptor = KindDescriptor {
    name: "redis-streams",
    aliases: &[],
    keys: &["url", "min_idle", "claim_every", "max_deliveries"],
    lease: Lease {
        key: "min_idle",
        words: "min idle",
        role: LeaseRole::Lease,
    },
    limit: Some(Limit {
        key: "max_deliveries",
        words: "max deliveries",
        counts: LimitCounts::Deliveries,
    }),
    batch: None,
    dlq: Dlq {
        gave_up: "moved to the dead stream by the consumer's delivery rule",
        row: "dead stream, ",
    },
    can: Capabilities {
        // The owner resets the entry's idle time (XCLAIM to itself, JUSTID).
        extend: true,
        // The owner makes the entry claimable after the delay (XCLAIM ... IDLE, JUSTID).
        release_with_delay: true,
        settle: Settle::PerMessage,
        reuse_queue: false,
    },
    scaled_clock: ScaledClock::Proxy {
        server: "the Redis server",
        converts: "RESP proxy converts the durations a consumer sends",
    },
    live: Live::Runs,
    // The RESP proxy keeps an XACK from the server or sends it later, answering the worker in
    // the server's place in the reply order, and takes a dropped entry out of its reply
    // (runner/live/kinds/redis_streams/ack_faults.rs, delivery_faults.rs).
    live_message: LiveMessageFaults {
        actions: &[
            MessageAction::DropAck,
            MessageAction::DelayAck,
            MessageAction::DropDelivery,
        ],
        why_not: "ackbench's Redis proxy cannot hold an entry back: it comes in the reply to a \
                  read or a claim, and holding that reply would hold every reply after it on the \
                  connection",
        external: None,
    },
    connections: Connections::Seen,
    carrier: Carrier::StreamEntry,
    queue_by_framework: None,
    run_variables: &[
        REDIS_URL,
        STREAM,
        DEAD_STREAM,
        GROUP,
        CONSUMER,
        MIN_IDLE_MS,
        CLAIM_EVERY_MS,
        MAX_DELIVERIES,
        RUN_START_MS,
    ],
    words: super::words::QUEUE,
    // Scaled on `lagCount`: the entries never delivered to the group; its other factors read
    // the pending entries list alone or the stream's length, neither of them ready + in flight.
    keda: Some(KedaScaler {
        scaler: "redis-streams",
        target: "lagCount",
        activation: "activationLagCount",
        ready: Some(&[]),
        ready_and_in_flight: None,
        placeholders: &[
            ("address", "<host:6379>"),
            ("stream", "<the stream>"),
            ("consumerGroup", "<the group>"),
        ],
        not_live: Some(
            "a live Redis Streams run cannot read its group's lag and pending entries while it runs yet",
        ),
    }),
    resolve,
};

#[derive(Debug, Clone, PartialEq)]
pub struct RedisStreamsSpec {
    /// Zero: an idle consumer claims at the instant an entry reaches `min_idle`; else a
    /// periodic claimer with this period.
    pub claim_every: Duration,
}

/// The keys of a Redis stream and group under `broker`, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRedisStreams {
    url: Option<String>,
    min_idle: Option<DurationText>,
    claim_every: Option<DurationText>,
    max_deliveries: Option<u32>,
}

fn resolve(own: &yaml_serde::Value, path: &FieldPath) -> Result<BrokerSpec, Problem> {
    let raw: RawRedisStreams = read_value(own, path)?;
    let min_idle = positive(
        duration_or(raw.min_idle, defaults::REDIS_MIN_IDLE),
        &path.key("min_idle"),
    )?;
    let url = kind_url(raw.url, defaults::REDIS_URL, &["redis", "rediss"], path)?;
    Ok(BrokerSpec {
        observe: Observe::Proxy,
        queue: QueueName::default(),
        url,
        kind: BrokerKind::RedisStreams(RedisStreamsSpec {
            claim_every: duration_or(raw.claim_every, Duration::ZERO),
        }),
        lease: min_idle,
        max_deliveries: raw.max_deliveries.unwrap_or(0),
        stale_ack: StaleAck::Reject,
        fifo: None,
    })
}
