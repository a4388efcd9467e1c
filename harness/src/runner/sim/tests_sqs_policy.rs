//! The reference incident with one worker under `stale_ack: sqs`, against the shipped profile.

use super::tests::{count, run, S};
use crate::profile::load_str;
use crate::record::{AckOutcome, EventKind};

const THURSDAY: &str = include_str!("../../../../profiles/marlow-thursday.yaml");

#[test]
fn one_worker_thursday_under_sqs_deletes_every_message_its_holder_acks_late() {
    // profiles/marlow-thursday.yaml with workers=1 and stale_ack=sqs: an order every 50 s, 108
    // orders (the last at 107 * 50 = 5350 s); each handler takes 31-40 s; lease 30 s, limit 3.
    // The one worker receives order k at its publish (it is idle: its previous handler ended at
    // most 40 s after the previous publish, 10 s before this one). At +30 s the lease ends and the
    // order is visible again, but the only worker is still busy with it: nobody receives it. At
    // +31..40 s the worker acks with the latest receipt and nobody has received the order since:
    // SQS deletes it (a late delete). So per order: 1 delivery, 1 effect, 1 lease expiry, 1 late
    // ack that deletes. Totals: 108 deliveries, 108 effects, 0 duplicates, 108 lease expiries,
    // 108 stale (late) acks all of them deletes, 0 DLQ, 0 unfinished, 0 lost. The run ends when
    // the last handler ends, 31-40 s after 5350 s.
    // (Under `reject` the same late ack is refused and the order redelivered: 136 duplicates.)
    let overrides = [
        "consumer.workers=1".to_string(),
        "broker.stale_ack=sqs".to_string(),
    ];
    let s = load_str("marlow-thursday.yaml", THURSDAY, &overrides).unwrap();
    let r = run(&s);
    let delivered = |k: &EventKind| matches!(k, EventKind::Delivered { .. });
    assert_eq!(count(&r, |k| matches!(k, EventKind::Published { .. })), 108);
    assert_eq!(count(&r, delivered), 108);
    assert_eq!(
        count(&r, |k| matches!(
            k,
            EventKind::Delivered { delivery: 1, .. }
        )),
        108
    );
    assert_eq!(r.ledger.effects.len(), 108);
    assert_eq!(
        count(&r, |k| matches!(k, EventKind::LeaseExpired { .. })),
        108
    );
    assert_eq!(
        count(&r, |k| matches!(
            k,
            EventKind::Acked {
                outcome: AckOutcome::LateDeleted,
                ..
            }
        )),
        108
    );
    assert_eq!(count(&r, |k| matches!(k, EventKind::Acked { .. })), 108);
    assert_eq!(
        count(&r, |k| matches!(k, EventKind::DeadLettered { .. })),
        0
    );
    assert!((5381 * S..=5390 * S).contains(&r.end), "end {}", r.end);
    let m = crate::metrics::analyse(&r, u64::MAX);
    let a = &m.counts;
    assert_eq!(
        (a.deliveries, a.effects, a.duplicate_effects, a.stale_acks),
        (108, 108, 0, 108)
    );
    assert_eq!((a.dlq, a.unfinished, a.lost), (0, 0, 0));
}
