//! Property: with `dedupe-table`, no schedule of kills produces a duplicate or a loss.

use std::time::Duration;

use proptest::prelude::*;

use super::tests::{base, run, secs};
use crate::metrics::analyse;
use crate::profile::*;

pub(super) fn rule() -> impl Strategy<Value = ChaosRule> {
    let trigger = prop_oneof![
        Just(KillTrigger::Point(KillPoint::Received)),
        Just(KillTrigger::Point(KillPoint::Checkpoint(
            "committed".into()
        ))),
        (0u64..120).prop_map(|s| KillTrigger::At(secs(s))),
        (1u64..30).prop_map(|s| KillTrigger::Every(secs(s))),
    ];
    (
        trigger,
        prop::option::of(1u32..4),
        0.0f64..=1.0,
        prop::option::of(1u32..4),
        0u64..5_000,
    )
        .prop_map(|(trigger, delivery, probability, worker, delay_ms)| {
            ChaosRule::new(KillRule {
                trigger,
                delivery,
                probability,
                keys: None,
                worker,
                from: None,
                to: Some(secs(200)),
                times: None,
                delay: Duration::from_millis(delay_ms),
                optional: false,
            })
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

    #[test]
    fn dedupe_table_never_duplicates_or_loses(
        messages in 1u64..25,
        workers in 1u32..4,
        lease_s in 1u64..40,
        max_receives in 0u32..5,
        restart_ms in 0u64..3_000,
        chaos in prop::collection::vec(rule(), 0..4),
        seed in any::<u64>(),
    ) {
        let mut s = base();
        s.seed = seed;
        s.consumer.target = "dedupe-table".into();
        s.consumer.workers = workers;
        s.consumer.restart_after = Duration::from_millis(restart_ms);
        s.run.duration = secs(60);
        s.workload.arrival = Arrival::Every(Duration::from_secs(2));
        s.workload.count = Some(messages);
        s.broker.lease = secs(lease_s);
        s.broker.max_deliveries = max_receives;
        s.chaos = chaos;
        let m = analyse(&run(&s), crate::record::nanos(secs(300)));
        prop_assert_eq!(m.duplicate_effects, 0);
        prop_assert_eq!(m.lost, 0);
        // Every message had its effect, or is visibly not done (DLQ without effect, unfinished).
        prop_assert_eq!(m.messages_with_effect + m.dlq_without_effect + m.unfinished, m.messages);
    }
}

/// The broker section of kind `kind` (0 sqs, 1 rabbitmq, 2 nats, 3 redis-streams, 4
/// kafka-share, 5 kafka), its lease `lease_s` and its delivery limit `limit`, as a profile would
/// write it (a share group's limit within Kafka's 2 to 10; Kafka has none).
pub(super) fn broker_of_kind(kind: u8, lease_s: u64, limit: u32) -> BrokerSpec {
    let section = match kind {
        0 => format!("{{ kind: sqs, visibility_timeout: {lease_s}s, max_receives: {limit} }}"),
        1 => format!(
            "{{ kind: rabbitmq, consumer_timeout: {lease_s}s, timeout_check_every: 1s, \
             delivery_limit: {limit} }}"
        ),
        2 => format!("{{ kind: nats, ack_wait: {lease_s}s, max_deliver: {limit} }}"),
        3 => format!("{{ kind: redis-streams, min_idle: {lease_s}s, max_deliveries: {limit} }}"),
        4 => format!(
            "{{ kind: kafka-share, record_lock_duration: {lease_s}s, delivery_count_limit: {} }}",
            limit.clamp(2, 10)
        ),
        // No delivery limit; two partitions so that workers share the topic.
        _ => format!("{{ kind: kafka, max_poll_interval: {lease_s}s, partitions: 2 }}"),
    };
    load_str(
        "kinds.yaml",
        &format!(
            "run: {{ duration: 1m }}\nbroker: {section}\nworkload: {{ arrival: {{ every: 2s }} }}\n\
             consumer: {{ target: ack-after-work }}\n"
        ),
        &[],
    )
    .expect("a valid broker section")
    .broker
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    /// The anomaly checker finds nothing in a sim run of any kind, whatever the kills: the
    /// models never redeliver a confirmed ack, never lower a delivery count, never accept an
    /// ack for a settled message. (On a real server, what it finds is the server's doing.)
    #[test]
    fn no_model_takes_a_step_the_anomaly_checker_names(
        kind in 0u8..6,
        target in prop_oneof![Just("ack-after-work"), Just("ack-before-work"), Just("heartbeat")],
        messages in 1u64..20,
        workers in 1u32..4,
        lease_s in 1u64..40,
        limit in 0u32..4,
        chaos in prop::collection::vec(rule(), 0..3),
        seed in any::<u64>(),
    ) {
        let mut s = base();
        s.seed = seed;
        s.consumer.target = target.into();
        s.consumer.workers = workers;
        s.run.duration = secs(60);
        s.workload.arrival = Arrival::Every(Duration::from_secs(2));
        s.workload.count = Some(messages);
        s.broker = broker_of_kind(kind, lease_s, limit);
        s.chaos = chaos;
        let m = analyse(&run(&s), crate::record::nanos(secs(300)));
        prop_assert_eq!(m.anomalies, vec![]);
    }
}
