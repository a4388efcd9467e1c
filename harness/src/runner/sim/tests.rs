//! Hand-derived sim scenarios: every expected count below is worked out in the comment above it.

use std::time::Duration;

use crate::profile::*;
use crate::record::{AckOutcome, CallOutcome, EventKind, HandlerEnd, RunRecord};

pub(super) const S: u64 = 1_000_000_000;

pub(super) fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// One worker, one message at 0 s, provider fixed 10 s, lease 30 s, no limit.
pub(super) fn base() -> Scenario {
    const BASE: &str = "\
name: t
run: { duration: 1s, drain: 1h }
broker: { visibility_timeout: 30s, max_receives: 0, stale_ack: reject }
workload: { arrival: { every: 1s }, count: 1 }
consumer: { target: ack-after-work, workers: 1, restart_after: 1s }
provider: { effect_at: request, latency: { dist: fixed, value: 10s } }
";
    load_str("t.yaml", BASE, &[]).expect("the base scenario is a valid profile")
}

/// Runs `s` keeping its full record: these tests read the history itself.
pub(super) fn run(s: &Scenario) -> RunRecord {
    let mut full = crate::record::sink::FullRecord::default();
    super::run(s, &mut full, &mut |_| {}, &crate::runner::Interrupt::new()).expect("run completes");
    full.into_record().expect("the run handed its record over")
}

pub(super) fn count(r: &RunRecord, f: impl Fn(&EventKind) -> bool) -> usize {
    r.events.iter().filter(|e| f(&e.kind)).count()
}

pub(super) fn acks(r: &RunRecord) -> Vec<(u64, u32, AckOutcome)> {
    r.events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Acked {
                delivery, outcome, ..
            } => Some((e.at / S, delivery, outcome)),
            _ => None,
        })
        .collect()
}

#[test]
fn healthy_single_message_is_delivered_once_and_acked() {
    // Delivered at 0, call 0..10 s (effect at 0), ack at 10 s, handler ends at 10 s.
    let r = run(&base());
    assert_eq!(r.messages.len(), 1);
    assert_eq!(count(&r, |k| matches!(k, EventKind::Delivered { .. })), 1);
    assert_eq!(acks(&r), vec![(10, 1, AckOutcome::Deleted)]);
    assert_eq!(r.ledger.effects.len(), 1);
    assert_eq!(r.ledger.effects[0].at, 0);
    assert_eq!(r.end, 10 * S);
    assert!(r.events.iter().any(|e| e.at == 10 * S
        && matches!(
            e.kind,
            EventKind::HandlerEnded {
                how: HandlerEnd::Finished,
                ..
            }
        )));
}

