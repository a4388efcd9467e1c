//! FIFO message groups: a poison message at one group's head holds back its group only. Every
//! count worked out in the comment above it.

use super::tests::{count, run, S};
use crate::metrics::analyse;
use crate::profile::load_str;
use crate::record::{EventKind, RunRecord};

/// Four messages one second apart (msg-1 at 0 s ... msg-4 at 3 s), two groups round robin
/// (msg-1, msg-3 in group-1; msg-2, msg-4 in group-2), msg-1 poison (its worker crashes, back
/// after 1 s); two workers, lease 30 s, 3 deliveries, 1 s per email; `broker` the broker section.
fn two_groups(broker: &str, groups: &str) -> RunRecord {
    let text = format!(
        "name: t
run: {{ duration: 4s, drain: 1h }}
broker: {broker}
workload:
  arrival: {{ every: 1s }}
  count: 4
  poison: {{ keys: [msg-1] }}
  {groups}
consumer: {{ target: ack-after-work, workers: 2, restart_after: 1s }}
provider: {{ effect_at: request, latency: {{ dist: fixed, value: 1s }} }}
"
    );
    run(&load_str("t.yaml", &text, &[]).expect("a valid profile"))
}

/// (instant in s, seq, delivery) of every delivery.
fn deliveries(r: &RunRecord) -> Vec<(u64, u32, u32)> {
    r.events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Delivered { seq, delivery, .. } => Some((e.at / S, seq, delivery)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_poison_message_at_a_groups_head_blocks_only_that_group() {
    // msg-1 (group-1) is delivered at 0, 30 and 60 s (each lease of 30 s ends with its worker
    // dead), and dead-lettered at 90 s. While it is in flight group-1 hands out nothing: msg-3,
    // published at 2 s, waits until 90 s. group-2 goes on: msg-2 at 1 s (acked at 2 s), msg-4
    // at 3 s (acked at 4 s). msg-3 is delivered at 90 s, emailed at 90 s and acked at 91 s.
    let r = two_groups(
        "{ kind: sqs, visibility_timeout: 30s, max_receives: 3, fifo: true }",
        "groups: 2",
    );
    assert_eq!(
        deliveries(&r),
        vec![
            (0, 1, 1),
            (1, 2, 1),
            (3, 4, 1),
            (30, 1, 2),
            (60, 1, 3),
            (90, 3, 1)
        ]
    );
    assert_eq!(
        count(&r, |k| matches!(k, EventKind::DeadLettered { seq: 1, .. })),
        1
    );
    // 4 messages, 6 deliveries, 3 emails (msg-2, msg-4, msg-3), 1 DLQ entry without effect, 3
    // crashes; the run ends at msg-3's ack, 91 s.
    let m = analyse(&r, 300 * S);
    assert_eq!(
        (m.messages, m.deliveries, m.effects, m.dlq_without_effect),
        (4, 6, 3, 1)
    );
    assert_eq!((m.worker_crashes, r.end), (3, 91 * S));
    // group-1 is blocked from msg-3's publish (2 s) to msg-1's move to the DLQ (90 s): 88 s, 2
    // messages in the queue at most; group-2 never has a message waiting behind another: 0 s,
    // 1 at most.
    let g: Vec<(String, u64, u64, u64)> = m
        .groups
        .iter()
        .map(|g| (g.group.clone(), g.messages, g.max_backlog, g.blocked / S))
        .collect();
    assert_eq!(
        g,
        vec![
            ("group-1".to_string(), 2, 2, 88),
            ("group-2".to_string(), 2, 1, 0)
        ]
    );
}

#[test]
fn without_groups_the_poison_message_holds_nothing_back() {
    // A standard queue: msg-3 is delivered at its publish (2 s), to the worker that was
    // restarted at 1 s; the rest as above. Only msg-1 waits for its leases.
    let r = two_groups(
        "{ kind: sqs, visibility_timeout: 30s, max_receives: 3 }",
        "",
    );
    assert_eq!(
        deliveries(&r),
        vec![
            (0, 1, 1),
            (1, 2, 1),
            (2, 3, 1),
            (3, 4, 1),
            (30, 1, 2),
            (60, 1, 3)
        ]
    );
    assert!(analyse(&r, 300 * S).groups.is_empty());
    // A FIFO queue with one group per key (no workload.groups) holds nothing back either.
    let r = two_groups(
        "{ kind: sqs, visibility_timeout: 30s, max_receives: 3, fifo: true }",
        "",
    );
    assert_eq!(deliveries(&r)[2], (2, 3, 1));
}

#[test]
fn order_within_a_group_holds_under_redeliveries() {
    // One group of three messages (0, 1, 2 s); two workers, 1 s per email, lease 30 s. The
    // first delivery of msg-1 and of msg-2 dies at its provider call (a kill), so each waits
    // for its lease to end. msg-1: delivered at 0 s (killed), again at 30 s, acked at 31 s;
    // msg-2 and msg-3 wait behind it although a worker is idle from 1 s. msg-2: delivered at
    // 31 s (killed), again at 61 s when its lease ends, acked at 62 s; msg-3 delivered at 62 s,
    // acked at 63 s. First deliveries come in publish order, each after the one before it was
    // deleted.
    let text = "name: t
run: { duration: 3s, drain: 1h }
broker: { kind: sqs, visibility_timeout: 30s, fifo: true }
workload: { arrival: { every: 1s }, count: 3, groups: 1 }
consumer: { target: ack-after-work, workers: 2, restart_after: 1s }
provider: { effect_at: response, latency: { dist: fixed, value: 1s } }
chaos: [ { kill_worker: { point: call_started, delivery: 1, keys: [msg-1, msg-2] } } ]
";
    let r = run(&load_str("t.yaml", text, &[]).unwrap());
    assert_eq!(
        deliveries(&r),
        vec![(0, 1, 1), (30, 1, 2), (31, 2, 1), (61, 2, 2), (62, 3, 1)]
    );
    // group-1 is blocked from msg-2's publish (1 s) to msg-3's delivery (62 s): 61 s; three
    // messages in the queue at most (1 to 31 s).
    let m = analyse(&r, 300 * S);
    assert_eq!((m.effects, m.duplicate_effects, r.end), (3, 0, 63 * S));
    assert_eq!(m.groups.len(), 1);
    assert_eq!((m.groups[0].max_backlog, m.groups[0].blocked), (3, 61 * S));
}
