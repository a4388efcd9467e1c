//! Property tests of every kind's invariants through the seam, over random schedules: the broker
//! never loses a message (each is pending, acked or dead), receive counts only grow (but for a
//! redrive), and the kind's own rule about holders.

use std::collections::HashMap;

use proptest::prelude::*;

use super::kafka::{Assignment, Kafka, KafkaConfig};
use super::kafka_share::{KafkaShare, KafkaShareConfig};
use super::nats::{Nats, NatsConfig};
use super::rabbitmq::{QueueType, RabbitMq, RabbitMqConfig};
use super::redis_streams::{RedisStreams, RedisStreamsConfig};
use super::*;
use crate::record::{AckOutcome, Event, Nanos, Seq, WorkerId};

#[derive(Debug, Clone)]
enum Op {
    Publish,
    Receive { worker: WorkerId },
    Ack { pick: usize },
    Release { pick: usize, delay: Nanos },
    Extend { pick: usize },
    Die { worker: WorkerId },
    Advance { by: Nanos },
    Redrive,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => Just(Op::Publish),
        4 => (1u32..5).prop_map(|worker| Op::Receive { worker }),
        3 => any::<usize>().prop_map(|pick| Op::Ack { pick }),
        2 => (any::<usize>(), prop_oneof![Just(0u64), 1u64..80]).prop_map(|(pick, delay)| Op::Release { pick, delay }),
        1 => any::<usize>().prop_map(|pick| Op::Extend { pick }),
        1 => (1u32..5).prop_map(|worker| Op::Die { worker }),
        3 => (0u64..40).prop_map(|by| Op::Advance { by }),
        1 => Just(Op::Redrive),
    ]
}

fn rabbitmq() -> impl Strategy<Value = BrokerModel> {
    (
        any::<bool>(),
        0u32..4,
        1u32..3,
        any::<bool>(),
        1u64..40,
        1u64..20,
    )
        .prop_map(
            |(quorum, delivery_limit, prefetch, dead_letter, timeout, every)| {
                BrokerModel::RabbitMq(RabbitMq::new(RabbitMqConfig {
                    queue_type: if quorum {
                        QueueType::Quorum
                    } else {
                        QueueType::Classic
                    },
                    consumer_timeout: timeout,
                    timeout_check_every: every,
                    delivery_limit,
                    prefetch,
                    dead_letter,
                }))
            },
        )
}

fn nats() -> impl Strategy<Value = BrokerModel> {
    (
        1u64..40,
        prop::collection::vec(1u64..40, 0..3),
        0u32..4,
        1u32..4,
    )
        .prop_map(|(ack_wait, backoff, max_deliver, max_ack_pending)| {
            BrokerModel::Nats(Nats::new(NatsConfig {
                ack_wait,
                backoff,
                max_deliver,
                max_ack_pending,
            }))
        })
}

fn redis() -> impl Strategy<Value = BrokerModel> {
    (1u64..40, prop_oneof![Just(0u64), 1u64..15], 0u32..4).prop_map(
        |(min_idle, claim_every, max_deliveries)| {
            BrokerModel::RedisStreams(RedisStreams::new(RedisStreamsConfig {
                min_idle,
                claim_every,
                max_deliveries,
            }))
        },
    )
}

fn kafka_share() -> impl Strategy<Value = BrokerModel> {
    (1u64..40, 1u32..5, 1u32..4).prop_map(|(lock, limit, partitions)| {
        BrokerModel::KafkaShare(KafkaShare::new(KafkaShareConfig {
            record_lock_duration: lock,
            delivery_count_limit: limit,
            partitions,
        }))
    })
}

/// A Kafka model's configuration (also what `proptests_forgetting.rs` draws).
pub(super) fn kafka_config() -> impl Strategy<Value = KafkaConfig> {
    (
        1u32..4,
        (1u64..80, 1u64..10, 1u64..30),
        1u32..4,
        prop_oneof![Just(None), (1u64..20).prop_map(Some)],
        any::<bool>(),
        any::<bool>(),
        prop_oneof![Just(0u64), 1u64..10],
    )
        .prop_map(
            |(
                partitions,
                (poll, beat, more),
                max_poll_records,
                auto_commit,
                coop,
                fixed,
                delay,
            )| {
                KafkaConfig {
                    partitions,
                    max_poll_interval: poll,
                    // heartbeat_interval < session_timeout, as the profile checks.
                    session_timeout: beat + more,
                    heartbeat_interval: beat,
                    max_poll_records,
                    auto_commit,
                    assignment: if coop {
                        Assignment::CooperativeSticky
                    } else {
                        Assignment::Range
                    },
                    static_membership: fixed,
                    initial_rebalance_delay: delay,
                }
            },
        )
}

