//! The store-backed and lease-extending targets on hand-derived scenarios.

use std::time::Duration;

use super::tests::{base, count, run, secs, S};
use crate::profile::*;
use crate::record::{EffectSource, EventKind, RunRecord};

fn kill_at(point: KillPoint, delivery: Option<u32>, delay: Duration) -> ChaosRule {
    ChaosRule::new(KillRule {
        delivery,
        delay,
        ..KillRule::new(KillTrigger::Point(point))
    })
}

fn incident() -> Scenario {
    let mut s = base();
    s.run = RunSpec {
        duration: secs(5400),
        drain: secs(1800),
        sample_every: None,
        time_scale: 1.0,
        publish_window: 1024,
        record: Record::Full,
    };
    s.workload.arrival = Arrival::Every(secs(50));
    s.workload.count = Some(108);
    s.broker.max_deliveries = 3;
    s.consumer.workers = 4;
    s.provider.latency = LatencyDist::Uniform {
        min: secs(31),
        max: secs(40),
    };
    s
}

fn effects_per_key(r: &RunRecord) -> Vec<usize> {
    let mut v = vec![0; r.messages.len()];
    for e in &r.ledger.effects {
        v[(e.seq.unwrap() - 1) as usize] += 1;
    }
    v
}

#[test]
fn claim_then_send_turns_the_incident_into_one_email_each() {
    // d1 at 0 claims and sends (31-40 s); its lease ends at 30 s; d2 at 30 s finds a claim 30 s
    // old (< 2m): hands the message back for 2m; d1's answer stamps sent_at, its ack is stale;
    // at 150 s d2's lease ends (delivery 2 of 3: back to the queue); d3 finds the stamp: ack.
    let mut s = incident();
    s.consumer.target = "claim-then-send".into();
    let r = run(&s);
    assert_eq!(r.ledger.effects.len(), 108);
    assert!(effects_per_key(&r).iter().all(|&n| n == 1));
    assert_eq!(
        count(&r, |k| matches!(k, EventKind::DeadLettered { .. })),
        0
    );
    assert_eq!(count(&r, |k| matches!(k, EventKind::Delivered { .. })), 324);
    let first = &r.messages[0];
    assert_eq!(first.published_at, 0);
    let d: Vec<u64> = r
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Delivered { seq: 1, .. } => Some(e.at / S),
            _ => None,
        })
        .collect();
    assert_eq!(d, vec![0, 30, 150]);
}

#[test]
fn heartbeat_keeps_the_lease_through_a_slow_call() {
    // Extends every 10 s to a full 30 s lease: the 31-40 s call finishes inside the lease.
    let mut s = incident();
    s.consumer.target = "heartbeat".into();
    let r = run(&s);
    assert_eq!(r.ledger.effects.len(), 108);
    assert_eq!(count(&r, |k| matches!(k, EventKind::Delivered { .. })), 108);
    assert_eq!(
        count(
            &r,
            |k| matches!(k, EventKind::Acked { outcome, .. } if outcome.is_stale())
        ),
        0
    );
    assert!(count(&r, |k| matches!(k, EventKind::VisibilityChanged { .. })) >= 3 * 108);
}

#[test]
fn heartbeat_max_extension_gives_up_on_a_wedged_call() {
    // One message, call takes 100 s, lease 30 s, extend every 10 s up to 15 s extra: beats at
    // 10 s (lease -> 40 s, extra 10 s) ok; at 20 s the extra would be 20 s > 15 s: stop. The
    // lease ends at 40 s: d2 (another worker) at 40 s.
    let mut s = base();
    s.consumer.target = "heartbeat".into();
    s.consumer.workers = 2;
    s.consumer.options.max_extension = Some(secs(15));
    s.broker.max_deliveries = 2;
    s.provider.latency = LatencyDist::Fixed(secs(100));
    let r = run(&s);
    let d: Vec<u64> = r
        .events
        .iter()
        .filter_map(|e| matches!(e.kind, EventKind::Delivered { .. }).then_some(e.at / S))
        .collect();
    assert_eq!(d, vec![0, 40]);
}

#[test]
fn store_targets_never_duplicate_under_kills_after_the_commit() {
    // Every first delivery is killed right after its commit, before the ack: the lease runs
    // out, d2 finds the row and only acks.
    for target in ["dedupe-table", "status-fence"] {
        let mut s = base();
        s.consumer.target = target.into();
        s.run.duration = secs(100);
        s.workload.count = Some(20);
        s.consumer.workers = 3;
        s.chaos = vec![kill_at(
            KillPoint::Checkpoint("committed".into()),
            Some(1),
            Duration::ZERO,
        )];
        let r = run(&s);
        assert_eq!(
            count(&r, |k| matches!(k, EventKind::WorkerKilled { .. })),
            20,
            "{target}"
        );
        assert!(effects_per_key(&r).iter().all(|&n| n == 1), "{target}");
        assert!(r
            .ledger
            .effects
            .iter()
            .all(|e| e.source == EffectSource::Store));
        assert_eq!(
            count(&r, |k| matches!(k, EventKind::Delivered { .. })),
            40,
            "{target}"
        );
    }
}

#[test]
fn kills_after_the_answer_duplicate_exactly_once_each_with_ack_after_work() {
    let mut s = base();
    s.run.duration = secs(100);
    s.workload.count = Some(20);
    s.consumer.workers = 3;
    s.chaos = vec![kill_at(KillPoint::CallAnswered, Some(1), Duration::ZERO)];
    let r = run(&s);
    assert_eq!(
        count(&r, |k| matches!(k, EventKind::WorkerKilled { .. })),
        20
    );
    assert_eq!(r.ledger.effects.len(), 40);
    assert!(effects_per_key(&r).iter().all(|&n| n == 2));
}

