//! `broker.kind: kafka`: one topic read by one consumer group (its partitions, committed
//! offsets, the group coordinator's rebalances, `max.poll.interval.ms` and
//! `session.timeout.ms`).
//!
//! `partitions` defaults to 1, Kafka's own `num.partitions`: a group of N workers on one
//! partition leaves N - 1 of them idle, which is what a topic created with the broker's default
//! does. A profile that wants its workers busy says how many partitions the topic has.

use std::time::Duration;

use serde::Deserialize;

use super::keda::KedaScaler;
use super::read::{duration_or, server_url};
use super::spec::{BrokerKind, BrokerSpec, Observe, QueueName, StaleAck};
use super::words::{
    DoneWords, GivenUpWords, HeldWords, SizingWords, StaleWords, TimeoutWords, TraceWords,
};
use super::{
    Batch, Capabilities, Connections, Dlq, KindDescriptor, KindWords, Lease, LeaseRole, Live,
    LiveMessageFaults, ScaledClock, Settle,
};
use crate::profile::defaults;
use crate::profile::message::Carrier;
use crate::profile::path::FieldPath;
use crate::profile::problem::{read_value, Problem};
use crate::profile::resolve::checks::{at_least_one, positive};
use crate::profile::run_variables::{
    AUTO_COMMIT_INTERVAL_MS, BOOTSTRAP_SERVERS, ENABLE_AUTO_COMMIT, GROUP, GROUP_INSTANCE_ID,
    HEARTBEAT_INTERVAL_MS, MAX_POLL_INTERVAL_MS, MAX_POLL_RECORDS, PARTITION_ASSIGNMENT_STRATEGY,
    SESSION_TIMEOUT_MS, TOPIC,
};
use crate::profile::scalar::DurationText;

pub const KIND: KindDescriptor = KindDescriptor {
    name: "kafka",
    aliases: &[],
    keys: &[
        "url",
        "partitions",
        "max_poll_interval",
        "session_timeout",
        "heartbeat_interval",
        "max_poll_records",
        "enable_auto_commit",
        "auto_commit_interval",
        "assignment",
        "static_membership",
    ],
    lease: Lease {
        key: "max_poll_interval",
        words: "max.poll.interval.ms",
        role: LeaseRole::PollInterval,
    },
    // A record is fetched again for as long as its offset is not committed.
    limit: None,
    // A poll's records are handled one by one before the next poll, inside max.poll.interval.ms.
    batch: Some(Batch {
        key: "max_poll_records",
        words: "max.poll.records",
    }),
    dlq: Dlq {
        gave_up: "dead-lettered by the consumer itself (Kafka has no DLQ: a poison record is \
                  fetched again until the consumer commits past it)",
        row: "the consumer's own dead-letter topic, ",
    },
    can: Capabilities {
        // Nothing extends max.poll.interval.ms but the next poll.
        extend: false,
        // A seek back to the record: fetched again at the next poll, no delay of its own.
        release_with_delay: false,
        settle: Settle::Offsets,
        reuse_queue: false,
    },
    scaled_clock: ScaledClock::Unconverted {
        why: "ackbench's Kafka protocol proxy observes a consumer's requests but converts none of \
              the durations it sends (JoinGroup's session and rebalance timeouts, Fetch's max \
              wait), and the broker's group timers run on the wall clock",
    },
    live: Live::Runs,
    live_message: LiveMessageFaults {
        actions: &[],
        why_not: "ackbench's Kafka proxy relays every OffsetCommit and every fetched record as it comes; it does not drop or hold them",
        external: None,
    },
    connections: Connections::Seen,
    carrier: Carrier::Record,
    queue_by_framework: None,
    run_variables: &[
        BOOTSTRAP_SERVERS,
        TOPIC,
        GROUP,
        MAX_POLL_INTERVAL_MS,
        SESSION_TIMEOUT_MS,
        HEARTBEAT_INTERVAL_MS,
        MAX_POLL_RECORDS,
        ENABLE_AUTO_COMMIT,
        AUTO_COMMIT_INTERVAL_MS,
        PARTITION_ASSIGNMENT_STRATEGY,
        GROUP_INSTANCE_ID,
    ],
    words: WORDS,
    // The scaler reads the group's lag: records past its committed offsets, fetched or not.
    keda: Some(KedaScaler {
        scaler: "kafka",
        target: "lagThreshold",
        activation: "activationLagThreshold",
        ready: None,
        ready_and_in_flight: Some(&[]),
        placeholders: &[
            ("bootstrapServers", "<host:9092>"),
            ("consumerGroup", "<the group>"),
            ("topic", "<the topic>"),
        ],
        not_live: Some(
            "a live Kafka run cannot read its consumer group's lag while it runs yet",
        ),
    }),
    resolve,
};

