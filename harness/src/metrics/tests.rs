//! Whole-run analysis: hand-derived scenarios, and invariants on arbitrary records.

use proptest::prelude::*;

use super::testkit::{ack_before_work, s, slow_handler};
use super::*;
use crate::profile::StaleAck;
use crate::record::{
    AckOutcome, EffectRecord, EffectSource, Event, EventKind, HandlerEnd, MessageRecord,
};

#[test]
fn the_reference_incident_for_one_message() {
    let m = analyse(&slow_handler(StaleAck::Reject), s(300.0));
    assert_eq!(
        (m.messages, m.deliveries, m.effects, m.duplicate_effects),
        (1, 3, 3, 2)
    );
    assert_eq!(
        (m.dlq, m.dlq_with_effect, m.stale_acks, m.lost),
        (1, 1, 3, 0)
    );
    assert_eq!(m.handler.p99, 34000.0);
    assert_eq!(m.p99_over_visibility, 34.0 / 30.0);
    // 102 s of handling by 3 workers over a 94 s run.
    assert_eq!(m.worker_busy_fraction(), 102.0 / (3.0 * 94.0));
    assert_eq!((m.end, m.lease, m.workers), (s(94.0), s(30.0), 3));
}

#[test]
fn ack_before_work_end_to_end() {
    let m = analyse(&ack_before_work(), s(300.0));
    assert_eq!((m.lost, m.rejected, m.worker_kills), (1, 1, 1));
    // Handlers of 0.5 s, 0.25 s and 0 s: the median within HDR's 3 significant digits.
    assert!((m.handler.p50 - 250.0).abs() <= 0.25, "{}", m.handler.p50);
    assert_eq!(m.handler.max, 500.0);
    // Message 2's email at 1 s, the instant it was published.
    assert_eq!(m.end_to_end.max, 0.0);
    assert_eq!(analyse(&ack_before_work(), 0).late, 0);
}

#[test]
fn an_autoscaled_fleet_is_busy_for_a_share_of_the_time_it_ran() {
    // One worker; at 10 s the HPA scales 1 -> 2 and worker 2 starts at once; msg-1 is handled
    // by worker 2 from 20 s to 60 s. The run ends at 100 s: 100 + 90 = 190 worker-seconds, of
    // which 40 busy (not 40 / (1 worker x 100 s)).
    let mut r = super::testkit::Rec::new(300.0, 1);
    let m1 = r.publish(20.0);
    let scaled = EventKind::Scaled {
        rule: 0,
        from: 1,
        to: 2,
        by: crate::record::ScaledBy::Hpa,
        metric: 1,
    };
    r.ev(10.0, scaled);
    r.ev(10.0, EventKind::ReplicaMade { worker: 2, rule: 0 });
    r.ev(10.0, EventKind::WorkerAdded { worker: 2 });
    r.deliver(20.0, m1, 2, 1);
    r.end_handler(60.0, m1, 2, 1, HandlerEnd::Finished);
    r.ack(60.0, m1, 2, 1, AckOutcome::Deleted);
    let m = analyse(&r.finish(100.0), s(300.0));
    assert_eq!(m.worker_busy_fraction(), 40.0 / 190.0);
}

#[test]
fn no_workers_no_busy_fraction() {
    let m = analyse(&RunRecord::default(), s(300.0));
    assert_eq!(m.worker_busy_fraction(), 0.0);
    assert_eq!(m.duplicate_rate, 0.0);
}

/// An arbitrary record: `n` messages published at 0, 1, 2, ... s, then any events at all (most
/// make no sense) and effects for any seq, all before the end at 100 s.
fn arbitrary_record() -> impl Strategy<Value = RunRecord> {
    let event = (0u64..100, 0u8..11, 0u32..8, 1u32..4, 1u32..3, 0u8..5);
    let effect = (0u64..100, prop::option::of(0u32..8));
    (
        1usize..7,
        prop::collection::vec(event, 0..60),
        prop::collection::vec(effect, 0..20),
    )
        .prop_map(|(n, events, effects)| {
            let mut r = RunRecord {
                end: s(100.0),
                lease: s(10.0),
                workers: 2,
                ..RunRecord::default()
            };
            for i in 0..n {
                let seq = i as u32 + 1;
                r.messages.push(MessageRecord {
                    key: format!("msg-{seq}").into(),
                    published_at: s(i as f64),
                    poison: false,
                });
                r.events.push(Event {
                    at: s(i as f64),
                    kind: EventKind::Published { seq },
                });
            }
            let outcomes = [
                AckOutcome::Deleted,
                AckOutcome::StaleRejected,
                AckOutcome::StaleIgnored,
                AckOutcome::StaleDeleted,
                AckOutcome::StaleGone,
            ];
            for (at, what, seq, delivery, worker, o) in events {
                let kind = match what {
                    0 => EventKind::Delivered {
                        seq,
                        worker,
                        delivery,
                        lease_end: s(at as f64 + 10.0),
                    },
                    1 => EventKind::Acked {
                        seq,
                        worker,
                        delivery,
                        outcome: outcomes[o as usize],
                    },
                    2 => EventKind::LeaseExpired { seq, delivery },
                    3 => EventKind::DeadLettered { seq, delivery },
                    4 => EventKind::Redriven { seq },
                    5 => EventKind::Rejected { seq, worker },
                    6 => EventKind::HandlerEnded {
                        seq,
                        worker,
                        delivery,
                        how: HandlerEnd::Finished,
                    },
                    7 => EventKind::WorkerKilled { worker, rule: 0 },
                    8 => EventKind::WorkerCrashed {
                        worker,
                        exit: crate::record::WorkerExit::Status(1),
                    },
                    9 => EventKind::VisibilityChanged {
                        seq,
                        worker,
                        delivery,
                        lease_end: s(at as f64),
                    },
                    _ => EventKind::Published { seq },
                };
                r.events.push(Event {
                    at: s(at as f64),
                    kind,
                });
            }
            r.events.sort_by_key(|e| e.at);
            for (at, seq) in effects {
                r.ledger.effects.push(EffectRecord {
                    seq,
                    at: s(at as f64),
                    worker: 1,
                    delivery: 1,
                    source: EffectSource::Store,
                });
            }
            r
        })
}

