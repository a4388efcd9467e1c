//! Hand-derived scenarios of the Kafka model: a member stalled past `max.poll.interval.ms`,
//! auto-commit and kills, head-of-line. Each count is worked out in the comment above it.

use super::queue::{AckRefused, Receipt};
use super::*;
use crate::record::AckOutcome;
use crate::record::RebalanceWhy;

pub(super) const S: Nanos = 1_000_000_000;

pub(super) fn config(partitions: u32, max_poll_records: u32) -> KafkaConfig {
    KafkaConfig {
        partitions,
        max_poll_interval: 300 * S,
        session_timeout: 45 * S,
        heartbeat_interval: 3 * S,
        max_poll_records,
        auto_commit: None,
        assignment: Assignment::Range,
        static_membership: false,
        initial_rebalance_delay: 3 * S,
    }
}

/// A model driven as the sim drives it: time moves to each due instant on the way.
pub(super) struct Run {
    pub k: Kafka,
    pub log: Vec<Event>,
    pub now: Nanos,
}

impl Run {
    pub fn new(config: KafkaConfig) -> Run {
        Run {
            k: Kafka::new(config),
            log: Vec::new(),
            now: 0,
        }
    }

    pub fn publish(&mut self, n: u32) {
        for _ in 0..n {
            self.k.publish(self.now, &mut self.log);
        }
    }

    pub fn at(&mut self, t: Nanos) {
        while let Some(due) = self.k.next_due().filter(|&d| d <= t) {
            self.now = due.max(self.now);
            self.k.advance(self.now, &mut self.log);
        }
        self.now = t;
        self.k.advance(t, &mut self.log);
    }

    pub fn recv(&mut self, w: WorkerId) -> Option<Receipt> {
        self.k
            .receive(self.now, w, &mut self.log)
            .map(|h| h.receipt)
    }

    pub fn ack(&mut self, r: Receipt, w: WorkerId) -> Result<AckOutcome, AckRefused> {
        self.k.ack(self.now, r, w, &mut self.log)
    }

    /// How many times each of records 1..=n was handed out.
    pub fn deliveries(&self, n: Seq) -> Vec<u32> {
        (1..=n).map(|s| self.k.receive_count(s).unwrap()).collect()
    }

    pub fn rebalances(&self) -> Vec<(u32, u32, u32, RebalanceWhy)> {
        self.log
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::Rebalanced {
                    generation,
                    members,
                    moved,
                    why,
                } => Some((generation, members, moved, why)),
                _ => None,
            })
            .collect()
    }

    pub fn fenced(&self) -> Vec<(Seq, WorkerId)> {
        self.log
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::CommitFenced { seq, worker } => Some((seq, worker)),
                _ => None,
            })
            .collect()
    }
}

#[test]
fn a_member_stalled_past_max_poll_interval_has_its_batch_processed_twice_and_its_commit_fenced() {
    // One partition, 3 records, two workers; a poll returns up to 3 records.
    let mut r = Run::new(config(1, 3));
    r.publish(3);
    // Both join at 0; the first rebalance waits the 3 s initial delay: generation 1, range
    // gives the one partition to worker 1 (worker 2 idle).
    assert_eq!(r.recv(1), None);
    assert_eq!(r.recv(2), None);
    r.at(3 * S);
    assert_eq!(r.rebalances(), [(1, 2, 1, RebalanceWhy::Join)]);
    // Worker 1 polls all 3 records and works on record 1 (its poll at 3 s: its interval ends
    // at 303 s); worker 2 finds nothing.
    let first = r.recv(1).unwrap();
    assert_eq!(first.seq, 1);
    assert_eq!(r.recv(2), None);
    // Record 1 takes longer than max.poll.interval.ms (300 s). At 303 s worker 1 leaves the
    // group; worker 2 (blocked in its poll) rejoins at once: generation 2, the partition moves
    // to it from the committed offset, 0.
    r.at(303 * S);
    assert_eq!(r.rebalances()[1], (2, 1, 1, RebalanceWhy::MaxPollInterval));
    // Worker 2 fetches records 1, 2, 3 again and commits each.
    for seq in 1..=3 {
        let h = r.recv(2).unwrap();
        assert_eq!(h.seq, seq);
        assert_eq!(r.ack(h, 2), Ok(AckOutcome::Deleted));
    }
    // At 310 s worker 1 finishes record 1: its commit is fenced (its member was removed). It
    // goes on with the batch its poll returned, records 2 and 3: both commits fenced too.
    r.at(310 * S);
    assert_eq!(r.ack(first, 1), Err(AckRefused(first)));
    for seq in 2..=3 {
        let h = r.recv(1).unwrap();
        assert_eq!(h.seq, seq);
        assert!(r.ack(h, 1).is_err());
    }
    // Each of the 3 uncommitted records was processed twice (once by each worker); 3 fenced
    // commits, all worker 1's; the committed offset is 3 (worker 2's).
    assert_eq!(r.deliveries(3), [2, 2, 2]);
    assert_eq!(r.fenced(), [(1, 1), (2, 1), (3, 1)]);
    assert_eq!(r.k.committed(0), 3);
}

