//! Hand-derived NATS JetStream scenarios: one message (or a few), a few consumers, fixed instants.

use super::nats::{Nats, NatsConfig};
use super::*;
use crate::record::{AckOutcome, EventKind};

const S: u64 = 1_000_000_000;

fn nats(max_deliver: u32) -> Nats {
    Nats::new(NatsConfig {
        ack_wait: 30 * S,
        backoff: Vec::new(),
        max_deliver,
        max_ack_pending: 1000,
    })
}

#[test]
fn a_late_ack_from_the_first_holder_acks_the_message_under_the_second() {
    // The Thursday: delivery 1 at 0 s; AckWait ends at 30 s; delivery 2 to worker 2 at 30 s;
    // worker 1's ack at 34 s is accepted (stale) and acks the message; worker 2's at 65 s finds
    // it gone (stale too). 2 deliveries, 2 stale acks, nothing left.
    let mut b = nats(3);
    let mut log = Vec::new();
    b.publish(0, &mut log);
    let h1 = b.receive(0, 1, &mut log).unwrap();
    assert_eq!(h1.lease_end, 30 * S);
    assert_eq!(b.next_due(), Some(30 * S));
    b.advance(30 * S, &mut log);
    let h2 = b.receive(30 * S, 2, &mut log).unwrap();
    assert_eq!((h2.receive_count, h2.lease_end), (2, 60 * S));
    assert_eq!(
        b.ack(34 * S, h1.receipt, 1, &mut log),
        Ok(AckOutcome::StaleDeleted)
    );
    assert_eq!(b.state(1), Some(MessageState::Deleted));
    assert_eq!(
        b.next_due(),
        None,
        "the second holder's AckWait is gone too"
    );
    assert_eq!(
        b.ack(65 * S, h2.receipt, 2, &mut log),
        Ok(AckOutcome::StaleGone)
    );
    assert!(b.counts().in_queue() == 0);
}

#[test]
fn a_consumers_death_changes_nothing_until_ack_wait_ends() {
    let mut b = nats(0);
    let mut log = Vec::new();
    b.publish(0, &mut log);
    b.receive(0, 1, &mut log).unwrap();
    // Worker 1 dies at 12 s: the seam tells NATS nothing; the message stays delivered until
    // AckWait ends at 30 s, and only then can worker 2 get it.
    assert_eq!(b.receive(12 * S, 2, &mut log), None);
    b.advance(29 * S, &mut log);
    assert_eq!(b.receive(29 * S, 2, &mut log), None);
    b.advance(30 * S, &mut log);
    assert_eq!(b.receive(30 * S, 2, &mut log).unwrap().receive_count, 2);
}

#[test]
fn a_stale_in_progress_ack_extends_the_current_holders_lease() {
    // Delivery 1 at 0 s, redelivered to worker 2 at 30 s (AckWait to 60 s). Worker 1, still
    // working, sends +WPI at 45 s: accepted, it restarts the *current* delivery's AckWait, so
    // worker 2's lease now ends at 75 s instead of 60 s.
    let mut b = nats(0);
    let mut log = Vec::new();
    b.publish(0, &mut log);
    let h1 = b.receive(0, 1, &mut log).unwrap();
    b.advance(30 * S, &mut log);
    b.receive(30 * S, 2, &mut log).unwrap();
    assert_eq!(b.in_progress(45 * S, h1.receipt, 1, &mut log), Ok(()));
    assert_eq!(
        b.state(1),
        Some(MessageState::Leased {
            worker: 2,
            nonce: 2,
            lease_end: 75 * S
        })
    );
    b.advance(60 * S, &mut log);
    assert_eq!(
        b.receive(60 * S, 3, &mut log),
        None,
        "not redelivered at 60 s"
    );
    b.advance(75 * S, &mut log);
    assert_eq!(b.receive(75 * S, 3, &mut log).unwrap().receive_count, 3);
}

