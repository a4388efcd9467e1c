//! `broker.kind: rabbitmq`: a RabbitMQ queue (quorum or classic), its consumer timeout and
//! delivery limit.

use std::time::Duration;

use serde::Deserialize;

use super::keda::KedaScaler;
use super::read::{duration_or, kind_url};
use super::spec::{BrokerKind, BrokerSpec, Observe, QueueName, StaleAck};
use super::{
    Capabilities, Connections, Dlq, KindDescriptor, Lease, LeaseRole, Limit, LimitCounts, Live,
    LiveMessageFaults, QueueByFramework, ScaledClock, Settle,
};
use crate::profile::defaults;
use crate::profile::message::{Carrier, Node};
use crate::profile::message_action::MessageAction;
use crate::profile::path::FieldPath;
use crate::profile::problem::{read_value, Problem};
use crate::profile::resolve::checks::{at_least_one, positive};
use crate::profile::run_variables::{AMQP_URL, QUEUE};
use crate::profile::scalar::DurationText;

pub const KIND: KindDescriptor = KindDescriptor {
    name: "rabbitmq",
    aliases: &[],
    keys: &[
        "url",
        "queue_type",
        "consumer_timeout",
        "timeout_check_every",
        "delivery_limit",
        "prefetch",
        "dead_letter",
        "heartbeat",
        "arguments",
    ],
    lease: Lease {
        key: "consumer_timeout",
        words: "consumer timeout",
        role: LeaseRole::StuckConsumerGuard,
    },
    limit: Some(Limit {
        key: "delivery_limit",
        words: "delivery limit",
        // The (L+1)-th return dead-letters: L + 1 deliveries.
        counts: LimitCounts::Returns,
    }),
    batch: None,
    dlq: Dlq {
        gave_up: "dead-lettered through the DLX",
        row: "dead-lettered via the DLX, ",
    },
    can: Capabilities {
        // Nothing extends the consumer timeout.
        extend: false,
        // A nack requeues at once; a delay is the retry-queue idiom (a TTL queue).
        release_with_delay: false,
        settle: Settle::PerMessage,
        reuse_queue: true,
    },
    scaled_clock: ScaledClock::Proxy {
        server: "RabbitMQ",
        converts: "AMQP proxy converts the durations a consumer sends (its heartbeat, TTLs)",
    },
    live: Live::Runs,
    // The AMQP proxy keeps a basic.ack from the server or passes it on later (basic.ack has no
    // reply), and drops or holds a basic.deliver whole (method, header, body frames).
    live_message: LiveMessageFaults {
        actions: &MessageAction::ALL,
        why_not: "",
        external: None,
    },
    connections: Connections::Seen,
    carrier: Carrier::Amqp,
    queue_by_framework: Some(QueueByFramework {
        keys: &["queue_type", "dead_letter", "arguments"],
        declare: declare_as_framework,
    }),
    run_variables: &[AMQP_URL, QUEUE],
    words: super::words::QUEUE,
    // Over AMQP the scaler reads the queue's ready messages; over the management API its
    // `messages`, unacknowledged ones included.
    keda: Some(KedaScaler {
        scaler: "rabbitmq",
        target: "value",
        activation: "activationValue",
        ready: Some(&[("protocol", "amqp"), ("mode", "QueueLength")]),
        ready_and_in_flight: Some(&[("protocol", "http"), ("mode", "QueueLength")]),
        placeholders: &[
            ("host", "<amqp:// or http:// address of the broker>"),
            ("queueName", "<the queue>"),
        ],
        not_live: None,
    }),
    resolve,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RabbitQueueType {
    Quorum,
    Classic,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RabbitMqSpec {
    pub queue_type: RabbitQueueType,
    /// The channel tick on which the consumer timeout is checked.
    pub timeout_check_every: Duration,
    /// Unacked deliveries one consumer may hold.
    pub prefetch: u32,
    /// Dead messages go to a dead-letter queue through a DLX; without one they are dropped.
    pub dead_letter: bool,
    /// The connection's heartbeat timeout: a connection silent this long is closed by the
    /// server, its unacked deliveries requeued (a sim run's partition reads it).
    pub heartbeat: Duration,
    /// More queue arguments (`broker.arguments`, or a framework's): values may use `{queue}`.
    pub arguments: Vec<(String, crate::profile::message::Node)>,
}

/// The keys of a RabbitMQ queue under `broker`, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRabbitMq {
    url: Option<String>,
    queue_type: Option<QueueTypeName>,
    consumer_timeout: Option<DurationText>,
    timeout_check_every: Option<DurationText>,
    delivery_limit: Option<u32>,
    prefetch: Option<u32>,
    dead_letter: Option<bool>,
    heartbeat: Option<DurationText>,
    arguments: Option<yaml_serde::Mapping>,
}

/// `broker.queue_type`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum QueueTypeName {
    Quorum,
    Classic,
}

