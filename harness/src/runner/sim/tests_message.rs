//! `message` faults on hand-derived scenarios: `ack-after-work` (a provider call whose effect
//! counts at the request, then the ack), one message published at 0 s unless said, a restart
//! 1 s after a death, on each broker kind.

use super::tests::{acks, run, S};
use super::tests_kinds::deliveries;
use crate::profile::load_str;
use crate::record::{AckOutcome, EventKind, RunRecord};

/// `workers` workers, the provider answering after `call`, one `message` rule written `rule`.
fn scenario(broker: &str, workers: u32, call: &str, rule: &str) -> RunRecord {
    let text = format!(
        "\
name: t
run: {{ duration: 1s, drain: 1h }}
broker: {broker}
workload: {{ arrival: {{ every: 1s }}, count: 1 }}
consumer: {{ target: ack-after-work, workers: {workers}, restart_after: 1s }}
provider: {{ effect_at: request, latency: {{ dist: fixed, value: {call} }} }}
chaos:
  - message: {rule}
"
    );
    run(&load_str("t.yaml", &text, &[]).expect("a valid profile"))
}

/// The instants (s) at which rule 0 fired.
fn fired(r: &RunRecord) -> Vec<u64> {
    r.events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::FaultFired { rule: 0, .. }))
        .map(|e| e.at / S)
        .collect()
}

#[test]
fn sqs_drop_ack_redelivers_when_the_visibility_timeout_ends() {
    // Delivery 1 at 0 s (effect at 0 s), its ack at 1 s dropped: the consumer goes on, the
    // broker never deletes. The lease ends at 30 s: delivery 2 to the idle worker (a second
    // effect), acked at 31 s (delivery 2 is not selected): deleted. 2 effects = 1 duplicate.
    let r = scenario(
        "{ visibility_timeout: 30s }",
        1,
        "1s",
        "{ action: drop_ack, delivery: 1 }",
    );
    assert_eq!(fired(&r), vec![1]);
    assert_eq!(deliveries(&r), vec![(0, 1, 1), (30, 1, 2)]);
    assert_eq!(acks(&r), vec![(31, 2, AckOutcome::Deleted)]);
    assert_eq!(r.ledger.effects.len(), 2);
    assert_eq!(r.end, 31 * S);
}

#[test]
fn sqs_delay_ack_past_the_lease_is_a_stale_ack() {
    // Delivery 1 at 0 s, call 0-10 s, its ack sent at 10 s reaches the broker at 35 s. The
    // lease ends at 30 s: delivery 2 to the idle worker (second effect), call 30-40 s. At 35 s
    // the late ack carries delivery 1's receipt, no longer current: `stale_ack: reject`
    // refuses it and the message stays. At 40 s delivery 2's ack deletes it. 1 duplicate.
    let r = scenario(
        "{ visibility_timeout: 30s, stale_ack: reject }",
        1,
        "10s",
        "{ action: delay_ack, delay: 25s, delivery: 1 }",
    );
    assert_eq!(fired(&r), vec![10]);
    assert_eq!(deliveries(&r), vec![(0, 1, 1), (30, 1, 2)]);
    assert_eq!(
        acks(&r),
        vec![
            (35, 1, AckOutcome::StaleRejected),
            (40, 2, AckOutcome::Deleted)
        ]
    );
    assert_eq!(r.ledger.effects.len(), 2);
    // `stale_ack: delete`: the late ack deletes the message at 35 s, under delivery 2; its own
    // ack at 40 s finds it gone. Still 2 effects.
    let r = scenario(
        "{ visibility_timeout: 30s, stale_ack: delete }",
        1,
        "10s",
        "{ action: delay_ack, delay: 25s, delivery: 1 }",
    );
    assert_eq!(
        acks(&r),
        vec![
            (35, 1, AckOutcome::StaleDeleted),
            (40, 2, AckOutcome::StaleGone)
        ]
    );
    assert_eq!(r.ledger.effects.len(), 2);
}