#[test]
fn lease_shorter_than_the_work_under_each_stale_ack_policy() {
    // Lease 4 s, work 10 s, two workers, limit 0.
    // reject: d1 (w1) at 0, expires 4, d2 (w2) at 4, expires 8, d3 (w1? busy until 10) -> w? At 8
    //   both busy (w1 0..10, w2 4..14): d3 waits until w1 asks at 10 (its stale ack at 10 is
    //   refused). d3 at 10 (w1) lease 14; w2's ack at 14 is stale... (lease of d3 ends at 14 and
    //   d3 expires at 14 too: expiry first, so d4 at 14 to w2). This repeats forever without a
    //   limit: bound it with max_receives 3.
    // With max_receives 3: d1 w1 0 (lease 4), d2 w2 4 (lease 8), at 8 the lease of d2 expires,
    //   message visible, no idle worker until w1 finishes at 10: d3 w1 at 10 (lease 14);
    //   at 14 the lease of d3 (the 3rd) expires: DLQ. Acks: w1 at 10 (d1, stale), w2 at 14
    //   (d2, stale: gone), w1 at 20 (d3, gone). Effects: at 0, 4, 10 = 3.
    let mut s = base();
    s.broker.lease = secs(4);
    s.broker.max_deliveries = 3;
    s.consumer.workers = 2;
    for (policy, outcomes) in [
        (
            StaleAck::Reject,
            [
                AckOutcome::StaleRejected,
                AckOutcome::StaleGone,
                AckOutcome::StaleGone,
            ],
        ),
        (
            StaleAck::Ignore,
            [
                AckOutcome::StaleIgnored,
                AckOutcome::StaleGone,
                AckOutcome::StaleGone,
            ],
        ),
    ] {
        s.broker.stale_ack = policy;
        let r = run(&s);
        let a = acks(&r);
        assert_eq!(
            a,
            vec![
                (10, 1, outcomes[0]),
                (14, 2, outcomes[1]),
                (20, 3, outcomes[2])
            ],
            "{policy:?}"
        );
        assert_eq!(
            r.ledger
                .effects
                .iter()
                .map(|e| e.at / S)
                .collect::<Vec<_>>(),
            vec![0, 4, 10]
        );
        assert_eq!(
            count(&r, |k| matches!(
                k,
                EventKind::DeadLettered { delivery: 3, .. }
            )),
            1
        );
        assert_eq!(r.end, 20 * S, "drained when the last handler ends");
    }
    // delete: w1's stale ack at 10 deletes the message d2 (w2) still holds; no d3, no DLQ.
    s.broker.stale_ack = StaleAck::Delete;
    let r = run(&s);
    assert_eq!(
        acks(&r),
        vec![
            (10, 1, AckOutcome::StaleDeleted),
            (14, 2, AckOutcome::StaleGone)
        ]
    );
    assert_eq!(r.ledger.effects.len(), 2);
    assert_eq!(
        count(&r, |k| matches!(k, EventKind::DeadLettered { .. })),
        0
    );
}

#[test]
fn effect_at_response_counts_only_answers() {
    // Kill at call_started on the first delivery: with effect_at request the effect is at 0;
    // with response there is none for that call. The lease (30 s) expires, d2 at 30 answers
    // at 40.
    let mut s = base();
    s.chaos = vec![ChaosRule::new(KillRule {
        delivery: Some(1),
        ..KillRule::new(KillTrigger::Point(KillPoint::CallStarted))
    })];
    let r = run(&s);
    assert_eq!(
        r.ledger
            .effects
            .iter()
            .map(|e| e.at / S)
            .collect::<Vec<_>>(),
        vec![0, 30]
    );
    assert_eq!(r.ledger.calls[0].outcome, CallOutcome::Abandoned);
    assert_eq!(
        count(&r, |k| matches!(k, EventKind::WorkerKilled { .. })),
        1
    );
    assert_eq!(
        count(&r, |k| matches!(k, EventKind::WorkerRestarted { .. })),
        1
    );
    s.provider.effect_at = EffectAt::Response;
    let r = run(&s);
    assert_eq!(
        r.ledger
            .effects
            .iter()
            .map(|e| e.at / S)
            .collect::<Vec<_>>(),
        vec![40]
    );
}

#[test]
fn per_message_latencies_with_several_workers() {
    // Three messages at 0, 1, 2 s with latencies 5, 1, 3 s; two workers, lease 30 s.
    // w1 takes msg-1 at 0 (ends 5); w2 msg-2 at 1 (ends 2); msg-3 at 2: w2 is idle again at 2
    // (it finishes at 2 and receives at the same instant), ends 5.
    let mut s = base();
    s.run.duration = secs(3);
    s.workload.count = Some(3);
    s.consumer.workers = 2;
    s.provider.latency = LatencyDist::PerMessage(vec![secs(5), secs(1), secs(3)]);
    let r = run(&s);
    let delivered: Vec<(u64, u32, u32)> = r
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Delivered { seq, worker, .. } => Some((e.at / S, seq, worker)),
            _ => None,
        })
        .collect();
    assert_eq!(delivered, vec![(0, 1, 1), (1, 2, 2), (2, 3, 2)]);
    assert_eq!(
        acks(&r).iter().map(|a| a.0).collect::<Vec<_>>(),
        vec![2, 5, 5]
    );
    assert_eq!(r.end, 5 * S);
}

