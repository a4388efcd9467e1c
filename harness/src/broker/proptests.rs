//! Property tests of the broker's invariants over random schedules.

use std::collections::HashMap;

use proptest::prelude::*;

use super::*;
use crate::profile::StaleAck;
use crate::record::{AckOutcome, Event, EventKind, Nanos, Seq};

#[derive(Debug, Clone)]
enum Op {
    Publish { delay: Nanos },
    Receive { worker: u32 },
    Ack { pick: usize, worker: u32 },
    ChangeVisibility { pick: usize, timeout: Nanos },
    Advance { by: Nanos },
    Redrive,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (prop_oneof![Just(0u64), 1u64..50]).prop_map(|delay| Op::Publish { delay }),
        4 => (1u32..5).prop_map(|worker| Op::Receive { worker }),
        3 => (any::<usize>(), 1u32..5).prop_map(|(pick, worker)| Op::Ack { pick, worker }),
        2 => (any::<usize>(), prop_oneof![Just(0u64), 1u64..80]).prop_map(|(pick, timeout)| Op::ChangeVisibility { pick, timeout }),
        3 => (0u64..40).prop_map(|by| Op::Advance { by }),
        1 => Just(Op::Redrive),
    ]
}

/// Every stale-ack policy.
pub(super) fn policy() -> impl Strategy<Value = StaleAck> {
    prop_oneof![
        Just(StaleAck::Reject),
        Just(StaleAck::Ignore),
        Just(StaleAck::Delete),
        Just(StaleAck::Sqs)
    ]
}

/// Every invariant the broker promises, checked against its own state.
fn check_invariants(b: &Broker, published: usize) {
    assert_eq!(b.len(), published, "no message disappears from the broker");
    let mut counts = Counts::default();
    for seq in 1..=published as Seq {
        // Each message is in exactly one state (the state is a single value; count them).
        *counts.slot(b.state(seq).unwrap()) += 1;
    }
    assert_eq!(counts, b.counts(), "state counts agree with the messages");
    assert_eq!(
        counts.delayed + counts.visible + counts.leased + counts.deleted + counts.dead_lettered,
        published as u64
    );
    let dlq_states = (1..=published as Seq)
        .filter(|&s| b.state(s) == Some(MessageState::DeadLettered))
        .count();
    assert_eq!(
        dlq_states,
        b.dlq().len(),
        "the DLQ lists exactly the dead-lettered messages"
    );
}