#[test]
fn sqs_delay_ack_within_the_lease_changes_nothing_but_the_time() {
    // Ack sent at 1 s, applied at 11 s, within the 30 s lease: deleted, 1 effect; the run
    // ends when the queue is empty, at 11 s.
    let r = scenario(
        "{ visibility_timeout: 30s }",
        1,
        "1s",
        "{ action: delay_ack, delay: 10s }",
    );
    assert_eq!(acks(&r), vec![(11, 1, AckOutcome::Deleted)]);
    assert_eq!(r.ledger.effects.len(), 1);
    assert_eq!(r.end, 11 * S);
}

#[test]
fn sqs_drop_delivery_leases_the_message_the_worker_never_sees() {
    // Delivery 1 leased at 0 s and dropped: no call, no effect; the worker waits on. The lease
    // ends at 30 s: delivery 2 (not selected) to worker 1, effect at 30 s, acked at 31 s.
    // 1 effect, no duplicate, but the message's first 30 s were lost.
    let r = scenario(
        "{ visibility_timeout: 30s }",
        1,
        "1s",
        "{ action: drop_delivery, delivery: 1 }",
    );
    assert_eq!(fired(&r), vec![0]);
    assert_eq!(deliveries(&r), vec![(0, 1, 1), (30, 1, 2)]);
    assert_eq!(acks(&r), vec![(31, 2, AckOutcome::Deleted)]);
    assert_eq!(r.ledger.effects.len(), 1);
    assert_eq!(r.end, 31 * S);
}

#[test]
fn sqs_delay_delivery_past_the_lease_lets_another_worker_take_it() {
    // Two workers. Delivery 1 leased to worker 1 at 0 s, held back 40 s. The lease ends at 30 s:
    // delivery 2 to worker 2 (worker 1 still waits for its held delivery), effect at 30 s, acked
    // at 31 s: deleted. At 40 s worker 1 sees delivery 1: effect at 40 s (a duplicate), its ack
    // at 41 s finds the message gone (refused under `reject`). 2 effects.
    let r = scenario(
        "{ visibility_timeout: 30s }",
        2,
        "1s",
        "{ action: delay_delivery, delay: 40s, delivery: 1 }",
    );
    assert_eq!(fired(&r), vec![0]);
    assert_eq!(deliveries(&r), vec![(0, 1, 1), (30, 2, 2)]);
    assert_eq!(
        acks(&r),
        vec![(31, 2, AckOutcome::Deleted), (41, 1, AckOutcome::StaleGone)]
    );
    let effects: Vec<u64> = r.ledger.effects.iter().map(|e| e.at / S).collect();
    assert_eq!(effects, vec![30, 40]);
    // Held back 10 s only: the worker sees it at 10 s, within its lease; 1 effect at 10 s.
    let r = scenario(
        "{ visibility_timeout: 30s }",
        2,
        "1s",
        "{ action: delay_delivery, delay: 10s }",
    );
    let effects: Vec<u64> = r.ledger.effects.iter().map(|e| e.at / S).collect();
    assert_eq!(effects, vec![10]);
    assert_eq!(acks(&r), vec![(11, 1, AckOutcome::Deleted)]);
}

#[test]
fn rabbitmq_drop_ack_holds_the_message_until_the_consumer_timeout() {
    // RabbitMQ has no lease timer: the unacked delivery stays worker 1's (prefetch 1: it takes
    // nothing else). The consumer timeout (60 s) is checked every 10 s; at the 70 s tick the
    // delivery's age (70 s) has passed it: the channel closes and the message is requeued and
    // delivered again at once, to worker 1 (idle), a second effect; acked at 71 s. 1 duplicate.
    let r = scenario(
        "{ kind: rabbitmq, consumer_timeout: 60s, timeout_check_every: 10s, prefetch: 1 }",
        1,
        "1s",
        "{ action: drop_ack, delivery: 1 }",
    );
    assert_eq!(fired(&r), vec![1]);
    assert_eq!(deliveries(&r), vec![(0, 1, 1), (70, 1, 2)]);
    assert_eq!(r.ledger.effects.len(), 2);
    assert_eq!(r.end, 71 * S);
}