/// A consumer group's words: records, committed offsets, a member bound by its poll deadline.
const WORDS: KindWords = KindWords {
    message: ("record", "records"),
    delivered: "fetched",
    settled: "committed past",
    settled_short: "committed",
    unsettled: "in the topic, uncommitted",
    in_flight: ("in flight (fetched)", "waiting (not fetched yet)"),
    done: DoneWords {
        by: "the commit that passed the record",
        by_it: "the commit that passed it",
        any: "a commit that passed it",
        when: "a commit had passed it",
    },
    held: HeldWords {
        label: "to poll deadline",
        // A record's lease end is the deadline of the poll that fetched it.
        means: "from each record's delivery to its member's poll deadline (the poll that \
                fetched it plus {lease}), a whole batch's handling before the next poll",
        // No hold ratio: there is no lease per record.
        ratio: "",
    },
    stale: StaleWords {
        label: "stale commits",
        row: "commits after the member lost the record (fenced, or fetched again)",
        legend: "stale commit (the member had lost the record)",
        policy: Some("refused when fenced (the member was removed from the group)"),
    },
    timeout: TimeoutWords {
        outlived: "were still working on their record when their member's poll deadline passed",
        outlived_short: "were past their member's poll deadline",
        then: "the coordinator removed the member from the group, gave its partitions to the \
               others and fenced its commits; ",
        redelivered: "fetched again",
        // No delivery limit: the poll interval's end gives no record up.
        gives_up: false,
        kept: "no member went past its poll deadline while a handler worked",
    },
    given_up: GivenUpWords {
        head: "DLQ",
        what: "dead-lettered",
        with_effect: "replaying the dead-letter topic would duplicate those effects",
        without_effect: "that work is not done, and nothing will do it unless someone handles \
                         the dead-letter topic",
        depth: "dead-letter topic depth",
        axis: "records in the dead-letter topic",
        at_end: "in the dead-letter topic at the end",
        replay: "replaying them repeats the work",
    },
    oldest_age_row: "oldest record age (max)",
    trace: TraceWords {
        settled: "committed",
        // A member's poll deadline moves only with its next poll.
        extended: "deadline moved",
        until: "poll deadline",
        expired: "deadline passed",
        again: "fetched again from the last commit",
        given_up: "DEAD-LETTERED",
        gone: "record already committed",
    },
    sizing: SizingWords {
        lease: "max.poll.interval.ms",
        lease_row: "max.poll.interval.ms",
        received: "fetch",
        acked: "committed",
    },
};

/// `broker.kind: kafka`: a consumer group. `BrokerSpec::lease` is `max_poll_interval`;
/// `BrokerSpec::max_deliveries` is 0 (Kafka has no delivery limit).
#[derive(Debug, Clone, PartialEq)]
pub struct KafkaSpec {
    pub partitions: u32,
    pub session_timeout: Duration,
    pub heartbeat_interval: Duration,
    pub max_poll_records: u32,
    pub enable_auto_commit: bool,
    pub auto_commit_interval: Duration,
    pub assignment: KafkaAssignment,
    pub static_membership: bool,
}