#[test]
fn auto_commit_then_a_kill_3_s_later_has_the_records_since_processed_twice() {
    // One partition, one record per poll, auto-commit every 5 s; the consumer never commits
    // itself and works 1 s per record. No initial delay.
    let mut r = Run::new(KafkaConfig {
        auto_commit: Some(5 * S),
        initial_rebalance_delay: 0,
        ..config(1, 1)
    });
    r.publish(10);
    // Joining at 0 completes generation 1 at once; record k is polled (its offset stored) at
    // k - 1 seconds and done at k seconds.
    for t in 0..8 {
        r.at(t * S);
        assert_eq!(r.recv(1).map(|h| h.seq), Some(t as Seq + 1));
    }
    // The auto-commit tick at 5 s (5 s after the join) committed what the polls stored by
    // then: records 1 to 5 (record 5 polled at 4 s).
    assert_eq!(r.k.committed(0), 5);
    // Killed at 8 s, 3 s after that commit: records 6, 7, 8 were processed (done at 6, 7, 8 s)
    // but not committed.
    r.at(8 * S);
    r.k.consumer_died(8 * S, 1);
    // Restarted at 9 s it joins as a new member; the rebalance waits for the dead member's
    // session: its last heartbeat at 6 s (every 3 s from its join), removed at 6 + 45 = 51 s.
    r.at(9 * S);
    assert_eq!(r.recv(1), None);
    // The rebalance its join started completes then: generation 2, the partition moved to
    // the new member.
    r.at(51 * S);
    assert_eq!(r.rebalances().last(), Some(&(2, 1, 1, RebalanceWhy::Join)));
    // From the committed offset 5: records 6, 7, 8 again, then 9 and 10 for the first time.
    for seq in 6..=10 {
        assert_eq!(r.recv(1).map(|h| h.seq), Some(seq));
    }
    // Records 6, 7, 8 (since the last commit) were processed twice; the others once.
    assert_eq!(r.deliveries(10), [1, 1, 1, 1, 1, 2, 2, 2, 1, 1]);
}

#[test]
fn a_kill_right_after_an_auto_commit_that_ran_ahead_loses_the_rest_of_the_batch() {
    // One partition, a poll returns up to 5 records, auto-commit every 5 s, 3 s per record,
    // no own commits, no initial delay.
    let mut r = Run::new(KafkaConfig {
        auto_commit: Some(5 * S),
        initial_rebalance_delay: 0,
        ..config(1, 5)
    });
    r.publish(5);
    // At 0 s the poll returns records 1-5 to the application and stores offset 5.
    assert_eq!(r.recv(1).map(|h| h.seq), Some(1));
    // Record 1 done at 3 s; record 2 taken at 3 s.
    r.at(3 * S);
    assert_eq!(r.recv(1).map(|h| h.seq), Some(2));
    // The tick at 5 s commits offset 5: all five records, though only record 1 was processed.
    r.at(5 * S);
    assert_eq!(r.k.committed(0), 5);
    // Killed right after: record 2 half done, records 3, 4, 5 never taken.
    r.k.consumer_died(5 * S, 1);
    // The restarted consumer gets the partition at the committed offset 5 (after the dead
    // member's session: last heartbeat at 3 s, removed at 48 s): nothing to fetch.
    r.at(6 * S);
    assert_eq!(r.recv(1), None);
    r.at(48 * S);
    assert_eq!(r.recv(1), None);
    // Records 2, 3, 4, 5 are committed and were never processed: lost. Record 2 was handed
    // once (and killed), 3-5 never.
    assert_eq!(r.deliveries(5), [1, 1, 0, 0, 0]);
    assert!((1..=5).all(|s| r.k.state(s) == Some(MessageState::Deleted)));
    assert_eq!(r.k.counts().in_queue(), 0);
}

#[test]
fn a_35_s_record_holds_back_the_records_behind_it_in_its_partition() {
    // One partition, 3 records, two workers: the partition has one owner (worker 1); worker 2
    // stays idle however long record 1 takes.
    let mut r = Run::new(KafkaConfig {
        initial_rebalance_delay: 0,
        ..config(1, 500)
    });
    r.publish(3);
    let h1 = r.recv(1).unwrap();
    assert_eq!(r.recv(2), None);
    // Record 1 takes 35 s: nothing else moves in the partition meanwhile.
    r.at(20 * S);
    assert_eq!(r.recv(2), None);
    r.at(35 * S);
    r.ack(h1, 1).unwrap();
    // Record 2 starts only at 35 s, after it, on the same worker; record 3 after record 2.
    let h2 = r.recv(1).unwrap();
    assert_eq!((h2.seq, r.now), (2, 35 * S));
    r.ack(h2, 1).unwrap();
    assert_eq!(r.recv(1).map(|h| h.seq), Some(3));
    assert_eq!(r.recv(2), None);
}
