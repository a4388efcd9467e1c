//! `broker.kind: kafka-share`: a Kafka share group (KIP-932, Kafka 4.x "queues for Kafka"): a
//! per-record acquisition lock and a delivery count limit, records accepted, released or
//! rejected one by one. Sim only: no broker on this machine runs share groups.
//!
//! Kafka's own bounds, checked here: `group.share.delivery.count.limit` is 2 to 10 (and a group's
//! `share.delivery.count.limit` within the broker's `group.share.min/max.delivery.count.limit`,
//! 2 and 10 by default); `group.share.record.lock.duration.ms` is 1000 ms to 3600000 ms (and a
//! group's `share.record.lock.duration.ms` within `group.share.min/max.record.lock.duration.ms`,
//! 15 s and 60 s by default, which a profile may go past as a broker configured for it would).

use std::time::Duration;

use serde::Deserialize;

use super::read::{duration_or, server_url};
use super::spec::{BrokerKind, BrokerSpec, Observe, QueueName, StaleAck};
use super::words::{
    DoneWords, GivenUpWords, HeldWords, SizingWords, StaleWords, TimeoutWords, TraceWords,
};
use super::{
    Capabilities, Connections, Dlq, KindDescriptor, KindWords, Lease, LeaseRole, Limit,
    LimitCounts, Live, LiveMessageFaults, ScaledClock, Settle,
};
use crate::profile::message::Carrier;
use crate::profile::path::FieldPath;
use crate::profile::problem::{read_value, Problem};
use crate::profile::resolve::checks::at_least_one;
use crate::profile::scalar::DurationText;

/// `broker.record_lock_duration`: Kafka's `group.share.record.lock.duration.ms` default.
pub const RECORD_LOCK_DURATION: Duration = Duration::from_secs(30);
/// Kafka's bounds of `group.share.record.lock.duration.ms`.
const LOCK_BOUNDS: (Duration, Duration) = (Duration::from_secs(1), Duration::from_secs(3600));
/// `broker.delivery_count_limit`: Kafka's `group.share.delivery.count.limit` default.
pub const DELIVERY_COUNT_LIMIT: u32 = 5;
/// Kafka's bounds of `group.share.delivery.count.limit`.
const LIMIT_BOUNDS: (u32, u32) = (2, 10);
/// `broker.partitions`.
pub const PARTITIONS: u32 = 1;
/// `broker.url`: the bootstrap server.
pub const BOOTSTRAP: &str = "127.0.0.1:9092";

pub const KIND: KindDescriptor = KindDescriptor {
    name: "kafka-share",
    aliases: &[],
    keys: &[
        "url",
        "partitions",
        "record_lock_duration",
        "delivery_count_limit",
    ],
    lease: Lease {
        key: "record_lock_duration",
        words: "acquisition lock (group.share.record.lock.duration.ms)",
        // A consumer that dies closes its connection: the broker ends its share session and
        // releases the records it had acquired at once. The lock only ends a holder that is
        // alive but slow or stuck.
        role: LeaseRole::StuckConsumerGuard,
    },
    limit: Some(Limit {
        key: "delivery_count_limit",
        words: "group.share.delivery.count.limit",
        counts: LimitCounts::Deliveries,
    }),
    batch: None,
    dlq: Dlq {
        gave_up: "archived (delivery count limit reached: it stays in the log, never delivered \
                  again)",
        row: "archived, delivery count limit reached, ",
    },
    can: Capabilities {
        // RENEW (Kafka 4.2 and later, KIP-1222): the acquisition lock starts again in full.
        // Kafka 4.0 and 4.1 have no way to extend it.
        extend: true,
        // RELEASE makes the record available at once; there is no delay.
        release_with_delay: false,
        // ACCEPT per record.
        settle: Settle::PerMessage,
        reuse_queue: false,
    },
    scaled_clock: ScaledClock::Proxy {
        server: "a Kafka broker",
        converts: "Kafka proxy would convert the durations a consumer sends; there is none for \
                   share groups",
    },
    carrier: Carrier::Record,
    queue_by_framework: None,
    run_variables: &[],
    live: Live::Refused {
        why: "no broker on this machine runs Kafka share groups (the Tansu 0.6 broker that \
              serves the Kafka protocol here has none); run it in sim mode",
    },
    live_message: LiveMessageFaults {
        actions: &[],
        why_not: "no broker on this machine runs Kafka share groups",
        external: None,
    },
    connections: Connections::Unseen {
        why: super::CONNECTIONS_SIM_ONLY,
    },
    words: WORDS,
    // KEDA has no scaler for a share group.
    keda: None,
    resolve,
};

