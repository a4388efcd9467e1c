//! The `broker` section resolved: what the runner reads of the broker, whatever its kind
//! ([`BrokerSpec`]), and each kind's own settings ([`BrokerKind`], their types in the kind's
//! file).

use std::time::Duration;

pub use super::kafka::{KafkaAssignment, KafkaSpec};
pub use super::kafka_share::KafkaShareSpec;
pub use super::nats::NatsSpec;
pub use super::rabbitmq::{RabbitMqSpec, RabbitQueueType};
pub use super::redis_streams::RedisStreamsSpec;
use super::KindDescriptor;

#[derive(Debug, Clone, PartialEq)]
pub struct BrokerSpec {
    pub kind: BrokerKind,
    /// The lease, by meaning: how long a delivery may stay unacked before the broker lets
    /// another consumer have the message. SQS `visibility_timeout`, NATS `ack_wait` (the first
    /// `backoff` value when set), Redis Streams `min_idle`; RabbitMQ has no lease, and this is
    /// its `consumer_timeout`. The kind's key and words: its descriptor's
    /// [`super::Lease`].
    pub lease: Duration,
    /// Deliveries allowed, by meaning (0 = no limit): SQS `max_receives`, NATS `max_deliver`,
    /// Redis Streams `max_deliveries`, RabbitMQ quorum `delivery_limit` + 1
    /// ([`super::Limit`]).
    pub max_deliveries: u32,
    /// SQS only (the other kinds have their server's fixed behaviour).
    pub stale_ack: StaleAck,
    /// The real server a live run uses: `broker.url` for RabbitMQ, NATS and Redis Streams
    /// (defaulted to the kind's local server), `broker.endpoint` for SQS (`None`: the embedded
    /// broker). Sim runs do not read it.
    pub url: Option<String>,
    /// SQS only: a FIFO queue (`fifo: true`); `None` for a standard queue and the other kinds.
    pub fifo: Option<FifoSpec>,
    /// Live mode on a real broker: how the run sees the workers' deliveries and acks
    /// (`broker.observe`).
    pub observe: Observe,
    /// Live mode: the run's queue (or stream) by name (`broker.queue`, `broker.reuse`);
    /// default a name of the run's own.
    pub queue: QueueName,
}

/// `broker.queue` and `broker.reuse`: the name a consumer's framework gives its queue.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueueName {
    /// `None`: the run names its queue after itself (`ackbench-<pid>-<millis>`), or `ackbench`
    /// on the embedded SQS endpoint.
    pub name: Option<String>,
    /// An existing (empty) queue of that name is used and left in place; otherwise one that
    /// exists refuses the run.
    pub reuse: bool,
}

/// How a live run on a real broker sees its workers (`broker.observe`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Observe {
    /// `proxy` (the default): each worker reaches the broker through its own port of
    /// ackbench's protocol proxy, which reads every delivery and ack.
    #[default]
    Proxy,
    /// `none`: workers connect to the broker directly. Deliveries, acks and handler times are
    /// not seen; effects at the provider and what the broker itself says are. For measuring
    /// the proxy's cost.
    Direct,
}

/// A FIFO queue (`broker.fifo: true`, SQS only).
#[derive(Debug, Clone, PartialEq)]
pub struct FifoSpec {
    /// How long the queue drops a repeated deduplication id, counted from the first accepted
    /// publish of that id (still after the message is deleted). The deduplication id is the
    /// message key (`MessageDeduplicationId` set to the order id; with content-based
    /// deduplication a retry's body is the same as the first, so its hash is too).
    pub dedup_window: Duration,
}

/// The broker kind and the keys only that kind has.
#[derive(Debug, Clone, PartialEq)]
pub enum BrokerKind {
    /// The embedded SQS-like broker (`sqs`, alias `embedded`).
    Sqs,
    RabbitMq(RabbitMqSpec),
    Nats(NatsSpec),
    RedisStreams(RedisStreamsSpec),
    Kafka(KafkaSpec),
    KafkaShare(KafkaShareSpec),
}

