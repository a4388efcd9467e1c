//! Hand-derived Kafka share group scenarios: a record or a few, a few members, fixed instants.

use super::kafka_share::{KafkaShare, KafkaShareConfig};
use super::queue::{AckRefused, VisibilityError};
use super::*;
use crate::record::{AckOutcome, EventKind, Seq};

const S: u64 = 1_000_000_000;

/// A lock of 30 s and a delivery count limit of `limit` on `partitions` partitions.
fn share(limit: u32, partitions: u32) -> KafkaShare {
    KafkaShare::new(KafkaShareConfig {
        record_lock_duration: 30 * S,
        delivery_count_limit: limit,
        partitions,
    })
}

fn stale_acks(log: &[crate::record::Event]) -> usize {
    log.iter()
        .filter(|e| {
            matches!(
                e.kind,
                EventKind::Acked {
                    outcome: AckOutcome::StaleRejected | AckOutcome::StaleGone,
                    ..
                }
            )
        })
        .count()
}

#[test]
fn the_thursday_delivers_each_order_five_times_and_archives_it() {
    // One order of the Thursday (profiles/marlow-thursday.yaml) on a share group with the
    // defaults: lock 30 s, delivery count limit 5; every provider call takes 34 s, longer than
    // the lock, so no acknowledgement is ever in time.
    //   0 s: member 1 acquires it (delivery 1, lock to 30 s).
    //  30 s: the lock ends (count 1 < 5): available; member 2 acquires it (delivery 2, to 60 s).
    //  34 s: member 1's ACCEPT fails (INVALID_RECORD_STATE: member 2 holds it): stale ack 1.
    //  60 s: delivery 3 to member 3 (to 90 s); member 2's ACCEPT at 64 s fails: stale ack 2.
    //  90 s: delivery 4 to member 4 (to 120 s); member 3's at 94 s fails: stale ack 3.
    // 120 s: delivery 5 to member 1, idle since 34 s (to 150 s); member 4's at 124 s fails: 4.
    // 150 s: the lock ends with the count at the limit: archived, not available.
    // 154 s: member 1's ACCEPT finds it archived: stale ack 5.
    // In all: 5 deliveries (5 emails, 4 of them duplicates), 5 stale acks, 1 archived.
    let mut b = share(5, 1);
    let mut log = Vec::new();
    b.publish(0, &mut log);
    let mut handouts = Vec::new();
    for (delivery, worker) in [(1u32, 1u32), (2, 2), (3, 3), (4, 4), (5, 1)] {
        let at = u64::from(delivery - 1) * 30 * S;
        b.advance(at, &mut log);
        let h = b.receive(at, worker, &mut log).expect("available");
        assert_eq!((h.receive_count, h.lease_end), (delivery, at + 30 * S));
        if let Some((r, w)) = handouts.last().copied() {
            // The previous holder's acknowledgement arrives 4 s after its lock ended.
            assert_eq!(b.ack(at + 4 * S, r, w, &mut log), Err(AckRefused(r)));
        }
        handouts.push((h.receipt, worker));
    }
    assert_eq!(b.next_due(), Some(150 * S));
    b.advance(150 * S, &mut log);
    assert_eq!(b.state(1), Some(MessageState::DeadLettered));
    assert_eq!(
        b.receive(150 * S, 2, &mut log),
        None,
        "never delivered again"
    );
    let (r, w) = handouts[4];
    assert_eq!(b.ack(154 * S, r, w, &mut log), Err(AckRefused(r)));
    assert_eq!(stale_acks(&log), 5);
    assert_eq!(b.archived(), &[1]);
    assert!(log.iter().any(|e| e.kind
        == EventKind::DeadLettered {
            seq: 1,
            delivery: 5
        }));
    assert_eq!(b.next_due(), None);
}

#[test]
fn a_released_record_is_available_at_once_before_later_offsets() {
    // Records 1 and 2 (offsets 0 and 1). Member 1 acquires 1 at 0 s and RELEASEs it at 5 s:
    // available at once (no delay), its delivery counted. Record 3 is published at 6 s. The
    // next fetch, at 7 s, takes the lowest available offset: record 1 (delivery 2), then 2,
    // then 3.
    let mut b = share(5, 1);
    let mut log = Vec::new();
    b.publish(0, &mut log);
    b.publish(0, &mut log);
    let h = b.receive(0, 1, &mut log).unwrap();
    assert_eq!(b.release(5 * S, h.receipt, 1, &mut log), Ok(()));
    assert_eq!(b.state(1), Some(MessageState::Visible));
    assert_eq!(b.next_due(), None, "its lock is gone");
    b.publish(6 * S, &mut log);
    let order: Vec<(Seq, u32)> = (2..=4)
        .map(|w| {
            let h = b.receive(7 * S, w, &mut log).unwrap();
            (h.receipt.seq, h.receive_count)
        })
        .collect();
    assert_eq!(order, [(1, 2), (2, 1), (3, 1)]);
    // Only the holder releases: member 1 no longer holds record 1.
    assert_eq!(
        b.release(8 * S, h.receipt, 1, &mut log),
        Err(VisibilityError::StaleReceipt)
    );
}

