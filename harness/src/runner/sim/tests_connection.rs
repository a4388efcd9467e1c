//! `connection` faults on hand-derived scenarios: one message at 0 s, `ack-after-work` (a 10 s
//! provider call whose effect counts at the request, then the ack), a restart 1 s after a
//! death, and one connection rule on worker 1, on each broker kind.

use super::tests::{count, run, S};
use super::tests_kinds::deliveries;
use crate::profile::load_str;
use crate::record::{AckOutcome, EventKind, RunRecord};

/// One message at 0 s on `broker`, `workers` workers, and `rule` as the one chaos rule.
fn one_message(broker: &str, workers: u32, rule: &str) -> RunRecord {
    let text = format!(
        "\
name: t
run: {{ duration: 1s, drain: 1h }}
broker: {broker}
workload: {{ arrival: {{ every: 1s }}, count: 1 }}
consumer: {{ target: ack-after-work, workers: {workers}, restart_after: 1s }}
provider: {{ effect_at: request, latency: {{ dist: fixed, value: 10s }} }}
chaos:
  - connection: {rule}
"
    );
    run(&load_str("t.yaml", &text, &[]).expect("a valid profile"))
}

/// (instant in s, worker, outcome) of every ack the broker logged.
fn acks(r: &RunRecord) -> Vec<(u64, u32, AckOutcome)> {
    r.events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Acked {
                worker, outcome, ..
            } => Some((e.at / S, worker, outcome)),
            _ => None,
        })
        .collect()
}

/// (instant in s, worker) of every firing.
fn fired(r: &RunRecord) -> Vec<(u64, u32)> {
    r.events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::FaultFired { worker, .. } => Some((e.at / S, worker)),
            _ => None,
        })
        .collect()
}

const PARTITION_5S_FOR_45S: &str = "{ fault: partition, from: 5s, for: 45s, workers: [1] }";

#[test]
fn sqs_a_partition_longer_than_the_lease_redelivers_and_refuses_the_first_holders_ack() {
    // 0 s: worker 1 receives msg-1 (lease to 30 s), effect at 0 s. 5 s: its connection is
    // partitioned to 50 s. 10 s: its ack is held. 30 s: the lease ends; worker 2 receives
    // delivery 2 (a second effect), acked at 40 s: deleted. 50 s: the held ack arrives with
    // delivery 1's receipt, and `stale_ack: reject` refuses it (the message already gone).
    // 2 deliveries, 2 effects (1 duplicate), 1 firing; the run ends when worker 1, told at
    // 50 s, asks for its next message.
    let r = one_message("{ visibility_timeout: 30s }", 2, PARTITION_5S_FOR_45S);
    assert_eq!(deliveries(&r), vec![(0, 1, 1), (30, 2, 2)]);
    assert_eq!(r.ledger.effects.len(), 2);
    assert_eq!(
        acks(&r),
        vec![(40, 2, AckOutcome::Deleted), (50, 1, AckOutcome::StaleGone)]
    );
    assert_eq!(fired(&r), vec![(5, 1)]);
    assert_eq!(r.end, 50 * S);
}

#[test]
fn sqs_latency_below_the_lease_changes_only_the_timings() {
    // One worker, 2 s each way from 0 s. Its first fetch reaches the broker at 2 s, which
    // hands msg-1 out then (lease to 32 s); the delivery reaches the worker at 4 s (call 4-14
    // s). The ack leaves at 14 s, reaches the broker at 16 s (in the lease: deleted), its
    // answer the worker at 18 s, which then asks for more: the run ends at 18 s (10 s without
    // the latency). 1 delivery, 1 effect, no stale ack.
    let r = one_message(
        "{ visibility_timeout: 30s }",
        1,
        "{ fault: latency, delay: 2s, from: 0s, for: 1m }",
    );
    assert_eq!(deliveries(&r), vec![(2, 1, 1)]);
    assert_eq!(r.ledger.effects.len(), 1);
    assert_eq!(r.ledger.effects[0].at, 4 * S);
    assert_eq!(acks(&r), vec![(16, 1, AckOutcome::Deleted)]);
    assert_eq!(fired(&r), vec![(0, 1)]);
    assert_eq!(r.end, 18 * S);
}