/// A share group's words: records acquired under a lock, ACCEPTed one by one.
const WORDS: KindWords = KindWords {
    message: ("record", "records"),
    delivered: "acquired",
    settled: "accepted",
    settled_short: "accepted",
    unsettled: "in the topic, not accepted",
    in_flight: ("in flight (acquired)", "waiting (available)"),
    done: DoneWords {
        by: "the ACCEPT that settled the record",
        by_it: "the ACCEPT that settled it",
        any: "an ACCEPT that settled it",
        when: "an ACCEPT had settled it",
    },
    held: HeldWords {
        label: "lock held",
        means: "the {lease} each handler had on its record, moved by its own RENEWs (a \
                heartbeat's)",
        ratio: "The ratio is each handler's time holding its record before it accepted or \
                released it, over the lock it held; above 1, more than 1% of handlers still \
                held their record when their lock ended.",
    },
    stale: StaleWords {
        label: "stale ACCEPTs",
        row: "ACCEPTs after the lock had ended (INVALID_RECORD_STATE)",
        legend: "stale ACCEPT (lock had ended)",
        policy: Some("refused with INVALID_RECORD_STATE"),
    },
    timeout: TimeoutWords {
        outlived: "still held their record when the lock they held ran out",
        outlived_short: "outlived the lock they held",
        then: "their ACCEPT then fails with INVALID_RECORD_STATE; ",
        redelivered: "acquired again",
        gives_up: true,
        kept: "no handler outlived the lock it held",
    },
    given_up: GivenUpWords {
        head: "ARCHIVED",
        what: "archived",
        with_effect: "the work is done, and the group never delivers an archived record again",
        without_effect: "that work is not done, and nothing will do it: the group never \
                         delivers an archived record again",
        depth: "archived records",
        axis: "records archived",
        at_end: "archived at the end",
        replay: "never delivered again, so none can be replayed",
    },
    oldest_age_row: "oldest record age (max)",
    trace: TraceWords {
        settled: "ACCEPTed",
        extended: "RENEW",
        until: "lock until",
        expired: "lock expired",
        again: "available again",
        given_up: "ARCHIVED",
        gone: "record already settled",
    },
    sizing: SizingWords {
        lease: "acquisition lock",
        lease_row: "acquisition lock",
        received: "acquisition",
        acked: "accepted",
    },
};

/// `broker.kind: kafka-share`: a share group (KIP-932). `BrokerSpec::lease` is
/// `record_lock_duration`; `BrokerSpec::max_deliveries` is `delivery_count_limit`.
#[derive(Debug, Clone, PartialEq)]
pub struct KafkaShareSpec {
    pub partitions: u32,
}

/// The keys of a Kafka topic and share group under `broker`, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKafkaShare {
    url: Option<String>,
    partitions: Option<u32>,
    record_lock_duration: Option<DurationText>,
    delivery_count_limit: Option<u32>,
}

fn resolve(own: &yaml_serde::Value, path: &FieldPath) -> Result<BrokerSpec, Problem> {
    let raw: RawKafkaShare = read_value(own, path)?;
    let lock = duration_or(raw.record_lock_duration, RECORD_LOCK_DURATION);
    let (low, high) = LOCK_BOUNDS;
    if lock < low || lock > high {
        return Err(Problem::new(
            path.key("record_lock_duration"),
            format!(
                "must be 1s to 1h (Kafka's bounds of group.share.record.lock.duration.ms), got \
                 {}",
                crate::profile::format_duration(lock)
            ),
        ));
    }
    let limit = raw.delivery_count_limit.unwrap_or(DELIVERY_COUNT_LIMIT);
    let (least, most) = LIMIT_BOUNDS;
    if !(least..=most).contains(&limit) {
        return Err(Problem::new(
            path.key("delivery_count_limit"),
            format!(
                "must be {least} to {most} (Kafka's bounds of group.share.delivery.count.limit: \
                 a share group always has a limit), got {limit}"
            ),
        ));
    }
    let partitions = at_least_one(
        raw.partitions.unwrap_or(PARTITIONS),
        &path.key("partitions"),
        "a topic has at least one partition",
    )?;
    let url = bootstrap(raw.url, path)?;
    Ok(BrokerSpec {
        observe: Observe::Proxy,
        queue: QueueName::default(),
        url: Some(url),
        lease: lock,
        kind: BrokerKind::KafkaShare(KafkaShareSpec { partitions }),
        max_deliveries: limit,
        // A late acknowledgement fails with INVALID_RECORD_STATE.
        stale_ack: StaleAck::Reject,
        fifo: None,
    })
}

