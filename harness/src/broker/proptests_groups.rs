//! Property tests of a FIFO queue's message groups over random schedules: at most one message of
//! a group in flight, a group's messages first delivered in publish order (redeliveries of its
//! head included), and a receive finds a message whenever one is receivable.

use proptest::prelude::*;

use super::proptests::policy;
use super::*;
use crate::record::{Event, Nanos, Seq};

#[derive(Debug, Clone)]
enum Op {
    Publish { group: u32 },
    Receive { worker: u32 },
    Ack { pick: usize },
    Release { pick: usize, timeout: Nanos },
    Advance { by: Nanos },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u32..3).prop_map(|group| Op::Publish { group }),
        4 => (1u32..5).prop_map(|worker| Op::Receive { worker }),
        3 => any::<usize>().prop_map(|pick| Op::Ack { pick }),
        2 => (any::<usize>(), prop_oneof![Just(0u64), 1u64..80]).prop_map(|(pick, timeout)| Op::Release { pick, timeout }),
        3 => (0u64..40).prop_map(|by| Op::Advance { by }),
    ]
}

fn settled(b: &Broker, seq: Seq) -> bool {
    matches!(
        b.state(seq),
        Some(MessageState::Deleted | MessageState::DeadLettered)
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn one_message_of_a_group_in_flight_and_order_holds(
        ops in proptest::collection::vec(op(), 1..150),
        max_receives in 0u32..4,
        stale_ack in policy(),
    ) {
        let mut b = Broker::new(BrokerConfig { visibility_timeout: 30, max_receives, stale_ack })
            .with_groups();
        let mut log: Vec<Event> = Vec::new();
        let mut now: Nanos = 0;
        let mut group_of: Vec<u32> = Vec::new();
        let mut receipts: Vec<(Receipt, u32)> = Vec::new();
        for op in ops {
            match op {
                Op::Publish { group } => {
                    let id = format!("m{}", group_of.len());
                    prop_assert!(b.publish_send(now, 0, &id, group, &mut log).is_some());
                    group_of.push(group);
                }
                Op::Receive { worker } => {
                    let receivable = b.has_visible();
                    match b.receive(now, worker, &mut log) {
                        Some(h) => {
                            let seq = h.receipt.seq;
                            let g = group_of[(seq - 1) as usize];
                            // Every earlier message of its group is settled: order holds.
                            for earlier in 1..seq {
                                if group_of[(earlier - 1) as usize] == g {
                                    prop_assert!(settled(&b, earlier), "message {} of group {} handed out before {}", seq, g, earlier);
                                }
                            }
                            receipts.push((h.receipt, worker));
                        }
                        None => prop_assert!(!receivable, "a receivable message is handed out"),
                    }
                }
                Op::Ack { pick } => {
                    if receipts.is_empty() { continue; }
                    let (r, w) = receipts[pick % receipts.len()];
                    let _ = b.ack(now, r, w, &mut log);
                }
                Op::Release { pick, timeout } => {
                    if receipts.is_empty() { continue; }
                    let (r, w) = receipts[pick % receipts.len()];
                    let _ = b.change_visibility(now, r, w, timeout, &mut log);
                }
                Op::Advance { by } => {
                    now += by;
                    b.advance(now, &mut log);
                }
            }
            // At most one message of a group in flight; `has_visible` is exactly "some visible
            // message of a group with nothing in flight".
            let mut in_flight = [0u32; 3];
            let mut visible = [0u32; 3];
            for (i, &g) in group_of.iter().enumerate() {
                match b.state(i as Seq + 1) {
                    Some(MessageState::Leased { .. }) => in_flight[g as usize] += 1,
                    Some(MessageState::Visible) => visible[g as usize] += 1,
                    _ => {}
                }
            }
            for g in 0..3 {
                prop_assert!(in_flight[g] <= 1, "group {} has {} in flight", g, in_flight[g]);
                prop_assert_eq!(b.groups().map(|x| x.counts(g as u32)), Some((in_flight[g], visible[g])));
            }
            let receivable = (0..3).any(|g| in_flight[g] == 0 && visible[g] > 0);
            prop_assert_eq!(b.has_visible(), receivable);
        }
    }
}
