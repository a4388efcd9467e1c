//! A retrying producer against a FIFO queue's deduplication window: every count worked out in
//! the comment above it.

use super::tests::{count, run, S};
use crate::metrics::analyse;
use crate::profile::load_str;
use crate::record::{EventKind, RunRecord};

const M: u64 = 60 * S;

const PROFILE: &str = include_str!("../../../../profiles/producer-retry-window.yaml");

/// Two orders at 0 s and 10 s; the first three answers of each lost, retries after 1m, 2m, 4m;
/// one worker, fixed 1 s per email, lease 30 s; `broker` is the broker section.
fn two_orders(broker: &str, target: &str) -> RunRecord {
    let text = format!(
        "name: t
run: {{ duration: 20s, drain: 1h }}
broker: {broker}
workload:
  arrival: {{ every: 10s }}
  count: 2
  producer: {{ first_attempts: 3, backoff: [1m, 2m, 4m] }}
consumer: {{ target: {target}, workers: 1 }}
provider: {{ effect_at: request, latency: {{ dist: fixed, value: 1s }} }}
"
    );
    run(&load_str("t.yaml", &text, &[]).expect("a valid profile"))
}

fn publishes(r: &RunRecord) -> Vec<(u64, u32, u32, Option<u32>)> {
    r.publishes
        .as_ref()
        .expect("the sends are recorded")
        .iter()
        .map(|p| (p.at / S, p.planned, p.attempt, p.seq))
        .collect()
}

#[test]
fn a_retry_past_the_five_minute_window_is_a_second_message_and_a_second_email() {
    // msg-1 sends at 0, 60, 180, 420 s; msg-2 at 10, 70, 190, 430 s. Window 5m from the first
    // accepted send: msg-1's id until 300 s, msg-2's until 310 s. So 60/70 and 180/190 are
    // dropped; 420 (>= 300) and 430 (>= 310) accepted as messages 3 and 4.
    let r = two_orders(
        "{ kind: sqs, visibility_timeout: 30s, fifo: true, dedup_window: 5m }",
        "ack-after-work",
    );
    assert_eq!(
        publishes(&r),
        vec![
            (0, 1, 1, Some(1)),
            (10, 2, 1, Some(2)),
            (60, 1, 2, None),
            (70, 2, 2, None),
            (180, 1, 3, None),
            (190, 2, 3, None),
            (420, 1, 4, Some(3)),
            (430, 2, 4, Some(4)),
        ]
    );
    let keys: Vec<String> = r.messages.iter().map(|m| m.key.to_string()).collect();
    assert_eq!(keys, vec!["msg-1", "msg-2", "msg-1", "msg-2"]);
    // Exactly 2 publishes per key. The worker takes each message at its publish (it is idle:
    // each email takes 1 s): 4 deliveries, 4 emails at 0, 10, 420, 430 s, each acked 1 s later.
    assert_eq!(count(&r, |k| matches!(k, EventKind::Published { .. })), 4);
    assert_eq!(count(&r, |k| matches!(k, EventKind::Delivered { .. })), 4);
    let emails: Vec<(u64, Option<u32>)> =
        r.ledger.effects.iter().map(|e| (e.at / S, e.seq)).collect();
    assert_eq!(
        emails,
        vec![(0, Some(1)), (10, Some(2)), (420, Some(3)), (430, Some(4))]
    );
    // Counted by key: 2 messages, 4 effects, 2 duplicates (exactly 1 per key), duplicate rate
    // 1.0; 2 duplicate publishes, 4 dropped; nothing lost, unfinished or dead-lettered; each
    // email is the first call of its delivery: no handler retry.
    let m = analyse(&r, 300 * S);
    assert_eq!((m.messages, m.deliveries, m.effects), (2, 4, 4));
    assert_eq!(
        (
            m.messages_with_effect,
            m.duplicate_effects,
            m.duplicate_rate
        ),
        (2, 2, 1.0)
    );
    assert_eq!(
        (m.duplicate_publishes, m.publishes_deduplicated),
        (Some(2), Some(4))
    );
    assert_eq!(
        (m.lost, m.unfinished, m.dlq, m.handler_retries),
        (0, 0, 0, 0)
    );
    // Each key is done at its first message's ack (1 s after publish): 2 done.
    assert_eq!(m.messages_done, 2);
    // The run ends when message 4's handler ends: 431 s.
    assert_eq!(r.end, 431 * S);
}