/// `broker.url`: a bootstrap server, `host:port` or `kafka://host:port`.
fn bootstrap(url: Option<String>, path: &FieldPath) -> Result<String, Problem> {
    let Some(text) = url else {
        return Ok(BOOTSTRAP.to_string());
    };
    let with_scheme = if text.contains("://") {
        text.clone()
    } else {
        format!("kafka://{text}")
    };
    server_url(&with_scheme, &["kafka"], &path.key("url"))?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use crate::profile::{load_str, BrokerKind, KafkaShareSpec};

    fn load(broker: &str, mode: &str) -> Result<crate::profile::Scenario, String> {
        let text = format!(
            "mode: {mode}\nrun: {{ duration: 1m }}\nbroker: {broker}\nworkload: {{ arrival: {{ \
             every: 1s }} }}\nconsumer: {{ target: ack-after-work }}\n"
        );
        load_str("p.yaml", &text, &[]).map_err(|e| e.to_string())
    }

    #[test]
    fn a_share_group_gets_kafkas_defaults() {
        // The lock 30 s, the limit 5, one partition, the local bootstrap server.
        let s = load("{ kind: kafka-share }", "sim").unwrap();
        assert_eq!(s.broker.lease, std::time::Duration::from_secs(30));
        assert_eq!(s.broker.max_deliveries, 5);
        assert_eq!(
            s.broker.kind,
            BrokerKind::KafkaShare(KafkaShareSpec { partitions: 1 })
        );
        assert_eq!(s.broker.url.as_deref(), Some("127.0.0.1:9092"));
        let s = load(
            "{ kind: kafka-share, url: \"kafka://broker:9093\", partitions: 6, \
             record_lock_duration: 45s, delivery_count_limit: 10 }",
            "sim",
        )
        .unwrap();
        assert_eq!(
            (s.broker.lease.as_secs(), s.broker.max_deliveries),
            (45, 10)
        );
    }

    #[test]
    fn each_bad_value_is_refused_naming_its_key() {
        for (broker, expected) in [
            (
                "{ kind: kafka-share, record_lock_duration: 0s }",
                "p.yaml:3:52: broker.record_lock_duration: must be 1s to 1h (Kafka's bounds of \
                 group.share.record.lock.duration.ms), got 0s",
            ),
            (
                "{ kind: kafka-share, record_lock_duration: 2h }",
                "broker.record_lock_duration: must be 1s to 1h",
            ),
            (
                "{ kind: kafka-share, delivery_count_limit: 0 }",
                "p.yaml:3:52: broker.delivery_count_limit: must be 2 to 10 (Kafka's bounds of \
                 group.share.delivery.count.limit: a share group always has a limit), got 0",
            ),
            (
                "{ kind: kafka-share, delivery_count_limit: 11 }",
                "broker.delivery_count_limit: must be 2 to 10",
            ),
            (
                "{ kind: kafka-share, partitions: 0 }",
                "broker.partitions: must be at least 1, got 0 (a topic has at least one partition)",
            ),
            (
                "{ kind: kafka-share, url: \"http://127.0.0.1:9092\" }",
                "broker.url: must be a URL with scheme kafka, got `http`",
            ),
            (
                "{ kind: kafka-share, ack_wait: 30s }",
                "broker.ack_wait: `ack_wait` is a key of broker kind nats, not of kafka-share; \
                 the keys of kafka-share are: kind, url, partitions, record_lock_duration, \
                 delivery_count_limit",
            ),
        ] {
            let err = load(broker, "sim").unwrap_err();
            assert!(err.contains(expected), "{broker}:\n{err}");
        }
    }

    #[test]
    fn live_mode_refuses_a_share_group_at_broker_kind() {
        let err = load("{ kind: kafka-share }", "live").unwrap_err();
        assert!(
            err.starts_with(
                "p.yaml:3:17: broker.kind: live mode cannot run broker.kind: kafka-share: no \
                 broker on this machine runs Kafka share groups"
            ),
            "{err}"
        );
    }
}