#[test]
fn sqs_a_cut_holds_nothing() {
    // An HTTP connection holds nothing: cut at 5 s, worker 1 acks at 10 s as without it.
    let r = one_message(
        "{ visibility_timeout: 30s }",
        2,
        "{ fault: cut, at: 5s, workers: [1] }",
    );
    assert_eq!(deliveries(&r), vec![(0, 1, 1)]);
    assert_eq!(acks(&r), vec![(10, 1, AckOutcome::Deleted)]);
    assert_eq!(fired(&r), vec![(5, 1)]);
    assert_eq!(r.end, 10 * S);
}

#[test]
fn rabbitmq_a_cut_mid_handler_requeues_at_once_and_the_late_ack_is_refused() {
    // 0 s: worker 1 gets msg-1, effect at 0 s. 5 s: its connection is cut: RabbitMQ requeues
    // msg-1 at once and worker 2 (idle) gets delivery 2, a second effect at 5 s. 10 s: worker
    // 1's ack belongs to the closed channel: refused. 15 s: worker 2 acks: deleted.
    // 1 duplicate effect.
    let r = one_message(
        "{ kind: rabbitmq }",
        2,
        "{ fault: cut, at: 5s, workers: [1] }",
    );
    assert_eq!(deliveries(&r), vec![(0, 1, 1), (5, 2, 2)]);
    assert_eq!(r.ledger.effects.len(), 2);
    assert_eq!(
        acks(&r),
        vec![
            (10, 1, AckOutcome::StaleRejected),
            (15, 2, AckOutcome::Deleted)
        ]
    );
    assert_eq!(r.end, 15 * S);
}

#[test]
fn rabbitmq_requeues_when_the_heartbeat_closes_a_partitioned_connection() {
    // Heartbeat 30 s; worker 1 partitioned from 5 s for 90 s. 10 s: its ack is held. 65 s
    // (5 s + two heartbeats): the connection is closed: msg-1 is requeued and worker 2 gets
    // delivery 2 (a second effect at 65 s), acked at 75 s. 95 s: the held ack reaches a
    // message already gone: refused (stale, the message gone). 2 effects, 1 duplicate; the
    // run ends at 95 s.
    let r = one_message(
        "{ kind: rabbitmq, heartbeat: 30s }",
        2,
        "{ fault: partition, from: 5s, for: 90s, workers: [1] }",
    );
    assert_eq!(deliveries(&r), vec![(0, 1, 1), (65, 2, 2)]);
    assert_eq!(r.ledger.effects.len(), 2);
    assert_eq!(
        acks(&r),
        vec![(75, 2, AckOutcome::Deleted), (95, 1, AckOutcome::StaleGone)]
    );
    assert_eq!(r.end, 95 * S);
    // With `heartbeat: 10s` the close comes at 5 s + 20 s = 25 s: delivery 2 then.
    let r = one_message(
        "{ kind: rabbitmq, heartbeat: 10s }",
        2,
        "{ fault: partition, from: 5s, for: 90s, workers: [1] }",
    );
    assert_eq!(deliveries(&r), vec![(0, 1, 1), (25, 2, 2)]);
    // With the default 60 s it would come at 125 s, after the window: the held ack arrives at
    // 95 s and deletes msg-1: 1 delivery, 1 effect.
    let r = one_message(
        "{ kind: rabbitmq }",
        2,
        "{ fault: partition, from: 5s, for: 90s, workers: [1] }",
    );
    assert_eq!(deliveries(&r), vec![(0, 1, 1)]);
    assert_eq!(acks(&r), vec![(95, 1, AckOutcome::Deleted)]);
}

#[test]
fn rabbitmq_a_partition_shorter_than_two_heartbeats_loses_nothing() {
    // Partitioned from 5 s for 45 s, with the default heartbeat (60 s) and with 30 s (the
    // window is then between one and two heartbeats): the close would come at 125 s or 65 s,
    // after the window's end, so the connection stays open. The ack held at 10 s arrives at
    // 50 s and deletes msg-1: 1 delivery, 1 effect.
    for broker in ["{ kind: rabbitmq }", "{ kind: rabbitmq, heartbeat: 30s }"] {
        let r = one_message(broker, 2, PARTITION_5S_FOR_45S);
        assert_eq!(deliveries(&r), vec![(0, 1, 1)], "{broker}");
        assert_eq!(r.ledger.effects.len(), 1, "{broker}");
        assert_eq!(acks(&r), vec![(50, 1, AckOutcome::Deleted)], "{broker}");
        assert_eq!(r.end, 50 * S, "{broker}");
    }
}