#[test]
fn reference_incident_counts() {
    // The reference incident (docs/domain.md): 108 orders every 50 s, 4 workers, lease 30 s, limit 3, 31-40 s.
    let mut s = base();
    s.run = RunSpec {
        duration: secs(5400),
        drain: secs(1800),
        sample_every: None,
        time_scale: 1.0,
        publish_window: 1024,
        record: Record::Full,
    };
    s.workload = WorkloadSpec {
        arrival: Arrival::Every(secs(50)),
        count: Some(108),
        poison: Poison::None,
        keys: None,
        ingress: None,
        producer: None,
        groups: None,
        message: None,
    };
    s.broker.max_deliveries = 3;
    s.consumer.workers = 4;
    s.provider.latency = LatencyDist::Uniform {
        min: secs(31),
        max: secs(40),
    };
    let r = run(&s);
    assert_eq!(r.messages.len(), 108);
    assert_eq!(count(&r, |k| matches!(k, EventKind::Delivered { .. })), 324);
    assert_eq!(r.ledger.effects.len(), 324);
    assert_eq!(
        count(&r, |k| matches!(k, EventKind::DeadLettered { .. })),
        108
    );
    assert_eq!(
        count(
            &r,
            |k| matches!(k, EventKind::Acked { outcome, .. } if outcome.is_stale())
        ),
        324
    );
    s.consumer.target = "ack-before-work".into();
    let r = run(&s);
    assert_eq!(r.ledger.effects.len(), 108);
    assert_eq!(
        count(&r, |k| matches!(k, EventKind::DeadLettered { .. })),
        0
    );
}

#[test]
fn poison_crashes_the_worker_until_the_dlq_takes_it() {
    // One poison message, limit 2, lease 30 s, restart after 1 s: d1 at 0 crashes at 0, lease
    // ends 30 -> d2 at 30 (worker restarted at 1) crashes -> DLQ at 60.
    let mut s = base();
    s.workload.poison = Poison::First(1);
    s.broker.max_deliveries = 2;
    let r = run(&s);
    assert_eq!(
        count(&r, |k| matches!(k, EventKind::WorkerCrashed { .. })),
        2
    );
    assert!(r
        .events
        .iter()
        .any(|e| e.at == 60 * S && matches!(e.kind, EventKind::DeadLettered { .. })));
    assert!(r.ledger.effects.is_empty());
    // dead_letter: acked at once and recorded as rejected.
    s.consumer.options.on_poison = OnPoison::DeadLetter;
    let r = run(&s);
    assert_eq!(count(&r, |k| matches!(k, EventKind::Rejected { .. })), 1);
    assert_eq!(acks(&r), vec![(0, 1, AckOutcome::Deleted)]);
}

#[test]
fn same_seed_same_record_other_seed_other_latencies() {
    let mut s = base();
    s.run.duration = secs(600);
    s.workload = WorkloadSpec {
        arrival: Arrival::Rate {
            rate_per_s: 2.0,
            process: RateProcess::Poisson,
        },
        count: None,
        poison: Poison::None,
        keys: None,
        ingress: None,
        producer: None,
        groups: None,
        message: None,
    };
    s.consumer.workers = 8;
    s.provider.latency = LatencyDist::LogNormal {
        median: Duration::from_millis(240),
        p99: Duration::from_millis(900),
    };
    let a = run(&s);
    let b = run(&s);
    assert_eq!(a.events, b.events);
    assert_eq!(a.ledger.calls, b.ledger.calls);
    s.seed = 2;
    let c = run(&s);
    assert_ne!(a.ledger.calls, c.ledger.calls);
}

