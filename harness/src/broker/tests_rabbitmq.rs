//! Hand-derived RabbitMQ scenarios: one message (or a few), a few consumers, fixed instants.

use super::queue::{AckRefused, VisibilityError};
use super::rabbitmq::{QueueType, RabbitMq, RabbitMqConfig};
use super::*;
use crate::record::{AckOutcome, Event, EventKind};

const S: u64 = 1_000_000_000;
const M: u64 = 60 * S;

fn quorum(delivery_limit: u32) -> RabbitMqConfig {
    RabbitMqConfig {
        queue_type: QueueType::Quorum,
        consumer_timeout: 30 * M,
        timeout_check_every: M,
        delivery_limit,
        prefetch: 1,
        dead_letter: true,
    }
}

fn kinds(log: &[Event]) -> Vec<(u64, EventKind)> {
    log.iter().map(|e| (e.at, e.kind)).collect()
}

#[test]
fn a_dead_consumers_delivery_is_requeued_at_that_instant_and_handed_out_at_once() {
    let mut b = RabbitMq::new(quorum(20));
    let mut log = Vec::new();
    let seq = b.publish(0, &mut log);
    // Worker 1 takes it at 0 s and dies at 35 s (its connection closes).
    let h1 = b.receive(0, 1, &mut log).unwrap();
    assert_eq!(h1.receive_count, 1);
    assert_eq!(
        b.receive(1, 2, &mut log),
        None,
        "held by worker 1's channel"
    );
    // No timer would ever redeliver it before the consumer timeout: the first tick after 30m
    // of age is 31m.
    assert_eq!(b.next_due(), Some(31 * M));
    b.connection_closed(35 * S, 1, &mut log);
    // Requeued at 35 s: visible at once, and worker 2 gets delivery 2 at that same instant.
    assert_eq!(b.state(seq), Some(MessageState::Visible));
    assert_eq!(b.next_due(), None, "the timeout left with the delivery");
    let h2 = b.receive(35 * S, 2, &mut log).unwrap();
    assert_eq!(h2.receive_count, 2);
    assert_eq!(
        b.ack(36 * S, h2.receipt, 2, &mut log),
        Ok(AckOutcome::Deleted)
    );
    assert_eq!(
        kinds(&log)[2],
        (
            35 * S,
            EventKind::LeaseExpired {
                seq: 1,
                delivery: 1
            }
        )
    );
    assert_eq!(b.counts().deleted, 1);
}

#[test]
fn the_consumer_timeout_fires_at_the_first_check_tick_after_it_and_the_late_ack_fails() {
    // Timeout 30m, ticks every 1m. A delivery at 10 s is 29m50s old at the 30m tick (not past
    // the timeout) and 30m50s old at the 31m tick: the channel closes at 31m exactly.
    let mut b = RabbitMq::new(quorum(20));
    let mut log = Vec::new();
    b.publish(0, &mut log);
    let h1 = b.receive(10 * S, 1, &mut log).unwrap();
    assert_eq!(h1.lease_end, 31 * M);
    assert_eq!(b.next_due(), Some(31 * M));
    b.advance(31 * M - 1, &mut log);
    assert!(matches!(b.state(1), Some(MessageState::Leased { .. })));
    b.advance(31 * M, &mut log);
    assert_eq!(b.state(1), Some(MessageState::Visible));
    // A delivery made exactly on a tick: at 0 s, age 30m at the 30m tick is not past the
    // timeout, so it too times out at 31m.
    assert_eq!(b.timeout_tick(0), 31 * M);
    assert_eq!(b.timeout_tick(M), 32 * M);
    let h2 = b.receive(31 * M, 2, &mut log).unwrap();
    assert_eq!(h2.receive_count, 2);
    // Worker 1's ack at 32m: its channel is closed, the tag unknown: refused, counted stale.
    assert_eq!(
        b.ack(32 * M, h1.receipt, 1, &mut log),
        Err(AckRefused(h1.receipt))
    );
    assert!(matches!(
        log.last().unwrap().kind,
        EventKind::Acked {
            delivery: 1,
            outcome: AckOutcome::StaleRejected,
            ..
        }
    ));
    assert_eq!(
        b.ack(32 * M, h2.receipt, 2, &mut log),
        Ok(AckOutcome::Deleted)
    );
}

#[test]
fn a_quorum_queue_dead_letters_at_the_limit_plus_first_return() {
    // delivery_limit 2: returns 1 and 2 requeue, return 3 dead-letters. Each delivery is
    // nacked (requeue) at once: deliveries 1, 2, 3, then the DLQ.
    let mut b = RabbitMq::new(quorum(2));
    let mut log = Vec::new();
    b.publish(0, &mut log);
    for n in 1..=3u32 {
        let h = b.receive(u64::from(n) * S, 1, &mut log).unwrap();
        assert_eq!(h.receive_count, n);
        b.release(u64::from(n) * S, h.receipt, 1, 0, &mut log)
            .unwrap();
    }
    assert_eq!(b.state(1), Some(MessageState::DeadLettered));
    assert_eq!(b.dlq(), &[1]);
    assert!(log.iter().any(|e| e.at == 3 * S
        && e.kind
            == EventKind::DeadLettered {
                seq: 1,
                delivery: 3
            }));
    assert!(b.receive(4 * S, 1, &mut log).is_none());
}

