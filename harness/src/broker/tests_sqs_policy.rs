//! Hand-derived scenarios of `stale_ack: sqs`: what SQS does with a receipt whose lease ended.

use super::queue::VisibilityError;
use super::*;
use crate::profile::StaleAck;
use crate::record::{AckOutcome, Event};

const S: u64 = 1_000_000_000;

/// Lease 30 s, no delivery limit, `stale_ack: sqs`; one message published at 0.
fn one_message(stale_ack: StaleAck) -> (Broker, Vec<Event>) {
    let mut log = Vec::new();
    let mut b = Broker::new(BrokerConfig {
        visibility_timeout: 30 * S,
        max_receives: 0,
        stale_ack,
    });
    b.publish(0, 0, &mut log);
    (b, log)
}

#[test]
fn the_latest_receipt_deletes_after_its_lease_ended_when_nobody_received_since() {
    // Received at 0 (lease to 30 s), expired at 30 s, acked at 35 s by its holder, nobody having
    // received it between: deleted, reported as a late delete; a receive then finds nothing.
    let (mut b, mut log) = one_message(StaleAck::Sqs);
    let h = b.receive(0, 1, &mut log).unwrap();
    b.advance(30 * S, &mut log);
    assert_eq!(b.state(1), Some(MessageState::Visible));
    assert_eq!(
        b.ack(35 * S, h.receipt, 1, &mut log),
        Ok(AckOutcome::LateDeleted)
    );
    assert_eq!(b.state(1), Some(MessageState::Deleted));
    assert!(b.is_settled());
    assert_eq!(b.receive(36 * S, 2, &mut log), None);
    // Under reject the same ack is refused and the message stays visible.
    let (mut b, mut log) = one_message(StaleAck::Reject);
    let h = b.receive(0, 1, &mut log).unwrap();
    b.advance(30 * S, &mut log);
    assert!(b.ack(35 * S, h.receipt, 1, &mut log).is_err());
    assert_eq!(b.state(1), Some(MessageState::Visible));
}

#[test]
fn an_older_receipt_succeeds_but_leaves_the_message() {
    // d1 (w1) at 0, expires at 30; d2 (w2) at 30. w1's ack at 35 holds an older receipt: success,
    // message untouched (still w2's, lease to 60). d2 expires at 60; w1's ack at 61 is still the
    // older receipt: the message stays visible. w2's ack at 62 (latest, nobody received since
    // 60): deleted.
    let (mut b, mut log) = one_message(StaleAck::Sqs);
    let h1 = b.receive(0, 1, &mut log).unwrap();
    b.advance(30 * S, &mut log);
    let h2 = b.receive(30 * S, 2, &mut log).unwrap();
    assert_eq!(
        b.ack(35 * S, h1.receipt, 1, &mut log),
        Ok(AckOutcome::StaleIgnored)
    );
    assert!(matches!(
        b.state(1),
        Some(MessageState::Leased { worker: 2, .. })
    ));
    b.advance(60 * S, &mut log);
    assert_eq!(
        b.ack(61 * S, h1.receipt, 1, &mut log),
        Ok(AckOutcome::StaleIgnored)
    );
    assert_eq!(b.state(1), Some(MessageState::Visible));
    assert_eq!(
        b.ack(62 * S, h2.receipt, 2, &mut log),
        Ok(AckOutcome::LateDeleted)
    );
    assert!(b.is_settled());
    // A receipt of a deleted message: success, nothing to do.
    assert_eq!(
        b.ack(63 * S, h2.receipt, 2, &mut log),
        Ok(AckOutcome::StaleGone)
    );
}

#[test]
fn a_visibility_change_with_the_latest_receipt_after_expiry_hides_the_message_again() {
    // Received at 0, expired at 30; at 35 its holder changes visibility to 20 s: leased again to
    // it until 55 (a receive at 40 finds nothing); it expires at 55 and is received at 55 as
    // delivery 2. The first receipt is now older: a change with it is refused.
    let (mut b, mut log) = one_message(StaleAck::Sqs);
    let h1 = b.receive(0, 1, &mut log).unwrap();
    b.advance(30 * S, &mut log);
    assert_eq!(
        b.change_visibility(35 * S, h1.receipt, 1, 20 * S, &mut log),
        Ok(55 * S)
    );
    assert_eq!(b.counts().visible, 0);
    assert_eq!(b.receive(40 * S, 2, &mut log), None);
    assert_eq!(b.next_due(), Some(55 * S));
    b.advance(55 * S, &mut log);
    let h2 = b.receive(55 * S, 2, &mut log).unwrap();
    assert_eq!(h2.receive_count, 2);
    assert_eq!(
        b.change_visibility(56 * S, h1.receipt, 1, 20 * S, &mut log),
        Err(VisibilityError::StaleReceipt)
    );
    // Under reject the same change after expiry is refused.
    let (mut b, mut log) = one_message(StaleAck::Reject);
    let h = b.receive(0, 1, &mut log).unwrap();
    b.advance(30 * S, &mut log);
    assert_eq!(
        b.change_visibility(35 * S, h.receipt, 1, 20 * S, &mut log),
        Err(VisibilityError::StaleReceipt)
    );
}

#[test]
fn a_redrive_makes_every_earlier_receipt_older() {
    // Limit 1: received at 0, dead-lettered at 30, redriven at 31. The receipt of delivery 1 is
    // now an older one: its ack succeeds and leaves the message visible.
    let mut log = Vec::new();
    let mut b = Broker::new(BrokerConfig {
        visibility_timeout: 30 * S,
        max_receives: 1,
        stale_ack: StaleAck::Sqs,
    });
    b.publish(0, 0, &mut log);
    let h = b.receive(0, 1, &mut log).unwrap();
    b.advance(30 * S, &mut log);
    assert_eq!(b.dlq(), &[1]);
    assert_eq!(b.redrive(31 * S, &mut log), 1);
    assert_eq!(
        b.ack(32 * S, h.receipt, 1, &mut log),
        Ok(AckOutcome::StaleIgnored)
    );
    assert_eq!(b.state(1), Some(MessageState::Visible));
}
