//! A model that forgets settled messages (what a sim run drives) answers exactly as one that
//! remembers every message, for every kind through the seam: the same answer to every
//! operation, the same events, counts, due times and states, over random schedules of
//! publishes (FIFO sends with deduplication ids and groups), receives, acks, releases and
//! extensions with current and stale receipts (by their holder or another consumer), consumer
//! deaths, time and redrives; and it holds only the messages not yet settled and the DLQ.

use proptest::prelude::*;

use super::kafka::{Assignment, Kafka, KafkaConfig};
use super::kafka_share::{KafkaShare, KafkaShareConfig};
use super::nats::{Nats, NatsConfig};
use super::proptests::policy;
use super::proptests_kinds::kafka_config;
use super::rabbitmq::{QueueType, RabbitMq, RabbitMqConfig};
use super::redis_streams::{RedisStreams, RedisStreamsConfig};
use super::*;
use crate::profile::StaleAck;
use crate::record::{Event, Nanos, Seq, WorkerId};

#[derive(Debug, Clone)]
enum Op {
    /// A send with deduplication id `id` in group `group`.
    Publish {
        id: u8,
        group: u8,
    },
    Receive {
        worker: WorkerId,
    },
    /// An ack of a receipt handed out, by its holder or (`other`) by another consumer.
    Ack {
        pick: usize,
        other: Option<WorkerId>,
    },
    Release {
        pick: usize,
        other: Option<WorkerId>,
        delay: Nanos,
    },
    Extend {
        pick: usize,
        other: Option<WorkerId>,
        lease: Nanos,
    },
    Die {
        worker: WorkerId,
    },
    Advance {
        by: Nanos,
    },
    Redrive,
}

fn other() -> impl Strategy<Value = Option<WorkerId>> {
    prop_oneof![3 => Just(None), 1 => (1u32..5).prop_map(Some)]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..12, 0u8..3).prop_map(|(id, group)| Op::Publish { id, group }),
        4 => (1u32..5).prop_map(|worker| Op::Receive { worker }),
        3 => (any::<usize>(), other()).prop_map(|(pick, other)| Op::Ack { pick, other }),
        2 => (any::<usize>(), other(), prop_oneof![Just(0u64), 1u64..80])
            .prop_map(|(pick, other, delay)| Op::Release { pick, other, delay }),
        1 => (any::<usize>(), other(), 1u64..60)
            .prop_map(|(pick, other, lease)| Op::Extend { pick, other, lease }),
        1 => (1u32..5).prop_map(|worker| Op::Die { worker }),
        3 => (0u64..40).prop_map(|by| Op::Advance { by }),
        1 => Just(Op::Redrive),
    ]
}

/// A pair of models of one kind and configuration: (remembering, forgetting).
type Pair = (BrokerModel, BrokerModel);

fn sqs() -> impl Strategy<Value = Pair> {
    (1u64..40, 0u32..4, policy(), any::<bool>(), 1u64..60).prop_map(
        |(visibility_timeout, max_receives, stale_ack, fifo, window)| {
            let config = BrokerConfig {
                visibility_timeout,
                max_receives,
                stale_ack,
            };
            let make = |b: Broker| {
                BrokerModel::Sqs(if fifo {
                    b.with_deduplication(window).with_groups()
                } else {
                    b
                })
            };
            (
                make(Broker::new(config)),
                make(Broker::forgetting_settled(config)),
            )
        },
    )
}

fn rabbitmq() -> impl Strategy<Value = Pair> {
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
                let config = RabbitMqConfig {
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
                };
                (
                    BrokerModel::RabbitMq(RabbitMq::new(config)),
                    BrokerModel::RabbitMq(RabbitMq::forgetting_settled(config)),
                )
            },
        )
}

fn nats() -> impl Strategy<Value = Pair> {
    (
        1u64..40,
        prop::collection::vec(1u64..40, 0..3),
        0u32..4,
        1u32..4,
    )
        .prop_map(|(ack_wait, backoff, max_deliver, max_ack_pending)| {
            let config = NatsConfig {
                ack_wait,
                backoff,
                max_deliver,
                max_ack_pending,
            };
            (
                BrokerModel::Nats(Nats::new(config.clone())),
                BrokerModel::Nats(Nats::forgetting_settled(config)),
            )
        })
}

