//! The broker kinds driven by the sim executor: deaths, kills and targets on hand-derived
//! scenarios (one message, two workers, a fixed 10 s provider, restart after 1 s).

use super::tests::{count, run, S};
use crate::profile::*;
use crate::record::{AckOutcome, EventKind, RunRecord};

/// One message at 0 s, two workers, provider fixed 10 s, on the broker `broker`, killing the
/// worker holding delivery 1 when its call is answered.
fn killed_at_call_answered(broker: &str) -> Scenario {
    let text = format!(
        "\
name: t
run: {{ duration: 1s, drain: 1h }}
broker: {broker}
workload: {{ arrival: {{ every: 1s }}, count: 1 }}
consumer: {{ target: ack-after-work, workers: 2, restart_after: 1s }}
provider: {{ effect_at: request, latency: {{ dist: fixed, value: 10s }} }}
chaos:
  - kill_worker: {{ point: call_answered, delivery: 1 }}
"
    );
    load_str("t.yaml", &text, &[]).expect("a valid profile")
}

/// (instant in s, worker, delivery) of every delivery.
pub(super) fn deliveries(r: &RunRecord) -> Vec<(u64, u32, u32)> {
    r.events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Delivered {
                worker, delivery, ..
            } => Some((e.at / S, worker, delivery)),
            _ => None,
        })
        .collect()
}

#[test]
fn rabbitmq_redelivers_a_killed_consumers_message_at_the_kill_instant() {
    // Worker 1 gets delivery 1 at 0 s; its call is answered (the effect happened) at 10 s and
    // it is killed there: its connection closes and the message is requeued at 10 s. Worker 2
    // is idle: delivery 2 at 10 s, answered and acked at 20 s. 2 effects, 1 ack.
    let r = run(&killed_at_call_answered("{ kind: rabbitmq }"));
    assert_eq!(deliveries(&r), vec![(0, 1, 1), (10, 2, 2)]);
    assert_eq!(r.ledger.effects.len(), 2);
    assert_eq!(r.end, 20 * S);
}

#[test]
fn nats_redelivers_a_killed_consumers_message_when_ack_wait_ends() {
    // Killed at 10 s as above; NATS does nothing then. Worker 1 is restarted at 11 s; AckWait
    // ends at 30 s and the lowest idle worker, worker 1, gets delivery 2; acked at 40 s.
    let r = run(&killed_at_call_answered("{ kind: nats, ack_wait: 30s }"));
    assert_eq!(deliveries(&r), vec![(0, 1, 1), (30, 1, 2)]);
    assert_eq!(r.ledger.effects.len(), 2);
    assert_eq!(r.end, 40 * S);
}

#[test]
fn redis_streams_leaves_a_dead_owners_entry_until_someone_claims_it() {
    // Killed at 10 s; the entry stays in worker 1's pending list. With min_idle 30s an idle
    // consumer claims it at 30 s (worker 1, restarted at 11 s); with a claimer every 10
    // minutes it waits for the 600 s tick.
    let r = run(&killed_at_call_answered(
        "{ kind: redis-streams, min_idle: 30s }",
    ));
    assert_eq!(deliveries(&r), vec![(0, 1, 1), (30, 1, 2)]);
    let r = run(&killed_at_call_answered(
        "{ kind: redis-streams, min_idle: 30s, claim_every: 10m }",
    ));
    assert_eq!(deliveries(&r), vec![(0, 1, 1), (600, 1, 2)]);
    assert_eq!(r.end, 610 * S);
}

/// The Thursday: 4 workers, one order every 50 s (108), provider 31-40 s, effect at request.
fn thursday(broker: &str, target: &str) -> Scenario {
    let text = format!(
        "\
name: t
run: {{ duration: 90m, drain: 30m }}
broker: {broker}
workload: {{ arrival: {{ every: 50s }}, count: 108 }}
consumer: {{ target: {target}, workers: 4, restart_after: 1s }}
provider:
  effect_at: request
  phases: [ {{ from: 0s, to: 2h, latency: {{ dist: uniform, min: 31s, max: 40s }} }} ]
"
    );
    load_str("t.yaml", &text, &[]).expect("a valid profile")
}

fn stale_acks(r: &RunRecord) -> usize {
    count(r, |k| {
        matches!(
            k,
            EventKind::Acked { outcome, .. } if *outcome != AckOutcome::Deleted
        )
    })
}