#[test]
fn without_a_dlx_the_message_is_dropped_at_the_limit() {
    let mut b = RabbitMq::new(RabbitMqConfig {
        dead_letter: false,
        ..quorum(1)
    });
    let mut log = Vec::new();
    b.publish(0, &mut log);
    // limit 1: return 1 requeues, return 2 drops.
    for w in 1..=2 {
        b.receive(0, w, &mut log).unwrap();
        b.connection_closed(0, w, &mut log);
    }
    assert_eq!(b.state(1), Some(MessageState::Deleted));
    assert_eq!(
        log.last().unwrap().kind,
        EventKind::Dropped {
            seq: 1,
            delivery: 2
        }
    );
}

#[test]
fn quorum_returns_go_to_the_head_in_return_order_classic_to_their_place() {
    // Messages 1, 2, 3 published; workers 1 and 2 take 1 and 2; worker 2 dies first, then
    // worker 1. Quorum: the head is 2 (returned first), then 1, then 3. Classic: 1, 2, 3.
    for (queue_type, order) in [
        (QueueType::Quorum, [2, 1, 3]),
        (QueueType::Classic, [1, 2, 3]),
    ] {
        let mut b = RabbitMq::new(RabbitMqConfig {
            queue_type,
            ..quorum(0)
        });
        let mut log = Vec::new();
        for _ in 0..3 {
            b.publish(0, &mut log);
        }
        b.receive(0, 1, &mut log).unwrap();
        b.receive(0, 2, &mut log).unwrap();
        b.connection_closed(S, 2, &mut log);
        b.connection_closed(2 * S, 1, &mut log);
        let got: Vec<_> = (3..6)
            .map(|w| b.receive(3 * S, w, &mut log).unwrap().receipt.seq)
            .collect();
        assert_eq!(got, order, "{queue_type:?}");
    }
}

#[test]
fn prefetch_bounds_what_one_consumer_holds_and_a_death_returns_all_of_it() {
    let mut b = RabbitMq::new(RabbitMqConfig {
        prefetch: 2,
        ..quorum(20)
    });
    let mut log = Vec::new();
    for _ in 0..3 {
        b.publish(0, &mut log);
    }
    // Worker 1 holds 1 and 2 (prefetch 2); a third receive gets nothing; worker 2 gets 3.
    assert_eq!(b.receive(0, 1, &mut log).unwrap().receipt.seq, 1);
    assert_eq!(b.receive(0, 1, &mut log).unwrap().receipt.seq, 2);
    assert_eq!(b.receive(0, 1, &mut log), None);
    assert_eq!(b.receive(0, 2, &mut log).unwrap().receipt.seq, 3);
    assert_eq!(b.held_by(1), &[1, 2]);
    // Worker 1 dies at 5 s: both its deliveries return, in delivery order.
    b.connection_closed(5 * S, 1, &mut log);
    assert_eq!(b.held_by(1), &[] as &[u32]);
    assert_eq!(b.counts().visible, 2);
    assert_eq!(b.receive(5 * S, 3, &mut log).unwrap().receipt.seq, 1);
}

#[test]
fn a_heartbeat_extends_nothing_and_only_the_holder_may_nack() {
    let mut b = RabbitMq::new(quorum(20));
    let mut log = Vec::new();
    b.publish(0, &mut log);
    let h = b.receive(0, 1, &mut log).unwrap();
    assert_eq!(b.extend(h.receipt, 1), Ok(()));
    assert_eq!(
        b.next_due(),
        Some(31 * M),
        "the consumer timeout is not moved"
    );
    assert_eq!(
        b.release(S, h.receipt, 2, 0, &mut log),
        Err(VisibilityError::StaleReceipt)
    );
    b.connection_closed(2 * S, 1, &mut log);
    assert_eq!(b.extend(h.receipt, 1), Err(VisibilityError::StaleReceipt));
}

#[test]
fn a_hand_back_with_a_delay_goes_through_a_retry_queue_and_restarts_the_count() {
    // delivery_limit 1. Delivery 1 at 0 s is handed back for 2 minutes: acked, parked in the
    // retry queue, back at the tail at 120 s as a new message (its returns start from zero).
    // Delivery 2 at 120 s returns (connection closed: return 1 of the new count, requeued);
    // delivery 3 returns too (return 2 > limit 1): dead-lettered.
    let mut b = RabbitMq::new(quorum(1));
    let mut log = Vec::new();
    b.publish(0, &mut log);
    let h1 = b.receive(0, 1, &mut log).unwrap();
    b.release(0, h1.receipt, 1, 2 * M, &mut log).unwrap();
    assert_eq!(b.state(1), Some(MessageState::Delayed { until: 2 * M }));
    assert_eq!(b.receive(M, 2, &mut log), None);
    assert_eq!(b.next_due(), Some(2 * M));
    b.advance(2 * M, &mut log);
    assert_eq!(b.receive(2 * M, 2, &mut log).unwrap().receive_count, 2);
    b.connection_closed(2 * M + S, 2, &mut log);
    assert_eq!(b.state(1), Some(MessageState::Visible));
    assert_eq!(b.receive(2 * M + S, 3, &mut log).unwrap().receive_count, 3);
    b.connection_closed(2 * M + 2 * S, 3, &mut log);
    assert_eq!(b.state(1), Some(MessageState::DeadLettered));
}
