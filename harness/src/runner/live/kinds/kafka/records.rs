//! The run's records as the proxy follows them: which message each (partition, offset) holds
//! (ackbench publishes every record itself and reads its offset from the Produce answer), how
//! often each was fetched, and which fetched records each worker has not yet committed past.
//!
//! A consumer that produces a message of the run to the run's topic itself (its own retry) adds
//! a copy at an offset of its own: found when fetched, by the key its value names, its fetches
//! counted on from its message's. The run's later records are placed after the copies.
//!
//! A commit of offset `n` on a partition settles every record below `n` there: those the
//! committing worker fetched are its acks (accepted, or fenced when the coordinator refused the
//! commit because the member was removed or its generation is over).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, PoisonError};

use crate::record::{Seq, WorkerId};
use crate::runner::live::state::CopiesOut;

/// A fetched record a worker has not committed past: its message and delivery number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    pub seq: Seq,
    pub delivery: u32,
}

#[derive(Default)]
struct Inner {
    /// (partition, offset) -> message.
    seqs: HashMap<(i32, i64), Seq>,
    /// Deliveries of each message so far (fetches of it by any worker).
    deliveries: HashMap<Seq, u32>,
    /// Per (worker, partition): the records it fetched and has not committed past, by offset.
    held: HashMap<(WorkerId, i32), BTreeMap<i64, Held>>,
    /// Copies of each message workers produced, not yet found.
    copies_sent: CopiesOut,
    /// Copies workers produced to each partition, all told.
    copies_in: HashMap<i32, i64>,
}

#[derive(Default)]
pub struct Records(Mutex<Inner>);

impl Records {
    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Message `seq` is the record at `offset` of `partition`.
    pub fn published(&self, partition: i32, offset: i64, seq: Seq) {
        self.inner().seqs.insert((partition, offset), seq);
    }

    /// A worker produced a copy of message `seq` to `partition` (its retry).
    pub fn copy_sent(&self, partition: i32, seq: Seq) {
        let mut inner = self.inner();
        inner.copies_sent.sent(seq);
        *inner.copies_in.entry(partition).or_insert(0) += 1;
    }

    /// Copies workers produced to `partition` so far: the run's records come after them.
    pub fn copies_in(&self, partition: i32) -> i64 {
        self.inner().copies_in.get(&partition).copied().unwrap_or(0)
    }

    /// Whether the record at `offset` of `partition` is known to be one of the run's.
    pub fn knows(&self, partition: i32, offset: i64) -> bool {
        self.inner().seqs.contains_key(&(partition, offset))
    }

    /// The record at `offset` of `partition`, unknown so far, names message `seq`: when a copy
    /// of `seq` was produced, it is that copy. Returns whether it is.
    pub fn copy_found(&self, partition: i32, offset: i64, seq: Seq) -> bool {
        let mut inner = self.inner();
        if !inner.copies_sent.found(seq) {
            return false;
        }
        inner.seqs.insert((partition, offset), seq);
        true
    }

    /// The broker wrote message `seq` at `offset` of `partition`, not at `expected`: a copy a
    /// worker produced came first. False when no worker produced a copy there (then something
    /// else writes to the run's topic).
    pub fn stored_at(&self, partition: i32, expected: i64, offset: i64, seq: Seq) -> bool {
        let mut inner = self.inner();
        if inner.copies_in.get(&partition).copied().unwrap_or(0) == 0 {
            return false;
        }
        if inner.seqs.get(&(partition, expected)) == Some(&seq) {
            inner.seqs.remove(&(partition, expected));
        }
        inner.seqs.insert((partition, offset), seq);
        true
    }

    /// `worker` fetched the record at `offset` of `partition`: its message and delivery number
    /// (`None` for a record ackbench did not publish).
    pub fn fetched(&self, worker: WorkerId, partition: i32, offset: i64) -> Option<Held> {
        let mut inner = self.inner();
        let seq = *inner.seqs.get(&(partition, offset))?;
        let n = inner.deliveries.entry(seq).or_insert(0);
        *n += 1;
        let held = Held { seq, delivery: *n };
        inner
            .held
            .entry((worker, partition))
            .or_default()
            .insert(offset, held);
        Some(held)
    }

