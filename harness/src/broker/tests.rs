//! Hand-derived broker scenarios.

use super::queue::{AckRefused, VisibilityError};
use super::*;
use crate::profile::StaleAck;
use crate::record::{AckOutcome, Event, EventKind};

const S: u64 = 1_000_000_000;

fn broker(max_receives: u32, stale_ack: StaleAck) -> (Broker, Vec<Event>) {
    (
        Broker::new(BrokerConfig {
            visibility_timeout: 30 * S,
            max_receives,
            stale_ack,
        }),
        Vec::new(),
    )
}

#[test]
fn lease_expiry_redelivers_and_old_receipt_is_stale() {
    let (mut b, mut log) = broker(0, StaleAck::Reject);
    let seq = b.publish(0, 0, &mut log);
    let h1 = b.receive(0, 1, &mut log).unwrap();
    assert_eq!((h1.receive_count, h1.lease_end), (1, 30 * S));
    assert_eq!(
        b.receive(1, 2, &mut log),
        None,
        "leased messages are hidden"
    );
    assert_eq!(b.next_due(), Some(30 * S));
    b.advance(30 * S, &mut log);
    assert_eq!(b.state(seq), Some(MessageState::Visible));
    let h2 = b.receive(30 * S, 2, &mut log).unwrap();
    assert_eq!(h2.receive_count, 2);
    assert_eq!(
        b.ack(34 * S, h1.receipt, 1, &mut log),
        Err(AckRefused(h1.receipt))
    );
    assert_eq!(
        b.state(seq),
        Some(MessageState::Leased {
            worker: 2,
            nonce: 2,
            lease_end: 60 * S
        })
    );
    assert_eq!(
        b.ack(35 * S, h2.receipt, 2, &mut log),
        Ok(AckOutcome::Deleted)
    );
    assert!(b.is_settled());
    let stale: Vec<_> = log
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Acked {
                delivery, outcome, ..
            } => Some((delivery, outcome)),
            _ => None,
        })
        .collect();
    assert_eq!(
        stale,
        vec![(1, AckOutcome::StaleRejected), (2, AckOutcome::Deleted)]
    );
}

#[test]
fn stale_ack_policies() {
    for (policy, expect, state) in [
        (
            StaleAck::Reject,
            Err(()),
            MessageState::Leased {
                worker: 2,
                nonce: 2,
                lease_end: 60 * S,
            },
        ),
        (
            StaleAck::Ignore,
            Ok(AckOutcome::StaleIgnored),
            MessageState::Leased {
                worker: 2,
                nonce: 2,
                lease_end: 60 * S,
            },
        ),
        (
            StaleAck::Delete,
            Ok(AckOutcome::StaleDeleted),
            MessageState::Deleted,
        ),
    ] {
        let (mut b, mut log) = broker(0, policy);
        b.publish(0, 0, &mut log);
        let h1 = b.receive(0, 1, &mut log).unwrap();
        b.advance(30 * S, &mut log);
        b.receive(30 * S, 2, &mut log).unwrap();
        assert_eq!(
            b.ack(34 * S, h1.receipt, 1, &mut log).map_err(|_| ()),
            expect,
            "{policy:?}"
        );
        assert_eq!(b.state(1), Some(state), "{policy:?}");
    }
}

#[test]
fn stale_delete_of_a_visible_message_is_skipped_on_receive() {
    let (mut b, mut log) = broker(0, StaleAck::Delete);
    b.publish(0, 0, &mut log);
    b.publish(0, 0, &mut log);
    let h1 = b.receive(0, 1, &mut log).unwrap();
    b.advance(30 * S, &mut log); // msg 1 visible again, at the front
    assert_eq!(
        b.ack(31 * S, h1.receipt, 1, &mut log),
        Ok(AckOutcome::StaleDeleted)
    );
    assert_eq!(b.receive(31 * S, 2, &mut log).unwrap().receipt.seq, 2);
    assert_eq!(b.receive(31 * S, 3, &mut log), None);
}

