//! The one place a profile's `broker` section becomes a running broker's configuration, shared
//! by sim runs (the model of the profile's kind) and live runs (the embedded SQS broker served
//! over the SQS API, its timers in wall time), and the built-in target's options that depend on
//! the broker.

use std::time::Duration;

use ackbench_targets::{BuiltinTarget, TargetOptions};

use super::kafka::{Assignment, Kafka, KafkaConfig};
use super::kafka_share::{KafkaShare, KafkaShareConfig};
use super::model::BrokerModel;
use super::nats::{Nats, NatsConfig};
use super::queue::{Broker, BrokerConfig};
use super::rabbitmq::{QueueType, RabbitMq, RabbitMqConfig};
use super::redis_streams::{RedisStreams, RedisStreamsConfig};
use crate::profile::{BrokerKind, BrokerSpec, KafkaAssignment, RabbitQueueType, Scenario};
use crate::record::{nanos, Nanos};

/// The SQS broker's configuration, its durations converted by `time` (profile time to the
/// clock the broker runs on: identity in sim mode, wall time in live mode).
pub fn sqs_config(spec: &BrokerSpec, time: impl Fn(Duration) -> Duration) -> BrokerConfig {
    BrokerConfig {
        visibility_timeout: nanos(time(spec.lease)),
        max_receives: spec.max_deliveries,
        stale_ack: spec.stale_ack,
    }
}

/// The model a sim run drives, of the profile's kind, on profile time. Each forgets a message
/// once it is settled, so a run's broker holds only the messages not yet settled and the DLQ,
/// however many the run publishes; it answers and logs exactly as a model that remembers every
/// message would.
pub fn model(spec: &BrokerSpec) -> BrokerModel {
    match &spec.kind {
        BrokerKind::Sqs => {
            let broker = Broker::forgetting_settled(sqs_config(spec, |d| d));
            BrokerModel::Sqs(match &spec.fifo {
                Some(f) => broker
                    .with_deduplication(nanos(f.dedup_window))
                    .with_groups(),
                None => broker,
            })
        }
        BrokerKind::RabbitMq(r) => {
            BrokerModel::RabbitMq(RabbitMq::forgetting_settled(RabbitMqConfig {
                queue_type: match r.queue_type {
                    RabbitQueueType::Quorum => QueueType::Quorum,
                    RabbitQueueType::Classic => QueueType::Classic,
                },
                consumer_timeout: nanos(spec.lease),
                timeout_check_every: nanos(r.timeout_check_every),
                delivery_limit: spec.max_deliveries.saturating_sub(1),
                prefetch: r.prefetch,
                dead_letter: r.dead_letter,
            }))
        }
        BrokerKind::Nats(n) => BrokerModel::Nats(Nats::forgetting_settled(NatsConfig {
            ack_wait: nanos(spec.lease),
            backoff: n.backoff.iter().map(|&d| nanos(d)).collect(),
            max_deliver: spec.max_deliveries,
            max_ack_pending: n.max_ack_pending,
        })),
        BrokerKind::RedisStreams(r) => {
            BrokerModel::RedisStreams(RedisStreams::forgetting_settled(RedisStreamsConfig {
                min_idle: nanos(spec.lease),
                claim_every: nanos(r.claim_every),
                max_deliveries: spec.max_deliveries,
            }))
        }
        BrokerKind::KafkaShare(k) => {
            BrokerModel::KafkaShare(KafkaShare::forgetting_settled(KafkaShareConfig {
                record_lock_duration: nanos(spec.lease),
                delivery_count_limit: spec.max_deliveries,
                partitions: k.partitions,
            }))
        }
        BrokerKind::Kafka(k) => {
            BrokerModel::Kafka(Kafka::forgetting_settled(kafka_config(spec.lease, k)))
        }
    }
}

/// What a broker does with a connection it hears nothing from (a partition of the path).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Silence {
    /// Nothing: the kind ties nothing to a live connection (SQS's HTTP requests, NATS and Redis
    /// Streams, whose deliveries are held by the server's own timers, a Kafka share group,
    /// whose record locks run out first).
    Nothing,
    /// RabbitMQ's heartbeat: silent this long, the connection is closed
    /// ([`BrokerModel::connection_closed`]): two heartbeat timeouts (docs/chaos.md, "Why
    /// RabbitMQ closes after two `heartbeat`s").
    Closes { after: Nanos },
    /// A Kafka group member's heartbeats stop with the silence: one silent for its session
    /// timeout is removed from the group as a dead one is ([`BrokerModel::consumer_died`]).
    StopsHeartbeats { removed_after: Nanos },
}

/// [`Silence`] of the profile's broker.
pub fn silence(spec: &BrokerSpec) -> Silence {
    match &spec.kind {
        BrokerKind::RabbitMq(r) => Silence::Closes {
            after: nanos(r.heartbeat).saturating_mul(2),
        },
        BrokerKind::Kafka(k) => Silence::StopsHeartbeats {
            removed_after: nanos(k.session_timeout),
        },
        BrokerKind::Sqs
        | BrokerKind::Nats(_)
        | BrokerKind::RedisStreams(_)
        | BrokerKind::KafkaShare(_) => Silence::Nothing,
    }
}

/// The Kafka model's configuration: `max_poll_interval` is the spec's lease.
fn kafka_config(max_poll_interval: Duration, k: &crate::profile::KafkaSpec) -> KafkaConfig {
    KafkaConfig {
        partitions: k.partitions,
        max_poll_interval: nanos(max_poll_interval),
        session_timeout: nanos(k.session_timeout),
        heartbeat_interval: nanos(k.heartbeat_interval),
        max_poll_records: k.max_poll_records,
        auto_commit: k.enable_auto_commit.then(|| nanos(k.auto_commit_interval)),
        assignment: match k.assignment {
            KafkaAssignment::Range => Assignment::Range,
            KafkaAssignment::CooperativeSticky => Assignment::CooperativeSticky,
        },
        static_membership: k.static_membership,
        // The broker's group.initial.rebalance.delay.ms default.
        initial_rebalance_delay: nanos(Duration::from_secs(3)),
    }
}

/// The built-in target's options as this run's consumer is configured: the profile's options
/// with the broker's lease (what `heartbeat` extends by).
pub fn target_options(scenario: &Scenario) -> TargetOptions {
    TargetOptions {
        visibility_timeout: scenario.broker.lease,
        ..scenario.consumer.options.clone()
    }
}

/// The built-in target the scenario names, with [`target_options`]; `None` if it names none.
pub fn builtin_target(scenario: &Scenario) -> Option<BuiltinTarget> {
    BuiltinTarget::new(&scenario.consumer.target, target_options(scenario))
}