#[test]
fn the_thursday_on_each_kind() {
    // NATS and Redis: delivery 2 at 30 s (AckWait / min idle), delivery 1's late ack at
    // 31-40 s accepted: 2 deliveries and 2 effects per order, both acks stale.
    for broker in [
        "{ kind: nats, ack_wait: 30s, max_deliver: 3 }",
        "{ kind: redis-streams, min_idle: 30s, max_deliveries: 3 }",
    ] {
        let r = run(&thursday(broker, "ack-after-work"));
        assert_eq!(r.ledger.effects.len(), 216, "{broker}");
        assert_eq!(count(&r, |k| matches!(k, EventKind::Delivered { .. })), 216);
        assert_eq!(stale_acks(&r), 216);
        assert_eq!(
            count(&r, |k| matches!(k, EventKind::DeadLettered { .. })),
            0
        );
    }
    // RabbitMQ: no lease timer; one delivery, one effect, one ack each.
    let r = run(&thursday("{ kind: rabbitmq }", "ack-after-work"));
    assert_eq!(r.ledger.effects.len(), 108);
    assert_eq!(count(&r, |k| matches!(k, EventKind::Delivered { .. })), 108);
    assert_eq!(stale_acks(&r), 0);
}

#[test]
fn heartbeat_holds_the_message_on_nats_and_redis_streams() {
    // Every 10 s the holder sends +WPI (NATS) or XCLAIMs its own entry (Redis): AckWait / idle
    // time restart, the 31-40 s call ends inside them: one delivery and one effect per order.
    for broker in [
        "{ kind: nats, ack_wait: 30s, max_deliver: 3 }",
        "{ kind: redis-streams, min_idle: 30s, max_deliveries: 3 }",
    ] {
        let r = run(&thursday(broker, "heartbeat"));
        assert_eq!(r.ledger.effects.len(), 108, "{broker}");
        assert_eq!(count(&r, |k| matches!(k, EventKind::Delivered { .. })), 108);
    }
}

#[test]
fn claim_then_send_hands_back_with_each_kinds_idiom() {
    // d1 at 0 s claims and sends; at 30 s AckWait / min idle ends and d2 finds a claim 30 s old
    // (< the 2m window): it hands the message back for 2 minutes (NATS: nak with that delay;
    // Redis: the owner's XCLAIM ... IDLE, at most min_idle: claimable at 60 s). d1's answer at
    // 31-40 s stamps the claim and its late ack is accepted on both kinds: the message is done
    // before the hand-back ends. 2 deliveries, 1 email, nothing dead per order.
    for broker in [
        "{ kind: nats, ack_wait: 30s, max_deliver: 3 }",
        "{ kind: redis-streams, min_idle: 30s, max_deliveries: 3 }",
    ] {
        let r = run(&thursday(broker, "claim-then-send"));
        assert_eq!(r.ledger.effects.len(), 108, "{broker}");
        assert_eq!(count(&r, |k| matches!(k, EventKind::Delivered { .. })), 216);
        assert_eq!(
            count(&r, |k| matches!(k, EventKind::DeadLettered { .. })),
            0
        );
        assert_eq!(stale_acks(&r), 108);
    }
}

#[test]
fn claim_then_send_on_rabbitmq_uses_a_retry_queue() {
    // One message, consumer_timeout 20s checked every 10s: delivery 1 at 0 s claims and calls
    // (10 s provider, so it acks at 10 s before any timeout): 1 delivery. Then with a 40 s call:
    // the channel closes at the 30 s tick (age 30 s > 20 s): requeued, d2 at 30 s finds the
    // claim 30 s old: hands back for 2m through the retry queue (acked, back at 150 s); d1's
    // answer at 40 s stamps sent_at, its ack fails (closed channel); d3 at 150 s finds the stamp
    // and acks. 1 effect, 3 deliveries, 1 stale ack.
    let text = "\
name: t
run: { duration: 1s, drain: 1h }
broker: { kind: rabbitmq, consumer_timeout: 20s, timeout_check_every: 10s }
workload: { arrival: { every: 1s }, count: 1 }
consumer: { target: claim-then-send, workers: 2, restart_after: 1s }
provider: { effect_at: request, latency: { dist: fixed, value: 40s } }
";
    let r = run(&load_str("t.yaml", text, &[]).unwrap());
    assert_eq!(deliveries(&r), vec![(0, 1, 1), (30, 2, 2), (150, 1, 3)]);
    assert_eq!(r.ledger.effects.len(), 1);
    assert_eq!(stale_acks(&r), 1);
}