#[test]
fn expired_messages_return_to_the_front_earliest_published_first() {
    let (mut b, mut log) = broker(0, StaleAck::Reject);
    for _ in 0..4 {
        b.publish(0, 0, &mut log);
    }
    // Lease 2 and 3 at 0; 1 and 4 wait behind them.
    let first = b.receive(0, 1, &mut log).unwrap().receipt.seq;
    assert_eq!(first, 1);
    b.change_visibility(0, Receipt { seq: 1, nonce: 1 }, 1, 100 * S, &mut log)
        .unwrap();
    assert_eq!(b.receive(0, 2, &mut log).unwrap().receipt.seq, 2);
    assert_eq!(b.receive(0, 3, &mut log).unwrap().receipt.seq, 3);
    b.advance(30 * S, &mut log);
    let order: Vec<_> = (0..3)
        .map(|w| b.receive(30 * S, w + 4, &mut log).unwrap().receipt.seq)
        .collect();
    assert_eq!(order, vec![2, 3, 4]);
}

#[test]
fn last_allowed_delivery_expiring_moves_to_dlq() {
    let (mut b, mut log) = broker(3, StaleAck::Reject);
    b.publish(0, 0, &mut log);
    for k in 0..3u64 {
        let h = b.receive(k * 30 * S, 1, &mut log).unwrap();
        assert_eq!(h.receive_count as u64, k + 1);
        b.advance((k + 1) * 30 * S, &mut log);
    }
    assert_eq!(b.state(1), Some(MessageState::DeadLettered));
    assert_eq!(b.dlq(), &[1]);
    assert!(b.is_settled());
    assert!(matches!(
        log.last().unwrap().kind,
        EventKind::DeadLettered {
            seq: 1,
            delivery: 3
        }
    ));
    // The last holder's ack arrives after the move: stale, refused under `reject`.
    assert!(b
        .ack(94 * S, Receipt { seq: 1, nonce: 3 }, 1, &mut log)
        .is_err());
    assert!(matches!(
        log.last().unwrap().kind,
        EventKind::Acked {
            delivery: 3,
            outcome: AckOutcome::StaleGone,
            ..
        }
    ));
}

#[test]
fn release_with_zero_visibility_requeues_at_front_or_dead_letters_on_last_delivery() {
    let (mut b, mut log) = broker(2, StaleAck::Reject);
    b.publish(0, 0, &mut log);
    b.publish(0, 0, &mut log);
    let h = b.receive(0, 1, &mut log).unwrap();
    b.change_visibility(5, h.receipt, 1, 0, &mut log).unwrap();
    let h = b.receive(5, 1, &mut log).unwrap();
    assert_eq!((h.receipt.seq, h.receive_count), (1, 2));
    b.change_visibility(6, h.receipt, 1, 0, &mut log).unwrap();
    assert_eq!(b.state(1), Some(MessageState::DeadLettered));
    assert_eq!(
        b.change_visibility(7, h.receipt, 1, 10, &mut log),
        Err(VisibilityError::StaleReceipt)
    );
}

#[test]
fn delayed_publish_becomes_visible_at_the_back() {
    let (mut b, mut log) = broker(0, StaleAck::Reject);
    b.publish(0, 10 * S, &mut log);
    b.publish(0, 0, &mut log);
    assert_eq!(b.next_due(), Some(10 * S));
    b.advance(10 * S, &mut log);
    assert_eq!(b.receive(10 * S, 1, &mut log).unwrap().receipt.seq, 2);
    assert_eq!(b.receive(10 * S, 1, &mut log).unwrap().receipt.seq, 1);
}

#[test]
fn redrive_gives_a_fresh_delivery_budget_and_new_receipts() {
    let (mut b, mut log) = broker(1, StaleAck::Reject);
    b.publish(0, 0, &mut log);
    let old = b.receive(0, 1, &mut log).unwrap();
    b.advance(30 * S, &mut log);
    assert_eq!(b.dlq(), &[1]);
    assert_eq!(b.redrive(60 * S, &mut log), 1);
    let h = b.receive(60 * S, 2, &mut log).unwrap();
    assert_eq!(h.receive_count, 1);
    assert_ne!(h.receipt, old.receipt);
    assert!(b.ack(61 * S, old.receipt, 1, &mut log).is_err());
    assert_eq!(
        b.ack(61 * S, h.receipt, 2, &mut log),
        Ok(AckOutcome::Deleted)
    );
}