proptest! {
    #[test]
    fn counts_add_up_and_the_last_sample_agrees(r in arbitrary_record()) {
        let m = analyse(&r, s(30.0));
        prop_assert_eq!(m.effects + m.unknown_key_effects, r.ledger.effects.len() as u64);
        prop_assert_eq!(m.messages_with_effect + m.duplicate_effects, m.effects);
        prop_assert_eq!(m.dlq_with_effect + m.dlq_without_effect, m.dlq);
        prop_assert!(m.lost + m.dlq + m.unfinished <= m.messages);
        prop_assert!(m.late <= m.messages_with_effect);
        prop_assert!(m.max_oldest_age <= r.end);

        let samples = timeseries(&r, s(7.0));
        let last = samples.last().copied().unwrap_or_default();
        prop_assert_eq!(last.t, r.end);
        prop_assert_eq!(last.effects, m.effects);
        prop_assert_eq!(last.duplicate_effects, m.duplicate_effects);
        prop_assert_eq!(last.dlq, m.dlq);
        prop_assert_eq!(last.dlq_with_effect, m.dlq_with_effect);
        prop_assert_eq!(last.visible + last.in_flight, m.unfinished);
        prop_assert_eq!(last.worker_kills, m.worker_kills);
        for w in samples.windows(2) {
            prop_assert!(w[0].t < w[1].t);
            prop_assert!(w[0].effects <= w[1].effects);
        }
        for x in &samples {
            prop_assert!(x.oldest_age <= m.max_oldest_age);
            prop_assert!(x.dlq_with_effect <= x.dlq);
        }
    }
}

/// A million messages, each published, received, sent and acked within a millisecond, plus the
/// time series: run with `cargo test --release -- --ignored` to see the analysis stay linear.
#[test]
#[ignore = "scale check, slow in debug builds"]
fn a_million_messages() {
    let n: u32 = 1_000_000;
    let ms = 1_000_000;
    let mut r = RunRecord {
        lease: s(30.0),
        workers: 8,
        ..RunRecord::default()
    };
    for seq in 1..=n {
        let at = u64::from(seq) * ms;
        let worker = seq % 8 + 1;
        r.messages.push(MessageRecord {
            key: format!("msg-{seq}").into(),
            published_at: at,
            poison: false,
        });
        let lease_end = at + s(30.0);
        r.events.extend([
            Event {
                at,
                kind: EventKind::Published { seq },
            },
            Event {
                at,
                kind: EventKind::Delivered {
                    seq,
                    worker,
                    delivery: 1,
                    lease_end,
                },
            },
            Event {
                at: at + ms / 2,
                kind: EventKind::Acked {
                    seq,
                    worker,
                    delivery: 1,
                    outcome: AckOutcome::Deleted,
                },
            },
            Event {
                at: at + ms / 2,
                kind: EventKind::HandlerEnded {
                    seq,
                    worker,
                    delivery: 1,
                    how: HandlerEnd::Finished,
                },
            },
        ]);
        r.ledger.effects.push(EffectRecord {
            seq: Some(seq),
            at: at + ms / 4,
            worker,
            delivery: 1,
            source: EffectSource::Provider,
        });
    }
    r.end = u64::from(n + 1) * ms;
    let started = std::time::Instant::now();
    let m = analyse(&r, s(300.0));
    let samples = timeseries(&r, 0);
    let took = started.elapsed();
    assert_eq!(
        (m.messages, m.effects, m.lost, m.duplicate_effects),
        (1_000_000, 1_000_000, 0, 0)
    );
    assert_eq!(m.handler.max, 0.5);
    assert_eq!(samples.last().map(|x| x.effects), Some(1_000_000));
    eprintln!(
        "1M messages, {} events: analysed in {took:?}",
        r.events.len()
    );
}