#[test]
fn redrive_moves_the_dlq_back_and_each_entry_runs_again() {
    // Provider 40 s until 60 s (10 s after), lease 30 s, limit 1: d1 at 0 (effect at 0), its
    // lease ends at 30 s: DLQ. Redrive at 100 s: d2 at 100 s (the worker is free since 40 s),
    // effect at 100 s, ack at 110 s.
    let mut s = base();
    s.provider.phases = vec![Phase {
        from: secs(0),
        to: Some(secs(60)),
        latency: Some(LatencyDist::Fixed(secs(40))),
        errors: None,
        hang: None,
        ..Phase::default()
    }];
    s.broker.max_deliveries = 1;
    s.redrive = Some(secs(100));
    let r = run(&s);
    assert_eq!(
        r.ledger
            .effects
            .iter()
            .map(|e| e.at / S)
            .collect::<Vec<_>>(),
        vec![0, 100]
    );
    assert_eq!(count(&r, |k| matches!(k, EventKind::Redriven { .. })), 1);
    assert_eq!(
        acks(&r),
        vec![
            (40, 1, AckOutcome::StaleGone),
            (110, 1, AckOutcome::Deleted)
        ]
    );
}

#[test]
fn a_hung_call_ends_only_by_the_clients_own_timeout() {
    // Every call in [0, 10 s) hangs; client timeout 15 s. d1 at 0: the call arrives (effect at
    // request) and never answers; at 15 s the client gives up, no ack. Lease ends at 30 s: d2 at
    // 30 s answers after 10 s: ack at 40 s. Two effects: the hang cost a duplicate.
    let mut s = base();
    s.consumer.options.http_timeout = Some(secs(15));
    s.provider.phases = vec![Phase {
        from: secs(0),
        to: Some(secs(10)),
        latency: None,
        errors: None,
        hang: Some(HangSpec {
            rate: 1.0,
            after_effect: true,
        }),
        ..Phase::default()
    }];
    let r = run(&s);
    assert_eq!(r.ledger.calls[0].outcome, CallOutcome::TimedOut);
    assert_eq!(
        r.ledger
            .effects
            .iter()
            .map(|e| e.at / S)
            .collect::<Vec<_>>(),
        vec![0, 30]
    );
    assert_eq!(acks(&r), vec![(40, 2, AckOutcome::Deleted)]);
    // Without a client timeout the worker waits for ever: the run ends at its drain limit with
    // the message unfinished (leased again and again by nobody: the worker is stuck).
    s.consumer.options.http_timeout = None;
    let r = run(&s);
    assert_eq!(r.end, nanos_of(s.run.duration + s.run.drain));
}

fn nanos_of(d: Duration) -> u64 {
    crate::record::nanos(d)
}

#[test]
fn an_interrupted_run_stops_between_instants_and_says_so() {
    // One message a second for 100,000 s, handled in 10 s by one worker: every instant is a
    // whole second (publishes each second, hand-outs and answers every 10 s), so instant k runs
    // at k - 1 s. The interrupt is triggered from the progress report, which comes before
    // instant 8192 (at 8191 s); that instant still runs whole, and the run stops before the
    // next: end 8191 s, 8192 messages published (at 0, 1, ..., 8191 s).
    let mut s = base();
    s.workload.count = Some(100_000);
    s.run.duration = secs(100_000);
    let interrupt = crate::runner::Interrupt::new();
    let trigger = interrupt.clone();
    let r = crate::runner::run_with_progress(&s, &mut |_| trigger.trigger(), &interrupt)
        .expect("run completes");
    assert_eq!(
        r.incomplete.as_deref(),
        Some(crate::runner::interrupt::REASON)
    );
    // (Above 50 messages the run streams its accounting: the count is read from it.)
    assert!(r.folded.is_some());
    let published =
        crate::metrics::analyse(&r, crate::record::nanos(s.budgets.late_after)).messages;
    assert_eq!((r.end, published), (8191 * S, 8192));
    // A run nobody interrupts is complete.
    assert_eq!(run(&base()).incomplete, None);
}
