//! Hand-derived Redis Streams scenarios: one entry (or a few), a few consumers, fixed instants.

use super::queue::VisibilityError;
use super::redis_streams::{RedisStreams, RedisStreamsConfig};
use super::*;
use crate::record::{AckOutcome, EventKind};

const S: u64 = 1_000_000_000;

fn redis(claim_every: u64, max_deliveries: u32) -> RedisStreams {
    RedisStreams::new(RedisStreamsConfig {
        min_idle: 30 * S,
        claim_every,
        max_deliveries,
    })
}

#[test]
fn an_entry_whose_owner_died_is_never_redelivered_without_a_claim() {
    // Worker 1 reads the entry at 0 s and dies at 5 s. Nothing hands it out again by itself:
    // before it has been idle 30 s no consumer can take it; a claim at 30 s is the only way back.
    let mut b = redis(0, 0);
    let mut log = Vec::new();
    b.publish(0, &mut log);
    b.receive(0, 1, &mut log).unwrap();
    for t in [5, 10, 29] {
        b.advance(t * S, &mut log);
        assert_eq!(b.receive(t * S, 2, &mut log), None, "at {t} s");
        assert!(!b.is_claimable(1));
    }
    assert_eq!(b.next_due(), Some(30 * S));
    b.advance(30 * S, &mut log);
    assert!(b.is_claimable(1));
    let h2 = b.receive(30 * S, 2, &mut log).unwrap();
    assert_eq!((h2.receive_count, h2.lease_end), (2, 60 * S));
}

#[test]
fn with_a_periodic_claimer_the_claim_waits_for_its_tick() {
    // claim_every 25s: the entry read at 0 s reaches min_idle at 30 s, but the claimer runs
    // at 25 s and 50 s: it is claimed at 50 s.
    let mut b = redis(25 * S, 0);
    let mut log = Vec::new();
    b.publish(0, &mut log);
    let h1 = b.receive(0, 1, &mut log).unwrap();
    assert_eq!(h1.lease_end, 50 * S);
    b.advance(49 * S, &mut log);
    assert_eq!(b.receive(49 * S, 2, &mut log), None);
    b.advance(50 * S, &mut log);
    assert_eq!(b.receive(50 * S, 2, &mut log).unwrap().receive_count, 2);
}

#[test]
fn xack_from_any_consumer_is_accepted_once() {
    // The Thursday: read by worker 1 at 0 s, claimed by worker 2 at 30 s; worker 1's XACK at
    // 34 s removes the entry (stale: it is worker 2's now); worker 2's XACK at 65 s returns 0.
    let mut b = redis(0, 3);
    let mut log = Vec::new();
    b.publish(0, &mut log);
    let h1 = b.receive(0, 1, &mut log).unwrap();
    b.advance(30 * S, &mut log);
    let h2 = b.receive(30 * S, 2, &mut log).unwrap();
    assert_eq!(
        b.ack(34 * S, h1.receipt, 1, &mut log),
        Ok(AckOutcome::StaleDeleted)
    );
    assert_eq!(b.next_due(), None);
    assert_eq!(
        b.ack(65 * S, h2.receipt, 2, &mut log),
        Ok(AckOutcome::StaleGone)
    );
    assert_eq!(b.counts().in_queue(), 0);
}

#[test]
fn past_max_deliveries_the_claimer_moves_the_entry_to_the_dead_stream() {
    // max_deliveries 2: read at 0 s (1), claimed at 30 s (2); at 60 s the claim that would be
    // delivery 3 moves it to <stream>:dead instead, and the claimer gets the next new entry.
    let mut b = redis(0, 2);
    let mut log = Vec::new();
    b.publish(0, &mut log);
    b.receive(0, 1, &mut log).unwrap();
    b.advance(30 * S, &mut log);
    b.receive(30 * S, 2, &mut log).unwrap();
    b.publish(59 * S, &mut log);
    b.advance(60 * S, &mut log);
    let h = b.receive(60 * S, 3, &mut log).unwrap();
    assert_eq!((h.receipt.seq, h.receive_count), (2, 1));
    assert_eq!(b.state(1), Some(MessageState::DeadLettered));
    assert_eq!(b.dlq(), &[1]);
    assert!(log.iter().any(|e| e.at == 60 * S
        && e.kind
            == EventKind::DeadLettered {
                seq: 1,
                delivery: 2
            }));
}

#[test]
fn the_owner_resets_idle_time_or_hands_back_early_and_no_one_else_may() {
    let mut b = redis(0, 0);
    let mut log = Vec::new();
    b.publish(0, &mut log);
    let h = b.receive(0, 1, &mut log).unwrap();
    // A heartbeat at 20 s: claimable from 50 s instead of 30 s.
    b.touch(20 * S, h.receipt, 1, &mut log).unwrap();
    assert_eq!(b.next_due(), Some(50 * S));
    // Worker 2 holds no delivery of it: refused.
    assert_eq!(
        b.touch(21 * S, h.receipt, 2, &mut log),
        Err(VisibilityError::StaleReceipt)
    );
    // Handing back with a 2-minute delay: at most min_idle, so claimable at 25 s + 30 s.
    b.release(25 * S, h.receipt, 1, 120 * S, &mut log).unwrap();
    assert_eq!(b.next_due(), Some(55 * S));
    // Handing back at once: claimable now, taken by the next receive.
    b.release(26 * S, h.receipt, 1, 0, &mut log).unwrap();
    assert!(b.is_claimable(1));
    assert_eq!(b.receive(26 * S, 2, &mut log).unwrap().receive_count, 2);
}