#[test]
fn kill_right_after_the_claim_recovers_on_the_last_delivery() {
    // docs/domain.md, "Three kinds of effect": claim window 2m, lease 30 s, limit 3, a kill 1 s after the claim. d1 at 0 claims,
    // dies at 1 s; lease ends 30 s; d2 at 30 s: claim 30 s old, handed back for 2m; d3 at 150 s:
    // claim 150 s old: the first attempt died, claim again and send. The last allowed delivery.
    let mut s = base();
    s.consumer.target = "claim-then-send".into();
    s.broker.max_deliveries = 3;
    s.consumer.workers = 2;
    s.chaos = vec![kill_at(
        KillPoint::Checkpoint("claimed".into()),
        Some(1),
        secs(1),
    )];
    let r = run(&s);
    let d: Vec<(u64, u32)> = r
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Delivered { delivery, .. } => Some((e.at / S, delivery)),
            _ => None,
        })
        .collect();
    assert_eq!(d, vec![(0, 1), (30, 2), (150, 3)]);
    // The kill at 1 s lands during the call: with effect_at request the first email was sent.
    assert_eq!(
        r.ledger
            .effects
            .iter()
            .map(|e| e.at / S)
            .collect::<Vec<_>>(),
        vec![0, 150]
    );
}

#[test]
fn retries_in_the_handler_back_off_and_multiply_with_redeliveries() {
    // Provider errors 503 on every call in [0, 10 s), answers take 1 s; retry: 3 attempts, base
    // 1 s, cap 10 s, no jitter. d1 at 0: call at 0 s (503 at 1 s, wait 1 s), at 2 s (503 at 3 s,
    // wait 2 s), at 5 s (503 at 6 s): gives up, no ack. Lease 30 s: d2 at 30 s, the call
    // succeeds at 31 s, ack. Four calls, one effect, two handler retries.
    let mut s = base();
    s.provider.latency = LatencyDist::Fixed(secs(1));
    s.provider.phases = vec![Phase {
        from: secs(0),
        to: Some(secs(10)),
        latency: None,
        errors: Some(ErrorSpec {
            answer: ErrorAnswer::Status(503),
            rate: 1.0,
            after_effect: false,
        }),
        hang: None,
        ..Phase::default()
    }];
    s.consumer.options.retry = Some(RetrySpec {
        max_attempts: 3,
        base: secs(1),
        cap: secs(10),
        jitter: 0.0,
    });
    let r = run(&s);
    let starts: Vec<u64> = r.ledger.calls.iter().map(|c| c.started / S).collect();
    assert_eq!(starts, vec![0, 2, 5, 30]);
    assert_eq!(r.ledger.effects.len(), 1);
    let m = crate::metrics::analyse(&r, 0);
    assert_eq!(m.handler_retries, 2);
    // A 4xx is permanent: no retry in the handler.
    s.provider.phases[0].errors = Some(ErrorSpec {
        answer: ErrorAnswer::Status(400),
        rate: 1.0,
        after_effect: false,
    });
    let r = run(&s);
    assert_eq!(
        r.ledger
            .calls
            .iter()
            .map(|c| c.started / S)
            .collect::<Vec<_>>(),
        vec![0, 30]
    );
}

#[test]
fn a_timed_kill_hits_the_named_worker_and_it_restarts() {
    // One message, provider 10 s, kill worker 1 at 5 s: the call is abandoned (effect at request
    // already counted); restart at 6 s; the lease ends at 30 s: d2 at 30 s, ack at 40 s.
    let mut s = base();
    s.chaos = vec![ChaosRule::new(KillRule {
        worker: Some(1),
        ..KillRule::new(KillTrigger::At(secs(5)))
    })];
    let r = run(&s);
    let at = |f: fn(&EventKind) -> bool| -> Vec<u64> {
        r.events
            .iter()
            .filter(|e| f(&e.kind))
            .map(|e| e.at / S)
            .collect()
    };
    assert_eq!(
        at(|k| matches!(k, EventKind::WorkerKilled { worker: 1, .. })),
        vec![5]
    );
    assert_eq!(
        at(|k| matches!(k, EventKind::WorkerRestarted { worker: 1 })),
        vec![6]
    );
    assert_eq!(
        at(|k| matches!(k, EventKind::Delivered { .. })),
        vec![0, 30]
    );
    assert_eq!(r.ledger.effects.len(), 2);
    assert_eq!(r.end, 40 * S);
}

#[test]
fn poison_released_at_once_reaches_the_dlq_without_a_crash() {
    // on_poison: release, limit 2: d1 at 0 hands it back (visibility 0): visible again at the
    // front; the worker asks again at the same instant: d2 at 0, handed back: the lease of the
    // last allowed delivery ended: DLQ at 0 s.
    let mut s = base();
    s.workload.poison = Poison::First(1);
    s.broker.max_deliveries = 2;
    s.consumer.options.on_poison = OnPoison::Release;
    let r = run(&s);
    assert_eq!(count(&r, |k| matches!(k, EventKind::Delivered { .. })), 2);
    assert_eq!(
        count(&r, |k| matches!(k, EventKind::WorkerCrashed { .. })),
        0
    );
    assert!(r
        .events
        .iter()
        .any(|e| e.at == 0 && matches!(e.kind, EventKind::DeadLettered { delivery: 2, .. })));
    assert_eq!(r.end, 0);
}