fn resolve(own: &yaml_serde::Value, path: &FieldPath) -> Result<BrokerSpec, Problem> {
    let mut raw: RawRabbitMq = read_value(own, path)?;
    let queue_type = match raw.queue_type {
        None | Some(QueueTypeName::Quorum) => RabbitQueueType::Quorum,
        Some(QueueTypeName::Classic) => RabbitQueueType::Classic,
    };
    let consumer_timeout = positive(
        duration_or(raw.consumer_timeout, defaults::RABBITMQ_CONSUMER_TIMEOUT),
        &path.key("consumer_timeout"),
    )?;
    let timeout_check_every = positive(
        duration_or(
            raw.timeout_check_every,
            defaults::RABBITMQ_TIMEOUT_CHECK_EVERY,
        ),
        &path.key("timeout_check_every"),
    )?;
    let delivery_limit =
        match (queue_type, raw.delivery_limit) {
            (RabbitQueueType::Classic, Some(_)) => return Err(Problem::at_key(
                path.key("delivery_limit"),
                "a classic queue has no delivery limit: delivery_limit needs queue_type: quorum",
            )),
            (RabbitQueueType::Classic, None) => 0,
            (RabbitQueueType::Quorum, l) => l.unwrap_or(defaults::RABBITMQ_DELIVERY_LIMIT),
        };
    let prefetch = at_least_one(
        raw.prefetch.unwrap_or(1),
        &path.key("prefetch"),
        "a consumer with no prefetch gets nothing",
    )?;
    let url = kind_url(raw.url, defaults::RABBITMQ_URL, &["amqp", "amqps"], path)?;
    Ok(BrokerSpec {
        observe: Observe::Proxy,
        queue: QueueName::default(),
        url,
        kind: BrokerKind::RabbitMq(RabbitMqSpec {
            queue_type,
            timeout_check_every,
            prefetch,
            dead_letter: raw.dead_letter.unwrap_or(true),
            heartbeat: positive(
                duration_or(raw.heartbeat, defaults::RABBITMQ_HEARTBEAT),
                &path.key("heartbeat"),
            )?,
            arguments: match raw.arguments.take() {
                Some(m) => arguments(m, &path.key("arguments"))?,
                None => Vec::new(),
            },
        }),
        lease: consumer_timeout,
        // The (L+1)-th return dead-letters: L + 1 deliveries.
        max_deliveries: if delivery_limit == 0 {
            0
        } else {
            delivery_limit.saturating_add(1)
        },
        stale_ack: StaleAck::Reject,
        fifo: None,
    })
}

/// A framework that declares its RabbitMQ queue itself: the run declares it the same way (a
/// classic queue, the framework's arguments, no dead-letter exchange of the run's, so no
/// delivery limit).
fn declare_as_framework(broker: &mut BrokerSpec, arguments: &[(String, Node)]) {
    let BrokerKind::RabbitMq(r) = &mut broker.kind else {
        return;
    };
    r.queue_type = RabbitQueueType::Classic;
    r.dead_letter = false;
    r.arguments = arguments.to_vec();
    broker.max_deliveries = 0;
}

/// `arguments`: queue arguments by name, each text (`{queue}` allowed), a number or a boolean.
fn arguments(map: yaml_serde::Mapping, path: &FieldPath) -> Result<Vec<(String, Node)>, Problem> {
    let mut out = Vec::new();
    for (k, v) in map {
        let Some(name) = k.as_str().map(str::to_string) else {
            return Err(Problem::at_key(
                path.clone(),
                "argument names are text, e.g. x-max-priority",
            ));
        };
        let at = path.key(&name);
        let node = crate::profile::resolve::node::node(v, &at)?;
        if matches!(
            node,
            Node::List(_) | Node::Map(_) | Node::Json(_) | Node::Base64(_)
        ) {
            return Err(Problem::new(
                at,
                "a queue argument is text, a number or a boolean",
            ));
        }
        out.push((name, node));
    }
    Ok(out)
}
