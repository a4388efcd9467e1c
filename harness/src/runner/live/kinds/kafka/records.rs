//! The run's records as the proxy follows them: which message each (partition, offset) holds
//! (ackbench publishes every record itself and reads its offset from the Produce answer), how
//! often each was fetched, and which fetched records each worker has not yet committed past.
//!
//! A commit of offset `n` on a partition settles every record below `n` there: those the
//! committing worker fetched are its acks (accepted, or fenced when the coordinator refused the
//! commit because the member was removed or its generation is over).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, PoisonError};

use crate::record::{Seq, WorkerId};

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

    /// The records published so far.
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