#[test]
fn a_rejected_record_is_archived_at_once_and_never_delivered_again() {
    // Member 1 acquires record 1 at 0 s and REJECTs it at 2 s: archived (counted in dlq) after
    // one delivery, far below the limit; its lock is gone; a later ACCEPT finds it archived.
    let mut b = share(5, 1);
    let mut log = Vec::new();
    b.publish(0, &mut log);
    let h = b.receive(0, 1, &mut log).unwrap();
    assert_eq!(b.reject(2 * S, h.receipt, 1, &mut log), Ok(()));
    assert_eq!(b.state(1), Some(MessageState::DeadLettered));
    assert_eq!(b.next_due(), None);
    assert_eq!(b.receive(3 * S, 2, &mut log), None);
    assert_eq!(
        b.ack(4 * S, h.receipt, 1, &mut log),
        Err(AckRefused(h.receipt))
    );
    assert_eq!(b.counts().dead_lettered, 1);
    assert_eq!(b.archived(), &[1]);
}

#[test]
fn locks_that_end_together_make_their_records_available_lowest_offset_first() {
    // Records 1, 2, 3; member 2 acquires 1 and member 1 acquires 2 at 0 s, both locks to 30 s;
    // record 3 waits. At 30 s both locks end: 1 and 2 are available again, and with 3 the
    // fetches at 30 s take 1 (delivery 2), 2 (delivery 2), 3 (delivery 1).
    let mut b = share(5, 1);
    let mut log = Vec::new();
    for _ in 0..3 {
        b.publish(0, &mut log);
    }
    b.receive(0, 2, &mut log).unwrap();
    b.receive(0, 1, &mut log).unwrap();
    b.advance(29 * S, &mut log);
    assert_eq!(b.counts().visible, 1, "only record 3 before the locks end");
    b.advance(30 * S, &mut log);
    let order: Vec<(Seq, u32)> = (3..=5)
        .map(|w| {
            let h = b.receive(30 * S, w, &mut log).unwrap();
            (h.receipt.seq, h.receive_count)
        })
        .collect();
    assert_eq!(order, [(1, 2), (2, 2), (3, 1)]);
}

#[test]
fn a_late_ack_fails_and_leaves_the_record_available() {
    // Member 1 acquires record 1 at 0 s; the lock ends at 30 s and nobody fetches. Member 1's
    // ACCEPT at 31 s fails (the record is available, not acquired): a stale ack, the record
    // stays available. Member 2 acquires it at 32 s (delivery 2) and accepts it at 33 s.
    let mut b = share(5, 1);
    let mut log = Vec::new();
    b.publish(0, &mut log);
    let h1 = b.receive(0, 1, &mut log).unwrap();
    b.advance(30 * S, &mut log);
    assert_eq!(
        b.ack(31 * S, h1.receipt, 1, &mut log),
        Err(AckRefused(h1.receipt))
    );
    assert_eq!(b.state(1), Some(MessageState::Visible));
    let h2 = b.receive(32 * S, 2, &mut log).unwrap();
    assert_eq!(h2.receive_count, 2);
    assert_eq!(
        b.ack(33 * S, h2.receipt, 2, &mut log),
        Ok(AckOutcome::Deleted)
    );
    assert_eq!(stale_acks(&log), 1);
    assert!(b.counts().in_queue() == 0);
}

#[test]
fn an_ack_is_matched_by_offset_and_member() {
    // Member 1 acquires record 1 at 0 s, its lock ends at 30 s, and member 1 acquires it again
    // at 31 s (delivery 2). Its ACCEPT at 32 s with the first delivery's receipt is applied:
    // Kafka matches an acknowledgement by offset and member, and member 1 holds the record.
    let mut b = share(5, 1);
    let mut log = Vec::new();
    b.publish(0, &mut log);
    let h1 = b.receive(0, 1, &mut log).unwrap();
    b.advance(30 * S, &mut log);
    b.receive(31 * S, 1, &mut log).unwrap();
    assert_eq!(
        b.ack(32 * S, h1.receipt, 1, &mut log),
        Ok(AckOutcome::StaleDeleted)
    );
    assert_eq!(b.state(1), Some(MessageState::Deleted));
    assert_eq!(b.next_due(), None);
}

