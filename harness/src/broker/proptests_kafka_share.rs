//! Property tests of the share group's own rules, over random schedules of fetches, ACCEPT,
//! RELEASE, REJECT, RENEW, deaths and time (the invariants every kind keeps are in
//! `proptests_kinds.rs`): a fetch takes the lowest available offset of its partition, the
//! next timer is exactly the earliest current lock, no delivery count passes the limit, and a
//! record is archived only at the limit or by REJECT.

use std::collections::BTreeSet;

use proptest::prelude::*;

use super::kafka_share::{KafkaShare, KafkaShareConfig};
use super::*;
use crate::record::{Event, Nanos, Seq, WorkerId};

#[derive(Debug, Clone)]
enum Op {
    Publish,
    Fetch { worker: WorkerId },
    Accept { pick: usize },
    Release { pick: usize },
    Reject { pick: usize },
    Renew { pick: usize },
    Die { worker: WorkerId },
    Advance { by: Nanos },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => Just(Op::Publish),
        4 => (1u32..5).prop_map(|worker| Op::Fetch { worker }),
        3 => any::<usize>().prop_map(|pick| Op::Accept { pick }),
        2 => any::<usize>().prop_map(|pick| Op::Release { pick }),
        1 => any::<usize>().prop_map(|pick| Op::Reject { pick }),
        1 => any::<usize>().prop_map(|pick| Op::Renew { pick }),
        1 => (1u32..5).prop_map(|worker| Op::Die { worker }),
        3 => (0u64..40).prop_map(|by| Op::Advance { by }),
    ]
}

fn check(config: KafkaShareConfig, ops: Vec<Op>) {
    let mut b = KafkaShare::new(config);
    let (mut log, mut now, mut published): (Vec<Event>, Nanos, Seq) = (Vec::new(), 0, 0);
    let mut handouts: Vec<(Receipt, WorkerId)> = Vec::new();
    let mut rejected: BTreeSet<Seq> = BTreeSet::new();
    let partition = |seq: Seq| (seq - 1) % config.partitions;
    for op in ops {
        let picked = |pick: usize| handouts.get(pick % handouts.len().max(1)).copied();
        match op {
            Op::Publish => published = b.publish(now, &mut log),
            Op::Fetch { worker } => {
                let available: Vec<Seq> = (1..=published)
                    .filter(|&s| b.state(s) == Some(MessageState::Visible))
                    .collect();
                if let Some(h) = b.receive(now, worker, &mut log) {
                    let seq = h.receipt.seq;
                    let lowest = available.iter().find(|&&s| partition(s) == partition(seq));
                    assert_eq!(lowest, Some(&seq), "the lowest available offset first");
                    handouts.push((h.receipt, worker));
                } else {
                    assert!(available.is_empty(), "nothing available, nothing fetched");
                }
            }
            Op::Accept { pick } => {
                if let Some((r, w)) = picked(pick) {
                    let _ = b.ack(now, r, w, &mut log);
                }
            }
            Op::Release { pick } => {
                if let Some((r, w)) = picked(pick) {
                    let _ = b.release(now, r, w, &mut log);
                }
            }
            Op::Reject { pick } => {
                if let Some((r, w)) = picked(pick) {
                    if b.reject(now, r, w, &mut log).is_ok() {
                        rejected.insert(r.seq);
                    }
                }
            }
            Op::Renew { pick } => {
                if let Some((r, w)) = picked(pick) {
                    let _ = b.renew(now, r, w, &mut log);
                }
            }
            Op::Die { worker } => b.member_gone(now, worker, &mut log),
            Op::Advance { by } => {
                now += by;
                b.advance(now, &mut log);
            }
        }
        let mut earliest: Option<Nanos> = None;
        for seq in 1..=published {
            let count = b.receive_count(seq).expect("a remembering model");
            assert!(
                count <= config.delivery_count_limit,
                "record {seq}: {count}"
            );
            match b.state(seq) {
                Some(MessageState::Leased { lease_end, .. }) => {
                    earliest = Some(earliest.map_or(lease_end, |e| e.min(lease_end)));
                }
                Some(MessageState::DeadLettered) => assert!(
                    count == config.delivery_count_limit || rejected.contains(&seq),
                    "record {seq} archived after {count} deliveries, not rejected"
                ),
                _ => {}
            }
        }
        assert_eq!(
            b.next_due(),
            earliest,
            "the next timer is the earliest lock"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn a_share_group_fetches_lowest_first_and_archives_only_at_the_limit_or_on_reject(
        lock in 1u64..40,
        limit in 1u32..5,
        partitions in 1u32..4,
        ops in prop::collection::vec(op(), 0..160),
    ) {
        check(
            KafkaShareConfig { record_lock_duration: lock, delivery_count_limit: limit, partitions },
            ops,
        );
    }
}
