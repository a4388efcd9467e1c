//! Hand-derived rebalances: eager against cooperative on a join, a static member's restart
//! against a dynamic one's, and a consumer's close (LeaveGroup) against a static one's.

use super::queue::Receipt;
use super::tests::{config, Run, S};
use super::*;
use crate::record::AckOutcome;
use crate::record::RebalanceWhy;

/// Four partitions, records 1-8 (partition p holds records p + 1 and p + 5), one record per
/// poll; workers 1 and 2 join at 0 and get partitions 0,1 and 2,3 at 3 s (generation 1). At
/// 3 s worker 1 takes record 1 (partition 0) and worker 2 record 3 (partition 2). At 4 s
/// worker 1 commits record 1 and worker 3 joins; worker 1 polls again at 4 s.
fn a_join(assignment: Assignment) -> (Run, Option<Receipt>) {
    let mut r = Run::new(KafkaConfig {
        assignment,
        ..config(4, 1)
    });
    r.publish(8);
    r.recv(1);
    r.recv(2);
    r.at(3 * S);
    let h1 = r.recv(1).unwrap();
    let h3 = r.recv(2).unwrap();
    assert_eq!((h1.seq, h3.seq), (1, 3));
    r.at(4 * S);
    assert_eq!(r.ack(h1, 1), Ok(AckOutcome::Deleted));
    assert_eq!(r.recv(3), None);
    let polled = r.recv(1);
    // At 5 s worker 2 commits record 3 and polls: it was the last to rejoin, so the rebalance
    // completes.
    r.at(5 * S);
    assert_eq!(r.ack(h3, 2), Ok(AckOutcome::Deleted));
    r.recv(2);
    (r, polled)
}

#[test]
fn an_eager_rebalance_stops_every_member_a_cooperative_one_only_the_moved_partition() {
    // Eager (range): worker 1's poll at 4 s rejoins and revokes partitions 0 and 1: it gets
    // nothing until worker 2 rejoins at 5 s. Then range over 3 members: 4 / 3 = 1 each, the
    // first one more: worker 1 {0, 1}, worker 2 {2}, worker 3 {3}: generation 2, one partition
    // moved (3, from worker 2 to worker 3).
    let (eager, polled) = a_join(Assignment::Range);
    assert_eq!(polled, None);
    assert_eq!(eager.rebalances()[1], (2, 3, 1, RebalanceWhy::Join));
    // Cooperative-sticky: the same assignment (worker 1 owns most, so it keeps its two), but
    // worker 1 loses nothing: its poll at 4 s fetches from partition 1 (record 2) during the
    // rebalance.
    let (coop, polled) = a_join(Assignment::CooperativeSticky);
    assert_eq!(polled.map(|h| h.seq), Some(2));
    assert_eq!(coop.rebalances()[1], (2, 3, 1, RebalanceWhy::Join));
    for r in [&eager, &coop] {
        let owners: Vec<Option<WorkerId>> =
            r.k.owners()
                .into_iter()
                .map(|o| o.map(|(_, w)| w))
                .collect();
        assert_eq!(owners, [Some(1), Some(1), Some(2), Some(3)]);
    }
}

/// Two partitions, records 1 and 2; workers 1 and 2 join at 0 (generation 1 at 3 s: worker 1
/// partition 0, worker 2 partition 1). Worker 1 takes record 1 at 3 s, is killed at 4 s and
/// restarted at 5 s.
fn a_restart(static_membership: bool) -> Run {
    let mut r = Run::new(KafkaConfig {
        static_membership,
        ..config(2, 10)
    });
    r.publish(2);
    r.recv(1);
    r.recv(2);
    r.at(3 * S);
    assert_eq!(r.recv(1).map(|h| h.seq), Some(1));
    assert_eq!(r.recv(2).map(|h| h.seq), Some(2));
    r.at(4 * S);
    r.k.consumer_died(4 * S, 1);
    r.at(5 * S);
    r
}