#[test]
fn a_ten_minute_window_drops_every_retry() {
    // msg-1's id is remembered until 600 s, msg-2's until 610 s: every retry (last at 420 and
    // 430 s) falls inside. 2 publishes in all, 6 dropped, 2 emails, no duplicate.
    let r = two_orders(
        "{ kind: sqs, visibility_timeout: 30s, fifo: true, dedup_window: 10m }",
        "ack-after-work",
    );
    assert_eq!(count(&r, |k| matches!(k, EventKind::Published { .. })), 2);
    let m = analyse(&r, 300 * S);
    assert_eq!((m.messages, m.effects, m.duplicate_effects), (2, 2, 0));
    assert_eq!(
        (m.duplicate_publishes, m.publishes_deduplicated),
        (Some(0), Some(6))
    );
    // The run waits for the last send (430 s) before it can end: nothing is left then.
    assert_eq!(r.end, 430 * S);
}

#[test]
fn a_standard_queue_publishes_every_attempt() {
    // No deduplication: all 8 sends are messages, 4 per key: 8 emails, 6 duplicates (3 per
    // key), 6 duplicate publishes, 0 dropped.
    let r = two_orders("{ kind: sqs, visibility_timeout: 30s }", "ack-after-work");
    let m = analyse(&r, 300 * S);
    assert_eq!((m.messages, m.deliveries, m.effects), (2, 8, 8));
    assert_eq!(m.duplicate_effects, 6);
    assert_eq!(
        (m.duplicate_publishes, m.publishes_deduplicated),
        (Some(6), Some(0))
    );
}

#[test]
fn a_consumer_that_deduplicates_by_key_sends_once() {
    // The same 4 broker messages as with 5 minutes; dedupe-table writes its effect for the first
    // message of each key and nothing for the second: 2 effects, 0 duplicates, 4 deliveries.
    let r = two_orders(
        "{ kind: sqs, visibility_timeout: 30s, fifo: true }",
        "dedupe-table",
    );
    let m = analyse(&r, 300 * S);
    assert_eq!((m.deliveries, m.effects, m.duplicate_effects), (4, 2, 0));
    assert_eq!((m.duplicate_publishes, m.lost), (Some(2), 0));
}

#[test]
fn the_deduplication_id_is_remembered_after_the_message_is_deleted() {
    // msg-1 at 0 s, handled and deleted at 1 s; its retries at 60 and 180 s find the id still
    // remembered (until 300 s) and are dropped although the queue is empty: 1 message per key
    // until 420 s.
    let r = two_orders(
        "{ kind: sqs, visibility_timeout: 30s, fifo: true, dedup_window: 5m }",
        "ack-after-work",
    );
    let acked_msg1 = r
        .events
        .iter()
        .find(|e| matches!(e.kind, EventKind::Acked { seq: 1, .. }))
        .map(|e| e.at);
    assert_eq!(acked_msg1, Some(S));
    assert!(publishes(&r).contains(&(180, 1, 3, None)));
}

#[test]
fn the_shipped_profile_shows_the_minute_seven_duplicate() {
    // profiles/producer-retry-window.yaml: 20 orders every 30 s, sends at 0, 1, 3, 7 minutes
    // after each, window 5m: per order attempts 2 and 3 dropped, attempt 4 accepted. 40 broker
    // messages, 40 emails (2 workers, 240 ms typical: every message is handled at once and
    // acked well within its 30 s lease), 20 duplicates (1 per order), 40 dropped sends.
    let s = load_str("producer-retry-window.yaml", PROFILE, &[]).unwrap();
    let r = run(&s);
    let m = analyse(&r, 300 * S);
    assert_eq!((m.messages, m.deliveries, m.effects), (20, 40, 40));
    assert_eq!(
        (m.duplicate_effects, m.redeliveries, m.lost, m.dlq),
        (20, 0, 0, 0)
    );
    assert_eq!(
        (m.duplicate_publishes, m.publishes_deduplicated),
        (Some(20), Some(40))
    );
    // Each second message goes out 7 minutes after its order's first: the last at 570 s + 7m.
    let last = r.messages.last().map(|m| m.published_at);
    assert_eq!(last, Some(570 * S + 7 * M));
    // With 10 minutes: 20 messages, 20 emails, 60 dropped sends.
    let s = load_str(
        "producer-retry-window.yaml",
        PROFILE,
        &["broker.dedup_window=10m".to_string()],
    )
    .unwrap();
    let m = analyse(&run(&s), 300 * S);
    assert_eq!(
        (m.messages, m.deliveries, m.effects, m.duplicate_effects),
        (20, 20, 20, 0)
    );
    assert_eq!(
        (m.duplicate_publishes, m.publishes_deduplicated),
        (Some(0), Some(60))
    );
}
