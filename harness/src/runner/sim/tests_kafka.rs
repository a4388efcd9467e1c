//! Kafka driven by the sim executor end to end: a killed member's record waits for its session
//! to time out (or, static, for its restart), then is processed again.

use super::tests::{run, S};
use crate::profile::*;
use crate::record::{EventKind, RebalanceWhy, RunRecord};

/// One record at 0 s on one partition, two workers, provider fixed 10 s, no auto-commit (the
/// target commits after its work), the worker holding delivery 1 killed when its call is
/// answered, restarted 1 s later.
fn killed_at_call_answered(static_membership: bool) -> Scenario {
    let text = format!(
        "\
name: t
run: {{ duration: 1s, drain: 1h }}
broker: {{ kind: kafka, enable_auto_commit: false, static_membership: {static_membership} }}
workload: {{ arrival: {{ every: 1s }}, count: 1 }}
consumer: {{ target: ack-after-work, workers: 2, restart_after: 1s }}
provider: {{ effect_at: request, latency: {{ dist: fixed, value: 10s }} }}
chaos:
  - kill_worker: {{ point: call_answered, delivery: 1 }}
"
    );
    load_str("t.yaml", &text, &[]).expect("a valid profile")
}

/// (instant in s, worker, delivery) of every delivery.
type Deliveries = Vec<(u64, u32, u32)>;
/// (instant in s, generation, why) of every rebalance.
type Rebalances = Vec<(u64, u32, RebalanceWhy)>;

fn history(r: &RunRecord) -> (Deliveries, Rebalances) {
    let mut d = Vec::new();
    let mut g = Vec::new();
    for e in &r.events {
        match e.kind {
            EventKind::Delivered {
                worker, delivery, ..
            } => d.push((e.at / S, worker, delivery)),
            EventKind::Rebalanced {
                generation, why, ..
            } => g.push((e.at / S, generation, why)),
            _ => {}
        }
    }
    (d, g)
}

#[test]
fn a_killed_members_record_moves_when_its_session_times_out() {
    // Both workers join at 0 s; the first rebalance waits 3 s (the broker's initial delay):
    // generation 1 gives the one partition to worker 1, which fetches the record at 3 s. Its
    // call is answered at 13 s (the effect happened) and it is killed before it commits. Its
    // last heartbeat was at 12 s (every 3 s from its join), so its session ends at 57 s.
    // Restarted at 14 s, it joins as a new member; the rebalance waits for the dead one until
    // 57 s: generation 2, range gives the partition to worker 1 again (lowest id), which
    // fetches from the committed offset 0: delivery 2 at 57 s, committed at 67 s.
    let r = run(&killed_at_call_answered(false));
    let (deliveries, rebalances) = history(&r);
    assert_eq!(deliveries, vec![(3, 1, 1), (57, 1, 2)]);
    assert_eq!(
        rebalances,
        vec![(3, 1, RebalanceWhy::Join), (57, 2, RebalanceWhy::Join)]
    );
    // 2 effects (the first delivery's and the second's): one duplicate.
    assert_eq!(r.ledger.effects.len(), 2);
    assert_eq!(r.end, 67 * S);
}

#[test]
fn a_static_member_restarted_within_its_session_reads_its_partition_at_once() {
    // As above to the kill at 13 s; restarted at 14 s with the same group.instance.id, it takes
    // its partition back with no rebalance and fetches from offset 0: delivery 2 at 14 s,
    // committed at 24 s.
    let r = run(&killed_at_call_answered(true));
    let (deliveries, rebalances) = history(&r);
    assert_eq!(deliveries, vec![(3, 1, 1), (14, 1, 2)]);
    assert_eq!(rebalances, vec![(3, 1, RebalanceWhy::Join)]);
    assert_eq!(r.ledger.effects.len(), 2);
    assert_eq!(r.end, 24 * S);
}

/// Records 1-3 at 0, 1 and 2 s on one partition, one worker running `target`, provider fixed
/// 10 s, no auto-commit, the worker killed at 25 s and restarted 1 s later.
fn killed_mid_batch(target: &str) -> Scenario {
    let text = format!(
        "\
name: t
run: {{ duration: 3s, drain: 1h }}
broker: {{ kind: kafka, enable_auto_commit: false }}
workload: {{ arrival: {{ every: 1s }}, count: 3 }}
consumer: {{ target: {target}, workers: 1, restart_after: 1s }}
provider: {{ effect_at: request, latency: {{ dist: fixed, value: 10s }} }}
chaos:
  - kill_worker: {{ at: 25s }}
"
    );
    load_str("t.yaml", &text, &[]).expect("a valid profile")
}

#[test]
fn commit_after_batch_repeats_the_whole_batch_ack_after_work_only_the_record_in_progress() {
    // The worker joins at 0 s; the group's first rebalance completes at 3 s and its poll
    // returns records 1-3. Their calls run 3-13, 13-23 and 23-33 s (an effect at each start);
    // the kill at 25 s is 2 s into record 3. Restarted at 26 s it joins as a new member; the
    // dead one's last heartbeat was at 24 s, so the partition moves at 24 + 45 = 69 s, from
    // the committed offset.
    //
    // commit-after-batch commits once its batch is done (at 33 s, never reached): offset 0,
    // records 1-3 again from 69 s (69-79, 79-89, 89-99 s): 6 effects, 3 duplicates, committed
    // at 99 s.
    let r = run(&killed_mid_batch("commit-after-batch"));
    let (deliveries, _) = history(&r);
    assert_eq!(
        deliveries,
        vec![
            (3, 1, 1),
            (13, 1, 1),
            (23, 1, 1),
            (69, 1, 2),
            (79, 1, 2),
            (89, 1, 2)
        ]
    );
    assert_eq!(r.ledger.effects.len(), 6);
    assert_eq!(r.end, 99 * S);
    // ack-after-work committed records 1 and 2 (at 13 and 23 s): only record 3 again, 69-79 s:
    // 4 effects, 1 duplicate.
    let r = run(&killed_mid_batch("ack-after-work"));
    let (deliveries, _) = history(&r);
    assert_eq!(
        deliveries,
        vec![(3, 1, 1), (13, 1, 1), (23, 1, 1), (69, 1, 2)]
    );
    assert_eq!(r.ledger.effects.len(), 4);
    assert_eq!(r.end, 79 * S);
}