    /// How many times the record at `offset` of `partition` was fetched so far (0: never, or
    /// not ackbench's).
    pub fn deliveries(&self, partition: i32, offset: i64) -> u32 {
        let inner = self.inner();
        inner
            .seqs
            .get(&(partition, offset))
            .and_then(|seq| inner.deliveries.get(seq))
            .copied()
            .unwrap_or(0)
    }

    /// The records published so far (copies included).
    pub fn published_count(&self) -> u64 {
        self.inner().seqs.len() as u64
    }

    /// `worker` committed offset `next` of `partition` (accepted or fenced: either way it is
    /// done with the records below): the records below `next` it had fetched, in offset order.
    pub fn committed(&self, worker: WorkerId, partition: i32, next: i64) -> Vec<Held> {
        let mut inner = self.inner();
        let Some(held) = inner.held.get_mut(&(worker, partition)) else {
            return Vec::new();
        };
        let rest = held.split_off(&next);
        let below = std::mem::replace(held, rest);
        below.into_values().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copys_fetch_is_its_messages_next_delivery_and_later_records_come_after_it() {
        let r = Records::default();
        // Partition 0: message 1 at offset 0, fetched by worker 1; its call fails and the
        // worker produces a copy to partition 0, found at offset 1 when fetched.
        r.published(0, 0, 1);
        assert_eq!(r.fetched(1, 0, 0).map(|h| h.delivery), Some(1));
        r.copy_sent(0, 1);
        assert!(!r.knows(0, 1));
        assert!(r.copy_found(0, 1, 1));
        assert!(!r.copy_found(0, 2, 1), "one copy sent, one found");
        assert_eq!(
            r.fetched(2, 0, 1),
            Some(Held {
                seq: 1,
                delivery: 2
            })
        );
        // The run's next record on partition 0 is placed after the copy: offset 1 + 1.
        assert_eq!(r.copies_in(0), 1);
        r.published(0, 2, 2);
        // Written at 3 instead (another copy came first): moved, since copies were produced.
        assert!(r.stored_at(0, 2, 3, 2));
        assert_eq!(r.fetched(1, 0, 3).map(|h| h.seq), Some(2));
        // Partition 1 had no copy: a record elsewhere is someone else's.
        r.published(1, 0, 3);
        assert!(!r.stored_at(1, 0, 1, 3));
    }

    #[test]
    fn a_commit_settles_only_the_committing_workers_records_below_its_offset() {
        let r = Records::default();
        // Partition 0 holds messages 1, 3, 5 at offsets 0, 1, 2.
        for (offset, seq) in [(0, 1), (1, 3), (2, 5)] {
            r.published(0, offset, seq);
        }
        assert_eq!(
            r.fetched(1, 0, 0),
            Some(Held {
                seq: 1,
                delivery: 1
            })
        );
        assert_eq!(
            r.fetched(1, 0, 1),
            Some(Held {
                seq: 3,
                delivery: 1
            })
        );
        assert_eq!(
            r.fetched(1, 0, 2),
            Some(Held {
                seq: 5,
                delivery: 1
            })
        );
        // A record nobody published is no delivery.
        assert_eq!(r.fetched(1, 0, 9), None);
        // Worker 1 commits 2 (offsets 0 and 1 done): messages 1 and 3; offset 2 stays held.
        let done: Vec<Seq> = r.committed(1, 0, 2).iter().map(|h| h.seq).collect();
        assert_eq!(done, vec![1, 3]);
        // Worker 2 takes the partition over from committed offset 2: message 5's 2nd delivery.
        assert_eq!(
            r.fetched(2, 0, 2),
            Some(Held {
                seq: 5,
                delivery: 2
            })
        );
        // Worker 1's late commit of 3 is its own delivery 1 of message 5, not worker 2's.
        assert_eq!(
            r.committed(1, 0, 3),
            vec![Held {
                seq: 5,
                delivery: 1
            }]
        );
        assert_eq!(
            r.committed(2, 0, 3),
            vec![Held {
                seq: 5,
                delivery: 2
            }]
        );
        // Nothing is held twice.
        assert!(r.committed(2, 0, 3).is_empty());
        // Message 5 (offset 2) was fetched twice, message 1 once; offset 9 is nobody's.
        assert_eq!(
            (r.deliveries(0, 2), r.deliveries(0, 0), r.deliveries(0, 9)),
            (2, 1, 0)
        );
        assert_eq!(r.published_count(), 3);
    }
}
