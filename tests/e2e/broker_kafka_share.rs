//! `broker.kind: kafka-share`: the Thursday on a share group (profiles/brokers/), its keys'
//! errors and the refusal of live mode (its row of a sweep over kinds: `broker_kinds.rs`).

use crate::broker_kinds::{refused, BASE};
use crate::common::{counts, run_profile, CORE_COUNTS};

#[test]
fn the_thursday_on_a_share_group_sends_five_emails_per_order_and_archives_it() {
    // Every 31-40 s call outlasts the 30 s lock: 5 deliveries per order, every ACCEPT late and
    // refused, archived at the delivery count limit (the profile's header comment).
    let r = run_profile(
        std::path::Path::new("profiles/brokers/kafka-share-thursday.yaml"),
        &[],
    );
    let s = r.summary();
    assert_eq!(r.code(), 1, "duplicate_rate and dlq fail");
    assert_eq!(counts(&s, &CORE_COUNTS), [108, 540, 540, 432, 108, 0]);
    assert_eq!(s["stale_acks"], 540);
    assert_eq!(s["dlq_with_effect"], 108);
    assert_eq!(s["broker_kind"], "kafka-share");
}

#[test]
fn a_share_groups_bad_values_are_refused_naming_the_key() {
    refused(
        &format!("{BASE}broker: {{ kind: kafka-share, record_lock_duration: 0s }}\n"),
        "broker.record_lock_duration: must be 1s to 1h (Kafka's bounds of \
         group.share.record.lock.duration.ms), got 0s",
    );
    refused(
        &format!("{BASE}broker: {{ kind: kafka-share, delivery_count_limit: 0 }}\n"),
        "broker.delivery_count_limit: must be 2 to 10 (Kafka's bounds of \
         group.share.delivery.count.limit: a share group always has a limit), got 0",
    );
    refused(
        &format!("{BASE}broker: {{ kind: kafka-share, delivery_count_limit: 11 }}\n"),
        "broker.delivery_count_limit: must be 2 to 10",
    );
    refused(
        &format!("{BASE}broker: {{ kind: kafka-share, partitions: 0 }}\n"),
        "broker.partitions: must be at least 1, got 0 (a topic has at least one partition)",
    );
    refused(
        &format!("{BASE}broker: {{ kind: kafka-share, visibility_timeout: 30s }}\n"),
        "broker.visibility_timeout: `visibility_timeout` is a key of broker kind sqs, not of \
         kafka-share; the keys of kafka-share are: kind, url, partitions, record_lock_duration, \
         delivery_count_limit",
    );
}

#[test]
fn live_mode_refuses_a_share_group_at_broker_kind() {
    refused(
        &format!("{BASE}mode: live\nbroker: {{ kind: kafka-share }}\n"),
        "broker.kind: live mode cannot run broker.kind: kafka-share: no broker on this machine \
         runs Kafka share groups",
    );
}