#[test]
fn nats_and_redis_streams_drop_ack_redeliver_when_their_lease_ends() {
    // NATS: AckWait 30 s ends at 30 s, delivery 2 to worker 1, acked at 31 s. Redis Streams:
    // the entry stays pending under worker 1 until it has been idle 30 s; claimed at 30 s.
    // Both: 2 effects, 1 duplicate.
    for broker in [
        "{ kind: nats, ack_wait: 30s }",
        "{ kind: redis-streams, min_idle: 30s }",
    ] {
        let r = scenario(broker, 1, "1s", "{ action: drop_ack, delivery: 1 }");
        assert_eq!(fired(&r), vec![1], "{broker}");
        assert_eq!(deliveries(&r), vec![(0, 1, 1), (30, 1, 2)], "{broker}");
        assert_eq!(r.ledger.effects.len(), 2, "{broker}");
        assert_eq!(r.end, 31 * S, "{broker}");
    }
}

#[test]
fn kafka_share_drop_ack_redelivers_when_the_acquisition_lock_ends() {
    // The share group's per-record ACCEPT never reaches the broker: the record's lock (30 s)
    // ends, it is delivered again at 30 s, accepted at 31 s. 2 effects.
    let r = scenario(
        "{ kind: kafka-share, record_lock_duration: 30s }",
        1,
        "1s",
        "{ action: drop_ack, delivery: 1 }",
    );
    assert_eq!(fired(&r), vec![1]);
    assert_eq!(deliveries(&r), vec![(0, 1, 1), (30, 1, 2)]);
    assert_eq!(r.ledger.effects.len(), 2);
}

#[test]
fn kafka_drop_ack_drops_the_commit_that_first_covers_the_record() {
    // Two records (at 0 and 1 s), one partition, one consumer. The group's first rebalance
    // settles at 3 s (the initial rebalance delay): record 1 is fetched at 3 s, handled 3-4 s,
    // and its commit (offset 1) at 4 s is dropped. Record 2, fetched at 4 s, is committed at
    // 5 s (offset 2), which covers record 1 too: both deleted at 5 s. Nothing is fetched again:
    // 2 deliveries, 2 effects, no duplicate.
    let text = "\
name: t
run: { duration: 2s, drain: 1h }
broker: { kind: kafka, partitions: 1 }
workload: { arrival: { every: 1s }, count: 2 }
consumer: { target: ack-after-work, workers: 1, restart_after: 1s }
provider: { effect_at: request, latency: { dist: fixed, value: 1s } }
chaos:
  - message: { action: drop_ack, seq: [1] }
";
    let r = run(&load_str("t.yaml", text, &[]).expect("a valid profile"));
    assert_eq!(fired(&r), vec![4]);
    assert_eq!(deliveries(&r), vec![(3, 1, 1), (4, 1, 1)]);
    let deleted: Vec<u64> = r
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Acked {
                seq,
                outcome: AckOutcome::Deleted,
                ..
            } => Some(u64::from(seq) * 100 + e.at / S),
            _ => None,
        })
        .collect();
    // (seq * 100 + instant): record 1 and record 2, each at 5 s.
    assert_eq!(deleted, vec![105, 205]);
    assert_eq!(r.ledger.effects.len(), 2);
}

#[test]
fn probability_and_times_bound_the_firings() {
    // drop_delivery of every delivery, at most 3 times: deliveries 1, 2, 3 are leased at 0, 30
    // and 60 s and dropped; delivery 4 at 90 s is handled, acked at 91 s. 1 effect.
    let r = scenario(
        "{ visibility_timeout: 30s }",
        1,
        "1s",
        "{ action: drop_delivery, times: 3 }",
    );
    assert_eq!(fired(&r), vec![0, 30, 60]);
    assert_eq!(
        deliveries(&r),
        vec![(0, 1, 1), (30, 1, 2), (60, 1, 3), (90, 1, 4)]
    );
    assert_eq!(r.ledger.effects.len(), 1);
    assert_eq!(r.end, 91 * S);
}