#[test]
fn nak_redelivers_at_once_or_after_its_delay_and_a_stale_nak_acts_on_the_holder() {
    let mut b = nats(0);
    let mut log = Vec::new();
    b.publish(0, &mut log);
    let h1 = b.receive(0, 1, &mut log).unwrap();
    // nak at 5 s: redelivered at once, to worker 2.
    b.nak(5 * S, h1.receipt, 1, 0, &mut log).unwrap();
    let h2 = b.receive(5 * S, 2, &mut log).unwrap();
    assert_eq!(h2.receive_count, 2);
    // Worker 1's stale nak with a 20 s delay at 6 s acts on worker 2's delivery: it ends at
    // 26 s, not at 35 s (5 s + AckWait).
    b.nak(6 * S, h1.receipt, 1, 20 * S, &mut log).unwrap();
    assert_eq!(b.next_due(), Some(26 * S));
    b.advance(26 * S, &mut log);
    assert_eq!(b.receive(26 * S, 3, &mut log).unwrap().receive_count, 3);
}

#[test]
fn at_max_deliver_the_message_stays_in_the_stream_and_counts_as_dead() {
    // max_deliver 2: delivery 1 (0-30 s), delivery 2 (30-60 s); at 60 s delivery stops.
    let mut b = nats(2);
    let mut log = Vec::new();
    b.publish(0, &mut log);
    b.receive(0, 1, &mut log).unwrap();
    b.advance(30 * S, &mut log);
    let h2 = b.receive(30 * S, 2, &mut log).unwrap();
    b.advance(60 * S, &mut log);
    assert_eq!(b.state(1), Some(MessageState::DeadLettered));
    assert_eq!(b.dlq(), &[1]);
    assert!(b.receive(60 * S, 3, &mut log).is_none());
    assert_eq!(
        log.last().unwrap().kind,
        EventKind::DeadLettered {
            seq: 1,
            delivery: 2
        }
    );
    // A late ack of the given-up message changes nothing.
    assert_eq!(
        b.ack(61 * S, h2.receipt, 2, &mut log),
        Ok(AckOutcome::StaleGone)
    );
}

#[test]
fn backoff_replaces_ack_wait_per_delivery_the_last_value_repeating() {
    // backoff [10s, 20s]: delivery 1 waits 10 s (ends 10 s), delivery 2 20 s (ends 30 s),
    // delivery 3 20 s again (ends 50 s).
    let mut b = Nats::new(NatsConfig {
        ack_wait: 30 * S,
        backoff: vec![10 * S, 20 * S],
        max_deliver: 0,
        max_ack_pending: 1000,
    });
    let mut log = Vec::new();
    b.publish(0, &mut log);
    let ends: Vec<u64> = [0, 10, 30]
        .into_iter()
        .map(|t| {
            b.advance(t * S, &mut log);
            b.receive(t * S, 1, &mut log).unwrap().lease_end / S
        })
        .collect();
    assert_eq!(ends, vec![10, 30, 50]);
}

#[test]
fn redeliveries_go_first_and_max_ack_pending_holds_back_new_messages() {
    let mut b = Nats::new(NatsConfig {
        ack_wait: 30 * S,
        backoff: Vec::new(),
        max_deliver: 0,
        max_ack_pending: 1,
    });
    let mut log = Vec::new();
    b.publish(0, &mut log);
    b.publish(0, &mut log);
    let h1 = b.receive(0, 1, &mut log).unwrap();
    // One pending ack: message 2 waits.
    assert!(!b.can_hand_out());
    assert_eq!(b.receive(0, 2, &mut log), None);
    // Message 1's AckWait ends: its redelivery is allowed (it is already pending), 2 is not.
    b.advance(30 * S, &mut log);
    assert_eq!(b.receive(30 * S, 2, &mut log).unwrap().receipt.seq, 1);
    b.ack(31 * S, h1.receipt, 1, &mut log).unwrap();
    assert_eq!(b.receive(31 * S, 1, &mut log).unwrap().receipt.seq, 2);
}