#[test]
fn rabbitmq_a_dropping_partition_closes_the_connection_at_its_end() {
    // Heartbeat 60 s; worker 1 partitioned from 5 s for 45 s, `frames: drop`. Its ack at 10 s
    // is lost. 50 s: the window ends and the connection closes (before the heartbeat's 125 s):
    // msg-1 is requeued. Worker 1 learns then that its ack was lost and asks for more; of the
    // two waiting workers the lowest, worker 1, gets delivery 2 (a second effect at 50 s),
    // acked at 60 s. The broker never saw the lost ack: 1 ack logged, 2 effects (1
    // duplicate), no stale ack.
    let r = one_message(
        "{ kind: rabbitmq }",
        2,
        "{ fault: partition, from: 5s, for: 45s, frames: drop, workers: [1] }",
    );
    assert_eq!(deliveries(&r), vec![(0, 1, 1), (50, 1, 2)]);
    assert_eq!(r.ledger.effects.len(), 2);
    assert_eq!(acks(&r), vec![(60, 1, AckOutcome::Deleted)]);
    assert_eq!(fired(&r), vec![(5, 1)]);
    assert_eq!(r.end, 60 * S);
}

#[test]
fn nats_a_held_ack_after_ack_wait_acts_on_the_redelivered_message() {
    // AckWait 30 s; worker 1 partitioned from 5 s for 30 s. Its ack is held at 10 s. 30 s:
    // AckWait ends: worker 2 gets delivery 2 (a second effect). 35 s: the held ack arrives;
    // NATS matches acks by stream sequence, so it acks the message under worker 2 (a stale
    // ack that deletes). 40 s: worker 2's own ack finds it gone (stale, the message gone).
    // 1 duplicate.
    let r = one_message(
        "{ kind: nats, ack_wait: 30s }",
        2,
        "{ fault: partition, from: 5s, for: 30s, workers: [1] }",
    );
    assert_eq!(deliveries(&r), vec![(0, 1, 1), (30, 2, 2)]);
    assert_eq!(r.ledger.effects.len(), 2);
    assert_eq!(
        acks(&r),
        vec![
            (35, 1, AckOutcome::StaleDeleted),
            (40, 2, AckOutcome::StaleGone)
        ]
    );
    assert_eq!(r.end, 40 * S);
}

#[test]
fn redis_streams_a_partitioned_owners_entry_waits_for_a_claim() {
    // min_idle 30 s, claimed by an idle consumer the instant it is due. Worker 1 partitioned
    // from 5 s for 45 s: the entry stays in its pending list until 30 s, when worker 2 claims
    // it (delivery 2, a second effect), acking at 40 s. 50 s: worker 1's held XACK finds the
    // entry acked already. 1 duplicate.
    let r = one_message(
        "{ kind: redis-streams, min_idle: 30s }",
        2,
        PARTITION_5S_FOR_45S,
    );
    assert_eq!(deliveries(&r), vec![(0, 1, 1), (30, 2, 2)]);
    assert_eq!(r.ledger.effects.len(), 2);
    assert_eq!(acks(&r)[0], (40, 2, AckOutcome::Deleted));
    assert_eq!(r.end, 50 * S);
}

#[test]
fn a_dropping_partition_loses_the_ack_and_the_lease_decides() {
    // SQS, `frames: drop`: worker 1's ack at 10 s is lost; it learns at 50 s. The lease ends at
    // 30 s: worker 2 gets delivery 2 and deletes it at 40 s. Nothing of worker 1 reaches the
    // broker: 1 ack logged, 2 effects.
    let r = one_message(
        "{ visibility_timeout: 30s }",
        2,
        "{ fault: partition, from: 5s, for: 45s, frames: drop, workers: [1] }",
    );
    assert_eq!(deliveries(&r), vec![(0, 1, 1), (30, 2, 2)]);
    assert_eq!(acks(&r), vec![(40, 2, AckOutcome::Deleted)]);
    assert_eq!(r.end, 50 * S);
}