impl BrokerKind {
    /// What the profile, the reports and sizing know of the kind: its names, keys, words and
    /// capabilities.
    pub fn descriptor(&self) -> &'static KindDescriptor {
        match self {
            BrokerKind::Sqs => &super::sqs::KIND,
            BrokerKind::RabbitMq(_) => &super::rabbitmq::KIND,
            BrokerKind::Nats(_) => &super::nats::KIND,
            BrokerKind::RedisStreams(_) => &super::redis_streams::KIND,
            BrokerKind::Kafka(_) => &super::kafka::KIND,
            BrokerKind::KafkaShare(_) => &super::kafka_share::KIND,
        }
    }

    /// The kind's name in a profile (`broker.kind`).
    pub fn name(&self) -> &'static str {
        self.descriptor().name
    }

    /// How the kind carries a message besides its body (`workload.message`).
    pub fn carrier(&self) -> crate::profile::message::Carrier {
        self.descriptor().carrier
    }
}

impl BrokerSpec {
    /// The profile key that sets [`BrokerSpec::lease`] for this kind.
    pub fn lease_key(&self) -> &'static str {
        self.kind.descriptor().lease.key
    }

    /// The lease in the kind's own words, for reports.
    pub fn lease_words(&self) -> &'static str {
        self.kind.descriptor().lease.words
    }

    /// Whether the consumer commits by itself on a timer (Kafka's `enable_auto_commit`): what
    /// the `auto-commit` target relies on.
    pub fn auto_commits(&self) -> bool {
        match &self.kind {
            BrokerKind::Kafka(k) => k.enable_auto_commit,
            _ => false,
        }
    }

    /// How long a dead consumer's member stays in its group (Kafka's `session_timeout`); `None`
    /// on the kinds without a session.
    pub fn session_timeout(&self) -> Option<Duration> {
        match &self.kind {
            BrokerKind::Kafka(k) => Some(k.session_timeout),
            _ => None,
        }
    }

    /// At most how many records one poll returns (Kafka's `max_poll_records`); `None` on the
    /// kinds that hand out one message at a time ([`KindDescriptor::batch`]).
    pub fn poll_batch(&self) -> Option<u32> {
        match &self.kind {
            BrokerKind::Kafka(k) => Some(k.max_poll_records),
            _ => None,
        }
    }

    /// The tick on which the broker checks a delivery's lease, so that a delivery past it is
    /// caught at the first tick after (RabbitMQ's `timeout_check_every` for `consumer_timeout`);
    /// `None` on the kinds that end a lease at its instant.
    pub fn lease_check_every(&self) -> Option<Duration> {
        match &self.kind {
            BrokerKind::RabbitMq(r) => Some(r.timeout_check_every),
            _ => None,
        }
    }

    /// The partitions of a consumer group's topic, each read by one member at a time, so that
    /// workers past them sit idle (Kafka's `partitions`); `None` on the kinds whose workers
    /// share a partition's or a queue's messages (a share group spreads a partition's records
    /// over its members).
    pub fn group_partitions(&self) -> Option<u32> {
        match &self.kind {
            BrokerKind::Kafka(k) => Some(k.partitions),
            _ => None,
        }
    }

    /// The profile key of the delivery limit for this kind; `None` when it has none (a
    /// RabbitMQ classic queue).
    pub fn limit_key(&self) -> Option<&'static str> {
        match &self.kind {
            BrokerKind::RabbitMq(r) if r.queue_type == RabbitQueueType::Classic => None,
            kind => kind.descriptor().limit.as_ref().map(|l| l.key),
        }
    }

    /// The value of the kind's delivery-limit key that allows `max_deliveries` deliveries (0 =
    /// none): RabbitMQ counts returns, so its limit is one less.
    pub fn limit_value(&self, max_deliveries: u32) -> u32 {
        self.kind.descriptor().limit_value(max_deliveries)
    }
}

/// What the broker does with an ack whose receipt is no longer the current one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StaleAck {
    /// Refuse it: the caller gets an error, the message is untouched.
    Reject,
    /// Report success and delete the message although another worker holds it now.
    Delete,
    /// Report success and leave the message (what SQS documents for an old receipt handle).
    Ignore,
    /// What SQS does: the latest receipt of a message whose lease ended and that nobody has
    /// received since deletes it; an older receipt reports success and leaves the message. A
    /// change of visibility with that latest receipt succeeds too (the holder leases it again).
    Sqs,
}

impl BrokerKind {
    /// The run variables this kind's workers are told: every kind's, then the kind's own
    /// ([`KindDescriptor::run_variables`]).
    pub fn run_variables(&self) -> Vec<&'static str> {
        crate::profile::run_variables::EVERY_KIND
            .iter()
            .chain(self.descriptor().run_variables)
            .copied()
            .collect()
    }
}