/// Runs `ops` and checks the invariants after each.
fn check(mut b: BrokerModel, ops: Vec<Op>) {
    let mut log: Vec<Event> = Vec::new();
    let mut now: Nanos = 0;
    let mut published: Seq = 0;
    let mut handouts: Vec<(Receipt, WorkerId)> = Vec::new();
    // The latest delivery of each message: (nonce, worker).
    let mut latest: HashMap<Seq, (u32, WorkerId)> = HashMap::new();
    let mut counts_seen: HashMap<Seq, u32> = HashMap::new();
    let rabbit = matches!(b, BrokerModel::RabbitMq(_));
    // Kafka: each partition's committed offset so far.
    let mut committed: HashMap<u32, u64> = HashMap::new();
    for op in ops {
        let mut redriven = false;
        match op {
            Op::Publish => {
                published = b.publish(now, &mut log);
            }
            Op::Receive { worker } => {
                if let Some(h) = b.receive(now, worker, &mut log) {
                    let seq = h.receipt.seq;
                    if let Some(&(nonce, _)) = latest.get(&seq) {
                        assert!(h.receipt.nonce > nonce, "a receipt is never reused");
                    }
                    latest.insert(seq, (h.receipt.nonce, worker));
                    handouts.push((h.receipt, worker));
                }
            }
            Op::Ack { pick } if !handouts.is_empty() => {
                let (r, w) = handouts[pick % handouts.len()];
                let current = latest.get(&r.seq) == Some(&(r.nonce, w))
                    && matches!(b.state(r.seq), Some(MessageState::Leased { .. }));
                let outcome = b.ack(now, r, w, &mut log);
                if rabbit {
                    // At most one holder: only the current delivery's ack deletes.
                    assert_eq!(outcome.is_ok(), current, "{r:?} by {w}");
                }
                if outcome == Ok(AckOutcome::Deleted) {
                    assert!(current, "only the current holder's ack is a plain delete");
                }
            }
            Op::Release { pick, delay } if !handouts.is_empty() => {
                let (r, w) = handouts[pick % handouts.len()];
                let _ = b.release(now, r, w, delay, &mut log);
            }
            Op::Extend { pick } if !handouts.is_empty() => {
                let (r, w) = handouts[pick % handouts.len()];
                let _ = b.extend(now, r, w, 10, &mut log);
            }
            Op::Die { worker } => b.consumer_died(now, worker, &mut log),
            Op::Advance { by } => {
                now += by;
                b.advance(now, &mut log);
            }
            Op::Redrive => {
                b.redrive(now, &mut log);
                redriven = true;
            }
            _ => {}
        }
        // Never loses a message: each is pending (visible or held), acked or dead, and the
        // counts agree with the states.
        let mut counts = Counts::default();
        for seq in 1..=published {
            let state = b.state(seq).expect("every published message has a state");
            *counts.slot(state) += 1;
            // At most one current holder: the worker the state names is the latest delivery's.
            if let MessageState::Leased { worker, nonce, .. } = state {
                assert_eq!(latest.get(&seq), Some(&(nonce, worker)), "message {seq}");
            }
            let c = b.receive_count(seq).unwrap();
            if !redriven {
                assert!(
                    c >= counts_seen.get(&seq).copied().unwrap_or(0),
                    "counts only grow"
                );
            }
            counts_seen.insert(seq, c);
        }
        assert_eq!(counts, b.counts());
        assert_eq!(
            counts.in_queue() + counts.deleted + counts.dead_lettered,
            u64::from(published)
        );
        assert!(
            b.next_due().is_none_or(|t| t >= now),
            "no timer left in the past"
        );
        if let BrokerModel::Kafka(k) = &b {
            for p in 0..k.partitions() {
                // At most one member owns a partition; committed offsets never go back.
                assert!(k.owners_of(p) <= 1, "partition {p} has one owner at most");
                let c = k.committed(p);
                assert!(
                    c >= committed.get(&p).copied().unwrap_or(0),
                    "offsets never go back"
                );
                committed.insert(p, c);
            }
        }
    }
    if let BrokerModel::RabbitMq(r) = &b {
        // At most one holder: the channels' unacked lists are disjoint and are the held messages.
        let mut held: Vec<Seq> = (1..5).flat_map(|w| r.held_by(w).to_vec()).collect();
        held.sort_unstable();
        let leased: Vec<Seq> = (1..=published)
            .filter(|&s| matches!(b.state(s), Some(MessageState::Leased { .. })))
            .collect();
        assert_eq!(held, leased);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn rabbitmq_keeps_every_message_and_one_holder(b in rabbitmq(), ops in prop::collection::vec(op(), 0..120)) {
        check(b, ops);
    }

    #[test]
    fn nats_keeps_every_message_and_one_current_holder(b in nats(), ops in prop::collection::vec(op(), 0..120)) {
        check(b, ops);
    }

    #[test]
    fn kafka_keeps_every_record_one_owner_per_partition_and_offsets_only_forward(
        c in kafka_config(),
        ops in prop::collection::vec(op(), 0..120),
    ) {
        check(BrokerModel::Kafka(Kafka::new(c)), ops);
    }

    #[test]
    fn redis_streams_keeps_every_message_and_one_current_holder(b in redis(), ops in prop::collection::vec(op(), 0..120)) {
        check(b, ops);
    }

    #[test]
    fn kafka_share_keeps_every_record_and_one_current_holder(b in kafka_share(), ops in prop::collection::vec(op(), 0..120)) {
        check(b, ops);
    }
}