#[test]
fn a_static_member_back_within_its_session_takes_its_partitions_back_without_a_rebalance() {
    // Static: the restarted consumer has the same group.instance.id, its session (45 s) has not
    // expired: it takes partition 0 back at once, from the committed offset 0: record 1 again,
    // still generation 1, one rebalance in all.
    let mut r = a_restart(true);
    assert_eq!(r.recv(1).map(|h| h.seq), Some(1));
    assert_eq!(r.k.generation(), 1);
    assert_eq!(r.rebalances().len(), 1);
    // Dynamic: it joins as a new member; the rebalance waits for the dead member's session
    // (last heartbeat at 3 s, every 3 s from its join at 0: removed at 48 s), and worker 2
    // must rejoin at its next poll too.
    let mut r = a_restart(false);
    assert_eq!(r.recv(1), None);
    r.at(47 * S);
    assert_eq!(r.recv(1), None);
    r.at(48 * S);
    // Worker 2 is at work (record 2 not done): it rejoins at its poll, at 50 s.
    r.at(50 * S);
    r.recv(2);
    assert_eq!(r.rebalances()[1], (2, 2, 1, RebalanceWhy::Join));
    assert_eq!(r.recv(1).map(|h| h.seq), Some(1));
}

/// Two partitions, records 1-3 (partition 0 holds records 1 and 3, partition 1 record 2), one
/// record a poll; workers 1 and 2 join at 0 (generation 1 at 3 s: worker 1 partition 0, worker
/// 2 partition 1). At 3 s worker 1 takes record 1 and worker 2 record 2. At 4 s both commit;
/// worker 2 polls and finds nothing (it waits, blocked in its poll), and worker 1 stops on its
/// own (a deploy within its grace): its consumer closes.
fn a_stop(static_membership: bool) -> Run {
    let mut r = Run::new(KafkaConfig {
        static_membership,
        ..config(2, 1)
    });
    r.publish(3);
    r.recv(1);
    r.recv(2);
    r.at(3 * S);
    let h1 = r.recv(1).unwrap();
    let h2 = r.recv(2).unwrap();
    assert_eq!((h1.seq, h2.seq), (1, 2));
    r.at(4 * S);
    assert_eq!(r.ack(h1, 1), Ok(AckOutcome::Deleted));
    assert_eq!(r.ack(h2, 2), Ok(AckOutcome::Deleted));
    assert_eq!(r.recv(2), None);
    r.k.consumer_left(4 * S, 1, &mut r.log);
    r
}

#[test]
fn a_consumer_closed_on_its_way_out_leaves_at_once_a_static_one_waits_for_its_session() {
    // Dynamic: the close sends LeaveGroup at 4 s: worker 1's member leaves, the rebalance
    // starts; worker 2, blocked in its poll, rejoins at once and is the only member, so it
    // completes at 4 s: generation 2, 1 member, 1 partition moved (partition 0, worker 1 to
    // worker 2), why `Leave`. Worker 2 then reads partition 0 from its committed offset 1:
    // record 3, at 4 s. Record 1 was committed before the close: it is not run again.
    let mut r = a_stop(false);
    assert_eq!(r.rebalances()[1], (2, 1, 1, RebalanceWhy::Leave));
    assert_eq!(r.rebalances().len(), 2);
    assert_eq!(r.recv(2).map(|h| h.seq), Some(3));
    assert_eq!(r.deliveries(3), [1, 1, 1]);
    // Static (group.instance.id, KIP-345): the close sends no LeaveGroup; the member stays until
    // its session ends: heartbeats every 3 s from its join at 0, the last at 3 s, removed at
    // 3 + 45 = 48 s. Worker 2 gets nothing until then (still 1 rebalance at 47 s); at 48 s,
    // waiting, it rejoins at once: generation 2, 1 member, 1 moved, why `SessionTimeout`, and
    // it takes record 3.
    let mut r = a_stop(true);
    r.at(47 * S);
    assert_eq!(r.recv(2), None);
    assert_eq!(r.rebalances().len(), 1);
    r.at(48 * S);
    assert_eq!(r.rebalances()[1], (2, 1, 1, RebalanceWhy::SessionTimeout));
    assert_eq!(r.recv(2).map(|h| h.seq), Some(3));
}