#[test]
fn a_partitioned_idle_worker_is_handed_nothing_until_the_window_closes() {
    // One worker, partitioned from 0 s for 20 s, waiting for a message: msg-1 (published at
    // 0 s) waits at the broker; the window closes at 20 s and the worker gets it then.
    let r = one_message(
        "{ visibility_timeout: 30s }",
        1,
        "{ fault: partition, from: 0s, for: 20s }",
    );
    assert_eq!(deliveries(&r), vec![(20, 1, 1)]);
    assert_eq!(r.end, 30 * S);
    assert_eq!(count(&r, |k| matches!(k, EventKind::FaultFired { .. })), 1);
}

/// Kafka's group forms 3 s after the first join (the initial rebalance delay), so the one
/// record is fetched at 3 s, by worker 1 (the range assignor gives partition 0 to the first
/// member).
const KAFKA: &str =
    "{ kind: kafka, partitions: 1, enable_auto_commit: false, session_timeout: 10s }";

#[test]
fn kafka_a_cut_keeps_the_membership_and_the_commit_goes_through() {
    // 3 s: worker 1 fetches the record (effect at 3 s). 5 s: its connection is cut; the client
    // reconnects and the member stays (heartbeats go on). 13 s: its commit is accepted. One
    // effect, no rebalance past the first.
    let r = one_message(KAFKA, 2, "{ fault: cut, at: 5s, workers: [1] }");
    assert_eq!(deliveries(&r), vec![(3, 1, 1)]);
    assert_eq!(acks(&r), vec![(13, 1, AckOutcome::Deleted)]);
    assert_eq!(fired(&r), vec![(5, 1)]);
    assert_eq!(r.ledger.effects.len(), 1);
    assert_eq!(r.end, 13 * S);
}

#[test]
fn kafka_a_partition_past_the_session_timeout_removes_the_member_and_fences_its_commit() {
    // 3 s: the group forms (generation 1), worker 1 fetches the record, effect at 3 s; its last
    // heartbeat is heard then. 5-35 s: worker 1 is partitioned. 13 s: 10 s (session_timeout)
    // without a heartbeat: the coordinator removes it (generation 2, session timeout) and worker
    // 2 takes partition 0 from its committed offset (none yet): delivery 2, a second effect at
    // 13 s; worker 1's commit, made at 13 s, is held by the partition. 23 s: worker 2's commit
    // is accepted. 35 s: the window closes and worker 1's commit arrives from a removed member:
    // fenced. 2 effects, 1 duplicate.
    let r = one_message(
        KAFKA,
        2,
        "{ fault: partition, from: 5s, for: 30s, workers: [1] }",
    );
    assert_eq!(deliveries(&r), vec![(3, 1, 1), (13, 2, 2)]);
    assert_eq!(
        acks(&r),
        vec![
            (23, 2, AckOutcome::Deleted),
            (35, 1, AckOutcome::StaleRejected)
        ]
    );
    let rebalances: Vec<u64> = r
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Rebalanced { .. }))
        .map(|e| e.at / S)
        .collect();
    assert_eq!(rebalances, vec![3, 13]);
    assert_eq!(r.ledger.effects.len(), 2);
    assert_eq!(r.end, 35 * S);
}

#[test]
fn kafka_share_a_cut_releases_the_records_the_session_acquired() {
    // 0 s: worker 1 acquires the record (a share group has no join delay), effect at 0 s. 5 s:
    // its connection is cut: the share session ends and the record is released at once; worker
    // 2 acquires it (delivery 2, a second effect). 10 s: worker 1's ACCEPT comes from a closed
    // session: refused. 15 s: worker 2's is accepted. 2 effects, 1 duplicate.
    let r = one_message(
        "{ kind: kafka-share }",
        2,
        "{ fault: cut, at: 5s, workers: [1] }",
    );
    assert_eq!(deliveries(&r), vec![(0, 1, 1), (5, 2, 2)]);
    assert_eq!(
        acks(&r),
        vec![
            (10, 1, AckOutcome::StaleRejected),
            (15, 2, AckOutcome::Deleted)
        ]
    );
    assert_eq!(r.ledger.effects.len(), 2);
    assert_eq!(r.end, 15 * S);
}
