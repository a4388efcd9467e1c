//! `--trace` lines in each kind's words.

use super::event_line;
use crate::record::{AckOutcome, EventKind};

const S: u64 = 1_000_000_000;

#[test]
fn a_trace_speaks_its_kinds_words() {
    // One delivery whose lease ends at 30 s, its lease's end, its ack and an ack on a
    // message settled already, as each kind says them: the queue's words on SQS (the
    // reference lines, unchanged), Kafka's poll deadline and commit, a share group's lock
    // and ACCEPT.
    let delivered = EventKind::Delivered {
        seq: 1,
        worker: 1,
        delivery: 1,
        lease_end: 30 * S,
    };
    let expired = EventKind::LeaseExpired {
        seq: 1,
        delivery: 1,
    };
    let acked = |outcome| EventKind::Acked {
        seq: 1,
        worker: 1,
        delivery: 1,
        outcome,
    };
    let lines = |kind: &str| {
        let w = crate::profile::kinds::KindName::new(kind).words();
        [
            delivered,
            expired,
            acked(AckOutcome::Deleted),
            acked(AckOutcome::StaleGone),
        ]
        .iter()
        .map(|e| event_line(e, 1, w).unwrap().1)
        .collect::<Vec<_>>()
    };
    assert_eq!(
        lines("sqs"),
        [
            "delivered #1      worker 1, lease until 30.000s",
            "lease expired     delivery 1: visible again",
            "ack               worker 1, delivery 1: deleted",
            "ack               worker 1, delivery 1: STALE: message already gone",
        ]
    );
    assert_eq!(
        lines("kafka"),
        [
            "delivered #1      worker 1, poll deadline 30.000s",
            "deadline passed   delivery 1: fetched again from the last commit",
            "ack               worker 1, delivery 1: committed",
            "ack               worker 1, delivery 1: STALE: record already committed",
        ]
    );
    assert_eq!(
        lines("kafka-share"),
        [
            "delivered #1      worker 1, lock until 30.000s",
            "lock expired      delivery 1: available again",
            "ack               worker 1, delivery 1: ACCEPTed",
            "ack               worker 1, delivery 1: STALE: record already settled",
        ]
    );
}

#[test]
fn a_return_says_what_ended_the_delivery_and_no_lease_expiry_follows() {
    // A live RabbitMQ delivery returned by the worker's own connection close: the reason's line
    // stands for the return, its `LeaseExpired` adds no "lease expired" line.
    use crate::record::{Event, MessageRecord, ReturnWhy, RunRecord};
    let ev = |at, kind| Event { at, kind };
    let r = RunRecord {
        messages: vec![MessageRecord {
            key: "msg-1".into(),
            published_at: 0,
            poison: false,
        }],
        events: vec![
            ev(0, EventKind::Published { seq: 1 }),
            ev(
                0,
                EventKind::Delivered {
                    seq: 1,
                    worker: 1,
                    delivery: 1,
                    lease_end: 1800 * S,
                },
            ),
            ev(
                S,
                EventKind::Returned {
                    seq: 1,
                    worker: 1,
                    delivery: 1,
                    why: ReturnWhy::ConnectionClosed,
                },
            ),
            ev(
                S,
                EventKind::LeaseExpired {
                    seq: 1,
                    delivery: 1,
                },
            ),
        ],
        broker_kind: "rabbitmq".into(),
        ..RunRecord::default()
    };
    let t = super::trace(&r, "msg-1").unwrap();
    assert_eq!(t.len(), 4, "{t:#?}");
    assert!(
        t[3].ends_with(
            "RETURNED          worker 1, delivery 1: the worker closed its connection; visible \
             again"
        ),
        "{}",
        t[3]
    );
    assert!(!t.iter().any(|l| l.contains("lease expired")), "{t:#?}");
}