#[test]
fn at_the_limit_a_release_or_an_ended_lock_archives_the_record() {
    // Limit 2. Record 1: delivery 1 released at 1 s (available), delivery 2 released at 2 s:
    // the count is at the limit, so archived. Record 2: delivery 1's lock ends at 33 s
    // (available), delivery 2 from 33 s ends at 63 s: archived.
    let mut b = share(2, 1);
    let mut log = Vec::new();
    b.publish(0, &mut log);
    for (at, delivery) in [(1, 1), (2, 2)] {
        let h = b.receive(0, 1, &mut log).unwrap();
        assert_eq!(h.receive_count, delivery);
        b.release(at * S, h.receipt, 1, &mut log).unwrap();
    }
    assert_eq!(b.state(1), Some(MessageState::DeadLettered));
    b.publish(3 * S, &mut log);
    b.receive(3 * S, 1, &mut log).unwrap();
    b.advance(33 * S, &mut log);
    assert_eq!(b.receive(33 * S, 2, &mut log).unwrap().receive_count, 2);
    b.advance(63 * S, &mut log);
    assert_eq!(b.state(2), Some(MessageState::DeadLettered));
    assert_eq!(b.archived(), &[1, 2]);
    // A redrive makes both available again with a fresh count.
    assert_eq!(b.redrive(70 * S, &mut log), 2);
    assert_eq!(b.receive(70 * S, 3, &mut log).unwrap().receive_count, 1);
}

#[test]
fn a_dead_members_records_are_released_at_once() {
    // Member 1 acquires records 1 and 2 at 0 s and dies at 5 s: its connection closes, the
    // broker ends its share session and releases both (their deliveries counted). Member 2
    // fetches them at 5 s, lowest first, as delivery 2.
    let mut b = share(5, 1);
    let mut log = Vec::new();
    b.publish(0, &mut log);
    b.publish(0, &mut log);
    b.receive(0, 1, &mut log).unwrap();
    b.receive(0, 1, &mut log).unwrap();
    b.member_gone(5 * S, 1, &mut log);
    assert_eq!(b.next_due(), None);
    let order: Vec<(Seq, u32)> = (0..2)
        .map(|_| {
            let h = b.receive(5 * S, 2, &mut log).unwrap();
            (h.receipt.seq, h.receive_count)
        })
        .collect();
    assert_eq!(order, [(1, 2), (2, 2)]);
}

#[test]
fn renew_starts_the_lock_again_for_the_holder_only() {
    // Member 1 acquires record 1 at 0 s (lock to 30 s) and RENEWs at 20 s: lock to 50 s. A
    // RENEW by member 2, who does not hold it, fails.
    let mut b = share(5, 1);
    let mut log = Vec::new();
    b.publish(0, &mut log);
    let h = b.receive(0, 1, &mut log).unwrap();
    assert_eq!(b.renew(20 * S, h.receipt, 1, &mut log), Ok(()));
    assert_eq!(b.next_due(), Some(50 * S));
    assert_eq!(
        b.renew(21 * S, h.receipt, 2, &mut log),
        Err(VisibilityError::StaleReceipt)
    );
    b.advance(30 * S, &mut log);
    assert_eq!(b.receive(30 * S, 2, &mut log), None, "still member 1's");
}

#[test]
fn fetches_take_the_partitions_in_turn() {
    // Two partitions: records 1 and 3 in partition 0, 2 and 4 in partition 1. Fetches take
    // partition 0, 1, 0, 1: records 1, 2, 3, 4. Record 1 released after that is fetched next
    // whatever the turn (partition 1 has nothing available).
    let mut b = share(5, 2);
    let mut log = Vec::new();
    for _ in 0..4 {
        b.publish(0, &mut log);
    }
    let got: Vec<Seq> = (1..=4)
        .map(|w| b.receive(0, w, &mut log).unwrap().receipt.seq)
        .collect();
    assert_eq!(got, [1, 2, 3, 4]);
    let first = Receipt { seq: 1, nonce: 1 };
    b.release(S, first, 1, &mut log).unwrap();
    assert_eq!(b.receive(S, 1, &mut log).unwrap().receipt.seq, 1);
}