/// The consumer's `partition.assignment.strategy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KafkaAssignment {
    Range,
    CooperativeSticky,
}

/// The keys of a Kafka topic and consumer group under `broker`, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKafka {
    url: Option<String>,
    partitions: Option<u32>,
    max_poll_interval: Option<DurationText>,
    session_timeout: Option<DurationText>,
    heartbeat_interval: Option<DurationText>,
    max_poll_records: Option<u32>,
    enable_auto_commit: Option<bool>,
    auto_commit_interval: Option<DurationText>,
    assignment: Option<KafkaAssignmentName>,
    static_membership: Option<bool>,
}

/// `broker.assignment`: the consumer's `partition.assignment.strategy`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum KafkaAssignmentName {
    Range,
    CooperativeSticky,
}

fn resolve(own: &yaml_serde::Value, path: &FieldPath) -> Result<BrokerSpec, Problem> {
    let raw: RawKafka = read_value(own, path)?;
    let d = |v, default, key: &str| positive(duration_or(v, default), &path.key(key));
    let max_poll_interval = d(
        raw.max_poll_interval,
        defaults::KAFKA_MAX_POLL_INTERVAL,
        "max_poll_interval",
    )?;
    let session_timeout = d(
        raw.session_timeout,
        defaults::KAFKA_SESSION_TIMEOUT,
        "session_timeout",
    )?;
    let heartbeat_interval = d(
        raw.heartbeat_interval,
        defaults::KAFKA_HEARTBEAT_INTERVAL,
        "heartbeat_interval",
    )?;
    if heartbeat_interval >= session_timeout {
        return Err(Problem::new(
            path.key("heartbeat_interval"),
            format!(
                "must be less than session_timeout ({}), got {}: a member that heartbeats less \
                 often than its session lasts is removed between two heartbeats (Kafka advises a \
                 third of it)",
                crate::profile::format_duration(session_timeout),
                crate::profile::format_duration(heartbeat_interval)
            ),
        ));
    }
    let auto_commit_interval = d(
        raw.auto_commit_interval,
        defaults::KAFKA_AUTO_COMMIT_INTERVAL,
        "auto_commit_interval",
    )?;
    let partitions = at_least_one(
        raw.partitions.unwrap_or(1),
        &path.key("partitions"),
        "a topic has at least one partition",
    )?;
    let max_poll_records = at_least_one(
        raw.max_poll_records
            .unwrap_or(defaults::KAFKA_MAX_POLL_RECORDS),
        &path.key("max_poll_records"),
        "a poll returns at least one record",
    )?;
    Ok(BrokerSpec {
        observe: Observe::Proxy,
        queue: QueueName::default(),
        url: Some(bootstrap(raw.url, path)?),
        kind: BrokerKind::Kafka(KafkaSpec {
            partitions,
            session_timeout,
            heartbeat_interval,
            max_poll_records,
            enable_auto_commit: raw.enable_auto_commit.unwrap_or(true),
            auto_commit_interval,
            assignment: match raw.assignment {
                None | Some(KafkaAssignmentName::Range) => KafkaAssignment::Range,
                Some(KafkaAssignmentName::CooperativeSticky) => KafkaAssignment::CooperativeSticky,
            },
            static_membership: raw.static_membership.unwrap_or(false),
        }),
        lease: max_poll_interval,
        max_deliveries: 0,
        stale_ack: StaleAck::Reject,
        fifo: None,
    })
}

/// `url`: the bootstrap server, `host:port` or `kafka://host:port`.
fn bootstrap(url: Option<String>, path: &FieldPath) -> Result<String, Problem> {
    let Some(url) = url else {
        return Ok(defaults::KAFKA_URL.to_string());
    };
    let with_scheme = if url.contains("://") {
        url.clone()
    } else {
        format!("kafka://{url}")
    };
    server_url(&with_scheme, &["kafka"], &path.key("url"))?;
    Ok(url)
}
