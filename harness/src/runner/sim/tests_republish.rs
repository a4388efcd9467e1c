//! A built-in target that retries as a framework does (`consumer.options.republish`): each
//! expected count is worked out in the comment above it.

use super::tests::{run, S};
use crate::metrics::accounting::{account, per_message};
use crate::profile::*;
use crate::record::{AckOutcome, EventKind, Republish, RunRecord};

/// One worker, one message at 0 s, provider fixed 1 s, its first `failing` calls answered 500
/// (a phase from 0 s to `failing` seconds: one call per second), `republish` as given.
fn scenario(kind: &str, failing: u64, republish: &str) -> Scenario {
    let text = format!(
        "name: t\nrun: {{ duration: 1s, drain: 1h }}\nbroker: {{ kind: {kind} }}\n\
         workload: {{ arrival: {{ every: 1s }}, count: 1 }}\n\
         consumer: {{ target: ack-after-work, workers: 1, options: {{ republish: {republish} }} }}\n\
         provider: {{ latency: {{ dist: fixed, value: 1s }}, phases: [{{ from: 0s, to: {failing}s, \
         errors: {{ status: 500, rate: 1 }} }}] }}\n"
    );
    load_str("t.yaml", &text, &[]).expect("a valid profile")
}

fn republishes(r: &RunRecord) -> Vec<(u64, u32, Republish)> {
    r.events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Republished { delivery, to, .. } => Some((e.at / S, delivery, to)),
            _ => None,
        })
        .collect()
}

fn counts(r: &RunRecord) -> (u64, u64, u64, u64, u64, u64, u64) {
    let a = account(r, &per_message(r), u64::MAX);
    (
        a.deliveries,
        a.effects,
        a.lost,
        a.failed,
        a.dlq,
        a.consumer_retries,
        a.handler_retries,
    )
}

#[test]
fn a_failed_call_is_retried_by_publishing_the_message_again_after_its_backoff() {
    // Delivery 1 at 0 s, its call fails at 1 s (the phase covers calls starting before 1 s):
    // republished with the backoff of failure 1, base 2 s: due at 3 s. Delivery 2 at 3 s, its
    // call 3..4 s accepted (effect at 3 s, at the request), acked at 4 s. 2 deliveries,
    // 1 effect, 1 consumer retry (and handler retry), nothing lost.
    for kind in ["sqs", "rabbitmq"] {
        let r = run(&scenario(
            kind,
            1,
            "{ max_retries: 1, base: 2s, cap: 2s, jitter: 0 }",
        ));
        assert_eq!(republishes(&r), [(1, 1, Republish::Delayed)], "{kind}");
        assert_eq!(counts(&r), (2, 1, 0, 0, 0, 1, 1), "{kind}");
        assert_eq!(r.end, 4 * S, "{kind}");
    }
}

#[test]
fn out_of_retries_a_message_is_dead_lettered_or_acked_as_failed_never_lost() {
    // Every call fails (the phase covers 10 s). Delivery 1 at 0 s fails at 1 s, republished
    // (due 2 s); delivery 2 at 2 s fails at 3 s: out of retries (1).
    // - exhausted: dead_letter: the framework's dead-letter queue takes it; the delivery's ack
    //   removes the copy it replaced. 2 deliveries, 0 effects, 1 DLQ (without effect), 0 lost.
    // - exhausted: ack: deleted after a failed attempt: failed, not lost.
    let dead = run(&scenario(
        "rabbitmq",
        10,
        "{ max_retries: 1, base: 1s, cap: 1s, jitter: 0, exhausted: dead_letter }",
    ));
    assert_eq!(
        republishes(&dead),
        [(1, 1, Republish::Delayed), (3, 2, Republish::DeadLetter)]
    );
    assert!(dead.events.iter().any(|e| matches!(
        e.kind,
        EventKind::Acked {
            delivery: 2,
            outcome: AckOutcome::Superseded,
            ..
        }
    )));
    assert_eq!(counts(&dead), (2, 0, 0, 0, 1, 1, 1));
    let acked = run(&scenario(
        "sqs",
        10,
        "{ max_retries: 1, base: 1s, cap: 1s, jitter: 0, exhausted: ack }",
    ));
    assert_eq!(counts(&acked), (2, 0, 0, 1, 0, 1, 1));
}