/// Under `stale_ack: sqs`, true when `r` is the latest receipt of a visible message received
/// since its last redrive: its ack deletes, its visibility change leases it again.
fn late_latest(b: &Broker, receipts: &[(Receipt, u32)], r: Receipt, stale_ack: StaleAck) -> bool {
    let latest = receipts
        .iter()
        .rev()
        .find(|(x, _)| x.seq == r.seq)
        .map(|(x, _)| x.nonce);
    stale_ack == StaleAck::Sqs
        && b.state(r.seq) == Some(MessageState::Visible)
        && latest == Some(r.nonce)
        && b.receive_count(r.seq).is_some_and(|c| c > 0)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn broker_never_loses_a_message_and_leases_are_unique(
        ops in proptest::collection::vec(op(), 1..120),
        max_receives in 0u32..4,
        stale_ack in policy(),
    ) {
        let mut b = Broker::new(BrokerConfig { visibility_timeout: 30, max_receives, stale_ack });
        let mut log: Vec<Event> = Vec::new();
        let mut now: Nanos = 0;
        let mut published = 0usize;
        let mut receipts: Vec<(Receipt, u32)> = Vec::new();
        let mut last_count: HashMap<Seq, u32> = HashMap::new();
        let mut redriven: Vec<Seq> = Vec::new();
        for op in ops {
            match op {
                Op::Publish { delay } => { b.publish(now, delay, &mut log); published += 1; }
                Op::Receive { worker } => {
                    let before = b.counts().visible;
                    match b.receive(now, worker, &mut log) {
                        Some(h) => {
                            // The receipt is new: no earlier hand-out had it.
                            prop_assert!(receipts.iter().all(|(r, _)| *r != h.receipt));
                            receipts.push((h.receipt, worker));
                            prop_assert_eq!(b.state(h.receipt.seq), Some(MessageState::Leased { worker, nonce: h.receipt.nonce, lease_end: now + 30 }));
                        }
                        None => prop_assert_eq!(before, 0, "a visible message is always handed out"),
                    }
                }
                Op::Ack { pick, worker } => {
                    if receipts.is_empty() { continue; }
                    let (r, _) = receipts[pick % receipts.len()];
                    let before = b.state(r.seq).unwrap();
                    let current = matches!(before, MessageState::Leased { nonce, .. } if nonce == r.nonce);
                    let late_latest = late_latest(&b, &receipts, r, stale_ack);
                    let res = b.ack(now, r, worker, &mut log);
                    let after = b.state(r.seq).unwrap();
                    if current {
                        prop_assert_eq!(res, Ok(AckOutcome::Deleted));
                    } else if late_latest {
                        // `sqs`: the latest receipt, nobody having received it since its lease ended.
                        prop_assert_eq!(res, Ok(AckOutcome::LateDeleted));
                        prop_assert_eq!(after, MessageState::Deleted);
                    } else {
                        // Only `delete` lets an old receipt remove a message another worker may hold.
                        if stale_ack != StaleAck::Delete { prop_assert_eq!(before, after); }
                        prop_assert!(res.map(|o| o.is_stale()).unwrap_or(true));
                        let recorded_stale = matches!(log.last().unwrap().kind, EventKind::Acked { outcome, .. } if outcome.is_stale());
                        prop_assert!(recorded_stale, "a stale ack is recorded as stale");
                    }
                }
                Op::ChangeVisibility { pick, timeout } => {
                    if receipts.is_empty() { continue; }
                    let (r, w) = receipts[pick % receipts.len()];
                    let before = b.state(r.seq).unwrap();
                    let current = matches!(before, MessageState::Leased { nonce, .. } if nonce == r.nonce);
                    let late_latest = late_latest(&b, &receipts, r, stale_ack);
                    let res = b.change_visibility(now, r, w, timeout, &mut log);
                    prop_assert_eq!(res.is_ok(), current || late_latest, "only the current holder (or, under sqs, the latest one) changes a lease");
                    if !current && !late_latest { prop_assert_eq!(before, b.state(r.seq).unwrap()); }
                }
                Op::Advance { by } => {
                    now += by;
                    b.advance(now, &mut log);
                    // Nothing due is left behind.
                    prop_assert!(b.next_due().is_none_or(|t| t > now));
                }
                Op::Redrive => { redriven.extend(b.dlq().iter().copied()); b.redrive(now, &mut log); }
            }
            check_invariants(&b, published);
            // Receive counts only grow (a redrive resets a message's budget: excluded).
            for seq in 1..=published as Seq {
                let c = b.receive_count(seq).unwrap();
                if !redriven.contains(&seq) {
                    let prev = last_count.insert(seq, c).unwrap_or(0);
                    prop_assert!(c >= prev, "receive count of {} went from {} to {}", seq, prev, c);
                }
                if max_receives > 0 && !redriven.contains(&seq) {
                    prop_assert!(c <= max_receives, "never delivered beyond the limit");
                }
            }
            // At most one current lease per message: leased messages hold exactly one receipt
            // among those handed out, and it is the latest one for that message.
            for seq in 1..=published as Seq {
                if let Some(MessageState::Leased { nonce, worker, .. }) = b.state(seq) {
                    let latest = receipts.iter().rev().find(|(r, _)| r.seq == seq).unwrap();
                    prop_assert_eq!((latest.0.nonce, latest.1), (nonce, worker));
                }
            }
        }
        // Events are in time order.
        prop_assert!(log.windows(2).all(|w| w[0].at <= w[1].at));
    }
}