fn redis() -> impl Strategy<Value = Pair> {
    (1u64..40, prop_oneof![Just(0u64), 1u64..15], 0u32..4).prop_map(
        |(min_idle, claim_every, max_deliveries)| {
            let config = RedisStreamsConfig {
                min_idle,
                claim_every,
                max_deliveries,
            };
            (
                BrokerModel::RedisStreams(RedisStreams::new(config)),
                BrokerModel::RedisStreams(RedisStreams::forgetting_settled(config)),
            )
        },
    )
}

fn kafka() -> impl Strategy<Value = Pair> {
    kafka_config().prop_map(|c| {
        (
            BrokerModel::Kafka(Kafka::new(c)),
            BrokerModel::Kafka(Kafka::forgetting_settled(c)),
        )
    })
}

fn kafka_share() -> impl Strategy<Value = Pair> {
    (1u64..40, 1u32..5, 1u32..4).prop_map(|(lock, limit, partitions)| {
        let config = KafkaShareConfig {
            record_lock_duration: lock,
            delivery_count_limit: limit,
            partitions,
        };
        (
            BrokerModel::KafkaShare(KafkaShare::new(config)),
            BrokerModel::KafkaShare(KafkaShare::forgetting_settled(config)),
        )
    })
}

/// Applies `ops` to both models and checks after each that they agree in everything, and that
/// the forgetting one holds only what is not settled.
fn same_answers((mut keep, mut forget): Pair, ops: Vec<Op>) {
    let (mut log_k, mut log_f): (Vec<Event>, Vec<Event>) = (Vec::new(), Vec::new());
    let mut now: Nanos = 0;
    let mut published: Seq = 0;
    let mut handouts: Vec<(Receipt, WorkerId)> = Vec::new();
    let pick = |handouts: &[(Receipt, WorkerId)], pick: usize, other: Option<WorkerId>| {
        let (r, w) = *handouts.get(pick % handouts.len().max(1))?;
        Some((r, other.unwrap_or(w)))
    };
    for op in ops {
        match op {
            Op::Publish { id, group } => {
                let id = format!("k{id}");
                let group = u32::from(group);
                let a = keep.publish_send(now, &id, group, &mut log_k);
                assert_eq!(a, forget.publish_send(now, &id, group, &mut log_f));
                if let Some(seq) = a {
                    published = seq;
                }
            }
            Op::Receive { worker } => {
                let a = keep.receive(now, worker, &mut log_k);
                assert_eq!(a, forget.receive(now, worker, &mut log_f));
                handouts.extend(a.map(|h| (h.receipt, worker)));
            }
            Op::Ack { pick: i, other } => {
                if let Some((r, w)) = pick(&handouts, i, other) {
                    let a = keep.ack(now, r, w, &mut log_k);
                    assert_eq!(a, forget.ack(now, r, w, &mut log_f), "ack of {r:?} by {w}");
                }
            }
            Op::Release {
                pick: i,
                other,
                delay,
            } => {
                if let Some((r, w)) = pick(&handouts, i, other) {
                    let a = keep.release(now, r, w, delay, &mut log_k);
                    assert_eq!(a, forget.release(now, r, w, delay, &mut log_f));
                }
            }
            Op::Extend {
                pick: i,
                other,
                lease,
            } => {
                if let Some((r, w)) = pick(&handouts, i, other) {
                    let a = keep.extend(now, r, w, lease, &mut log_k);
                    assert_eq!(a, forget.extend(now, r, w, lease, &mut log_f));
                }
            }
            Op::Die { worker } => {
                keep.consumer_died(now, worker, &mut log_k);
                forget.consumer_died(now, worker, &mut log_f);
            }
            Op::Advance { by } => {
                // Time moves as a sim run moves it: to each due instant on the way.
                let to = now + by;
                while let Some(t) = keep.next_due().filter(|&t| t <= to) {
                    now = t.max(now);
                    keep.advance(now, &mut log_k);
                    forget.advance(now, &mut log_f);
                }
                now = to;
                keep.advance(now, &mut log_k);
                forget.advance(now, &mut log_f);
            }
            Op::Redrive => {
                let a = keep.redrive(now, &mut log_k);
                assert_eq!(a, forget.redrive(now, &mut log_f));
            }
        }
        assert_eq!(log_k, log_f, "the same events");
        assert_eq!(keep.counts(), forget.counts());
        assert_eq!(keep.is_settled(), forget.is_settled());
        assert_eq!(keep.next_due(), forget.next_due());
        assert_eq!(keep.can_hand_out(), forget.can_hand_out());
        for seq in 0..=published + 1 {
            assert_eq!(keep.state(seq), forget.state(seq), "state of {seq}");
            if let Some(c) = forget.receive_count(seq) {
                assert_eq!(keep.receive_count(seq), Some(c), "receive count of {seq}");
            }
        }
        let c = forget.counts();
        assert_eq!(
            forget.held() as u64,
            c.in_queue() + c.dead_lettered,
            "holds only the queue and the DLQ"
        );
        assert_eq!(keep.held() as u64, u64::from(published));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn sqs_forgetting_settled_messages_answers_as_remembering(p in sqs(), ops in prop::collection::vec(op(), 0..160)) {
        same_answers(p, ops);
    }

    #[test]
    fn rabbitmq_forgetting_settled_messages_answers_as_remembering(p in rabbitmq(), ops in prop::collection::vec(op(), 0..160)) {
        same_answers(p, ops);
    }

    #[test]
    fn nats_forgetting_settled_messages_answers_as_remembering(p in nats(), ops in prop::collection::vec(op(), 0..160)) {
        same_answers(p, ops);
    }

    #[test]
    fn redis_streams_forgetting_settled_messages_answers_as_remembering(p in redis(), ops in prop::collection::vec(op(), 0..160)) {
        same_answers(p, ops);
    }

    #[test]
    fn kafka_forgetting_settled_messages_answers_as_remembering(p in kafka(), ops in prop::collection::vec(op(), 0..160)) {
        same_answers(p, ops);
    }

    #[test]
    fn kafka_share_forgetting_settled_messages_answers_as_remembering(p in kafka_share(), ops in prop::collection::vec(op(), 0..160)) {
        same_answers(p, ops);
    }
}

/// Every kind as a sim run builds it (a forgetting model): `n` messages published in rounds of
/// ten (each its own deduplication id, in sixteen groups), received by four consumers and
/// acked, one message in twenty left unacked (its consumer dies) until it is delivered again
/// and then acked late with its first receipt, and, with `poison`, one message dead-lettered at
/// the start. Along the way the model's entries and its table's room stay bounded; once every
/// message is acked it holds the poison message only.
fn holds_nothing_once_acked(mut b: BrokerModel, n: u64, poison: bool) {
    const BOUND: usize = 256;
    let mut log = Vec::new();
    let mut now: Nanos = 0;
    let mut late: Vec<(Receipt, WorkerId)> = Vec::new();
    if poison {
        // Received and never acked until it is dead.
        let seq = b.publish(now, &mut log);
        for round in 0.. {
            if b.state(seq) == Some(MessageState::DeadLettered) {
                break;
            }
            assert!(round < 100, "the poison message is dead-lettered");
            if let Some(h) = b.receive(now, 1, &mut log) {
                assert_eq!(h.receipt.seq, seq);
            }
            b.consumer_died(now, 1, &mut log);
            now = b.next_due().unwrap_or(now).max(now + 1);
            b.advance(now, &mut log);
        }
    }
    let mut sent = 0u64;
    let mut seen = Vec::new();
    while sent < n {
        for _ in 0..10 {
            sent += 1;
            b.publish_send(now, &format!("m{sent}"), (sent % 16) as u32, &mut log);
        }
        for w in 1..=4 {
            while let Some(h) = b.receive(now, w, &mut log) {
                if h.receipt.seq % 20 == 0 && h.receive_count == 1 {
                    late.push((h.receipt, w));
                    b.consumer_died(now, w, &mut log);
                } else {
                    b.ack(now, h.receipt, w, &mut log)
                        .expect("acked by its holder");
                }
            }
        }
        now += 1_000;
        b.advance(now, &mut log);
        // A late ack, long after the message was delivered again (and acked, mostly).
        if late.len() > 50 {
            let (r, w) = late.remove(0);
            let _ = b.ack(now, r, w, &mut log);
        }
        log.clear();
        seen.push((b.entries(), b.table_room()));
    }
    // Drain: every message still held is received again and acked.
    for round in 0.. {
        assert!(round < 10_000, "every message is acked");
        now = b.next_due().unwrap_or(now).max(now + 1);
        b.advance(now, &mut log);
        let mut any = false;
        for w in 1..=4 {
            while let Some(h) = b.receive(now, w, &mut log) {
                b.ack(now, h.receipt, w, &mut log)
                    .expect("acked by its holder");
                any = true;
            }
        }
        if !any && b.is_settled() {
            break;
        }
    }
    for (r, w) in late {
        let _ = b.ack(now, r, w, &mut log);
    }
    let c = b.counts();
    let dead = u64::from(poison);
    assert_eq!((c.deleted, c.dead_lettered), (n, dead));
    assert_eq!(b.held() as u64, dead, "only the poison message in the DLQ");
    assert!(b.entries() as u64 <= 2 * dead, "{} entries", b.entries());
    assert!(b.table_room() <= BOUND, "room for {}", b.table_room());
    let most = seen
        .iter()
        .fold((0, 0), |m, &(e, r)| (m.0.max(e), m.1.max(r)));
    assert!(
        most.0 <= BOUND && most.1 <= BOUND,
        "at most {most:?} along the way"
    );
}

#[test]
fn every_kind_holds_only_its_dlq_once_its_messages_are_acked() {
    const N: u64 = 40_000;
    let sqs = BrokerConfig {
        visibility_timeout: 5_000,
        max_receives: 3,
        stale_ack: StaleAck::Reject,
    };
    let rabbit = |queue_type| RabbitMqConfig {
        queue_type,
        consumer_timeout: 5_000,
        timeout_check_every: 1_000,
        delivery_limit: 2,
        prefetch: 1,
        dead_letter: true,
    };
    let models = [
        (BrokerModel::Sqs(Broker::forgetting_settled(sqs)), true),
        (
            BrokerModel::Sqs(
                Broker::forgetting_settled(sqs)
                    .with_deduplication(1)
                    .with_groups(),
            ),
            true,
        ),
        (
            BrokerModel::RabbitMq(RabbitMq::forgetting_settled(rabbit(QueueType::Quorum))),
            true,
        ),
        // A classic queue has no delivery limit: nothing is dead-lettered.
        (
            BrokerModel::RabbitMq(RabbitMq::forgetting_settled(rabbit(QueueType::Classic))),
            false,
        ),
        (
            BrokerModel::Nats(Nats::forgetting_settled(NatsConfig {
                ack_wait: 5_000,
                backoff: Vec::new(),
                max_deliver: 3,
                max_ack_pending: 1_000,
            })),
            true,
        ),
        (
            BrokerModel::RedisStreams(RedisStreams::forgetting_settled(RedisStreamsConfig {
                min_idle: 5_000,
                claim_every: 0,
                max_deliveries: 3,
            })),
            true,
        ),
        (
            BrokerModel::KafkaShare(KafkaShare::forgetting_settled(KafkaShareConfig {
                record_lock_duration: 5_000,
                delivery_count_limit: 3,
                partitions: 3,
            })),
            true,
        ),
        // Kafka has no DLQ. Static members: a consumer restarted at once takes its partitions
        // back and reads from the committed offsets, with no rebalance to wait for.
        (
            BrokerModel::Kafka(Kafka::forgetting_settled(KafkaConfig {
                partitions: 4,
                max_poll_interval: 60_000,
                session_timeout: 5_000,
                heartbeat_interval: 1_000,
                max_poll_records: 50,
                auto_commit: None,
                assignment: Assignment::Range,
                static_membership: true,
                initial_rebalance_delay: 1_000,
            })),
            false,
        ),
    ];
    for (b, poison) in models {
        holds_nothing_once_acked(b, N, poison);
    }
}

/// The memory a model of each kind takes per message, remembering and forgetting, over a
/// sim-like load: `ACKBENCH_MEMORY_MESSAGES` messages (default 2,000,000) at 80 a second to 64
/// consumers, 1% of deliveries acked 35 s later (after the 30 s lease or its equivalent: a
/// redelivery and a stale ack), at most 5 deliveries. The figure is the growth of the process's
/// resident memory while the model runs and is kept (the event log is cleared every second), so
/// run one kind and mode per process:
///
/// `ACKBENCH_MEMORY_KIND=nats ACKBENCH_MEMORY_FORGET=1 cargo test -p ackbench --lib
/// memory_per_message -- --ignored --nocapture`
#[test]
#[ignore = "a measurement: run by hand, one kind and mode per process"]
fn memory_per_message() {
    const S: Nanos = 1_000_000_000;
    let n: u64 = std::env::var("ACKBENCH_MEMORY_MESSAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000_000);
    let kind = std::env::var("ACKBENCH_MEMORY_KIND").unwrap_or_else(|_| "sqs".into());
    let forget = std::env::var_os("ACKBENCH_MEMORY_FORGET").is_some();
    let rss = || {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    let lease = 30 * S;
    let mut b = match (kind.as_str(), forget) {
        ("sqs", f) => {
            let c = BrokerConfig {
                visibility_timeout: lease,
                max_receives: 5,
                stale_ack: StaleAck::Reject,
            };
            BrokerModel::Sqs(if f {
                Broker::forgetting_settled(c)
            } else {
                Broker::new(c)
            })
        }
        ("rabbitmq", f) => {
            let c = RabbitMqConfig {
                queue_type: QueueType::Quorum,
                consumer_timeout: lease,
                timeout_check_every: S,
                delivery_limit: 4,
                prefetch: 1,
                dead_letter: true,
            };
            BrokerModel::RabbitMq(if f {
                RabbitMq::forgetting_settled(c)
            } else {
                RabbitMq::new(c)
            })
        }
        ("nats", f) => {
            let c = NatsConfig {
                ack_wait: lease,
                backoff: Vec::new(),
                max_deliver: 5,
                max_ack_pending: 1_000,
            };
            BrokerModel::Nats(if f {
                Nats::forgetting_settled(c)
            } else {
                Nats::new(c)
            })
        }
        ("redis-streams", f) => {
            let c = RedisStreamsConfig {
                min_idle: lease,
                claim_every: 0,
                max_deliveries: 5,
            };
            BrokerModel::RedisStreams(if f {
                RedisStreams::forgetting_settled(c)
            } else {
                RedisStreams::new(c)
            })
        }
        ("kafka-share", f) => {
            let c = KafkaShareConfig {
                record_lock_duration: lease,
                delivery_count_limit: 5,
                partitions: 1,
            };
            BrokerModel::KafkaShare(if f {
                KafkaShare::forgetting_settled(c)
            } else {
                KafkaShare::new(c)
            })
        }
        (other, _) => panic!("unknown kind {other}"),
    };
    let before = rss();
    let mut log = Vec::new();
    let mut rng: u64 = 42;
    let mut chance = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % 100
    };
    // Consumer w (1..=64) is busy until `busy[w]`, then acks `slow[w]` (a slow delivery).
    let mut busy = [0 as Nanos; 65];
    let mut slow: [Option<Receipt>; 65] = [None; 65];
    let (mut now, mut sent) = (0 as Nanos, 0u64);
    while sent < n || !b.is_settled() {
        for _ in 0..80 {
            if sent < n {
                b.publish(now, &mut log);
                sent += 1;
            }
        }
        for w in 1..=64u32 {
            let i = w as usize;
            if busy[i] > now {
                continue;
            }
            if let Some(r) = slow[i].take() {
                let _ = b.ack(now, r, w, &mut log);
            }
            while let Some(h) = b.receive(now, w, &mut log) {
                if chance() == 0 {
                    slow[i] = Some(h.receipt);
                    busy[i] = now + 35 * S;
                    break;
                }
                b.ack(now, h.receipt, w, &mut log)
                    .expect("acked by its holder");
            }
        }
        now += S;
        while let Some(t) = b.next_due().filter(|&t| t <= now) {
            b.advance(t, &mut log);
        }
        log.clear();
    }
    let grown = rss().saturating_sub(before);
    let c = b.counts();
    println!(
        "{kind:>14} {:>11} {n:>10} messages ({} deleted, {} dead): resident +{:.1} MiB, {:.1} B/message; held {}, table room {}",
        if forget { "forgetting" } else { "remembering" },
        c.deleted,
        c.dead_lettered,
        grown as f64 / 1048576.0,
        grown as f64 / n as f64,
        b.held(),
        b.table_room(),
    );
    std::hint::black_box(&b);
}