/// The same operations on a broker that remembers every message and on one that forgets settled
/// ones: every answer, count, due time, DLQ and event is the same, and the forgetting broker
/// holds only what is in the queue or in the DLQ. With `redrive` the DLQ is redriven (a sim
/// run's model: stale acks of messages deleted after a redrive name their delivery exactly);
/// without, it is taken (the SQS endpoint, which moves it to a dead-letter queue).
fn same_answers_when_forgetting(
    ops: Vec<Op>,
    max_receives: u32,
    stale_ack: StaleAck,
    redrive: bool,
) {
    let config = BrokerConfig {
        visibility_timeout: 30,
        max_receives,
        stale_ack,
    };
    let mut keep = Broker::new(config);
    let mut forget = Broker::forgetting_settled(config);
    let (mut log_k, mut log_f): (Vec<Event>, Vec<Event>) = (Vec::new(), Vec::new());
    let mut now: Nanos = 0;
    let mut receipts: Vec<Receipt> = Vec::new();
    for op in ops {
        match op {
            Op::Publish { delay } => {
                let a = keep.publish(now, delay, &mut log_k);
                assert_eq!(a, forget.publish(now, delay, &mut log_f));
            }
            Op::Receive { worker } => {
                let a = keep.receive(now, worker, &mut log_k);
                assert_eq!(a, forget.receive(now, worker, &mut log_f));
                receipts.extend(a.map(|h| h.receipt));
            }
            Op::Ack { pick, worker } => {
                if let Some(&r) = receipts.get(pick % receipts.len().max(1)) {
                    let a = keep.ack(now, r, worker, &mut log_k);
                    assert_eq!(a, forget.ack(now, r, worker, &mut log_f), "ack of {r:?}");
                }
            }
            Op::ChangeVisibility { pick, timeout } => {
                if let Some(&r) = receipts.get(pick % receipts.len().max(1)) {
                    let a = keep.change_visibility(now, r, 1, timeout, &mut log_k);
                    assert_eq!(a, forget.change_visibility(now, r, 1, timeout, &mut log_f));
                }
            }
            Op::Advance { by } => {
                now += by;
                keep.advance(now, &mut log_k);
                forget.advance(now, &mut log_f);
            }
            Op::Redrive if redrive => {
                let a = keep.redrive(now, &mut log_k);
                assert_eq!(a, forget.redrive(now, &mut log_f));
            }
            Op::Redrive => assert_eq!(keep.take_dlq(), forget.take_dlq()),
        }
        assert_eq!(keep.counts(), forget.counts());
        assert_eq!(keep.next_due(), forget.next_due());
        assert_eq!(keep.dlq(), forget.dlq());
        assert_eq!(keep.len(), forget.len());
        assert_eq!(log_k, log_f);
        for seq in 1..=keep.len() as Seq {
            match forget.state(seq) {
                Some(s) => assert_eq!(keep.state(seq), Some(s)),
                None => assert!(matches!(
                    keep.state(seq),
                    Some(MessageState::Deleted | MessageState::DeadLettered)
                )),
            }
        }
        let c = forget.counts();
        assert_eq!(
            forget.held() as u64,
            c.in_queue() + forget.dlq().len() as u64,
            "holds only the queue and the DLQ"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn a_broker_that_forgets_settled_messages_answers_as_one_that_remembers(
        ops in proptest::collection::vec(op(), 1..120),
        max_receives in 0u32..4,
        stale_ack in policy(),
    ) {
        same_answers_when_forgetting(ops, max_receives, stale_ack, false);
    }

    #[test]
    fn a_broker_that_forgets_deleted_messages_answers_as_one_that_remembers_across_redrives(
        ops in proptest::collection::vec(op(), 1..160),
        max_receives in 1u32..4,
        stale_ack in policy(),
    ) {
        same_answers_when_forgetting(ops, max_receives, stale_ack, true);
    }
}
